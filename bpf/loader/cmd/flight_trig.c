// SPDX-License-Identifier: BSD-2-Clause
/* The flight recorder's triggers (cmd/flight.h): edges (an OOM kill, an exit, SIGUSR1) fire
 * once; levels (tracked, rss, owners) fire when they become true and re-arm once false; a
 * firing makes a dump pending unless one is (then it joins it) or a rate limit says no. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "cmd/flight_int.h"
#include "util/errors.h"
#include "util/fmt.h"
#include "util/parse.h"
#include "util/procfs.h"

volatile sig_atomic_t flight_sigusr1;

const char *const flight_trigger_names[FLIGHT__COUNT] = {
	[FLIGHT_OOM] = "oom",	    [FLIGHT_TRACKED] = "tracked", [FLIGHT_RSS] = "rss",
	[FLIGHT_OWNERS] = "owners", [FLIGHT_EXIT] = "exit",	  [FLIGHT_SIGNAL] = "signal",
};

/* ---- triggers ---- */

static __u64 read_u64_file(const char *path)
{
	char buf[64] = "";
	__u64 v;

	proc_read_file(path, buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = 0;
	return parse_u64(buf, 0, ~0ull, &v) ? 0 : v;
}

static __u64 host_memory(void)
{
	char buf[4096] = "";
	unsigned long long kib = 0;
	const char *p;

	proc_read_file("/proc/meminfo", buf, sizeof(buf));
	p = strstr(buf, "MemTotal:");
	if (p && sscanf(p, "MemTotal: %llu kB", &kib) == 1)
		return (__u64)kib << 10;
	return 0;
}

/* The memory a process may use: its memory cgroup's limit (v2 memory.max, v1
 * memory.limit_in_bytes) when it has one below the host's, else the host's. */
static __u64 memory_limit(__u32 pid)
{
	char buf[4096] = "", path[4400], *line, *save = NULL;
	__u64 host = host_memory(), lim = 0;

	proc_read(pid, "cgroup", buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line && !lim; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!cg)
			continue;
		*cg++ = 0;
		if (!strcmp(ctl + 1, "")) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", cg);
			lim = read_u64_file(path);
		} else if (strstr(ctl + 1, "memory")) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
				 cg);
			lim = read_u64_file(path);
		}
	}
	return lim && (!host || lim < host) ? lim : host;
}

static __u64 rss_of(const struct proc_snapshot *ps)
{
	if (ps->st.rss_total)
		return ps->st.rss_total;
	return ps->st.exited ? 0 : proc_statm_rss(ps->pid);
}

void flight__fire(struct flight *f, enum flight_trigger kind, __u32 pid, __u64 now,
		 const char *fmt, ...)
{
	struct trig t = { .kind = kind, .pid = pid, .mono_ns = now };
	char b1[FMT_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t.detail, sizeof(t.detail), fmt, ap);
	va_end(ap);
	t.wall_ns = now + f->wall_minus_mono;
	f->fired[kind]++;
	if (f->pending) {
		/* the dump being made holds it: one incident, one file */
		f->merged++;
		if (f->o.verbose)
			infl_warn("flight recorder: %s (%s) comes into the dump being made",
				  flight_trigger_names[kind], t.detail);
		return;
	}
	if (f->last_trigger_ns && now - f->last_trigger_ns < f->o.min_gap_ns) {
		f->refused_gap++;
		infl_warn("flight recorder: %s (%s): no dump, %s after the last one's trigger "
			  "(--dump-interval %s)", flight_trigger_names[kind], t.detail,
			  fmt_duration(b1, now - f->last_trigger_ns),
			  fmt_duration((char[FMT_LEN]){ 0 }, f->o.min_gap_ns));
		return;
	}
	if (f->written >= f->o.max_dumps && !f->o.rotate) {
		f->refused_max++;
		infl_warn("flight recorder: %s (%s): no dump, %llu written already (--max-dumps; "
			  "--rotate replaces the oldest instead)", flight_trigger_names[kind], t.detail,
			  (unsigned long long)f->written);
		return;
	}
	f->pending = true;
	f->next = t;
	f->due_ns = now + f->o.after_ns;
	f->last_trigger_ns = now;
	if (!f->o.quiet)
		infl_warn("flight recorder: %s (%s): dumping the last %s and the next %s",
			  flight_trigger_names[kind], t.detail, fmt_duration(b1, f->o.ring_ns),
			  fmt_duration((char[FMT_LEN]){ 0 }, f->o.after_ns));
}

static bool oomed(struct flight *f, __u32 pid)
{
	for (size_t i = 0; i < f->noomed; i++)
		if (f->oomed[i] == pid)
			return true;
	return false;
}

static bool judged(struct flight *f, __u32 pid, __u64 gen)
{
	__u64 key = (__u64)pid << 32 | (gen & 0xffffffffu), *n;

	for (size_t i = 0; i < f->njudged; i++)
		if (f->judged[i] == key)
			return true;
	n = grow_array(f->judged, &f->capjudged, f->njudged, sizeof(*n));
	if (!n)
		return true;
	f->judged = n;
	f->judged[f->njudged++] = key;
	return false;
}

bool flight__judged_pid(const struct flight *f, __u32 pid)
{
	for (size_t i = 0; i < f->njudged; i++)
		if (f->judged[i] >> 32 == pid)
			return true;
	return false;
}

static void check_exits(struct flight *f, const struct snapshot *snap, __u64 now)
{
	idents__sync(&f->idents, snap);
	idents__collect_exits(&f->idents);
	for (int i = 0; i < f->idents.n; i++) {
		const struct proc_ident *id = &f->idents.id[i];
		int st = id->wait_status;

		if (st < 0 || judged(f, id->pid, id->gen))
			continue;
		if (WIFEXITED(st) && WEXITSTATUS(st))
			flight__fire(f, FLIGHT_EXIT, id->pid, now, "pid %u exited with status %d", id->pid,
			     WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			flight__fire(f, FLIGHT_EXIT, id->pid, now, "pid %u killed by signal %d", id->pid,
			     WTERMSIG(st));
	}
}

/* A level trigger fires when its condition becomes true, and re-arms once it is false. */
static void level(struct flight *f, enum flight_trigger kind, bool cond, __u32 pid, __u64 now,
		  const char *detail)
{
	if (!cond) {
		f->armed[kind] = true;
		return;
	}
	if (!f->armed[kind])
		return;
	f->armed[kind] = false;
	flight__fire(f, kind, pid, now, "%s", detail);
}

static void check_levels(struct flight *f, const struct snapshot *snap, __u64 now)
{
	char b1[FMT_LEN], b2[FMT_LEN];
	bool tracked = false, rss = false, owners = false;
	__u32 tpid = 0, rpid = 0, opid = 0;
	char tw[160] = "", rw[160] = "", ow[160] = "";

	for (int i = 0; i < snap->nprocs; i++) {
		const struct proc_snapshot *ps = &snap->procs[i];

		if (ps->st.exited)
			continue;
		if (!tracked && (f->o.on & (1u << FLIGHT_TRACKED)) &&
		    ps->st.total_bytes > f->o.tracked_gt) {
			tracked = true;
			tpid = ps->pid;
			snprintf(tw, sizeof(tw), "pid %u tracks %s, over %s", ps->pid,
				 fmt_bytes(b1, ps->st.total_bytes), fmt_bytes(b2, f->o.tracked_gt));
		}
		if (!rss && (f->o.on & (1u << FLIGHT_RSS))) {
			__u64 r = rss_of(ps), lim = f->o.rss_gt;

			if (f->o.rss_pct)
				lim = memory_limit(ps->pid) / 100 * f->o.rss_pct;
			if (lim && r > lim) {
				rss = true;
				rpid = ps->pid;
				snprintf(rw, sizeof(rw), "pid %u has RSS %s, over %s%s", ps->pid,
					 fmt_bytes(b1, r), fmt_bytes(b2, lim),
					 f->o.rss_pct ? " (its memory limit's share)" : "");
			}
		}
		if (!owners && (f->o.on & (1u << FLIGHT_OWNERS)) &&
		    ps->st.owners[f->o.owners_stage] > f->o.owners_gt) {
			owners = true;
			opid = ps->pid;
			snprintf(ow, sizeof(ow), "pid %u has %llu owners in %s, over %llu", ps->pid,
				 (unsigned long long)ps->st.owners[f->o.owners_stage],
				 names__stage(f->h.names, f->o.owners_stage),
				 (unsigned long long)f->o.owners_gt);
		}
	}
	level(f, FLIGHT_TRACKED, tracked, tpid, now, tw);
	level(f, FLIGHT_RSS, rss, rpid, now, rw);
	level(f, FLIGHT_OWNERS, owners, opid, now, ow);
}

void flight__check_triggers(struct flight *f, const struct snapshot *snap, __u64 now)
{
	char b1[FMT_LEN];

	for (int i = 0; i < snap->nprocs; i++) {
		const struct proc_snapshot *ps = &snap->procs[i];
		__u32 *n;

		if (!ps->oom.ns || oomed(f, ps->pid))
			continue;
		n = grow_array(f->oomed, &f->capoomed, f->noomed, sizeof(*n));
		if (!n)
			continue;
		f->oomed = n;
		f->oomed[f->noomed++] = ps->pid;
		if (f->o.on & (1u << FLIGHT_OOM))
			flight__fire(f, FLIGHT_OOM, ps->pid, now, "pid %u chosen by the OOM killer, "
			     "holding %s tracked", ps->pid, fmt_bytes(b1, ps->oom.tracked_bytes));
	}
	if (f->o.on & (1u << FLIGHT_EXIT))
		check_exits(f, snap, now);
	check_levels(f, snap, now);
	if (flight_sigusr1) {
		__u32 pid = f->h.target_pid;

		flight_sigusr1 = 0;
		for (int i = 0; !pid && i < snap->nprocs; i++)
			if (!snap->procs[i].st.exited)
				pid = snap->procs[i].pid;
		flight__fire(f, FLIGHT_SIGNAL, pid, now, "SIGUSR1 to inflight (pid %d)", (int)getpid());
	}
}
