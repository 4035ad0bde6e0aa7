// SPDX-License-Identifier: BSD-2-Clause
/* The modelled host's synthesis time (see host_model.h). */
#include <stdbool.h>
#include "host_model.h"
#include "model_time.h"

uint64_t host_model_synth_ns(uint64_t constraints, unsigned rounds, unsigned kcps)
{
	/* constraints * rounds / (kcps * 1000) seconds, rounded up to the nanosecond */
	unsigned __int128 work = (unsigned __int128)constraints * rounds * 1000000;

	return (uint64_t)((work + kcps - 1) / kcps);
}

void host_model_init(struct host_model *m, uint64_t constraints, unsigned rounds,
		     unsigned kcps, unsigned spread_pct, uint64_t seed)
{
	*m = (struct host_model){
		.kcps = kcps,
		.spread_pct = spread_pct,
		.seed = seed,
		.synth_ns = host_model_synth_ns(constraints, rounds, kcps),
	};
}

uint64_t host_model_duration_ns(const struct host_model *m, uint64_t owner)
{
	return model_vary_ns(m->synth_ns, m->spread_pct, m->seed, MODEL_SALT_HOST, owner);
}

static void raise_to(uint64_t *max, uint64_t v)
{
	uint64_t cur = __atomic_load_n(max, __ATOMIC_RELAXED);

	while (v > cur &&
	       !__atomic_compare_exchange_n(max, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

uint64_t host_model_finish(struct host_model *m, uint64_t owner, uint64_t begin_ns)
{
	uint64_t duration = host_model_duration_ns(m, owner), deadline = begin_ns + duration;
	uint64_t worked = model_now_ns();

	if (worked > deadline) {
		/* the real work did not fit (a starved CPU): the run lags the model's time here */
		__atomic_add_fetch(&m->overruns, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&m->overrun_ns, worked - deadline, __ATOMIC_RELAXED);
	}
	raise_to(&m->max_real_permille, duration ? (worked - begin_ns) * 1000 / duration : 0);
	model_sleep_until(deadline);
	__atomic_add_fetch(&m->syntheses, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&m->modelled_ns, duration, __ATOMIC_RELAXED);
#ifdef PROVER_TEST_OBSERVER
	observer_host_synthesis(owner, begin_ns, deadline, worked, model_now_ns(),
				model_clock_ns(CLOCK_THREAD_CPUTIME_ID));
#endif
	return deadline;
}
