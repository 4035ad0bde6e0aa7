// SPDX-License-Identifier: BSD-2-Clause
/*
 * The flight recorder (cmd/flight.h). The ring is a queue of chunks, one per snapshot
 * interval: the events that came in it, as the kernel sent them (encoding waits for a dump,
 * so that keeping an event costs one copy), then that interval's snapshot records, already
 * encoded. Chunks go oldest first, when older than the ring or when the ring is over its
 * size. What goes is not forgotten: its events are replayed, in the kernel's accounting
 * order, into one state per process (the tail), so that the ring always knows the exact
 * state its oldest chunk began in. A dump is a recording that attached at the ring's start:
 * a START record and that state as carried events, the chunks, then the final counters
 * (docs/recording.md, "Flight recorder").
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cmd/flight.h"
#include "live/idents.h"
#include "recording/rec_format.h"
#include "render/timeline_replay.h"
#include "util/errors.h"
#include "util/fmt.h"
#include "util/parse.h"
#include "util/procfs.h"

volatile sig_atomic_t flight_sigusr1;

static const char *const trigger_names[FLIGHT__COUNT] = {
	[FLIGHT_OOM] = "oom",	    [FLIGHT_TRACKED] = "tracked", [FLIGHT_RSS] = "rss",
	[FLIGHT_OWNERS] = "owners", [FLIGHT_EXIT] = "exit",	  [FLIGHT_SIGNAL] = "signal",
};

struct chunk {
	__u64 t0, t1; /* the interval it covers */
	struct infl_event *ev;
	size_t nev, cap;
	void *recs; /* framed records of the interval's snapshot */
	size_t recs_len;
};

/* The state a process was in when the ring's oldest chunk began. */
struct tail {
	__u32 pid;
	struct tl_replay *rp;
	struct tl_order ord;
};

struct ident {
	__u32 pid;
	__u64 mono_ns;
	char *comm, *cmdline;
	int argc;
	char **argv;
};

struct trig {
	enum flight_trigger kind;
	__u32 pid;
	__u64 mono_ns, wall_ns;
	char detail[160];
};

struct flight {
	struct flight_opts o;
	struct rec_header_info h;
	struct rec_writer *mem;
	__s64 wall_minus_mono;
	struct chunk *ch; /* ch[0] oldest; the last is open */
	size_t nch, capch;
	struct tail *tails;
	size_t ntails, captails;
	struct ident *ids;
	size_t nids, capids;
	__u64 bytes, bytes_peak; /* the ring's memory: chunks and tails */
	__u64 kept_events, evicted_events;
	/* triggers */
	bool armed[FLIGHT__COUNT];
	__u32 *oomed;  /* pids whose OOM kill fired once */
	size_t noomed, capoomed;
	struct proc_idents idents; /* exit statuses (pidfd) of the processes seen */
	__u64 *judged; /* (pid << 32 | gen low bits) whose exit was judged */
	size_t njudged, capjudged;
	bool pending;
	struct trig next;
	__u64 due_ns, last_trigger_ns;
	__u64 fired[FLIGHT__COUNT];
	__u64 written, merged, refused_gap, refused_max, rotated, truncated, failed;
	char **names; /* dumps written, oldest first (rotation) */
	size_t nnames;
};

static void *grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return arr;
	p = realloc(arr, c * elem);
	if (p)
		*cap = c;
	return p;
}

/* ---- the triggers' words ---- */

void flight_parse_trigger(struct flight_opts *o, const char *arg)
{
	char buf[256], *save = NULL, *w;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		infl_die(EXIT_USAGE, NULL, "--dump-on '%.40s...': too long", arg);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		const char *v;
		__u64 n;

		if (!strcmp(w, "oom")) {
			o->on |= 1u << FLIGHT_OOM;
		} else if (!strcmp(w, "exit")) {
			o->on |= 1u << FLIGHT_EXIT;
		} else if (!strcmp(w, "sigusr1") || !strcmp(w, "signal")) {
			o->on |= 1u << FLIGHT_SIGNAL; /* always on: accepted for symmetry */
		} else if (!strncmp(w, "tracked>", 8)) {
			if (parse_size(w + 8, 1, ~0ull, &o->tracked_gt))
				infl_die(EXIT_USAGE, "e.g. --dump-on 'tracked>8GiB'",
					 "--dump-on '%s': not a size", w);
			o->on |= 1u << FLIGHT_TRACKED;
		} else if (!strncmp(w, "rss>", 4)) {
			v = w + 4;
			if (*v && v[strlen(v) - 1] == '%') {
				char pct[16];

				snprintf(pct, sizeof(pct), "%.*s", (int)strlen(v) - 1, v);
				if (parse_u64(pct, 1, 100, &n))
					infl_die(EXIT_USAGE, "e.g. --dump-on 'rss>90%%' (1 to 100)",
						 "--dump-on '%s': not a percentage", w);
				o->rss_pct = n;
				o->rss_gt = 0;
			} else if (parse_size(v, 1, ~0ull, &o->rss_gt)) {
				infl_die(EXIT_USAGE, "e.g. --dump-on 'rss>200GiB' or 'rss>90%%'",
					 "--dump-on '%s': not a size or a percentage", w);
			} else {
				o->rss_pct = 0;
			}
			o->on |= 1u << FLIGHT_RSS;
		} else if (!strncmp(w, "owners:", 7) && (v = strchr(w + 7, '>')) && v > w + 7) {
			static char stage[64];

			if (parse_u64(v + 1, 0, ~0ull, &o->owners_gt) || v - (w + 7) >= 64)
				infl_die(EXIT_USAGE, "e.g. --dump-on 'owners:chan_send>16'",
					 "--dump-on '%s': not STAGE>COUNT", w);
			snprintf(stage, sizeof(stage), "%.*s", (int)(v - (w + 7)), w + 7);
			o->owners_name = stage;
			o->on |= 1u << FLIGHT_OWNERS;
		} else {
			infl_die(EXIT_USAGE, "give oom, exit, sigusr1, tracked>SIZE, rss>SIZE, "
				 "rss>PCT%, owners:STAGE>N", "--dump-on '%s': unknown trigger", w);
		}
	}
}

/* ---- memory ---- */

static __u64 chunk_bytes(const struct chunk *c)
{
	return sizeof(*c) + c->cap * sizeof(*c->ev) + c->recs_len;
}

static __u64 map_bytes(const struct u64map *m)
{
	return m->cap * (m->vsize + 16);
}

static __u64 tail_bytes(const struct tail *t)
{
	return sizeof(*t) + sizeof(*t->rp) + map_bytes(&t->rp->bufs) + map_bytes(&t->rp->owners) +
	       t->ord.cap * sizeof(*t->ord.v);
}

static void account(struct flight *f)
{
	__u64 b = 0;

	for (size_t i = 0; i < f->nch; i++)
		b += chunk_bytes(&f->ch[i]);
	for (size_t i = 0; i < f->ntails; i++)
		b += tail_bytes(&f->tails[i]);
	f->bytes = b;
	if (b > f->bytes_peak)
		f->bytes_peak = b;
}

static int chunk_open(struct flight *f, __u64 t0)
{
	struct chunk *n = grow(f->ch, &f->capch, f->nch, sizeof(*f->ch));

	if (!n)
		return -ENOMEM;
	f->ch = n;
	memset(&f->ch[f->nch], 0, sizeof(f->ch[0]));
	f->ch[f->nch].t0 = t0;
	f->ch[f->nch].t1 = t0;
	f->nch++;
	return 0;
}

/* ---- the tail: the state at the ring's start ---- */

static struct tail *tail_of(struct flight *f, __u32 pid)
{
	struct tail *t;

	for (size_t i = 0; i < f->ntails; i++)
		if (f->tails[i].pid == pid)
			return &f->tails[i];
	t = grow(f->tails, &f->captails, f->ntails, sizeof(*f->tails));
	if (!t)
		return NULL;
	f->tails = t;
	t = &f->tails[f->ntails];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	/* the masks of the names: the same rules as the reader's replay */
	t->rp = tl_replay__new(f->h.names ? f->h.names->entry_mask : 0xffff,
			       f->h.names ? f->h.names->terminal_mask : 0, NULL, NULL);
	if (!t->rp)
		return NULL;
	f->ntails++;
	return t;
}

static void tail_drop(struct flight *f, size_t i)
{
	tl_replay__free(f->tails[i].rp);
	tl_order__free(&f->tails[i].ord);
	f->tails[i] = f->tails[--f->ntails];
}

/* An image ends with its exit event: its tail goes (a new image or a reused pid starts
 * another from nothing). */
static int tail_apply(struct flight *f, const struct infl_event *ev)
{
	struct tail *t = tail_of(f, ev->pid);
	struct infl_event e;
	bool ended = false;

	if (!t || tl_order__push(&t->ord, ev))
		return -ENOMEM;
	while (tl_order__pop(&t->ord, false, &e)) {
		tl_replay__apply(t->rp, &e);
		ended |= e.type == INFL_EV_EXIT;
	}
	if (ended && !t->ord.n)
		tail_drop(f, t - f->tails);
	return t->rp->oom ? -ENOMEM : 0;
}

static int evict_oldest(struct flight *f)
{
	struct chunk c = f->ch[0];
	int err = 0;

	for (size_t i = 0; i < c.nev && !err; i++)
		err = tail_apply(f, &c.ev[i]);
	f->evicted_events += c.nev;
	f->kept_events -= c.nev;
	free(c.ev);
	free(c.recs);
	memmove(f->ch, f->ch + 1, (f->nch - 1) * sizeof(*f->ch));
	f->nch--;
	return err;
}

/* Lets go of chunks older than the ring (not while a dump waits for its after-part) and of
 * the oldest while over the size; the open chunk stays. */
static int evict(struct flight *f, __u64 now)
{
	int err = 0;

	account(f);
	while (!err && f->nch > 1) {
		bool old = !f->pending && f->ch[0].t1 + f->o.ring_ns < now;

		if (!old && f->bytes <= f->o.ring_bytes)
			break;
		err = evict_oldest(f);
		account(f);
	}
	return err;
}

/* ---- input ---- */

int flight__new(const struct flight_opts *o, const struct rec_header_info *h,
		struct flight **out)
{
	struct flight *f = calloc(1, sizeof(*f));
	struct timespec w, m;

	*out = NULL;
	if (!f)
		return infl_err(EXIT_GENERIC, NULL, "flight recorder: %s", strerror(ENOMEM));
	f->o = *o;
	f->h = *h;
	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m);
	f->wall_minus_mono = ((__s64)w.tv_sec - m.tv_sec) * 1000000000ll + (w.tv_nsec - m.tv_nsec);
	for (int i = 0; i < FLIGHT__COUNT; i++)
		f->armed[i] = true;
	if (o->on & (1u << FLIGHT_OWNERS)) {
		const struct infl_names *nm = h->names;
		__u64 id;
		int s;

		for (s = 0; s < INFL_MAX_STAGES; s++)
			if (!strcmp(names__stage(nm, s), o->owners_name))
				break;
		if (s == INFL_MAX_STAGES && !parse_u64(o->owners_name, 0, INFL_MAX_STAGES - 1, &id))
			s = id;
		if (s == INFL_MAX_STAGES) {
			free(f);
			return infl_err(EXIT_USAGE, "inflight list BINARY names them",
					"--dump-on 'owners:%s>...': no such stage", o->owners_name);
		}
		f->o.owners_stage = s;
	}
	if (rec_writer__mem(&f->mem) || chunk_open(f, m.tv_sec * 1000000000ull + m.tv_nsec)) {
		flight__free(f);
		return infl_err(EXIT_GENERIC, NULL, "flight recorder: %s", strerror(ENOMEM));
	}
	*out = f;
	return 0;
}

struct rec_writer *flight__writer(struct flight *f)
{
	return f->mem;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

void flight__proc(struct flight *f, __u32 pid, __u64 mono_ns, const char *comm,
		  const char *cmdline, int argc, char *const *argv)
{
	struct ident *id = grow(f->ids, &f->capids, f->nids, sizeof(*f->ids));

	if (!id)
		return; /* the dump then names the process by its pid alone */
	f->ids = id;
	id = &f->ids[f->nids];
	memset(id, 0, sizeof(*id));
	id->pid = pid;
	id->mono_ns = mono_ns;
	id->comm = dup_or_empty(comm);
	id->cmdline = dup_or_empty(cmdline);
	id->argv = calloc(argc > 0 ? argc + 1 : 1, sizeof(*id->argv));
	for (int i = 0; id->argv && i < argc; i++)
		if ((id->argv[i] = strdup(argv[i])))
			id->argc = i + 1;
	f->nids++;
}

int flight__event(struct flight *f, const struct infl_event *ev)
{
	struct chunk *c = &f->ch[f->nch - 1];

	if (c->nev == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		__u64 more = (cap - c->cap) * sizeof(*c->ev);
		struct infl_event *n;
		int err = 0;

		/* room first: the size is a bound, not a target */
		while (!err && f->nch > 1 && f->bytes + more > f->o.ring_bytes) {
			err = evict_oldest(f);
			account(f);
		}
		c = &f->ch[f->nch - 1]; /* eviction moved the chunks */
		n = err ? NULL : realloc(c->ev, cap * sizeof(*n));
		if (!n)
			return err ?: -ENOMEM;
		c->ev = n;
		c->cap = cap;
		f->bytes += more;
		if (f->bytes > f->bytes_peak)
			f->bytes_peak = f->bytes;
	}
	c->ev[c->nev++] = *ev;
	if (ev->ts_ns > c->t1)
		c->t1 = ev->ts_ns;
	f->kept_events++;
	/* a flat-out burst between two snapshots: chunks of their own, so that the oldest can
	 * go while the interval lasts */
	if ((c->nev + 1) * sizeof(*ev) > f->o.ring_bytes / 16 && chunk_open(f, c->t1))
		return -ENOMEM;
	return 0;
}

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

static void fire(struct flight *f, enum flight_trigger kind, __u32 pid, __u64 now,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void fire(struct flight *f, enum flight_trigger kind, __u32 pid, __u64 now,
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
				  trigger_names[kind], t.detail);
		return;
	}
	if (f->last_trigger_ns && now - f->last_trigger_ns < f->o.min_gap_ns) {
		f->refused_gap++;
		infl_warn("flight recorder: %s (%s): no dump, %s after the last one's trigger "
			  "(--dump-interval %s)", trigger_names[kind], t.detail,
			  fmt_duration(b1, now - f->last_trigger_ns),
			  fmt_duration((char[FMT_LEN]){ 0 }, f->o.min_gap_ns));
		return;
	}
	if (f->written >= f->o.max_dumps && !f->o.rotate) {
		f->refused_max++;
		infl_warn("flight recorder: %s (%s): no dump, %llu written already (--max-dumps; "
			  "--rotate replaces the oldest instead)", trigger_names[kind], t.detail,
			  (unsigned long long)f->written);
		return;
	}
	f->pending = true;
	f->next = t;
	f->due_ns = now + f->o.after_ns;
	f->last_trigger_ns = now;
	if (!f->o.quiet)
		infl_warn("flight recorder: %s (%s): dumping the last %s and the next %s",
			  trigger_names[kind], t.detail, fmt_duration(b1, f->o.ring_ns),
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
	n = grow(f->judged, &f->capjudged, f->njudged, sizeof(*n));
	if (!n)
		return true;
	f->judged = n;
	f->judged[f->njudged++] = key;
	return false;
}

static bool judged_pid(const struct flight *f, __u32 pid)
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
			fire(f, FLIGHT_EXIT, id->pid, now, "pid %u exited with status %d", id->pid,
			     WEXITSTATUS(st));
		else if (WIFSIGNALED(st))
			fire(f, FLIGHT_EXIT, id->pid, now, "pid %u killed by signal %d", id->pid,
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
	fire(f, kind, pid, now, "%s", detail);
}

static void check_levels(struct flight *f, const struct snapshot *snap, __u64 now)
{
	char what[160] = "", b1[FMT_LEN], b2[FMT_LEN];
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
	(void)what;
	level(f, FLIGHT_TRACKED, tracked, tpid, now, tw);
	level(f, FLIGHT_RSS, rss, rpid, now, rw);
	level(f, FLIGHT_OWNERS, owners, opid, now, ow);
}

static void check_triggers(struct flight *f, const struct snapshot *snap, __u64 now)
{
	char b1[FMT_LEN];

	for (int i = 0; i < snap->nprocs; i++) {
		const struct proc_snapshot *ps = &snap->procs[i];
		__u32 *n;

		if (!ps->oom.ns || oomed(f, ps->pid))
			continue;
		n = grow(f->oomed, &f->capoomed, f->noomed, sizeof(*n));
		if (!n)
			continue;
		f->oomed = n;
		f->oomed[f->noomed++] = ps->pid;
		if (f->o.on & (1u << FLIGHT_OOM))
			fire(f, FLIGHT_OOM, ps->pid, now, "pid %u chosen by the OOM killer, "
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
		fire(f, FLIGHT_SIGNAL, pid, now, "SIGUSR1 to inflight (pid %d)", (int)getpid());
	}
}

/* ---- dumps ---- */

static bool has_pid(const __u32 *v, size_t n, __u32 pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* The processes a dump holds: those with a state at its start and those with events in it. */
static __u32 *dump_pids(const struct flight *f, size_t *n)
{
	size_t cap = 16;
	__u32 *v = malloc(cap * sizeof(*v)), last = 0;

	*n = 0;
	for (size_t i = 0; v && i < f->ntails; i++)
		if (!has_pid(v, *n, f->tails[i].pid) && (v = grow(v, &cap, *n, sizeof(*v))))
			v[(*n)++] = f->tails[i].pid;
	for (size_t c = 0; v && c < f->nch; c++)
		for (size_t i = 0; v && i < f->ch[c].nev; i++) {
			__u32 pid = f->ch[c].ev[i].pid;

			if (pid == last || has_pid(v, *n, pid))
				continue;
			last = pid;
			if ((v = grow(v, &cap, *n, sizeof(*v))))
				v[(*n)++] = pid;
		}
	return v;
}

struct carry {
	struct rec_writer *w;
	__u32 pid;
	__u64 ts, seq;
	struct tl_replay *rp;
};

static void carry_buf(struct carry *c, __u64 buf, const struct tl_buf *b)
{
	struct infl_event ev = { .ts_ns = c->ts, .seq = ++c->seq, .pid = c->pid,
				 .type = INFL_EV_ALLOC, .id = b->cls, .from_slot = INFL_SLOT_NONE,
				 .arg0 = buf, .arg1 = b->bytes, .arg2 = b->owner };

	ev.flags = REC_EVF_CARRIED | (b->owner && !b->staged ? INFL_EVF_UNSTAGED : 0);
	rec_writer__event(c->w, &ev);
}

static void carry_owner(void *ctx, __u64 owner, struct tl_owner *o)
{
	struct carry *c = ctx;
	struct infl_event ev = { .ts_ns = c->ts, .seq = ++c->seq, .pid = c->pid,
				 .type = INFL_EV_STAGE, .id = o->slot, .flags = REC_EVF_CARRIED,
				 .from_slot = INFL_SLOT_NONE, .arg0 = owner };

	if (o->slot < INFL_MAX_STAGES)
		rec_writer__event(c->w, &ev);
}

static void count_staged(void *ctx, __u64 owner, struct tl_owner *o)
{
	(void)owner;
	*(__u64 *)ctx += o->slot < INFL_MAX_STAGES;
}

/* START, then the allocs of every live buffer (their owners made in no stage), then the
 * stage of every owner in one: replayed, that is the tail's state exactly. */
static void write_tail(struct flight *f, struct rec_writer *w, struct tail *t, __u64 ts)
{
	struct carry c = { .w = w, .pid = t->pid, .ts = ts, .rp = t->rp };
	__u64 nbufs = t->rp->bufs.n, nown = 0, seq = t->ord.last_acct;
	const struct u64map *m = &t->rp->bufs;

	(void)f;
	tl_replay__owners(t->rp, count_staged, &nown);
	if (seq < nbufs + nown)
		seq = nbufs + nown; /* cannot be (each came with an event): stay consistent */
	if (seq)
		rec_writer__start(w, ts, t->pid, seq, nbufs, nown);
	c.seq = seq - nbufs - nown;
	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = m->slots + i * (m->vsize + 16);
		__u64 key;

		if (!s[0])
			continue;
		memcpy(&key, s + 8, 8);
		carry_buf(&c, key, (const struct tl_buf *)(s + 16));
	}
	tl_replay__owners(t->rp, carry_owner, &c);
	/* what the order still holds back: gone from the ring, not yet in the state */
	for (size_t i = 0; i < t->ord.n; i++)
		rec_writer__event(w, &t->ord.v[i].ev);
}

static void write_end(struct rec_writer *w, const struct snapshot *snap, const __u32 *pids,
		      size_t npids, int status, __u64 now)
{
	/* never before the snapshot it closes with (a reader's end is the later of the two) */
	struct rec_end_info e = { .mono_ns = now > snap->mono_ns ? now : snap->mono_ns,
				  .exit_status = status };
	__u32 *pv = calloc(snap->nprocs + 1, sizeof(*pv));
	struct infl_proc *st = calloc(snap->nprocs + 1, sizeof(*st));
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	e.wall_ns = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	for (int i = 0; pv && st && i < snap->nprocs; i++) {
		if (!has_pid(pids, npids, snap->procs[i].pid))
			continue;
		pv[e.nprocs] = snap->procs[i].pid;
		st[e.nprocs++] = snap->procs[i].st;
	}
	e.events = rec_writer__events(w);
	e.pids = pv;
	e.procs = st;
	rec_writer__end(w, &e);
	free(pv);
	free(st);
}

/* The carried state's time: the window's start, or earlier when an event of the dump is
 * (ring-buffer order is not time order across CPUs, and an event read after a tick may be
 * older than it): time then never runs backwards in the file's accounting order. */
static __u64 carried_ts(const struct flight *f)
{
	__u64 ts = f->ch[0].t0;

	for (size_t i = 0; i < f->ntails; i++)
		for (size_t k = 0; k < f->tails[i].ord.n; k++)
			if (f->tails[i].ord.v[k].ev.ts_ns < ts)
				ts = f->tails[i].ord.v[k].ev.ts_ns;
	for (size_t c = 0; c < f->nch; c++)
		for (size_t i = 0; i < f->ch[c].nev; i++)
			if (f->ch[c].ev[i].ts_ns < ts)
				ts = f->ch[c].ev[i].ts_ns;
	return ts;
}

static void write_body(struct flight *f, struct rec_writer *w, const struct snapshot *snap,
		       int status, __u64 now)
{
	const struct trig *t = &f->next;
	__u64 window = carried_ts(f);
	struct rec_header_info h = f->h;
	struct rec_dump_info d = {
		.trigger = trigger_names[t->kind], .detail = t->detail, .trigger_ns = t->mono_ns,
		.window_ns = f->ch[0].t0, .ring_ns = f->o.ring_ns, .after_ns = f->o.after_ns,
		.evicted_events = f->evicted_events, .number = f->written + f->truncated + 1,
		.refused = f->refused_gap + f->refused_max,
	};
	size_t npids;
	__u32 *pids = dump_pids(f, &npids);

	h.start_mono_ns = window;
	h.start_wall_ns = window + f->wall_minus_mono;
	rec_writer__header(w, &h);
	rec_writer__dump(w, &d);
	for (size_t i = 0; pids && i < npids; i++) {
		const struct ident *id = NULL;

		for (size_t k = 0; k < f->nids && !id; k++)
			if (f->ids[k].pid == pids[i])
				id = &f->ids[k];
		if (id)
			rec_writer__proc(w, id->pid, id->mono_ns < window ? window : id->mono_ns,
					 id->comm, id->cmdline, id->argc, id->argv);
		else
			rec_writer__proc(w, pids[i], window, "", "", 0, NULL);
	}
	for (size_t i = 0; i < f->ntails; i++)
		write_tail(f, w, &f->tails[i], window);
	for (size_t c = 0; c < f->nch; c++) {
		for (size_t i = 0; i < f->ch[c].nev; i++)
			rec_writer__event(w, &f->ch[c].ev[i]);
		if (f->ch[c].recs_len)
			rec_writer__raw(w, f->ch[c].recs, f->ch[c].recs_len);
	}
	if (pids)
		write_end(w, snap, pids, npids, status, now);
	free(pids);
}

static void dump_name(const struct flight *f, char *buf, size_t len, int nth)
{
	char host[64], when[32];
	time_t secs = f->next.wall_ns / 1000000000ull;
	struct tm tm;
	size_t i;

	snprintf(host, sizeof(host), "%s", f->h.host ? f->h.host : "host");
	for (i = 0; host[i]; i++)
		if (!((host[i] >= 'a' && host[i] <= 'z') || (host[i] >= 'A' && host[i] <= 'Z') ||
		      (host[i] >= '0' && host[i] <= '9') || host[i] == '.' || host[i] == '_'))
			host[i] = '_';
	if (!gmtime_r(&secs, &tm) || !strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm))
		snprintf(when, sizeof(when), "%llu", (unsigned long long)secs);
	if (nth > 1)
		snprintf(buf, len, "inflight-%s-%u-%s-%s.%d.infl", host, f->next.pid, when,
			 trigger_names[f->next.kind], nth);
	else
		snprintf(buf, len, "inflight-%s-%u-%s-%s.infl", host, f->next.pid, when,
			 trigger_names[f->next.kind]);
}

static void rotate(struct flight *f)
{
	char path[4200];

	if (!f->o.rotate || f->nnames < f->o.max_dumps || !f->nnames)
		return;
	snprintf(path, sizeof(path), "%s/%s", f->o.dir, f->names[0]);
	if (unlink(path) && errno != ENOENT)
		infl_warn("flight recorder: cannot remove the oldest dump %s: %s", path,
			  strerror(errno));
	else
		f->rotated++;
	free(f->names[0]);
	memmove(f->names, f->names + 1, (f->nnames - 1) * sizeof(*f->names));
	f->nnames--;
}

/* Writes the dump under a temporary name and renames it once complete: a reader never sees
 * half a file under a dump's name, unless the disk filled, and then it is said. */
static void write_dump(struct flight *f, const struct snapshot *snap, int status, __u64 now)
{
	char name[256], final[4400], tmp[4400], b1[FMT_LEN];
	struct rec_writer *w;
	struct stat st;
	__u64 bytes;
	int err, nth = 1;

	f->pending = false;
	if (f->o.verbose)
		infl_warn("flight recorder: the ring holds %llu events in %zu chunks, %llu bytes "
			  "(limit %llu), and the state of %zu processes at its start",
			  (unsigned long long)f->kept_events, f->nch, (unsigned long long)f->bytes,
			  (unsigned long long)f->o.ring_bytes, f->ntails);
	rotate(f);
	do
		dump_name(f, name, sizeof(name), nth++);
	while (snprintf(final, sizeof(final), "%s/%s", f->o.dir, name) > 0 &&
	       !lstat(final, &st) && nth < 100);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", f->o.dir, name);
	err = rec_writer__create(tmp, REC_W_FORCE, &w);
	if (err) {
		f->failed++;
		infl_warn("flight recorder: cannot create %s: %s; this dump is lost", tmp,
			  strerror(-err));
		return;
	}
	write_body(f, w, snap, status, now);
	rec_writer__flush(w);
	err = rec_writer__sync(w);
	bytes = rec_writer__bytes(w);
	err = rec_writer__close(w) ?: err;
	if (rename(tmp, final)) {
		f->failed++;
		infl_warn("flight recorder: cannot rename %s to %s: %s", tmp, final,
			  strerror(errno));
		unlink(tmp);
		return;
	}
	if (err) {
		f->truncated++;
		infl_warn("flight recorder: dump %s cut short after %s: %s; inflight report "
			  "--partial reads what it holds", final, fmt_bytes(b1, bytes),
			  strerror(-err));
	} else {
		f->written++;
		if (!f->o.quiet)
			fprintf(stderr, "inflight: flight recorder: wrote %s (%s, %s before the "
				"trigger); inflight report %s\n", final, fmt_bytes(b1, bytes),
				fmt_duration((char[FMT_LEN]){ 0 }, f->next.mono_ns - f->ch[0].t0),
				final);
	}
	{
		char **n = realloc(f->names, (f->nnames + 1) * sizeof(*n));

		if (n) {
			f->names = n;
			f->names[f->nnames++] = strdup(name);
		}
	}
}

int flight__tick(struct flight *f, const struct snapshot *snap, __u64 now)
{
	struct chunk *c = &f->ch[f->nch - 1];
	void *recs;
	size_t len;
	int err = rec_writer__take(f->mem, &recs, &len);

	if (err)
		return err;
	c->recs = recs;
	c->recs_len = len;
	c->t1 = now;
	err = chunk_open(f, now);
	if (err)
		return err;
	check_triggers(f, snap, now);
	if (f->pending && now >= f->due_ns)
		write_dump(f, snap, -1, now);
	return evict(f, now);
}

void flight__finish(struct flight *f, const struct snapshot *snap, int status)
{
	__u64 now = snap->mono_ns;
	void *recs;
	size_t len;

	/* what came after the last tick: into the open chunk */
	if (!rec_writer__take(f->mem, &recs, &len)) {
		struct chunk *c = &f->ch[f->nch - 1];

		free(c->recs);
		c->recs = recs;
		c->recs_len = len;
	}
	if ((f->o.on & (1u << FLIGHT_EXIT)) && status >= 0 && f->h.target_pid &&
	    !judged_pid(f, f->h.target_pid)) {
		if (WIFEXITED(status) && WEXITSTATUS(status))
			fire(f, FLIGHT_EXIT, f->h.target_pid, now, "pid %u exited with status %d",
			     f->h.target_pid, WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			fire(f, FLIGHT_EXIT, f->h.target_pid, now, "pid %u killed by signal %d",
			     f->h.target_pid, WTERMSIG(status));
	}
	check_triggers(f, snap, now);
	if (f->pending) {
		if (now < f->due_ns && !f->o.quiet)
			infl_warn("flight recorder: the run ended %s before the dump's after-part "
				  "did: writing it now", fmt_duration((char[FMT_LEN]){ 0 },
								  f->due_ns - now));
		write_dump(f, snap, status, now);
	}
}

void flight__say(const struct flight *f, __u64 ran_ns)
{
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN], b4[FMT_LEN];
	__u64 refused = f->refused_gap + f->refused_max;

	fprintf(stderr, "inflight: flight recorder: %s over %s, ring of the last %s (%llu "
		"event%s held, %llu let go; memory %s at most (%llu bytes), limit %s); %llu "
		"dump%s written to %s", f->written || f->truncated ? "dumped" : "nothing dumped",
		fmt_duration(b1, ran_ns), fmt_duration(b2, f->o.ring_ns),
		(unsigned long long)f->kept_events, fmt_plural(f->kept_events),
		(unsigned long long)f->evicted_events, fmt_bytes(b3, f->bytes_peak),
		(unsigned long long)f->bytes_peak, fmt_bytes(b4, f->o.ring_bytes),
		(unsigned long long)f->written,
		fmt_plural(f->written), f->o.dir);
	if (refused || f->rotated || f->truncated || f->failed || f->merged)
		fprintf(stderr, " (%llu refused: %llu too soon, %llu over --max-dumps; %llu "
			"rotated; %llu cut short; %llu failed; %llu joined a dump being made)",
			(unsigned long long)refused, (unsigned long long)f->refused_gap,
			(unsigned long long)f->refused_max, (unsigned long long)f->rotated,
			(unsigned long long)f->truncated, (unsigned long long)f->failed,
			(unsigned long long)f->merged);
	fputc('\n', stderr);
}

__u64 flight__dumps(const struct flight *f)
{
	return f->written;
}

void flight__free(struct flight *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nch; i++) {
		free(f->ch[i].ev);
		free(f->ch[i].recs);
	}
	free(f->ch);
	while (f->ntails)
		tail_drop(f, f->ntails - 1);
	free(f->tails);
	for (size_t i = 0; i < f->nids; i++) {
		free(f->ids[i].comm);
		free(f->ids[i].cmdline);
		for (int k = 0; k < f->ids[i].argc; k++)
			free(f->ids[i].argv[k]);
		free(f->ids[i].argv);
	}
	free(f->ids);
	free(f->oomed);
	free(f->judged);
	idents__free(&f->idents);
	for (size_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	rec_writer__close(f->mem);
	free(f);
}
