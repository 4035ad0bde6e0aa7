/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A MODELLED host for synthesis (--host=model; docs/prover.md, "The modelled host"). On
 * cuzk's host every synthesizing partition has cores of its own, so a synthesis takes its
 * time whether 1 or 12 run at once; on a 2-core machine a dozen syntheses would share two
 * cores and each would run slower the more run at once, which changes what a permit
 * policy costs. Here each partition still does its real work (the real witness into real,
 * fully touched a, b, c, aux buffers), then waits until its modelled duration has passed
 * since it began: an absolute deadline, like the modelled device's. The duration comes
 * from the work (constraints x synthesis rounds) at a rate, varied per partition by a
 * seeded draw (model_time.h), and never from how many partitions synthesize at once.
 * Real work that outlasts its duration is an overrun: counted, and the summary says so;
 * the synthesis still ends at its deadline by the model's clock (a host with cores of its
 * own would have finished), and the run lags the model there until its threads catch up.
 */
#ifndef PROVER_HOST_MODEL_H
#define PROVER_HOST_MODEL_H

#include <stdint.h>

/*
 * cuzk's synthesis under load, 36.5 s for a 130.3M-constraint partition, 50 times
 * shorter for a partition of 2^17 (126,976 constraints; the story's size, prover/story.sh):
 * 729.7 ms at 174k/s. A partition of 2^18 takes twice that.
 */
#define HOST_MODEL_DEFAULT_KCPS 174 /* thousand constraints per second per partition */
#define HOST_MODEL_MIN_KCPS 1
#define HOST_MODEL_MAX_KCPS 100000000
#define HOST_MODEL_DEFAULT_SPREAD 20 /* percent either side of the mean */

struct host_model {
	unsigned kcps, spread_pct;
	uint64_t seed;
	uint64_t synth_ns; /* the mean duration of one partition's synthesis */
	/* the host's account, added to by every partition's thread (atomically) */
	uint64_t syntheses, modelled_ns, overruns, overrun_ns;
	uint64_t max_real_permille; /* the largest share of its duration real work took */
};

/* The mean duration of synthesizing `constraints` rows, `rounds` each, at `kcps`. */
uint64_t host_model_synth_ns(uint64_t constraints, unsigned rounds, unsigned kcps);

void host_model_init(struct host_model *m, uint64_t constraints, unsigned rounds,
		     unsigned kcps, unsigned spread_pct, uint64_t seed);

/* Partition `owner`'s modelled duration: the same for the same seed, whatever the schedule. */
uint64_t host_model_duration_ns(const struct host_model *m, uint64_t owner);

/*
 * Called when `owner`'s real synthesis work is done; by the model's clock it began at
 * `begin_ns` (CLOCK_MONOTONIC, at or before the real start: sync.h). Sleeps until
 * begin_ns + its duration and returns that time; if the work already took longer, counts
 * an overrun and returns at once, with the same time.
 */
uint64_t host_model_finish(struct host_model *m, uint64_t owner, uint64_t begin_ns);

#ifdef PROVER_TEST_OBSERVER
/* test-only: each synthesis's owner, begin, deadline, end of real work, end, thread CPU */
void observer_host_synthesis(uint64_t owner, uint64_t begin_ns, uint64_t deadline_ns,
			     uint64_t worked_ns, uint64_t end_ns, uint64_t thread_cpu_ns);
#endif

#endif /* PROVER_HOST_MODEL_H */
