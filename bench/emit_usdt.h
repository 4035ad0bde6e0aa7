/* SPDX-License-Identifier: BSD-2-Clause */
/* Emitter: the contract's USDT probes (or nothing, under -DPROVER_NO_PROBES). */
#ifndef BENCH_EMIT_USDT_H
#define BENCH_EMIT_USDT_H

#include "pipeline.h"
#include "prover_trace.h"

#ifdef PROVER_NO_PROBES
static const char emit_name[] = "noprobes";
#else
static const char emit_name[] = "usdt";
#endif

static inline void emit_alloc(struct pipe *p, unsigned int slot, enum prover_class cls,
			      uint64_t bytes)
{
	trace_buf_alloc((const void *)(uintptr_t)pipe_buf(p, slot), cls, bytes, p->owner);
}

static inline void emit_free(struct pipe *p, unsigned int slot, enum prover_class cls,
			     uint64_t bytes)
{
	trace_buf_free((const void *)(uintptr_t)pipe_buf(p, slot), cls, bytes);
}

static inline void emit_stage(struct pipe *p, enum prover_stage stage)
{
	trace_stage(p->owner, stage);
}

/* Nothing is counted in-process. */
static inline uint64_t emit_residual(void)
{
	return 0;
}

/* Reads the semaphores through volatile: the loop that waits must see the tracer's write. */
static inline bool emit_enabled(void)
{
#ifdef PROVER_NO_PROBES
	return false;
#else
	return *(volatile unsigned short *)&prover_buf_alloc_semaphore &&
	       *(volatile unsigned short *)&prover_buf_free_semaphore &&
	       *(volatile unsigned short *)&prover_stage_semaphore;
#endif
}

#endif /* BENCH_EMIT_USDT_H */
