/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The synthetic workload the probe benchmarks fire: one "partition" of the reference
 * prover's shape per owner, cut into 23 steps of exactly one contract event each (8 allocs,
 * 8 frees, 7 stage changes), so that a tracer's aggregation sees realistic keys (six classes,
 * eight stages, a few live owners and buffers per thread) and the cost per event is the
 * elapsed time over the steps taken.
 *
 * The emitter (USDT probes, in-process atomic counters or LTTng-UST tracepoints) is chosen at
 * compile time by bench/emit.h; this file only says what happens in which order.
 */
#ifndef BENCH_PIPELINE_H
#define BENCH_PIPELINE_H

#include <stdint.h>
#include "prover_ids.h"

#define PIPE_STEPS 23
#define PIPE_ALLOCS 8 /* per owner, i.e. per PIPE_STEPS steps */
#define PIPE_FREES 8
#define PIPE_STAGES 7
#define PIPE_BUFS 8

/* per owner: 3 x abc + aux + input + density + pending + proof */
#define PIPE_BYTES_PER_OWNER (3 * (48ull << 20) + (48ull << 20) + 10240 + (2ull << 20) + \
			      (24ull << 20) + 192)

struct pipe_held {
	uint64_t count;
	uint64_t bytes;
};

/* One work item in flight. The owner's stage and holdings are only used by the emitter that
 * keeps counters in-process; the tracers derive them from the events. */
struct pipe {
	uint64_t owner;	 /* current owner id, unique among live owners of the process */
	uint64_t serial; /* owners started by this pipe so far */
	uint32_t step;	 /* next step, 0..PIPE_STEPS-1 */
	uint32_t lane;	 /* thread index * pipes per thread + pipe index: keeps ids unique */
	uint32_t stage;	 /* the owner's stage, STAGE__COUNT before its first one */
	uint32_t pad;
	struct pipe_held held[CLS__COUNT];
};

static inline void pipe_init(struct pipe *p, uint32_t lane)
{
	*p = (struct pipe){ .lane = lane, .stage = STAGE__COUNT };
}

/* A buffer id: unique among live buffers, like an address would be. */
static inline uint64_t pipe_buf(const struct pipe *p, unsigned int slot)
{
	return p->owner * PIPE_BUFS + slot;
}

#endif /* BENCH_PIPELINE_H */
