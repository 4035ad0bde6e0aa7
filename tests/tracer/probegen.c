// SPDX-License-Identifier: BSD-2-Clause
/*
 * probegen: fires the contract's probes in scripted sequences with known answers, for the
 * tracer's tests. Usage:
 *   probegen script FILE      run the ops in FILE (one per line):
 *                               alloc BUF CLS BYTES OWNER | free BUF CLS BYTES |
 *                               stage OWNER STAGE | gate | # comment |
 *                               fork FILE | wait | exec PATH FILE | pause MS
 *                             `gate` prints "gated" and waits for SIGUSR1 (late attach);
 *                             `fork` starts a child running script FILE (its pid is
 *                             appended to $PROBEGEN_PIDS as "FILE PID"), `wait` waits for
 *                             every child, `exec` becomes `PATH script FILE`.
 *   probegen threads N K      N threads, each: stage(born), K allocs of (t+1)*4096 bytes of
 *                             class t%6, barrier, stage(work), barrier, frees, stage(end)
 *   probegen hammer T N       T threads, each N rounds of stage(born), alloc, stage(work),
 *                             free, stage(end) on an owner and a buffer of its own, all
 *                             starting together
 *   probegen churn T N        T threads, each N rounds of the same five events on an owner
 *                             they all share (owner 1 or 2, alternating) and a buffer of
 *                             its own: the owners retire and start again while other threads
 *                             still move, fill and free them
 *   probegen storm N [gate]   N alloc/stage/free rounds as fast as possible (one owner);
 *                             with `gate`: wait for SIGUSR1 first, then print the cost
 *                             "storm: E events, T ns/event" (5 events a round)
 *   probegen spin MS          stage events of one owner for MS milliseconds (attach tests)
 * Every probe sits behind its semaphore, as in the prover.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "inflight_note.h"
#include "prover_probes.h"
#include "probegen_ids.h"

INFLIGHT_NAMES_NOTE(probegen_names, "prover", PROBEGEN_CLASSES, PROBEGEN_STAGES);

static int run_script(const char *path);

static void p_alloc(uint64_t buf, uint32_t cls, uint64_t bytes, uint64_t owner)
{
	if (PROVER_BUF_ALLOC_ENABLED())
		PROVER_BUF_ALLOC(buf, cls, bytes, owner);
}

static void p_free(uint64_t buf, uint32_t cls, uint64_t bytes)
{
	if (PROVER_BUF_FREE_ENABLED())
		PROVER_BUF_FREE(buf, cls, bytes);
}

static void p_stage(uint64_t owner, uint32_t stage)
{
	if (PROVER_STAGE_ENABLED())
		PROVER_STAGE(owner, stage);
}

static int usage(void)
{
	fprintf(stderr, "usage: probegen script FILE | threads N K | hammer T N | churn T N | "
			"storm N [gate] | "
			"spin MS\n");
	return 2;
}

static void gate(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	printf("gated\n");
	fflush(stdout);
	sigwait(&set, &sig);
}

/* fork FILE: a child that runs script FILE, its pid noted for the test */
static int script_fork(const char *file)
{
	const char *log = getenv("PROBEGEN_PIDS");
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) /* _exit: exit() would rewind the parent's script (a shared offset) */
		_exit(run_script(file));
	if (log) {
		FILE *f = fopen(log, "a");

		if (f) {
			fprintf(f, "%s %d\n", file, (int)pid);
			fclose(f);
		}
	}
	return 0;
}

static int script_op(const char *line)
{
	char a1[256], a2[256];
	unsigned ms;

	if (sscanf(line, "fork %255s", a1) == 1)
		return script_fork(a1);
	if (!strncmp(line, "wait", 4)) {
		while (wait(NULL) > 0)
			;
		return 0;
	}
	if (sscanf(line, "exec %255s %255s", a1, a2) == 2) {
		fflush(stdout);
		execl(a1, a1, "script", a2, (char *)NULL);
		return 1;
	}
	if (sscanf(line, "pause %u", &ms) == 1) {
		struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&t, NULL);
		return 0;
	}
	return -1;
}

static int run_script(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[256];
	int lineno = 0, err;

	if (!f) {
		fprintf(stderr, "probegen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, c, d;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "alloc %lli %lli %lli %lli", &a, &b, &c, &d) == 4)
			p_alloc(a, b, c, d);
		else if (sscanf(line, "free %lli %lli %lli", &a, &b, &c) == 3)
			p_free(a, b, c);
		else if (sscanf(line, "stage %lli %lli", &a, &b) == 2)
			p_stage(a, b);
		else if (strncmp(line, "gate", 4) == 0)
			gate();
		else if ((err = script_op(line)) > 0)
			return err;
		else if (err < 0) {
			fprintf(stderr, "probegen: %s:%d: bad op: %s", path, lineno, line);
			return 1;
		}
	}
	if (f != stdin)
		fclose(f);
	return 0;
}

struct worker {
	pthread_t thread;
	unsigned t, k;
	pthread_barrier_t *barrier;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t owner = 1000 + w->t, bytes = (w->t + 1) * 4096ull;
	uint32_t cls = w->t % PROBEGEN_NCLASSES;

	p_stage(owner, 0);
	for (unsigned i = 0; i < w->k; i++)
		p_alloc((owner << 20) + i, cls, bytes, owner);
	pthread_barrier_wait(w->barrier);
	p_stage(owner, 1);
	pthread_barrier_wait(w->barrier);
	for (unsigned i = 0; i < w->k; i++)
		p_free((owner << 20) + i, cls, bytes);
	p_stage(owner, 4);
	return NULL;
}

static int run_threads(unsigned n, unsigned k)
{
	struct worker *w = calloc(n, sizeof(*w));
	pthread_barrier_t barrier;

	if (!w || n == 0)
		return 1;
	pthread_barrier_init(&barrier, NULL, n);
	for (unsigned t = 0; t < n; t++) {
		w[t] = (struct worker){ .t = t, .k = k, .barrier = &barrier };
		pthread_create(&w[t].thread, NULL, work, &w[t]);
	}
	for (unsigned t = 0; t < n; t++)
		pthread_join(w[t].thread, NULL);
	pthread_barrier_destroy(&barrier);
	free(w);
	return 0;
}

struct hammer {
	pthread_t thread;
	unsigned t, n;
	bool shared; /* churn: the owners are the threads' common 1 and 2 */
	pthread_barrier_t *start;
};

static void *hammer_one(void *arg)
{
	struct hammer *h = arg;

	pthread_barrier_wait(h->start); /* all at once: the threads' hits overlap */
	for (unsigned i = 0; i < h->n; i++) {
		uint64_t owner = ((uint64_t)h->t << 32) + i + 1, buf = owner << 4;

		if (h->shared)
			owner = 1 + (i & 1);

		p_stage(owner, 0);
		p_alloc(buf, h->t % PROBEGEN_NCLASSES, 4096, owner);
		p_stage(owner, 1);
		p_free(buf, h->t % PROBEGEN_NCLASSES, 4096);
		p_stage(owner, 4);
	}
	return NULL;
}

static int run_hammer(unsigned t, unsigned n, bool shared)
{
	struct hammer *h = calloc(t, sizeof(*h));
	pthread_barrier_t start;

	if (!h || !t)
		return 1;
	pthread_barrier_init(&start, NULL, t);
	for (unsigned i = 0; i < t; i++) {
		h[i] = (struct hammer){ .t = i, .n = n, .shared = shared, .start = &start };
		pthread_create(&h[i].thread, NULL, hammer_one, &h[i]);
	}
	for (unsigned i = 0; i < t; i++)
		pthread_join(h[i].thread, NULL);
	pthread_barrier_destroy(&start);
	free(h);
	return 0;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int run_storm(unsigned long long n, bool timed)
{
	double t0;

	if (timed)
		gate();
	t0 = now_ns();
	for (unsigned long long i = 0; i < n; i++) {
		p_stage(7, 0);
		p_alloc(0x1000 + (i & 1023), 1, 4096, 7);
		p_stage(7, 1);
		p_free(0x1000 + (i & 1023), 1, 4096);
		p_stage(7, 4);
	}
	if (timed)
		printf("storm: %llu events, %.1f ns/event\n", 5 * n, (now_ns() - t0) / (5.0 * n));
	return 0;
}

static int run_spin(unsigned ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		p_stage(9, 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set;

	/* SIGUSR1 is only ever taken by sigwait in gate() */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (argc == 3 && !strcmp(argv[1], "script"))
		return run_script(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return run_threads(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	if ((argc == 3 || (argc == 4 && !strcmp(argv[3], "gate"))) && !strcmp(argv[1], "storm"))
		return run_storm(strtoull(argv[2], NULL, 0), argc == 4);
	if (argc == 4 && !strcmp(argv[1], "hammer"))
		return run_hammer(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0), false);
	if (argc == 4 && !strcmp(argv[1], "churn"))
		return run_hammer(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0), true);
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return run_spin(strtoul(argv[2], NULL, 0));
	return usage();
}
