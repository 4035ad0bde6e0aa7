// SPDX-License-Identifier: BSD-2-Clause
/*
 * sites_target: a program with N USDT probe sites of the contract (bench/gen_sites.sh makes
 * one per N), for the attach and teardown benchmark. It waits until a tracer listens (-W),
 * fires every site once per round, can then wait until the tracer's uprobes are gone again
 * (-z: all three semaphores back at 0, which the kernel does when it unregisters the last
 * uprobe of a probe), and notes each moment with CLOCK_MONOTONIC. Output, key=value:
 *   sites_target fired sites=N rounds=R hits=H allocs=A frees=F stages=S ns_per_hit=X
 *                enabled_ns=T fired_ns=T
 *   sites_target exit sema_zero_ns=T exit_ns=T
 * (sema_zero_ns=0 without -z or when the time ran out; exit_ns is taken right before main
 * returns); ns_per_hit is the CPU time (user + kernel: the uprobes and their BPF programs run
 * in this thread) of the rounds over the hits. Exit status 3 when -W or -z ran out of time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "prover_trace.h"
#include "sites_target.h"

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* volatile: the loops that wait must see the kernel's writes */
static unsigned int semaphores_set(void)
{
	return !!*(volatile unsigned short *)&prover_buf_alloc_semaphore +
	       !!*(volatile unsigned short *)&prover_buf_free_semaphore +
	       !!*(volatile unsigned short *)&prover_stage_semaphore;
}

/* Polls every 50 us until semaphores_set() == want; the time it did, 0 on timeout. */
static uint64_t wait_semaphores(unsigned int want, double timeout_s)
{
	uint64_t deadline = mono_ns() + (uint64_t)(timeout_s * 1e9);
	struct timespec step = { .tv_nsec = 50000 };

	for (;;) {
		uint64_t now = mono_ns();

		if (semaphores_set() == want)
			return now;
		if (now > deadline)
			return 0;
		nanosleep(&step, NULL);
	}
}

static double parse_num(const char *s, const char *what, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "sites_target: bad %s '%s' (want %g..%g)\n", what, s, lo, hi);
		exit(2);
	}
	return v;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: sites_target [-r ROUNDS] [-W TIMEOUT [-s SETTLE]] [-z TIMEOUT]\n"
		   "Fires each of its %u USDT probe sites once per round (default 1).\n"
		   "  -W S  first wait until a tracer listens on all three probes (exit 3 after S s)\n"
		   "  -s S  then S seconds more (the tracer attaches the other sites)\n"
		   "  -z S  then wait until all three semaphores are 0 again (exit 3 after S s)\n",
		sites_count);
}

int main(int argc, char **argv)
{
	double wait_s = 0, zero_s = 0, settle_s = 0;
	uint64_t rounds = 1, enabled_ns = 0, zero_ns = 0, cpu_ns, r;
	int c, rc = 0;

	while ((c = getopt(argc, argv, "r:W:s:z:h")) != -1) {
		switch (c) {
		case 'r': rounds = parse_num(optarg, "round count", 1, 1e9); break;
		case 'W': wait_s = parse_num(optarg, "timeout", 0.001, 3600); break;
		case 's': settle_s = parse_num(optarg, "settle time", 0, 60); break;
		case 'z': zero_s = parse_num(optarg, "timeout", 0.001, 3600); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (wait_s > 0 && !(enabled_ns = wait_semaphores(3, wait_s))) {
		fprintf(stderr, "sites_target: no tracer listened within %gs\n", wait_s);
		return 3;
	}
	if (settle_s > 0) /* the first uprobe of a probe raises its semaphore: let the rest come */
		nanosleep(&(struct timespec){ .tv_sec = (time_t)settle_s,
					      .tv_nsec = (long)((settle_s - (time_t)settle_s) * 1e9) },
			  NULL);
	cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (r = 0; r < rounds; r++)
		sites_fire((r + 1) << 32, 4096, ((r + 1) << 32) + 1);
	cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_ns;
	printf("sites_target fired sites=%u rounds=%" PRIu64 " hits=%" PRIu64 " allocs=%" PRIu64
	       " frees=%" PRIu64 " stages=%" PRIu64 " ns_per_hit=%.1f enabled_ns=%" PRIu64
	       " fired_ns=%" PRIu64 "\n", sites_count, rounds, rounds * sites_count,
	       rounds * sites_per_probe[0], rounds * sites_per_probe[2], rounds * sites_per_probe[1],
	       (double)cpu_ns / (double)(rounds * sites_count), enabled_ns, mono_ns());
	fflush(stdout);
	if (zero_s > 0 && !(zero_ns = wait_semaphores(0, zero_s))) {
		fprintf(stderr, "sites_target: semaphores still set after %gs\n", zero_s);
		rc = 3;
	}
	printf("sites_target exit sema_zero_ns=%" PRIu64 " exit_ns=%" PRIu64 "\n", zero_ns,
	       mono_ns());
	fflush(stdout);
	return rc;
}
