/* SPDX-License-Identifier: BSD-2-Clause */
/* Moved to model/figures.h; this name stays only until attach/ includes that one. */
#include "model/figures.h"
