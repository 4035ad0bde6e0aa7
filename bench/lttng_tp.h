/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * LTTng-UST tracepoint provider `prover_bench`: the contract's three events as LTTng would
 * carry them, for the peer comparison. Compiled into the bench binary (lttng_tp.c), no
 * separate provider library.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER prover_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(prover_bench, buf_alloc,
	LTTNG_UST_TP_ARGS(uint64_t, buf, uint32_t, cls, uint64_t, bytes, uint64_t, owner),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, buf, buf)
		lttng_ust_field_integer(uint32_t, cls, cls)
		lttng_ust_field_integer(uint64_t, bytes, bytes)
		lttng_ust_field_integer(uint64_t, owner, owner)))

LTTNG_UST_TRACEPOINT_EVENT(prover_bench, buf_free,
	LTTNG_UST_TP_ARGS(uint64_t, buf, uint32_t, cls, uint64_t, bytes),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, buf, buf)
		lttng_ust_field_integer(uint32_t, cls, cls)
		lttng_ust_field_integer(uint64_t, bytes, bytes)))

LTTNG_UST_TRACEPOINT_EVENT(prover_bench, stage,
	LTTNG_UST_TP_ARGS(uint64_t, owner, uint32_t, stage),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, owner, owner)
		lttng_ust_field_integer(uint32_t, stage, stage)))

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
