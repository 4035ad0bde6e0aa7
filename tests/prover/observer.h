/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A test-only observer of the prover: libprover-test.a is the prover compiled with
 * PROVER_TEST_OBSERVER, whose track_* calls land here as well as at the probes. It keeps
 * what the production binary must not (per-owner state, counts, maxima), checks every
 * event against the contract, and can hold the GPU stage shut so the scheduler stalls at a
 * known, deterministic point.
 */
#ifndef TEST_PROVER_OBSERVER_H
#define TEST_PROVER_OBSERVER_H

#include <stdbool.h>
#include <stdint.h>
#include "gpu_model.h"
#include "prover_ids.h"

void observer_reset(void);

/* While closed, a GPU worker entering the gpu stage waits there. */
void observer_gate_close(void);
void observer_gate_open(void);

/* Waits (at most timeout_s) until exactly these many owners are in each stage. */
bool observer_wait_stages(unsigned in_wait_permit, unsigned in_gpu, unsigned in_gpu_queue,
			  unsigned in_chan_send, unsigned timeout_s);

unsigned observer_owners_in(enum prover_stage stage);
unsigned observer_abc_holders(void);	 /* partitions holding a/b/c now */
unsigned observer_max_abc_holders(void); /* ... at most, since the reset */
unsigned observer_live_buffers(void);
uint64_t observer_allocs(enum prover_class cls); /* buffers of the class ever allocated */

/* The most owners seen in `stage` at once, since the reset. */
unsigned observer_max_in(enum prover_stage stage);

/*
 * The modelled device's regions since the reset (gpu_model.h reports each from inside
 * the device lock): how many; whether any two overlapped, by the model's clock or in real
 * time (from the lock to the real end); whether one ended, really, before its model end or
 * began by the model's clock after the worker had the lock; the shortest real length; the
 * most CPU time one of them used; how many lasted, by the model's clock, exactly their
 * owner's kernel time (gpu_model_kernel_of) and how many began exactly when the previous
 * one ended; and the latest end by the model's clock.
 */
struct observer_regions {
	unsigned count;
	bool overlap, real_overlap, early, late_begin;
	uint64_t min_ns, max_cpu_ns, last_end;
	unsigned exact_kernel, back_to_back;
};
void observer_device_regions(const struct gpu_model *m, struct observer_regions *out);

/* One synthesis on the modelled host (host_model.h), as it reported itself. */
struct observer_synthesis {
	uint64_t owner, begin, deadline, worked, end, cpu;
};

/* The modelled host's syntheses since the reset, in the order they ended; returns how many. */
unsigned observer_host_syntheses(struct observer_synthesis *out, unsigned max);

/* Contract violations seen since the reset; the first one described in `first`. */
unsigned observer_violations(const char **first);

#endif /* TEST_PROVER_OBSERVER_H */
