/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which partitions get their H checked, and the check of the modelled device's partitions,
 * made after the run so that its CPU work cannot slow the pipeline it checks
 * (docs/prover.md, "The H check").
 */
#ifndef PROVER_HCHECK_H
#define PROVER_HCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "circuit.h"
#include "ntt.h"

#define HCHECK_EVERY_MODEL 10 /* the modelled device's default: one partition in 10 */
#define HCHECK_EVERY_MAX 100000

/*
 * One partition in `every`, counting the run's partitions in job order (job `seq` from 1,
 * `parts` partitions each): ceil(total / every) of them, the same whatever the schedule,
 * and the checked index moves from job to job when `every` is not a multiple of `parts`.
 */
static inline bool hcheck_sampled(unsigned every, unsigned seq, unsigned parts,
				  unsigned index)
{
	return (((uint64_t)seq - 1) * parts + index) % every == 0;
}

/* A modelled partition to check after the run: what it was made from and what it gave. */
struct hcheck_sample {
	uint64_t owner;	 /* its x derives from it, as on the other paths */
	uint64_t seed;	 /* c1_partition_seed: the witness is made again from it */
	uint64_t h_acc;	 /* the proof's first word: the sum of the device's output */
};

struct hcheck_list {
	struct hcheck_sample *v;
	size_t n, cap;
};

/* false when out of memory */
bool hcheck_add(struct hcheck_list *l, const struct hcheck_sample *s);
void hcheck_list_free(struct hcheck_list *l);

struct hcheck_ctx {
	const struct circuit_shape *shape;
	const struct ntt_domain *dom;
	unsigned synth_rounds, extra_rounds;
	uint64_t x_seed;
};

/*
 * For each sample: synthesizes the witness again from its seed, requires the device's
 * stand-in output of it to sum to the h_acc the pipeline's proof carries (so the device
 * saw exactly this witness), computes H from it by the recipe on the CPU (hpoly_compute,
 * plus the round trips) and checks A(x)B(x) - C(x) = H(x)(x^n - 1) at the partition's x.
 * Its buffers are plain memory, deliberately outside the probe contract: they belong to
 * no pipeline stage. Returns how many passed; -1 when out of memory.
 */
long hcheck_run_deferred(const struct hcheck_ctx *ctx, const struct hcheck_list *l);

#endif /* PROVER_HCHECK_H */
