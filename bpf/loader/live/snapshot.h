/* SPDX-License-Identifier: BSD-2-Clause */
/* Moved to model/snapshot.h; this name stays only until attach/ includes that one. */
#include "model/snapshot.h"
