/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One step of a pipe: exactly one contract event. Include after bench/emit.h, which provides
 * emit_alloc(), emit_free() and emit_stage() for the emitter being measured; everything else
 * fires through pipe_alloc(), pipe_free() and pipe_stage().
 */
#ifndef BENCH_PIPELINE_STEP_H
#define BENCH_PIPELINE_STEP_H

#include "pipeline.h"

/* Owner ids: the lane in the high bits, so that pipes never share one. */
#define PIPE_LANE_SHIFT 40

/*
 * Each event has exactly one call site, so that each USDT probe has exactly one site in the
 * binary. A tracer registers one uprobe per site and the kernel raises the probe's semaphore
 * at the first: with several inlined sites, "semaphore set" would not yet mean "every site
 * is live", and a tracer would miss the events of the sites it has not reached yet.
 */
static __attribute__((noinline)) void pipe_alloc(struct pipe *p, unsigned int slot,
						 enum prover_class cls, uint64_t bytes)
{
	emit_alloc(p, slot, cls, bytes);
}

static __attribute__((noinline)) void pipe_free(struct pipe *p, unsigned int slot,
						enum prover_class cls, uint64_t bytes)
{
	emit_free(p, slot, cls, bytes);
}

static __attribute__((noinline)) void pipe_stage(struct pipe *p, enum prover_stage stage)
{
	emit_stage(p, stage);
}

static inline void pipe_step(struct pipe *p)
{
	switch (p->step) {
	case 0:
		p->owner = ((uint64_t)(p->lane + 1) << PIPE_LANE_SHIFT) | ++p->serial;
		pipe_stage(p, STAGE_wait_permit);
		break;
	case 1: pipe_stage(p, STAGE_synth); break;
	case 2: pipe_alloc(p, 0, CLS_abc, 48ull << 20); break;
	case 3: pipe_alloc(p, 1, CLS_abc, 48ull << 20); break;
	case 4: pipe_alloc(p, 2, CLS_abc, 48ull << 20); break;
	case 5: pipe_alloc(p, 3, CLS_aux, 48ull << 20); break;
	case 6: pipe_alloc(p, 4, CLS_input, 10240); break;
	case 7: pipe_alloc(p, 5, CLS_density, 2ull << 20); break;
	case 8: pipe_stage(p, STAGE_chan_send); break;
	case 9: pipe_stage(p, STAGE_gpu_queue); break;
	case 10: pipe_stage(p, STAGE_gpu); break;
	case 11: pipe_free(p, 0, CLS_abc, 48ull << 20); break;
	case 12: pipe_free(p, 1, CLS_abc, 48ull << 20); break;
	case 13: pipe_free(p, 2, CLS_abc, 48ull << 20); break;
	case 14: pipe_alloc(p, 6, CLS_pending, 24ull << 20); break;
	case 15: pipe_stage(p, STAGE_finalize); break;
	case 16: pipe_free(p, 3, CLS_aux, 48ull << 20); break;
	case 17: pipe_free(p, 4, CLS_input, 10240); break;
	case 18: pipe_free(p, 5, CLS_density, 2ull << 20); break;
	case 19: pipe_free(p, 6, CLS_pending, 24ull << 20); break;
	case 20: pipe_alloc(p, 7, CLS_proof, 192); break;
	case 21: pipe_free(p, 7, CLS_proof, 192); break;
	case 22: pipe_stage(p, STAGE_done); break;
	}
	p->step = p->step + 1 == PIPE_STEPS ? 0 : p->step + 1;
	/*
	 * Real code does work between two probes, so the compiler re-reads each USDT semaphore
	 * every time (it is a plain global). Without this barrier it may hoist the load out of
	 * the loop and never see a tracer attach.
	 */
	__asm__ __volatile__("" ::: "memory");
}

#endif /* BENCH_PIPELINE_STEP_H */
