/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A MODELLED GPU: the GPU stage as a device of its own that does not compete with
 * synthesis for the CPU cores, for hosts without CUDA (docs/prover.md, "The modelled
 * device"). A partition's device region lasts the kernel time its work would take at a
 * configured rate (the H recipe's NTTs plus the MSM, counted in field operations); the
 * region sleeps on an absolute deadline instead of computing, so the device's time is its
 * own and one region follows another behind the caller's device lock, as on a real GPU.
 * What it leaves in `pending` is a stand-in (a fold of a, b, c), not H: the real H of a
 * sample of partitions is computed and checked after the run (prover/hcheck.h).
 */
#ifndef PROVER_GPU_MODEL_H
#define PROVER_GPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define GPU_MODEL_DEFAULT_MOPS 100 /* million field operations per second */
#define GPU_MODEL_MIN_MOPS 1
#define GPU_MODEL_MAX_MOPS 100000000 /* 100 Top/s: far beyond any GPU on this field */

/*
 * Field operations of one partition's prove_start on a domain of 2^log_n with
 * `extra_rounds` NTT round trips: (7 + 2 * extra_rounds) NTTs of n/2 * log_n butterflies
 * (3 inverse, 3 coset forward, 1 coset inverse, then the round trips), 5n element-wise
 * multiplications (4 coset scalings, the pointwise (ab - c)/Z) and an MSM of n terms.
 */
uint64_t gpu_model_ops(unsigned log_n, unsigned extra_rounds);

/* The kernel time of `ops` at `mops` million operations per second, in nanoseconds. */
uint64_t gpu_model_kernel_ns(uint64_t ops, unsigned mops);

/*
 * The stand-in output: out[i] = a[2i] + b[2i + 1] + c[2i] + c[2i + 1] (mod p) for
 * i < n/2, one pass over a, b, c at the cost of additions only (the upload a real device
 * does by DMA). Deterministic: equal witnesses give equal outputs, whatever the schedule.
 */
void gpu_model_fold(const uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n,
		    uint64_t *out);

struct gpu_model {
	unsigned mops;
	uint64_t kernel_ns; /* per partition, from gpu_model_ops at the run's size */
	/* the device's own account, kept under the caller's device lock */
	uint64_t regions, busy_ns, overruns, overrun_ns;
};

void gpu_model_init(struct gpu_model *m, unsigned log_n, unsigned extra_rounds,
		    unsigned mops);

/*
 * One device region; the caller holds the device lock. Folds a, b, c (n elements) into
 * pending (n/2), then sleeps until kernel_ns after the region began. When the fold alone
 * took longer (a starved CPU), the region ends late and counts as an overrun: the model's
 * time was not kept, and the summary says so.
 */
void gpu_model_region(struct gpu_model *m, uint64_t owner, const uint64_t *a,
		      const uint64_t *b, const uint64_t *c, size_t n, uint64_t *pending);

#ifdef PROVER_TEST_OBSERVER
/* test-only: every region's owner, start and end on CLOCK_MONOTONIC (inside the lock) */
void observer_device_region(uint64_t owner, uint64_t begin_ns, uint64_t end_ns,
			    uint64_t thread_cpu_ns);
#endif

#endif /* PROVER_GPU_MODEL_H */
