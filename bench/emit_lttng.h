/* SPDX-License-Identifier: BSD-2-Clause */
/* Emitter: LTTng-UST tracepoints (provider prover_bench, see lttng_tp.h). */
#ifndef BENCH_EMIT_LTTNG_H
#define BENCH_EMIT_LTTNG_H

#include "pipeline.h"
#include "lttng_tp.h"

static const char emit_name[] = "lttng";

static inline void emit_alloc(struct pipe *p, unsigned int slot, enum prover_class cls,
			      uint64_t bytes)
{
	lttng_ust_tracepoint(prover_bench, buf_alloc, pipe_buf(p, slot), (uint32_t)cls, bytes,
			     p->owner);
}

static inline void emit_free(struct pipe *p, unsigned int slot, enum prover_class cls,
			     uint64_t bytes)
{
	lttng_ust_tracepoint(prover_bench, buf_free, pipe_buf(p, slot), (uint32_t)cls, bytes);
}

static inline void emit_stage(struct pipe *p, enum prover_stage stage)
{
	lttng_ust_tracepoint(prover_bench, stage, p->owner, (uint32_t)stage);
}

static inline uint64_t emit_residual(void)
{
	return 0;
}

/* A session has enabled all three events (the registration with lttng-sessiond happens in
 * liblttng-ust's constructor, before main). */
static inline bool emit_enabled(void)
{
	return lttng_ust_tracepoint_enabled(prover_bench, buf_alloc) &&
	       lttng_ust_tracepoint_enabled(prover_bench, buf_free) &&
	       lttng_ust_tracepoint_enabled(prover_bench, stage);
}

#endif /* BENCH_EMIT_LTTNG_H */
