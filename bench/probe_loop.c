// SPDX-License-Identifier: BSD-2-Clause
/*
 * probe_loop: fires the contract's events in a tight loop (or at a set rate) from N threads
 * and prints the cost per event. Built once per emitter (see bench/emit.h); the tracer being
 * measured attaches from outside, and --wait-enabled holds the measurement until it listens.
 *
 * With -F, the threads page-fault instead (touch each page of 1 MiB, drop them, again: a hit
 * is a page touched): each fault changes the process's RSS, so the kernel fires kmem:rss_stat, which
 * inflight also traces. This measures what that costs, in the traced process and elsewhere.
 *
 * Output, one line of key=value pairs (scripts/bench.sh and tests/t_bench_smoke.sh parse it):
 *   probe_loop emitter=usdt work=pipeline threads=1 pipes=4 rate=0 seconds=1.000 hits=N ns_per_hit=X
 *   wall_ns_per_hit=X2 mhits_per_s=Y enabled_ns=T wait_ms=W allocs=A frees=F stages=S
 *   residual=0
 * hits, seconds and the per-hit figures cover the measured window only. ns_per_hit is the
 * firing threads' CPU time (user + kernel: a uprobe and its BPF program run in the thread
 * that hit it) over their events, so other processes taking turns on the CPUs do not count;
 * wall_ns_per_hit is their wall time over their events. allocs/frees/stages count every
 * event of the run after the wait, so a tracer that attached before it saw exactly these.
 * With -L each event is timed on its own, by the wall clock and by the thread's CPU clock,
 * and a second line gives the worst of each (max_ns_per_hit, max_cpu_ns_per_hit) and how many
 * took over 10 us, 100 us, 1 ms (hits_over_*, cpu_hits_over_*). Wall time counts the time
 * the thread was preempted too; CPU time only what it spent running, e.g. spinning for a
 * lock in the kernel, so it tells a spin from the scheduler's doing.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include "emit.h"
#include "pipeline_step.h"

#define MAX_THREADS 16
#define MAX_PIPES 64
#define RATE_CHECK_ROUNDS 16 /* rounds of steps between two looks at the clock when paced */
#define FAULT_REGION (1u << 20) /* -F: bytes mapped, touched page by page, unmapped */
#define PAGE 4096u

enum phase { PHASE_WARMUP, PHASE_MEASURE, PHASE_STOP };

struct opts {
	unsigned int threads;
	unsigned int pipes;
	double seconds;
	double warmup;
	double rate; /* events per second, all threads together; 0: as fast as possible */
	double wait_timeout; /* > 0: wait until a tracer listens, at most this long */
	unsigned int poll_us;
	double settle; /* after the wait: let the tracer finish attaching */
	bool faults; /* page-fault instead of firing events */
	bool latency; /* time every event: the worst stall */
};

struct worker {
	pthread_t thread;
	unsigned int index;
	const struct opts *opts;
	uint64_t owners;     /* owners completed: every one fired exactly PIPE_STEPS events */
	uint64_t hits;	     /* events in the measured window */
	uint64_t elapsed_ns; /* length of the measured window as this thread saw it */
	uint64_t cpu_ns;     /* this thread's CPU time in it */
	uint64_t max_ns;     /* -L: the longest event in it (wall clock) */
	uint64_t over[3];    /* -L: events longer than 10 us, 100 us, 1 ms */
	uint64_t max_cpu_ns; /* -L: the same by the thread's CPU clock */
	uint64_t cpu_over[3];
};

static _Atomic int phase = PHASE_WARMUP;

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

static void sleep_until_ns(uint64_t when)
{
	struct timespec ts = { .tv_sec = when / 1000000000ull, .tv_nsec = when % 1000000000ull };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void sleep_s(double seconds)
{
	sleep_until_ns(mono_ns() + (uint64_t)(seconds * 1e9));
}

/* Paced mode: hold back until `done` events are due at `per_s` events per second. */
static void pace(uint64_t start_ns, uint64_t done, double per_s)
{
	uint64_t due = start_ns + (uint64_t)((double)done * 1e9 / per_s);

	if (due > mono_ns())
		sleep_until_ns(due);
}

/* Faults each page of `region` in, then drops them all (MADV_DONTNEED): returns the pages
 * touched. Reusing one mapping keeps mmap/munmap's own cost out of the figure. */
static unsigned int fault_region(volatile char *region)
{
	unsigned int off;

	for (off = 0; off < FAULT_REGION; off += PAGE)
		region[off] = 1;
	madvise((void *)region, FAULT_REGION, MADV_DONTNEED);
	return FAULT_REGION / PAGE;
}

static void latency_note(uint64_t *max, uint64_t over[3], uint64_t d)
{
	if (d > *max)
		*max = d;
	over[0] += d > 10000;
	over[1] += d > 100000;
	over[2] += d > 1000000;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->opts;
	struct pipe pipes[MAX_PIPES];
	double per_s = o->rate / o->threads;
	uint64_t start_ns, t0 = 0, cpu0 = 0, hits = 0, hits0 = 0, rounds = 0;
	int seen = PHASE_WARMUP;
	volatile char *region = NULL;
	unsigned int i, k;

	/* stagger the pipes along the pipeline, so that owners sit in different stages */
	for (i = 0; i < o->pipes; i++) {
		pipe_init(&pipes[i], w->index * MAX_PIPES + i);
		for (k = 0; k < i * PIPE_STEPS / o->pipes; k++)
			pipe_step(&pipes[i]);
	}
	if (o->faults) {
		region = mmap(NULL, FAULT_REGION, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (region == MAP_FAILED) {
			perror("probe_loop: mmap");
			exit(1);
		}
	}
	start_ns = mono_ns();
	for (;;) {
		if (o->faults) {
			hits += fault_region(region);
		} else if (o->latency && seen == PHASE_MEASURE) {
			for (i = 0; i < o->pipes; i++) {
				uint64_t c = clock_ns(CLOCK_THREAD_CPUTIME_ID), a = mono_ns(), d, dc;

				pipe_step(&pipes[i]);
				d = mono_ns() - a;
				dc = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
				latency_note(&w->max_ns, w->over, d);
				latency_note(&w->max_cpu_ns, w->cpu_over, dc);
			}
			hits += o->pipes;
		} else {
			for (i = 0; i < o->pipes; i++)
				pipe_step(&pipes[i]);
			hits += o->pipes;
		}
		int now = atomic_load_explicit(&phase, memory_order_relaxed);
		if (now != seen) {
			seen = now;
			if (now == PHASE_MEASURE) {
				t0 = mono_ns();
				cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
				hits0 = hits;
			} else {
				w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
				w->elapsed_ns = mono_ns() - t0;
				w->hits = hits - hits0;
				break;
			}
		}
		if (per_s > 0 && ++rounds % RATE_CHECK_ROUNDS == 0)
			pace(start_ns, hits, per_s);
	}
	/* drain: finish every owner, so that nothing is left in flight */
	for (i = 0; i < o->pipes; i++) {
		while (pipes[i].step)
			pipe_step(&pipes[i]);
		w->owners += pipes[i].serial;
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: probe_loop [-t THREADS] [-p PIPES] [-d SECONDS] [-w WARMUP] [-r RATE]\n"
		"                  [-W TIMEOUT] [-P POLL_US] [-S SETTLE] [-F] [-L]\n"
		"Fires the inflight probe contract's events in a loop and prints the cost per event.\n"
		"  -t, --threads N        threads firing events (1-%d, default 1)\n"
		"  -p, --pipes N          owners in flight per thread (1-%d, default 4)\n"
		"  -d, --seconds S        measured window (default 1)\n"
		"  -w, --warmup S         unmeasured run before it (default 0.2)\n"
		"  -r, --rate N           events per second, all threads (default 0: flat out)\n"
		"  -W, --wait-enabled S   first wait until a tracer listens on all three events\n"
		"                         (exit 3 after S seconds if none does)\n"
		"  -P, --poll-us N        how often to look while waiting (default 100)\n"
		"  -S, --settle S         then wait S more before the first event (default 0.05)\n"
		"  -F, --faults           page-fault instead of firing events (a hit: one page)\n"
		"  -L, --latency          time every event: the worst one, and how many were slow\n",
		MAX_THREADS, MAX_PIPES);
}

static double parse_num(const char *s, const char *what, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "probe_loop: bad %s '%s' (want %g..%g)\n", what, s, lo, hi);
		exit(2);
	}
	return v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "pipes", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "wait-enabled", required_argument, NULL, 'W' },
		{ "poll-us", required_argument, NULL, 'P' },
		{ "settle", required_argument, NULL, 'S' },
		{ "faults", no_argument, NULL, 'F' },
		{ "latency", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct opts){ .threads = 1, .pipes = 4, .seconds = 1, .warmup = 0.2,
			    .poll_us = 100, .settle = 0.05 };
	while ((c = getopt_long(argc, argv, "t:p:d:w:r:W:P:S:FLh", longopts, NULL)) != -1) {
		switch (c) {
		case 't': o->threads = parse_num(optarg, "thread count", 1, MAX_THREADS); break;
		case 'p': o->pipes = parse_num(optarg, "pipe count", 1, MAX_PIPES); break;
		case 'd': o->seconds = parse_num(optarg, "duration", 0.001, 3600); break;
		case 'w': o->warmup = parse_num(optarg, "warmup", 0, 3600); break;
		case 'r': o->rate = parse_num(optarg, "rate", 0, 1e10); break;
		case 'W': o->wait_timeout = parse_num(optarg, "timeout", 0.001, 3600); break;
		case 'P': o->poll_us = parse_num(optarg, "poll interval", 1, 1e6); break;
		case 'S': o->settle = parse_num(optarg, "settle time", 0, 60); break;
		case 'F': o->faults = true; break;
		case 'L': o->latency = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
}

/* Returns the time all three events became enabled, 0 on timeout. */
static uint64_t wait_enabled(const struct opts *o)
{
	uint64_t deadline = mono_ns() + (uint64_t)(o->wait_timeout * 1e9);
	struct timespec poll = { .tv_nsec = o->poll_us * 1000l % 1000000000l,
				 .tv_sec = o->poll_us / 1000000 };

	for (;;) {
		uint64_t now = mono_ns();
		if (emit_enabled())
			return now;
		if (now > deadline)
			return 0;
		nanosleep(&poll, NULL);
	}
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS];
	struct opts o;
	uint64_t start_ns, enabled_ns = 0, owners = 0, hits = 0, thread_ns = 0, cpu_ns = 0;
	uint64_t longest = 0, max_ns = 0, over[3] = { 0 }, max_cpu_ns = 0, cpu_over[3] = { 0 };
	struct pipe srs;
	unsigned int i;
	int err;

	parse_opts(argc, argv, &o);
	/* paced mode sleeps in steps of microseconds: do not let the timer round them up */
	prctl(PR_SET_TIMERSLACK, 1ul);
	start_ns = mono_ns();
	if (o.wait_timeout > 0) {
		enabled_ns = wait_enabled(&o);
		if (!enabled_ns) {
			fprintf(stderr, "probe_loop: no tracer listened within %gs\n", o.wait_timeout);
			return 3;
		}
		/*
		 * The kernel raises a semaphore as it registers the uprobe, just before writing
		 * the breakpoint, and a tracer attaches its BPF program to the uprobe's perf event
		 * only after that: events fired at once could still be missed.
		 */
		sleep_s(o.settle);
	}
	/* a process-wide buffer with no owner, like the prover's SRS */
	pipe_init(&srs, MAX_THREADS * MAX_PIPES);
	srs.owner = 0;
	pipe_alloc(&srs, 0, CLS_srs, 1ull << 30);
	for (i = 0; i < o.threads; i++) {
		workers[i] = (struct worker){ .index = i, .opts = &o };
		err = pthread_create(&workers[i].thread, NULL, worker_run, &workers[i]);
		if (err) {
			fprintf(stderr, "probe_loop: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	sleep_s(o.warmup);
	atomic_store(&phase, PHASE_MEASURE);
	sleep_s(o.seconds);
	atomic_store(&phase, PHASE_STOP);
	for (i = 0; i < o.threads; i++) {
		pthread_join(workers[i].thread, NULL);
		owners += workers[i].owners;
		hits += workers[i].hits;
		thread_ns += workers[i].elapsed_ns;
		cpu_ns += workers[i].cpu_ns;
		if (workers[i].elapsed_ns > longest)
			longest = workers[i].elapsed_ns;
		if (workers[i].max_ns > max_ns)
			max_ns = workers[i].max_ns;
		if (workers[i].max_cpu_ns > max_cpu_ns)
			max_cpu_ns = workers[i].max_cpu_ns;
		for (int k = 0; k < 3; k++) {
			over[k] += workers[i].over[k];
			cpu_over[k] += workers[i].cpu_over[k];
		}
	}
	pipe_free(&srs, 0, CLS_srs, 1ull << 30);
	printf("probe_loop emitter=%s work=%s threads=%u pipes=%u rate=%.0f seconds=%.6f hits=%" PRIu64
	       " ns_per_hit=%.3f wall_ns_per_hit=%.3f mhits_per_s=%.3f enabled_ns=%" PRIu64 " wait_ms=%.3f"
	       " allocs=%" PRIu64 " frees=%" PRIu64 " stages=%" PRIu64 " residual=%" PRIu64 "\n",
	       emit_name, o.faults ? "faults" : "pipeline", o.threads, o.pipes, o.rate, (double)longest / 1e9, hits,
	       hits ? (double)cpu_ns / (double)hits : 0.0,
	       hits ? (double)thread_ns / (double)hits : 0.0,
	       longest ? (double)hits * 1e3 / (double)longest : 0.0, enabled_ns,
	       enabled_ns ? (double)(enabled_ns - start_ns) / 1e6 : 0.0,
	       owners * PIPE_ALLOCS + 1, owners * PIPE_FREES + 1, owners * PIPE_STAGES,
	       emit_residual());
	if (o.latency)
		printf("probe_loop_latency max_ns_per_hit=%" PRIu64 " hits_over_10us=%" PRIu64
		       " hits_over_100us=%" PRIu64 " hits_over_1ms=%" PRIu64 " max_cpu_ns_per_hit=%" PRIu64
		       " cpu_hits_over_10us=%" PRIu64 " cpu_hits_over_100us=%" PRIu64
		       " cpu_hits_over_1ms=%" PRIu64 "\n",
		       max_ns, over[0], over[1], over[2], max_cpu_ns, cpu_over[0], cpu_over[1],
		       cpu_over[2]);
	return 0;
}
