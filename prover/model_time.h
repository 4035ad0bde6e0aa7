/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Time for the MODELLED parts of the prover (the device, gpu_model.h; the host's
 * synthesis, host_model.h): the clock, the sleep to an absolute deadline, and the seeded
 * per-partition variation of a modelled duration. A duration depends only on the mean,
 * the spread, the seed and the partition's owner id, never on the schedule, so the same
 * seed gives every variant of a run the same durations (a paired comparison).
 */
#ifndef PROVER_MODEL_TIME_H
#define PROVER_MODEL_TIME_H

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include "rng.h"

#define MODEL_NS_PER_S 1000000000ull
#define MODEL_MAX_SPREAD_PCT 90 /* a duration never drops below a tenth of its mean */
#define MODEL_DEFAULT_SEED 1

/* which model a draw is for: the device and the host draw independent numbers */
enum model_salt { MODEL_SALT_DEVICE = 0x646576, MODEL_SALT_HOST = 0x686f7374 };

static inline uint64_t model_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * MODEL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline uint64_t model_now_ns(void)
{
	return model_clock_ns(CLOCK_MONOTONIC);
}

/* absolute: a signal or an early wake-up cannot shorten the wait; a past deadline returns */
static inline void model_sleep_until(uint64_t deadline_ns)
{
	struct timespec until = { .tv_sec = deadline_ns / MODEL_NS_PER_S,
				  .tv_nsec = deadline_ns % MODEL_NS_PER_S };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

/*
 * `mean_ns` times (1 + u), u uniform in [-spread_pct/100, +spread_pct/100] in steps of
 * 2^-32 of the range, drawn from (seed, salt, owner) alone. spread_pct 0 gives the mean.
 */
static inline uint64_t model_vary_ns(uint64_t mean_ns, unsigned spread_pct, uint64_t seed,
				     enum model_salt salt, uint64_t owner)
{
	uint64_t r = rng_mix(rng_mix(seed ^ ((uint64_t)salt << 32)) ^ owner) >> 32;
	/* (2r / 2^32 - 1) * spread / 100, in integer arithmetic: r < 2^32 */
	__int128 delta = (__int128)mean_ns * spread_pct * ((int64_t)(2 * r) - (1ll << 32));

	return (uint64_t)((__int128)mean_ns + delta / ((__int128)100 << 32));
}

#endif /* PROVER_MODEL_TIME_H */
