/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One step of a pipe: exactly one contract event. Include after bench/emit.h, which provides
 * emit_alloc(), emit_free() and emit_stage() for the emitter being measured.
 */
#ifndef BENCH_PIPELINE_STEP_H
#define BENCH_PIPELINE_STEP_H

#include "pipeline.h"

/* Owner ids: the lane in the high bits, so that pipes never share one. */
#define PIPE_LANE_SHIFT 40

static inline void pipe_step(struct pipe *p)
{
	switch (p->step) {
	case 0:
		p->owner = ((uint64_t)(p->lane + 1) << PIPE_LANE_SHIFT) | ++p->serial;
		emit_stage(p, STAGE_wait_permit);
		break;
	case 1: emit_stage(p, STAGE_synth); break;
	case 2: emit_alloc(p, 0, CLS_abc, 48ull << 20); break;
	case 3: emit_alloc(p, 1, CLS_abc, 48ull << 20); break;
	case 4: emit_alloc(p, 2, CLS_abc, 48ull << 20); break;
	case 5: emit_alloc(p, 3, CLS_aux, 48ull << 20); break;
	case 6: emit_alloc(p, 4, CLS_input, 10240); break;
	case 7: emit_alloc(p, 5, CLS_density, 2ull << 20); break;
	case 8: emit_stage(p, STAGE_chan_send); break;
	case 9: emit_stage(p, STAGE_gpu_queue); break;
	case 10: emit_stage(p, STAGE_gpu); break;
	case 11: emit_free(p, 0, CLS_abc, 48ull << 20); break;
	case 12: emit_free(p, 1, CLS_abc, 48ull << 20); break;
	case 13: emit_free(p, 2, CLS_abc, 48ull << 20); break;
	case 14: emit_alloc(p, 6, CLS_pending, 24ull << 20); break;
	case 15: emit_stage(p, STAGE_finalize); break;
	case 16: emit_free(p, 3, CLS_aux, 48ull << 20); break;
	case 17: emit_free(p, 4, CLS_input, 10240); break;
	case 18: emit_free(p, 5, CLS_density, 2ull << 20); break;
	case 19: emit_free(p, 6, CLS_pending, 24ull << 20); break;
	case 20: emit_alloc(p, 7, CLS_proof, 192); break;
	case 21: emit_free(p, 7, CLS_proof, 192); break;
	case 22: emit_stage(p, STAGE_done); break;
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
