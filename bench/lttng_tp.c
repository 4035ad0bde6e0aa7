// SPDX-License-Identifier: BSD-2-Clause
/* The LTTng-UST provider's probes, built into the bench binary (see lttng_tp.h). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
