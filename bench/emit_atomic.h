/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Emitter: what a program would do without a tracer - keep the per-(class, stage) counts
 * itself, with atomic adds on process-wide counters (threads share them, as they would). The
 * owner's stage and holdings live in the pipe, so a stage change moves them without a lookup:
 * the cheapest honest in-process equivalent of what inflight's kernel side keeps.
 */
#ifndef BENCH_EMIT_ATOMIC_H
#define BENCH_EMIT_ATOMIC_H

#include <stdatomic.h>
#include "pipeline.h"

static const char emit_name[] = "atomic";

#define EMIT_SLOTS (STAGE__COUNT + 1) /* + "no stage yet" */

struct emit_cell {
	_Atomic uint64_t count;
	_Atomic uint64_t bytes;
};

static struct emit_cell emit_cells[CLS__COUNT][EMIT_SLOTS];
static _Atomic uint64_t emit_owners[EMIT_SLOTS];

static inline void emit_cell_add(unsigned int cls, unsigned int slot, uint64_t count,
				 uint64_t bytes)
{
	atomic_fetch_add_explicit(&emit_cells[cls][slot].count, count, memory_order_relaxed);
	atomic_fetch_add_explicit(&emit_cells[cls][slot].bytes, bytes, memory_order_relaxed);
}

static inline void emit_cell_sub(unsigned int cls, unsigned int slot, uint64_t count,
				 uint64_t bytes)
{
	atomic_fetch_sub_explicit(&emit_cells[cls][slot].count, count, memory_order_relaxed);
	atomic_fetch_sub_explicit(&emit_cells[cls][slot].bytes, bytes, memory_order_relaxed);
}

static inline void emit_alloc(struct pipe *p, unsigned int slot, enum prover_class cls,
			      uint64_t bytes)
{
	(void)slot;
	emit_cell_add(cls, p->stage, 1, bytes);
	p->held[cls].count++;
	p->held[cls].bytes += bytes;
}

static inline void emit_free(struct pipe *p, unsigned int slot, enum prover_class cls,
			     uint64_t bytes)
{
	(void)slot;
	emit_cell_sub(cls, p->stage, 1, bytes);
	p->held[cls].count--;
	p->held[cls].bytes -= bytes;
}

static inline void emit_stage(struct pipe *p, enum prover_stage stage)
{
	unsigned int cls;

	for (cls = 0; cls < CLS__COUNT; cls++) {
		if (!p->held[cls].count)
			continue;
		emit_cell_sub(cls, p->stage, p->held[cls].count, p->held[cls].bytes);
		emit_cell_add(cls, stage, p->held[cls].count, p->held[cls].bytes);
	}
	if (p->stage != STAGE__COUNT)
		atomic_fetch_sub_explicit(&emit_owners[p->stage], 1, memory_order_relaxed);
	/* the terminal stage ends the owner: the pipe's next owner starts with no stage */
	if (stage == STAGE_done) {
		p->stage = STAGE__COUNT;
		return;
	}
	atomic_fetch_add_explicit(&emit_owners[stage], 1, memory_order_relaxed);
	p->stage = stage;
}

/* Buffers still counted after the run drained: must be 0, or the counters are wrong. */
static inline uint64_t emit_residual(void)
{
	uint64_t sum = 0;
	unsigned int cls, slot;

	for (cls = 0; cls < CLS__COUNT; cls++)
		for (slot = 0; slot < EMIT_SLOTS; slot++)
			sum += atomic_load(&emit_cells[cls][slot].count);
	return sum;
}

/* Always "listening": the counters are compiled in. */
static inline bool emit_enabled(void)
{
	return true;
}

#endif /* BENCH_EMIT_ATOMIC_H */
