/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The emitter under test, chosen at compile time:
 *   (default)        the contract's USDT probes, semaphore-guarded, exactly as the prover
 *                    fires them (probes/prover_trace.h); with -DPROVER_NO_PROBES, nothing
 *   -DBENCH_ATOMIC   counters per (class, stage) kept in-process with atomic adds: the
 *                    "counters in the hot path" alternative a tracer is meant to replace
 *   -DBENCH_LTTNG    LTTng-UST tracepoints carrying the same arguments
 * Each provides emit_alloc/emit_free/emit_stage(), emit_enabled() (a tracer is listening on
 * all three events) and emit_name.
 */
#ifndef BENCH_EMIT_H
#define BENCH_EMIT_H

#include <stdbool.h>
#include "pipeline.h"

#if defined(BENCH_ATOMIC)
#include "emit_atomic.h"
#elif defined(BENCH_LTTNG)
#include "emit_lttng.h"
#else
#include "emit_usdt.h"
#endif

#endif /* BENCH_EMIT_H */
