/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every large buffer and every stage transition of the prover goes through here, and from
 * here to the probe contract (probes/prover_trace.h). Nothing else happens on these paths:
 * no counters, no locks, no logging. The test suite compiles the prover a second time with
 * PROVER_TEST_OBSERVER, which adds calls to an observer that lives only in the test binary.
 */
#ifndef PROVER_TRACK_H
#define PROVER_TRACK_H

#include <stddef.h>
#include <stdint.h>
#include "prover_trace.h"

#ifdef PROVER_TEST_OBSERVER
void observer_alloc(const void *buf, enum prover_class cls, uint64_t bytes, uint64_t owner);
void observer_free(const void *buf, enum prover_class cls, uint64_t bytes);
void observer_stage(uint64_t owner, enum prover_stage stage);
#define TRACK_OBSERVE(call) observer_##call
#else
#define TRACK_OBSERVE(call) ((void)0)
#endif

/* A buffer that exists now (host memory from track_alloc, or device memory). */
static inline void track_note_alloc(const void *buf, enum prover_class cls, uint64_t bytes,
				    uint64_t owner)
{
	trace_buf_alloc(buf, cls, bytes, owner);
	TRACK_OBSERVE(alloc(buf, cls, bytes, owner));
}

/* Called before the memory is released, so its address cannot be reused first. */
static inline void track_note_free(const void *buf, enum prover_class cls, uint64_t bytes)
{
	trace_buf_free(buf, cls, bytes);
	TRACK_OBSERVE(free(buf, cls, bytes));
}

static inline void track_stage(uint64_t owner, enum prover_stage stage)
{
	trace_stage(owner, stage);
	TRACK_OBSERVE(stage(owner, stage));
}

/*
 * Host buffers come straight from mmap, populated: every page is resident from the first
 * probe to the last, and freeing returns it to the kernel at once, so the process's RSS
 * follows what the probes report (malloc's arenas and its sliding mmap threshold would
 * blur that). Exits with PROVER_EXIT_SYSTEM when the kernel refuses.
 */
void *track_alloc(enum prover_class cls, size_t bytes, uint64_t owner);
void track_free(void *buf, enum prover_class cls, size_t bytes);

#endif /* PROVER_TRACK_H */
