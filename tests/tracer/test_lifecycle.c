// SPDX-License-Identifier: BSD-2-Clause
/*
 * Processes' lives through the real BPF programs: fork (a prefork pipeline), exec (into the
 * same binary and into another that carries the contract), restarts (200 of them, and one
 * right after a process that exited holding 1024 buffers), a process that gets a slot late.
 * Each process is compared with the reference model, and the kernel maps must be empty
 * once every process ended. Needs root (CAP_BPF, CAP_PERFMON).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "check.h"
#include "compare.h"
#include "model.h"
#include "probegen_ids.h"
#include "attach/session.h"

static char probegen[PATH_MAX];
static char tmpdir[] = "/tmp/inflight-lifecycle.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* A model of one process fed the script at `path`. */
static void model_of(struct model *m, const char *path, bool from_start)
{
	model_init(m, PROBEGEN_ENTRY_MASK, PROBEGEN_TERMINAL_MASK);
	if (from_start)
		model_from_start(m);
	model_script(m, path, false);
}

/* Polls the session until its target is gone, then a little more: the control ring's last
 * records (children that ended just before) are in once a poll finds nothing more. */
static void run_until_gone(struct session *s)
{
	while (!session__target_gone(s, NULL))
		session__poll(s, 20, NULL, NULL);
	for (int quiet = 0; quiet < 3;)
		quiet = session__poll(s, 20, NULL, NULL) > 0 ? 0 : quiet + 1;
}

static void check_maps_empty(struct session *s, const char *what)
{
	__u32 p, b, o;

	session__map_usage(s, &p, &b, &o);
	CHECK(p == 0 && b == 0 && o == 0,
	      "%s: nothing left in the kernel maps (procs %u, bufs %u, owners %u)", what, p, b, o);
}

/* The pid probegen noted for the child that ran `script` (PROBEGEN_PIDS). */
static pid_t child_pid(const char *log, const char *script)
{
	char file[PATH_MAX], line[PATH_MAX + 32];
	FILE *f = fopen(log, "r");
	int pid = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%4095s %d", file, &pid) == 2 && !strcmp(file, script))
			break;
		else
			pid = 0;
	if (f)
		fclose(f);
	return pid;
}

/* The records of `pid` in a snapshot, oldest image first. */
static int records_of(const struct snapshot *snap, __u32 pid, const struct infl_proc **out,
		      int max)
{
	int n = 0;

	for (int i = 0; i < snap->nprocs && n < max; i++)
		if (snap->procs[i].pid == pid)
			out[n++] = &snap->procs[i].st;
	return n;
}

/* -- and a parent that forks three children: four processes, each exact, each its own. */
static void test_prefork(void)
{
	static const char *kids[] = {
		"stage 10 0\nalloc 0x100 1 4096 10\nstage 10 1\nfree 0x100 1 4096\nstage 10 4\n"
		"free 0x10 0 1000\n", /* the inherited buffer: from before it was traced */
		"stage 20 0\nalloc 0x200 2 8192 20\nalloc 0x201 2 8192 20\nstage 20 2\n"
		"free 0x200 2 8192\nfree 0x201 2 8192\nstage 20 4\n",
		"alloc 0x300 3 100 0\nstage 30 0\nalloc 0x301 4 200 30\nstage 30 3\n"
		"free 0x301 4 200\nstage 30 4\nfree 0x300 3 100\n",
	};
	char parent[PATH_MAX], kid[3][PATH_MAX], log[PATH_MAX], text[4 * PATH_MAX];
	char *argv[] = { probegen, "script", parent, NULL };
	struct session_opts o = { .mode = SESSION_SPAWN, .argv = argv };
	struct snapshot snap;
	struct session *s;
	struct model m;
	int status = -1;
	pid_t pid;

	tmp_path(log, sizeof(log), "prefork.pids");
	tmp_path(parent, sizeof(parent), "prefork-parent.ops");
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "prefork-kid%d.ops", i);
		tmp_path(kid[i], sizeof(kid[i]), name);
		write_file(kid[i], kids[i]);
	}
	snprintf(text, sizeof(text),
		 "stage 1 0\nalloc 0x10 0 1000 0\nalloc 0x11 1 500 1\nfork %s\nfork %s\nfork %s\n"
		 "wait\nstage 1 1\nfree 0x11 1 500\nstage 1 4\nfree 0x10 0 1000\n",
		 kid[0], kid[1], kid[2]);
	write_file(parent, text);
	setenv("PROBEGEN_PIDS", log, 1);
	if (session__open(&o, &s)) {
		CHECK(0, "prefork: attach");
		return;
	}
	pid = session__target_pid(s);
	run_until_gone(s);
	unsetenv("PROBEGEN_PIDS");
	CHECK(session__target_gone(s, &status) && WIFEXITED(status) && !WEXITSTATUS(status),
	      "prefork: the pipeline ran to its end (status %d)", status);
	CHECK(session__snapshot(s, &snap) == 0 && snap.nprocs == 4,
	      "prefork: the parent and its 3 children traced, each on its own (%d)", snap.nprocs);
	model_of(&m, parent, true);
	if (find_pid(&snap, pid))
		compare("prefork: parent", &find_pid(&snap, pid)->st, &m.st);
	else
		CHECK(0, "prefork: the parent traced");
	model_free_all(&m);
	for (int i = 0; i < 3; i++) {
		const struct proc_snapshot *ps = find_pid(&snap, child_pid(log, kid[i]));
		char what[64];

		snprintf(what, sizeof(what), "prefork: child %d", i + 1);
		model_of(&m, kid[i], false); /* it began with its parent's buffers */
		if (ps) {
			compare(what, &ps->st, &m.st);
			CHECK(ps->st.ppid == (__u32)pid && (ps->st.flags & INFL_PROC_FORKED) &&
				      ps->st.exited,
			      "%s: forked from the parent, and ended", what);
		} else {
			CHECK(0, "%s: traced", what);
		}
		model_free_all(&m);
	}
	CHECK(find_pid(&snap, child_pid(log, kid[0])) &&
		      find_pid(&snap, child_pid(log, kid[0]))->st.unmatched_free[0].count == 1,
	      "prefork: the child's free of an inherited buffer is a free from before it was traced");
	check_maps_empty(s, "prefork");
	snapshot__free(&snap);
	session__free(s);

	/* --no-follow: the parent alone */
	o.no_follow = true;
	if (session__open(&o, &s)) {
		CHECK(0, "prefork --no-follow: attach");
		return;
	}
	pid = session__target_pid(s);
	run_until_gone(s);
	CHECK(session__snapshot(s, &snap) == 0 && snap.nprocs == 1 && snap.procs[0].pid == (__u32)pid,
	      "prefork --no-follow: the parent alone is traced (%d processes)", snap.nprocs);
	check_maps_empty(s, "prefork --no-follow");
	snapshot__free(&snap);
	session__free(s);
}

/* exec ends the old image (what it held is gone with it, not leaked, not phantom) and the
 * pid goes on as a new image: of the same binary, or of another carrying the contract. */
static void exec_case(const char *what, const char *binary, const char *b_ops, bool same)
{
	char a[PATH_MAX], b[PATH_MAX], text[2 * PATH_MAX + 128];
	char *argv[] = { probegen, "script", a, NULL };
	struct session_opts o = { .mode = SESSION_SPAWN, .argv = argv };
	const struct infl_proc *rec[4];
	struct snapshot snap;
	struct session *s;
	struct model m;
	int n;

	tmp_path(a, sizeof(a), same ? "exec-a.ops" : "exec-a2.ops");
	tmp_path(b, sizeof(b), same ? "exec-b.ops" : "exec-b2.ops");
	write_file(b, b_ops);
	snprintf(text, sizeof(text), "stage 1 0\nalloc 0x10 1 1000 1\nalloc 0x11 2 500 0\n"
		 "exec %s %s\n", binary, b);
	write_file(a, text);
	if (session__open(&o, &s)) {
		CHECK(0, "%s: attach", what);
		return;
	}
	run_until_gone(s);
	CHECK(session__snapshot(s, &snap) == 0, "%s: snapshot", what);
	n = records_of(&snap, session__target_pid(s), rec, 4);
	CHECK_EQ_U64(n, 2, "%s: the pid has two images", what);
	if (n == 2) {
		CHECK(rec[0]->exited && (rec[0]->flags & INFL_PROC_EXEC) && rec[0]->gen < rec[1]->gen,
		      "%s: the first image ended by exec", what);
		CHECK_EQ_U64(rec[0]->total_bytes, 1500,
			     "%s: what it held at the exec is reported with it", what);
		CHECK(rec[1]->flags & INFL_PROC_EXEC_BORN, "%s: the second began with the exec", what);
		model_of(&m, b, same);
		compare(what, rec[1], &m.st);
		CHECK_EQ_U64(rec[1]->dup_alloc, 0,
			     "%s: the old image's buffer 0x10 is not the new one's (no false dup)",
			     what);
		model_free_all(&m);
	}
	check_maps_empty(s, what);
	snapshot__free(&snap);
	session__free(s);
}

/*
 * Kernels without BPF cookies attach by pid, and libbpf finds a site's argument spec by its
 * address: after an exec the new image sits elsewhere, its probe hits fire but their
 * arguments cannot be read. The old image still ends at the exec with what it held, and the
 * new one's hits are counted (arg_errors, inexact), never dropped in silence.
 */
static void test_exec_pid_attach(void)
{
	char a[PATH_MAX], b[PATH_MAX], text[2 * PATH_MAX + 128];
	char *argv[] = { probegen, "script", a, NULL };
	struct session_opts o = { .mode = SESSION_SPAWN, .argv = argv };
	const struct infl_proc *rec[4];
	struct snapshot snap;
	struct session *s;
	int n;

	tmp_path(a, sizeof(a), "exec-pid-a.ops");
	tmp_path(b, sizeof(b), "exec-pid-b.ops");
	write_file(b, "alloc 0x10 3 300 7\nstage 7 0\nfree 0x10 3 300\nstage 7 4\n");
	snprintf(text, sizeof(text), "stage 1 0\nalloc 0x10 1 1000 1\nalloc 0x11 2 500 0\n"
		 "exec %s %s\n", probegen, b);
	write_file(a, text);
	if (session__open(&o, &s)) {
		CHECK(0, "exec by pid: attach");
		return;
	}
	run_until_gone(s);
	CHECK(session__snapshot(s, &snap) == 0, "exec by pid: snapshot");
	n = records_of(&snap, session__target_pid(s), rec, 4);
	CHECK_EQ_U64(n, 2, "exec by pid: the pid has two images");
	if (n == 2) {
		CHECK(rec[0]->exited && (rec[0]->flags & INFL_PROC_EXEC) && rec[0]->total_bytes == 1500,
		      "exec by pid: the first ended at the exec, with the 1500 bytes it held");
		CHECK(rec[1]->seq + rec[1]->arg_errors == 4 && (rec[1]->seq || figures__proc_inexact(rec[1])),
		      "exec by pid: the new image's 4 hits accounted, or counted as unreadable "
		      "(%llu accounted, %llu unreadable)", (unsigned long long)rec[1]->seq,
		      (unsigned long long)rec[1]->arg_errors);
	}
	check_maps_empty(s, "exec by pid");
	snapshot__free(&snap);
	session__free(s);
}

static void test_exec(void)
{
	char copy[PATH_MAX], cmd[3 * PATH_MAX];

	exec_case("exec, same binary", probegen,
		  "alloc 0x10 3 300 7\nstage 7 0\nfree 0x10 3 300\nstage 7 4\nfree 0x99 1 8\n", true);
	/* another binary with the contract: attached when the loader hears of the exec (the
	 * pause leaves it the time, 300 ms were not always enough on a loaded machine; what a
	 * new image does before is not seen: docs/production.md, "Processes") */
	tmp_path(copy, sizeof(copy), "probegen-other");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", probegen, copy);
	CHECK(system(cmd) == 0, "exec: a second binary with the contract");
	exec_case("exec, another binary", copy,
		  "pause 1000\nalloc 0x10 3 300 7\nstage 7 0\nfree 0x10 3 300\nstage 7 4\n", false);
}

/* Runs `binary script ops` to its end. */
static int run_script(const char *binary, const char *ops)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		execl(binary, binary, "script", ops, (char *)NULL);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? pid : -1;
}

/* -b across 200 restarts with room for 2 processes: every run is its own exact process, what
 * each left in flight leaves the maps, and --max-procs never fills. */
static void test_restarts(void)
{
	char copy[PATH_MAX], ops[PATH_MAX], cmd[3 * PATH_MAX];
	struct session_opts o = { .mode = SESSION_BINARY, .binary = copy, .max_procs = 2 };
	struct snapshot snap;
	struct session *s;
	struct model m;
	int runs = 200, bad = 0, exact = 0, n;

	tmp_path(copy, sizeof(copy), "probegen-restart");
	tmp_path(ops, sizeof(ops), "restart.ops");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", probegen, copy);
	CHECK(system(cmd) == 0, "restarts: a private copy of probegen");
	/* it exits holding two buffers and a live owner */
	write_file(ops, "stage 1 0\nalloc 0x10 1 100 1\nalloc 0x11 0 50 0\nalloc 0x12 2 10 1\n"
			"free 0x12 2 10\nstage 1 2\n");
	if (session__open(&o, &s)) {
		CHECK(0, "restarts: attach by binary");
		return;
	}
	model_of(&m, ops, true);
	for (int i = 0; i < runs; i++) {
		bad += run_script(copy, ops) < 0;
		session__poll(s, 1, NULL, NULL);
	}
	for (int quiet = 0; quiet < 3;)
		quiet = session__poll(s, 20, NULL, NULL) > 0 ? 0 : quiet + 1;
	CHECK_EQ_U64(bad, 0, "restarts: %d runs completed", runs);
	CHECK(session__snapshot(s, &snap) == 0, "restarts: snapshot");
	n = snap.nprocs;
	CHECK_EQ_U64(n, runs, "restarts: every run is a process of its own");
	for (int i = 0; i < snap.nprocs; i++) {
		const struct infl_proc *p = &snap.procs[i].st;

		exact += p->exited && !memcmp(p->cur, m.st.cur, sizeof(p->cur)) &&
			 p->peak_bytes == m.st.peak_bytes && p->seq == m.st.seq &&
			 !figures__proc_inexact(p) && !p->missed_events && (p->flags & INFL_PROC_FROM_START);
	}
	CHECK_EQ_U64(exact, runs, "restarts: each one exact, from its start, ended with 160 bytes held");
	CHECK_EQ_U64(snap.procs_map_full, 0, "restarts: --max-procs 2 never filled");
	check_maps_empty(s, "restarts");
	for (int i = 0; i < snap.nprocs; i++)
		session__forget(s, snap.procs[i].pid);
	CHECK_EQ_U64(session__nended(s), 0, "restarts: the session forgets what was reported");
	snapshot__free(&snap);
	model_free_all(&m);
	session__free(s);
}

/* One that exits holding 1024 buffers, then another that allocates 1024 in a map of 1100:
 * the first one's entries leave the map before the second needs the room. */
static void test_restart_full(void)
{
	char copy[PATH_MAX], hold[PATH_MAX], again[PATH_MAX], cmd[3 * PATH_MAX];
	struct session_opts o = { .mode = SESSION_BINARY, .binary = copy, .max_bufs = 1100 };
	FILE *f1, *f2;
	struct snapshot snap;
	struct session *s;
	__u32 p, b, ow;
	pid_t second;

	tmp_path(copy, sizeof(copy), "probegen-full");
	tmp_path(hold, sizeof(hold), "hold1024.ops");
	tmp_path(again, sizeof(again), "again1024.ops");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", probegen, copy);
	CHECK(system(cmd) == 0, "restart after 1024 held: a private copy");
	f1 = fopen(hold, "w");
	f2 = fopen(again, "w");
	for (int i = 0; f1 && f2 && i < 1024; i++) {
		fprintf(f1, "alloc %d 1 64 0\n", 0x1000 + i);
		fprintf(f2, "alloc %d 1 64 0\n", 0x1000 + i);
	}
	for (int i = 0; f2 && i < 1024; i++)
		fprintf(f2, "free %d 1 64\n", 0x1000 + i);
	if (f1)
		fclose(f1);
	if (f2)
		fclose(f2);
	if (session__open(&o, &s)) {
		CHECK(0, "restart after 1024 held: attach");
		return;
	}
	run_script(copy, hold);
	/* what the run loop does between two waits, and no more */
	for (int i = 0; i < 50; i++) {
		session__poll(s, 10, NULL, NULL);
		session__map_usage(s, &p, &b, &ow);
		if (!b)
			break;
	}
	CHECK_EQ_U64(b, 0, "restart after 1024 held: its buffers left the map when it exited");
	second = run_script(copy, again);
	for (int quiet = 0; quiet < 3;)
		quiet = session__poll(s, 20, NULL, NULL) > 0 ? 0 : quiet + 1;
	CHECK(session__snapshot(s, &snap) == 0 && find_pid(&snap, second),
	      "restart after 1024 held: the second run traced");
	if (find_pid(&snap, second)) {
		const struct infl_proc *st = &find_pid(&snap, second)->st;

		CHECK(st->buf_map_full == 0 && st->peak_bufs == 1024 && !figures__proc_inexact(st),
		      "restart after 1024 held: the second run found room for its 1024 (full %llu)",
		      (unsigned long long)st->buf_map_full);
	}
	check_maps_empty(s, "restart after 1024 held");
	snapshot__free(&snap);
	session__free(s);
}

/* --max-procs 1: a process that found no slot while another ran gets one later, and its
 * record says it missed events (inexact), never a silent exact. */
static void test_late_slot(void)
{
	char copy[PATH_MAX], first[PATH_MAX], second[PATH_MAX], cmd[3 * PATH_MAX], line[32];
	struct session_opts o = { .mode = SESSION_BINARY, .binary = copy, .max_procs = 1 };
	struct snapshot snap;
	struct session *s;
	int out[2];
	pid_t p1, p2;
	FILE *f;

	tmp_path(copy, sizeof(copy), "probegen-slot");
	tmp_path(first, sizeof(first), "slot-first.ops");
	tmp_path(second, sizeof(second), "slot-second.ops");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", probegen, copy);
	CHECK(system(cmd) == 0, "late slot: a private copy");
	write_file(first, "alloc 0x10 1 100 0\ngate\nfree 0x10 1 100\n");
	write_file(second, "alloc 0x20 1 100 0\nalloc 0x21 1 100 0\ngate\nfree 0x20 1 100\n"
			   "alloc 0x22 1 100 0\n");
	if (session__open(&o, &s) || pipe(out)) {
		CHECK(0, "late slot: attach");
		return;
	}
	p1 = fork();
	if (p1 == 0) {
		dup2(out[1], 1);
		execl(copy, copy, "script", first, (char *)NULL);
		_exit(127);
	}
	f = fdopen(out[0], "r");
	CHECK(fgets(line, sizeof(line), f) != NULL, "late slot: the first holds the only slot");
	p2 = fork();
	if (p2 == 0) {
		dup2(out[1], 1);
		execl(copy, copy, "script", second, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	CHECK(fgets(line, sizeof(line), f) != NULL, "late slot: the second ran its first events");
	kill(p1, SIGUSR1);
	waitpid(p1, NULL, 0);
	for (int i = 0; i < 10; i++)
		session__poll(s, 10, NULL, NULL);
	kill(p2, SIGUSR1);
	waitpid(p2, NULL, 0);
	for (int quiet = 0; quiet < 3;)
		quiet = session__poll(s, 20, NULL, NULL) > 0 ? 0 : quiet + 1;
	fclose(f);
	CHECK(session__snapshot(s, &snap) == 0, "late slot: snapshot");
	CHECK_EQ_U64(snap.procs_map_full, 2, "late slot: the second's two first events found no slot");
	if (find_pid(&snap, p2)) {
		const struct infl_proc *st = &find_pid(&snap, p2)->st;

		CHECK(st->missed_events == 2 && figures__proc_inexact(st),
		      "late slot: its record says 2 events were missed, and is inexact (%llu)",
		      (unsigned long long)st->missed_events);
	} else {
		CHECK(0, "late slot: the second got a slot once the first ended");
	}
	check_maps_empty(s, "late slot");
	snapshot__free(&snap);
	session__free(s);
}

int main(void)
{
	char self[PATH_MAX], cmd[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0 || !mkdtemp(tmpdir))
		return 2;
	self[n] = '\0';
	snprintf(probegen, sizeof(probegen), "%s/probegen", dirname(self));
	if (kernel_has_cookies()) {
		test_prefork();
		test_exec();
		test_restarts();
		test_restart_full();
		test_late_slot();
	} else {
		CHECK_SKIP(NO_COOKIES, "prefork: children followed");
		test_exec_pid_attach();
		CHECK_SKIP(NO_COOKIES, "restarts under -b");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_done();
}
