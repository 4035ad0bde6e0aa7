// SPDX-License-Identifier: BSD-2-Clause
/* The modelled GPU (see gpu_model.h). */
#include <errno.h>
#include <time.h>
#include "field.h"
#include "gpu_model.h"

#define NS_PER_S 1000000000ull

uint64_t gpu_model_ops(unsigned log_n, unsigned extra_rounds)
{
	uint64_t n = 1ull << log_n, ntts = 7 + 2ull * extra_rounds;

	return ntts * (n / 2) * log_n + 5 * n + n;
}

uint64_t gpu_model_kernel_ns(uint64_t ops, unsigned mops)
{
	/* ops * 1000 / mops, rounded up: a region never lasts less than its work */
	return (ops * 1000 + mops - 1) / mops;
}

void gpu_model_fold(const uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n,
		    uint64_t *out)
{
	for (size_t i = 0; i < n / 2; i++)
		out[i] = gl_add(gl_add(a[2 * i], b[2 * i + 1]), gl_add(c[2 * i], c[2 * i + 1]));
}

void gpu_model_init(struct gpu_model *m, unsigned log_n, unsigned extra_rounds,
		    unsigned mops)
{
	*m = (struct gpu_model){
		.mops = mops,
		.kernel_ns = gpu_model_kernel_ns(gpu_model_ops(log_n, extra_rounds), mops),
	};
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void gpu_model_region(struct gpu_model *m, uint64_t owner, const uint64_t *a,
		      const uint64_t *b, const uint64_t *c, size_t n, uint64_t *pending)
{
	uint64_t begin = clock_ns(CLOCK_MONOTONIC), deadline = begin + m->kernel_ns, folded, end;
#ifdef PROVER_TEST_OBSERVER
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
#endif
	struct timespec until = { .tv_sec = deadline / NS_PER_S, .tv_nsec = deadline % NS_PER_S };

	gpu_model_fold(a, b, c, n, pending);
	folded = clock_ns(CLOCK_MONOTONIC);
	if (folded > deadline) {
		/* the fold alone outlasted the kernel time (a starved CPU): not the model's time */
		m->overruns++;
		m->overrun_ns += folded - deadline;
	}
	/* absolute: a signal cannot shorten the region, and nothing is left to compute */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
	end = clock_ns(CLOCK_MONOTONIC);
	m->regions++;
	m->busy_ns += end - begin;
#ifdef PROVER_TEST_OBSERVER
	observer_device_region(owner, begin, end, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
#else
	(void)owner;
#endif
}
