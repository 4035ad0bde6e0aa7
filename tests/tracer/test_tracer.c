// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tracer against real probes: probegen fires scripted sequences in real processes, the
 * real BPF programs aggregate them, and every counter is compared with the reference model
 * (tests/tracer/model.c) fed the same sequence. Needs root (CAP_BPF, CAP_PERFMON).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "attach/caps.h"
#include "attach/features.h"
#include "check.h"
#include "model/figures.h"
#include "util/errors.h"
#include "model.h"
#include "probegen_ids.h"
#include "attach/session.h"
#include "compare.h"

static char probegen[PATH_MAX];
/* the locked form (session_opts.locked_form) where the kernel has the atomic one, and every
 * probe hit through its process's queue too (session_opts.defer_all) */
static bool locked, queued;
/* the prefix of every check's name: which form ran */
static const char *form(void)
{
	return queued ? "queued: " : locked ? "locked: " : "";
}
/* the last trace_spawn's hits through the queue, and that found it full (and waited) */
static __u64 last_deferred, last_full;
static char tmpdir[] = "/tmp/inflight-tracer.XXXXXX";

/* --- scripts ------------------------------------------------------------------------ */

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rng_state >> 33) % n);
}

/* A random but valid-ish sequence that walks every branch: dup allocs, unknown frees,
 * bad ids, unowned buffers, owners staged late, terminal owners that still hold buffers. */
static void write_random_script(const char *path, unsigned long long seed, int nops)
{
	FILE *f = fopen(path, "w");
	struct {
		int live;
		unsigned cls;
		unsigned long long bytes;
	} bufs[64] = {};

	rng_state = seed;
	for (int i = 0; i < nops; i++) {
		unsigned op = rnd(100), b = rnd(64), owner = rnd(12);

		if (op < 45) {
			unsigned cls = rnd(50) ? rnd(PROBEGEN_NCLASSES) : 20;
			unsigned long long bytes = (1 + rnd(4096)) * 64ull;

			fprintf(f, "alloc %u %u %llu %u\n", 0x100 + b, cls, bytes, owner);
			if (cls < INFL_MAX_CLASSES)
				bufs[b] = (typeof(bufs[0])){ 1, cls, bytes };
		} else if (op < 80) {
			if (bufs[b].live && rnd(20))
				fprintf(f, "free %u %u %llu\n", 0x100 + b,
					rnd(40) ? bufs[b].cls : 18, bufs[b].bytes);
			else
				fprintf(f, "free %u %u %u\n", 0x100 + b, rnd(30) ? rnd(6) : 17,
					64 * (1 + rnd(100)));
			bufs[b].live = 0;
		} else {
			unsigned stage = rnd(40) ? rnd(PROBEGEN_NSTAGES) : 19;

			fprintf(f, "stage %u %u\n", owner || !rnd(20) ? owner : 1, stage);
		}
	}
	fclose(f);
}

/* Spawns argv under a session, waits for it to exit, returns its final record. */
static int trace_spawn(char **argv, struct infl_proc *out, int *status)
{
	struct session_opts o = { .mode = SESSION_SPAWN, .argv = argv, .verbose = !!getenv("TEST_VERBOSE"), .defer_all = queued,
				  .locked_form = locked || queued };
	const struct proc_snapshot *ps;
	struct snapshot snap;
	struct session *s;
	pid_t pid;
	int err = session__open(&o, &s);

	if (err)
		return err;
	pid = session__target_pid(s);
	while (!session__target_gone(s, status))
		session__poll(s, 20, NULL, NULL);
	err = session__snapshot(s, &snap);
	last_deferred = session__deferred_ops(s, &last_full);
	ps = err ? NULL : find_pid(&snap, pid);
	if (ps)
		*out = ps->st;
	else
		memset(out, 0, sizeof(*out));
	if (!err)
		snapshot__free(&snap);
	session__free(s);
	return ps ? 0 : -ENOENT;
}

static void test_random_scripts(void)
{
	for (unsigned long long seed = 1; seed <= 3; seed++) {
		char path[PATH_MAX], what[64];
		char *argv[] = { probegen, "script", path, NULL };
		struct infl_proc got;
		struct model m;
		int status = -1, err;

		snprintf(path, sizeof(path), "%s/random-%llu.ops", tmpdir, seed);
		snprintf(what, sizeof(what), "%srandom script %llu", form(), seed);
		write_random_script(path, seed, 3000);
		model_init(&m, PROBEGEN_ENTRY_MASK, PROBEGEN_TERMINAL_MASK);
		model_from_start(&m);
		model_script(&m, path, false);
		err = trace_spawn(argv, &got, &status);
		CHECK(err == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s: traced run completed (err %d, status %d)", what, err, status);
		compare(what, &got, &m.st);
		if (queued)
			CHECK_EQ_U64(last_deferred,
				     got.events[0] + got.events[1] + got.events[2],
				     "%s: every hit went through the queue", what);
		CHECK(got.exited == 1 && got.exit_ns >= got.last_ns,
		      "%s: the kernel saw the process exit after its last event", what);
		model_free_all(&m);
	}
}

static void test_threads(void)
{
	char *argv[] = { probegen, "threads", "4", "50", NULL };
	struct infl_proc got;
	__u64 peak = 0;
	int status = -1, bad = 0;
	const char *Q = form();

	CHECK(trace_spawn(argv, &got, &status) == 0, "%sthreads: traced run completed", Q);
	for (unsigned t = 0; t < 4; t++) {
		const struct infl_cell *c = &got.peak[t % PROBEGEN_NCLASSES][0];

		peak += 50ull * (t + 1) * 4096;
		bad += c->count != 50 || c->bytes != 50ull * (t + 1) * 4096;
	}
	CHECK_EQ_U64(got.peak_bytes, peak, "%sthreads: exact peak across 4 threads", Q);
	CHECK_EQ_U64(got.peak_bufs, 200, "%sthreads: 200 buffers at the peak", Q);
	CHECK_EQ_U64(bad, 0, "%sthreads: peak composition: 50 buffers per thread's class in `born`", Q);
	CHECK_EQ_U64(got.peak_owners[0], 4, "%sthreads: 4 owners in `born` at the peak", Q);
	CHECK_EQ_U64(got.total_bytes, 0, "%sthreads: nothing in flight at the end", Q);
	CHECK_EQ_U64(got.events[INFL_PROBE_ALLOC], 200, "%sthreads: 200 allocs", Q);
	CHECK_EQ_U64(got.events[INFL_PROBE_FREE], 200, "%sthreads: 200 frees", Q);
	CHECK_EQ_U64(got.events[INFL_PROBE_STAGE], 12, "%sthreads: 12 stage events", Q);
	CHECK_EQ_U64(got.owners_done, 4, "%sthreads: 4 owners done", Q);
	CHECK_EQ_U64(got.dwell_count[1], 4, "%sthreads: 4 dwell samples in `work`", Q);
	CHECK_EQ_U64(got.lock_timeouts, 0, "%sthreads: no lock timeouts", Q);
	/* threads may find the queue full while its holder is off the CPU (one vCPU): they
	 * wait for a slot or the lock, either is fine as long as nothing bypassed it */
	if (queued)
		CHECK(last_deferred + last_full >= got.events[0] + got.events[1] + got.events[2] &&
		      last_deferred,
		      "%sthreads: every hit went through the queue, or found it full (%llu and %llu "
		      "of %llu)", Q, (unsigned long long)last_deferred,
		      (unsigned long long)last_full, (unsigned long long)got.seq);
}

/* Probe cells and totals agree, and nothing wrapped below zero. */
static bool consistent(const struct infl_proc *p)
{
	__u64 bytes = 0, bufs = 0;

	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++) {
			if (p->cur[c][s].count >> 62 || p->cur[c][s].bytes >> 62)
				return false;
			bytes += p->cur[c][s].bytes;
			bufs += p->cur[c][s].count;
		}
	return bytes == p->total_bytes && bufs == p->total_bufs &&
	       p->seq == p->events[0] + p->events[1] + p->events[2];
}

/*
 * Four threads hitting their process's probes flat out, with the production wait of the
 * locked form (10 ms): on a preemptible or PREEMPT_RT kernel a thread may be preempted
 * anywhere. The atomic form never gives a hit up: no hit waits for another. The locked form
 * queues a hit that finds the lock held, and gives it up only when the queue stays full;
 * the end is then inexact and counted (every probe hit accounted or counted as a lock
 * timeout). Both are never wrong (no count below zero, cells and totals agree).
 */
static void test_hammer(void)
{
	char *argv[] = { probegen, "hammer", "4", "5000", NULL };
	struct session_opts o = { .mode = SESSION_SPAWN, .argv = argv, .defer_all = queued,
				  .locked_form = locked || queued };
	const char *Q = form();
	__u64 hits = 4ull * 5000 * 5, accounted;
	const struct proc_snapshot *ps;
	struct snapshot snap;
	struct session *s;
	pid_t pid;

	if (session__open(&o, &s)) {
		CHECK(0, "%shammer: attach", Q);
		return;
	}
	pid = session__target_pid(s);
	while (!session__target_gone(s, NULL))
		session__poll(s, 20, NULL, NULL);
	CHECK(session__snapshot(s, &snap) == 0 && (ps = find_pid(&snap, pid)),
	      "%shammer: traced", Q);
	ps = find_pid(&snap, pid);
	if (ps) {
		const struct infl_proc *p = &ps->st;

		accounted = p->events[0] + p->events[1] + p->events[2];
		CHECK_EQ_U64(accounted + p->lock_timeouts, hits,
			     "%shammer: every probe hit accounted or counted as given up "
			     "(%llu timeouts)", Q, (unsigned long long)p->lock_timeouts);
		CHECK(p->lock_timeouts == 0 && p->contention_lost == 0,
		      "%shammer: no hit gave up (%llu did on the lock, %llu lost a race)", Q,
		      (unsigned long long)p->lock_timeouts,
		      (unsigned long long)p->contention_lost);
		printf("# %shammer: %llu rounds waited in lock_wait_more (the locked form: a full "
		       "queue)\n", Q, (unsigned long long)session__lock_wait_rounds(s));
		CHECK(consistent(p), "%shammer: never wrong: cells and totals agree, none below 0", Q);
		CHECK(p->lock_timeouts ? figures__proc_inexact(p) :
					 !p->total_bytes && p->owners_done == 20000 && !figures__proc_inexact(p),
		      "%shammer: exact (nothing left, 20000 owners done), or marked inexact", Q);
		printf("# %shammer: %llu of %llu hits gave up on the lock, %llu went through the "
		       "queue\n", Q, (unsigned long long)p->lock_timeouts,
		       (unsigned long long)hits, (unsigned long long)session__deferred_ops(s, NULL));
	}
	snapshot__free(&snap);
	session__free(s);
}

static int copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd);
}

/* BINARY mode: two processes of one binary at once, kept apart by pid. */
static void test_two_processes(void)
{
	char copy[PATH_MAX], s1[PATH_MAX], s2[PATH_MAX];
	struct session_opts o = { .mode = SESSION_BINARY, .binary = copy };
	struct model m1, m2;
	struct snapshot snap;
	struct session *s;
	pid_t p1, p2;
	int st;

	if (!kernel_has_cookies()) {
		CHECK_SKIP(NO_COOKIES, "two processes of one binary (-b)");
		return;
	}
	snprintf(copy, sizeof(copy), "%s/probegen-copy", tmpdir);
	snprintf(s1, sizeof(s1), "%s/two-1.ops", tmpdir);
	snprintf(s2, sizeof(s2), "%s/two-2.ops", tmpdir);
	CHECK(copy_file(probegen, copy) == 0, "two processes: private copy of probegen");
	write_random_script(s1, 11, 1500);
	write_random_script(s2, 12, 1500);
	if (session__open(&o, &s)) {
		CHECK(0, "two processes: attach by binary");
		return;
	}
	p1 = fork();
	if (p1 == 0) {
		execl(copy, copy, "script", s1, (char *)NULL);
		_exit(127);
	}
	p2 = fork();
	if (p2 == 0) {
		execl(copy, copy, "script", s2, (char *)NULL);
		_exit(127);
	}
	waitpid(p1, &st, 0);
	waitpid(p2, &st, 0);
	CHECK(session__snapshot(s, &snap) == 0 && snap.nprocs == 2,
	      "two processes: two pids traced (%d)", snap.nprocs);
	model_init(&m1, PROBEGEN_ENTRY_MASK, PROBEGEN_TERMINAL_MASK);
	model_init(&m2, PROBEGEN_ENTRY_MASK, PROBEGEN_TERMINAL_MASK);
	model_from_start(&m1); /* started after the attach: traced from their start */
	model_from_start(&m2);
	model_script(&m1, s1, false);
	model_script(&m2, s2, false);
	if (find_pid(&snap, p1) && find_pid(&snap, p2)) {
		compare("two processes: first", &find_pid(&snap, p1)->st, &m1.st);
		compare("two processes: second", &find_pid(&snap, p2)->st, &m2.st);
	} else {
		CHECK(0, "two processes: both pids present");
	}
	CHECK(session__forget(s, p1) == 0, "two processes: forget the first");
	snapshot__free(&snap);
	CHECK(session__snapshot(s, &snap) == 0 && snap.nprocs == 1 && snap.procs[0].pid == (__u32)p2,
	      "two processes: only the second remains after forget");
	snapshot__free(&snap);
	session__free(s);
	model_free_all(&m1);
	model_free_all(&m2);
}

/* PID mode after the target already allocated: the pre-attach half must be counted as
 * unmatched, never go negative, and the rest be exact. */
static void test_late_attach(void)
{
	char path[PATH_MAX], line[32] = "";
	struct session_opts o = { .mode = SESSION_PID };
	const struct proc_snapshot *ps;
	struct snapshot snap;
	struct session *s;
	struct model m;
	int out[2], st;
	pid_t pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/late.ops", tmpdir);
	f = fopen(path, "w");
	fprintf(f, "stage 1 0\nalloc 0x10 1 1000 1\nalloc 0x11 2 2000 1\nstage 2 0\n"
		   "alloc 0x12 3 3000 2\nstage 1 1\nstage 5 1\ngate\n"
		   /* after attach: frees of old buffers, old owners moving and ending */
		   "free 0x10 1 1000\nstage 1 2\nalloc 0x20 1 500 1\nfree 0x11 2 2000\n"
		   "stage 2 3\nstage 1 4\nfree 0x20 1 500\nstage 3 0\nalloc 0x30 0 700 3\n"
		   "free 0x12 3 3000\nstage 2 4\n"
		   /* an old owner whose first event after the attach is an alloc: unmatched at
		    * its first stage like any other; a free with a class id out of range still
		    * frees the live buffer; stage(0, s) is counted, never an owner */
		   "alloc 0x40 4 400 5\nstage 5 2\nfree 0x40 19 400\nstage 0 1\nstage 5 4\n");
	fclose(f);
	if (pipe(out))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		execl(probegen, probegen, "script", path, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	CHECK(fgets(line, sizeof(line), f) && !strcmp(line, "gated\n"),
	      "late attach: target reached its gate");
	o.pid = pid;
	if (session__open(&o, &s)) {
		CHECK(0, "late attach: attach by pid");
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return;
	}
	kill(pid, SIGUSR1);
	while (!session__target_gone(s, NULL))
		session__poll(s, 20, NULL, NULL);
	waitpid(pid, &st, 0);
	fclose(f);
	model_init(&m, PROBEGEN_ENTRY_MASK, PROBEGEN_TERMINAL_MASK);
	model_script(&m, path, true);
	CHECK(session__snapshot(s, &snap) == 0, "late attach: snapshot");
	ps = find_pid(&snap, pid);
	if (ps) {
		compare("late attach", &ps->st, &m.st);
		CHECK_EQ_U64(ps->st.unmatched_free[1].count + ps->st.unmatched_free[2].count +
				     ps->st.unmatched_free[3].count,
			     3, "late attach: the 3 pre-attach buffers' frees are unmatched");
		CHECK_EQ_U64(ps->st.unmatched_free[2].bytes, 2000,
			     "late attach: unmatched bytes counted per class");
		CHECK_EQ_U64(ps->st.unmatched_stage[2] + ps->st.unmatched_stage[3], 3,
			     "late attach: 3 owners first seen mid-life (one through an alloc)");
		CHECK_EQ_U64(ps->st.freed[4].count, 1,
			     "late attach: a free with a bad class id frees the live buffer");
		CHECK_EQ_U64(ps->st.stage_owner0, 1, "late attach: stage(0, s) counted");
		CHECK_EQ_U64(ps->st.owners[INFL_SLOT_NONE], 0,
			     "late attach: stage(0, s) made no owner");
		CHECK_EQ_U64(ps->st.total_bytes, 700, "late attach: only the post-attach buffer is held");
	} else {
		CHECK(0, "late attach: target pid traced");
	}
	snapshot__free(&snap);
	session__free(s);
	model_free_all(&m);
}

static void test_errors(void)
{
	char text[PATH_MAX];
	struct session_opts o = {};
	struct session *s = NULL;
	char *missing[] = { "/nonexistent/command", NULL };
	char *noprobes[] = { "/bin/true", NULL };
	pid_t zombie;
	FILE *f;

	snprintf(text, sizeof(text), "%s/not-elf", tmpdir);
	f = fopen(text, "w");
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	chmod(text, 0755);

	o.mode = SESSION_PID;
	o.pid = 0x3ffffff0;
	CHECK_EQ_U64(session__open(&o, &s), EXIT_NO_PID, "error: no such pid");
	zombie = fork();
	if (zombie == 0)
		_exit(0);
	usleep(100000);
	o.pid = zombie;
	CHECK_EQ_U64(session__open(&o, &s), EXIT_TARGET_EXITED, "error: target already exited");
	waitpid(zombie, NULL, 0);
	o.mode = SESSION_BINARY;
	o.binary = "/bin/true";
	CHECK_EQ_U64(session__open(&o, &s), EXIT_NO_PROBES, "error: binary without the probes");
	o.binary = text;
	CHECK_EQ_U64(session__open(&o, &s), EXIT_NO_BINARY, "error: not an ELF file");
	o.binary = "/nonexistent/binary";
	CHECK_EQ_U64(session__open(&o, &s), EXIT_NO_BINARY, "error: no such binary");
	o.mode = SESSION_SPAWN;
	o.argv = missing;
	CHECK_EQ_U64(session__open(&o, &s), EXIT_NO_BINARY, "error: command not found");
	o.argv = noprobes;
	CHECK_EQ_U64(session__open(&o, &s), EXIT_NO_PROBES, "error: spawned binary without probes");
	CHECK(s == NULL, "error: no session is handed out on failure");
}

/* Last: gives up this process's capabilities. The maps stay readable through their fds. */
static void test_drop_caps(void)
{
	char *argv[] = { probegen, "threads", "2", "10", NULL };
	struct session_opts o = { .mode = SESSION_SPAWN, .argv = argv, .drop_caps = true };
	const struct proc_snapshot *ps;
	struct snapshot snap;
	struct session *s;
	pid_t pid;

	if (session__open(&o, &s)) {
		CHECK(0, "drop caps: attach");
		return;
	}
	CHECK(!caps__has(CAP_BPF) && !caps__has(CAP_PERFMON) && !caps__has(CAP_SYS_ADMIN),
	      "drop caps: no capability left once attached");
	pid = session__target_pid(s);
	while (!session__target_gone(s, NULL))
		session__poll(s, 20, NULL, NULL);
	CHECK(session__snapshot(s, &snap) == 0, "drop caps: maps still readable");
	ps = find_pid(&snap, pid);
	CHECK(ps && ps->st.peak_bytes == 10 * 4096 + 10 * 8192 && ps->st.events[INFL_PROBE_ALLOC] == 20,
	      "drop caps: exact numbers after dropping");
	snapshot__free(&snap);
	session__free(s);
	CHECK_EQ_U64(caps__check_attach(false, NULL), EXIT_NOT_PRIV,
		     "not privileged: a process without CAP_BPF/CAP_PERFMON is told so");
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)argc;
	(void)argv;
	if (n < 0 || !mkdtemp(tmpdir))
		return 2;
	self[n] = '\0';
	snprintf(probegen, sizeof(probegen), "%s/probegen", dirname(self));
	test_random_scripts();
	test_threads();
	test_hammer();
	test_two_processes();
	test_late_attach();
	test_errors();
	/* again in the locked form (the one kernels before 5.17 load), here where the kernel
	 * would run the atomic one: the same accounting under the lock, exact like it */
	locked = true;
	test_random_scripts();
	test_threads();
	test_hammer();
	/* and with every probe hit through the queue behind the lock: its holder's path */
	queued = true;
	test_random_scripts();
	test_threads();
	test_hammer();
	queued = locked = false;
	test_drop_caps(); /* last: this process keeps no capability */
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", tmpdir);
	}
	return check_done();
}
