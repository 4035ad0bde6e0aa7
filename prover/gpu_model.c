// SPDX-License-Identifier: BSD-2-Clause
/* The modelled GPU (see gpu_model.h). */
#include "field.h"
#include "gpu_model.h"
#include "model_time.h"

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
		    const struct gpu_model_params *p)
{
	*m = (struct gpu_model){
		.mops = p->mops,
		.spread_pct = p->spread_pct,
		.seed = p->seed,
		.kernel_ns = gpu_model_kernel_ns(gpu_model_ops(log_n, extra_rounds), p->mops),
	};
}

uint64_t gpu_model_kernel_of(const struct gpu_model *m, uint64_t owner)
{
	return model_vary_ns(m->kernel_ns, m->spread_pct, m->seed, MODEL_SALT_DEVICE, owner);
}

uint64_t gpu_model_region(struct gpu_model *m, uint64_t owner, uint64_t arrived_ns,
			  const uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n,
			  uint64_t *pending)
{
	uint64_t locked = model_now_ns(), kernel = gpu_model_kernel_of(m, owner);
	uint64_t begin = arrived_ns > m->free_at ? arrived_ns : m->free_at;
	uint64_t deadline = begin + kernel, folded;
#ifdef PROVER_TEST_OBSERVER
	uint64_t cpu0 = model_clock_ns(CLOCK_THREAD_CPUTIME_ID);
#endif

	gpu_model_fold(a, b, c, n, pending);
	folded = model_now_ns();
	if (folded > deadline) {
		/* the fold ended past the kernel time (a starved CPU): the run lags the model here */
		m->overruns++;
		m->overrun_ns += folded - deadline;
	}
	if (kernel && (folded - begin) * 1000 / kernel > m->max_real_permille)
		m->max_real_permille = (folded - begin) * 1000 / kernel;
	model_sleep_until(deadline);
	m->free_at = deadline;
	m->regions++;
	m->busy_ns += kernel;
#ifdef PROVER_TEST_OBSERVER
	observer_device_region(owner, begin, deadline, locked, model_now_ns(),
			       model_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
#else
	(void)locked;
#endif
	return m->free_at;
}
