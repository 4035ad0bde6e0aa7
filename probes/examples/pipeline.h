/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The example pipeline of probes/examples: its ids, sizes and entry points. The Rust example
 * (probes/examples/rust) implements the same pipeline with the same numbers, so that one
 * checker (tests/programs/expect.sh) knows the answers for both. What it does, per process:
 *
 *   table: one 64 KiB buffer of owner 0, allocated first and freed last (outlives the rest);
 *   items 1..N, owner = item id, T at a time (one per thread, all threads in lockstep):
 *     A  stage(id, read)     alloc input 4 KiB
 *     B  stage(id, compute)  alloc scratch 16 KiB, alloc result 1 KiB
 *     C  free scratch, free input, stage(id, write)
 *     D  free result, stage(id, done)
 *   each phase ends at a barrier of the T threads, so the peak and its composition are the
 *   same in every run: the table plus min(T, N) items in `compute` holding all three.
 */
#ifndef EXAMPLE_PIPELINE_H
#define EXAMPLE_PIPELINE_H

#include <stdint.h>

#define EXAMPLE_CLASSES(X) X(0, input) X(1, scratch) X(2, result) X(3, table)
#define EXAMPLE_STAGES(X) \
	X(0, read, entry) X(1, compute, plain) X(2, write, plain) X(3, done, terminal)

#define EXAMPLE__ENUM_CLASS(id, name) EX_CLS_##name = id,
#define EXAMPLE__ENUM_STAGE(id, name, flag) EX_STAGE_##name = id,
enum example_class { EXAMPLE_CLASSES(EXAMPLE__ENUM_CLASS) };
enum example_stage { EXAMPLE_STAGES(EXAMPLE__ENUM_STAGE) };

#define EXAMPLE_INPUT_BYTES 4096u
#define EXAMPLE_SCRATCH_BYTES 16384u
#define EXAMPLE_RESULT_BYTES 1024u
#define EXAMPLE_TABLE_BYTES 65536u

struct example_opts {
	long items;	      /* N */
	int threads;	      /* T, 1..64 */
	long hold_round;      /* hold after phase B of this round (items R*T+1..), -1: never */
	void (*hold)(void);   /* how to hold (prints "holding", waits for a line on stdin) */
};

/* The pipeline's entry points: in the program, or in a shared library (dlopen by name). */
typedef void *example_table_alloc_fn(void);
typedef void example_table_free_fn(void *table);
typedef int example_items_fn(const struct example_opts *o, uint64_t *checksum);

#ifdef __cplusplus
extern "C" {
#endif
example_table_alloc_fn example_table_alloc;
example_table_free_fn example_table_free;
/* Runs items 1..N; 0, or -1 when a thread or a buffer could not be had. */
example_items_fn example_items;
#ifdef __cplusplus
}
#endif

#endif /* EXAMPLE_PIPELINE_H */
