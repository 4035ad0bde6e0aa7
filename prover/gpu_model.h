/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A MODELLED GPU: the GPU stage as a device of its own that does not compete with
 * synthesis for the CPU cores, for hosts without CUDA (docs/prover.md, "The modelled
 * device"). A partition's device region lasts the kernel time its work would take at a
 * configured rate (the H recipe's NTTs plus the MSM, counted in field operations), varied
 * per partition by a seeded draw (model_time.h: cuzk's GPU stage took 1.8 to 3.75 s, about
 * +-35% around its mean); the region sleeps on an absolute deadline instead of computing,
 * so the device's time is its own and one region follows another behind the caller's
 * device lock, as on a real GPU.
 * What it leaves in `pending` is a stand-in (a fold of a, b, c), not H: the real H of a
 * sample of partitions is computed and checked after the run (prover/hcheck.h).
 */
#ifndef PROVER_GPU_MODEL_H
#define PROVER_GPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Million field operations per second. With the modelled host (host_model.h) the default
 * puts the device at cuzk's balance: 2^17 takes 55.4 ms on average, cuzk's 2.775 s (the
 * middle of its 1.8-3.75 s) 50 times shorter, against 729.7 ms of synthesis (36.5 s).
 * With real synthesis on this machine's cores (a few ms a partition) the default is
 * slower, 181 ms at 2^18, so that synthesis outruns the device as in the incident.
 */
#define GPU_MODEL_DEFAULT_MOPS 100
#define GPU_MODEL_BALANCED_MOPS 155
#define GPU_MODEL_DEFAULT_SPREAD 35 /* percent either side of the mean: 1.8-3.75 s */
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

/* what the command line says about the modelled device */
struct gpu_model_params {
	unsigned mops, spread_pct;
	uint64_t seed;
};

struct gpu_model {
	unsigned mops, spread_pct;
	uint64_t seed;
	uint64_t kernel_ns; /* the mean per partition, from gpu_model_ops at the run's size */
	uint64_t free_at;   /* when the last region ended, by the model's clock */
	/* the device's own account, kept under the caller's device lock */
	uint64_t regions, busy_ns, overruns, overrun_ns;
	uint64_t max_real_permille; /* the largest share of its kernel time a fold took */
};

void gpu_model_init(struct gpu_model *m, unsigned log_n, unsigned extra_rounds,
		    const struct gpu_model_params *p);

/* Partition `owner`'s kernel time: the same for the same seed, whatever the schedule. */
uint64_t gpu_model_kernel_of(const struct gpu_model *m, uint64_t owner);

/*
 * One device region; the caller holds the device lock. `arrived_ns` is when the partition
 * reached the device by the model's clock (CLOCK_MONOTONIC, at or before now: sync.h).
 * The region begins when both the partition has arrived and the device is free by the
 * model's clock (the previous region's end): a worker thread scheduled late does not
 * delay the device, as a real GPU runs queued work back to back. Folds a, b, c (n
 * elements) into pending (n/2), then sleeps until the partition's kernel time after the
 * region began, and returns that time. When the fold ends past it (a starved CPU), the
 * region still ends then by the model's clock (the modelled GPU does not depend on our
 * cores) and counts as an overrun: the run lags the model's time there, and the summary
 * says so.
 */
uint64_t gpu_model_region(struct gpu_model *m, uint64_t owner, uint64_t arrived_ns,
			  const uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n,
			  uint64_t *pending);

#ifdef PROVER_TEST_OBSERVER
/*
 * test-only, from inside the lock: each region's owner, when it began and was due to end
 * by the model's clock, when the worker got the lock and when the region really ended
 * (CLOCK_MONOTONIC), and the CPU time the worker used in it
 */
void observer_device_region(uint64_t owner, uint64_t begin_ns, uint64_t deadline_ns,
			    uint64_t locked_ns, uint64_t end_ns, uint64_t thread_cpu_ns);
#endif

#endif /* PROVER_GPU_MODEL_H */
