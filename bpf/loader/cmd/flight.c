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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cmd/flight_int.h"
#include "recording/rec_format.h"
#include "util/errors.h"
#include "util/fmt.h"
#include "util/grow.h"
#include "util/parse.h"

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
	return sizeof(*t) + sizeof(*t->rp) + map_bytes(&t->rp->bufs) +
	       map_bytes(&t->rp->cuda_bufs) + map_bytes(&t->rp->aside) + map_bytes(&t->rp->owners) +
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
	struct chunk *n = grow_array(f->ch, &f->capch, f->nch, sizeof(*f->ch));

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
	t = grow_array(f->tails, &f->captails, f->ntails, sizeof(*f->tails));
	if (!t)
		return NULL;
	f->tails = t;
	t = &f->tails[f->ntails];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	/* the masks of the names: the same rules as the reader's replay */
	t->rp = tl_replay__new(f->h.names ? f->h.names->entry_mask : 0xffff,
			       f->h.names ? f->h.names->terminal_mask : 0, true, NULL, NULL);
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
	bool ended = false, oom;

	if (!t || tl_order__push(&t->ord, ev))
		return -ENOMEM;
	while (tl_order__pop(&t->ord, false, &e)) {
		tl_replay__apply(t->rp, &e);
		ended |= e.type == INFL_EV_EXIT;
	}
	oom = t->rp->oom;
	if (ended && !t->ord.n)
		tail_drop(f, t - f->tails); /* t is another tail's, or none, from here */
	return oom ? -ENOMEM : 0;
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
	if (o->verbose) {
		char b1[FMT_LEN], b2[FMT_LEN];

		fprintf(stderr, "inflight: flight recorder: the last %s, %s of memory at most "
			"(events 56 bytes each, snapshots encoded); dumps to %s\n",
			fmt_duration(b1, o->ring_ns), fmt_bytes(b2, o->ring_bytes), o->dir);
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
	struct ident *id = grow_array(f->ids, &f->capids, f->nids, sizeof(*f->ids));

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
		if (!has_pid(v, *n, f->tails[i].pid) && (v = grow_array(v, &cap, *n, sizeof(*v))))
			v[(*n)++] = f->tails[i].pid;
	for (size_t c = 0; v && c < f->nch; c++)
		for (size_t i = 0; v && i < f->ch[c].nev; i++) {
			__u32 pid = f->ch[c].ev[i].pid;

			if (pid == last || has_pid(v, *n, pid))
				continue;
			last = pid;
			if ((v = grow_array(v, &cap, *n, sizeof(*v))))
				v[(*n)++] = pid;
		}
	return v;
}

struct carry {
	struct rec_writer *w;
	__u32 pid;
	__u64 ts, seq;
	struct tl_replay *rp;
	struct u64map carried[2]; /* the ids carried so far, the program's and libcuda's */
};

/* A carried alloc. One of an id carried already is a double alloc (INFL_EVF_DUP): the
 * reader's replay sets the one before aside, as the kernel's did, for the free that follows
 * in the window (a dump is of the current format, 1.6 on). */
static void carry_buf(struct carry *c, __u64 buf, const struct tl_buf *b)
{
	struct infl_event ev = { .ts_ns = c->ts, .seq = ++c->seq, .pid = c->pid,
				 .type = INFL_EV_ALLOC, .id = b->cls, .from_slot = INFL_SLOT_NONE,
				 .arg0 = buf, .arg1 = b->bytes, .arg2 = b->owner };
	bool created = true;

	if (!u64map__put(&c->carried[b->cls >= INFL_MAX_CLASSES], buf, &created))
		created = true; /* out of memory: at worst the replay replaces it at once */
	ev.flags = REC_EVF_CARRIED | (b->owner && !b->staged ? INFL_EVF_UNSTAGED : 0) |
		   (created ? 0 : INFL_EVF_DUP);
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

/* The alloc of every live buffer of one of the replay's buffer tables. */
static void carry_bufs(struct carry *c, const struct u64map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = m->slots + i * (m->vsize + 16);
		__u64 key;

		if (!s[0])
			continue;
		memcpy(&key, s + 8, 8);
		carry_buf(c, key, (const struct tl_buf *)(s + 16));
	}
}

/* The buffers double allocs replaced whose own free is still to come: counted until then. */
static __u64 aside_count(const struct u64map *m)
{
	__u64 n = 0;

	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = m->slots + i * (m->vsize + 16);

		if (s[0])
			n += ((const struct tl_aside *)(s + 16))->n;
	}
	return n;
}

static void carry_aside(struct carry *c, const struct u64map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = m->slots + i * (m->vsize + 16);
		const struct tl_aside *a = (const struct tl_aside *)(s + 16);

		for (__u32 k = 0; s[0] && k < a->n; k++)
			carry_buf(c, a->buf, &a->b);
	}
}

/* START, then the allocs of every buffer set aside by a double alloc, then of every live
 * buffer, the program's and libcuda's (their owners made in no stage), then the stage of
 * every owner in one: replayed, that is the tail's state exactly. */
static void write_tail(struct rec_writer *w, struct tail *t, __u64 ts)
{
	struct carry c = { .w = w, .pid = t->pid, .ts = ts, .rp = t->rp,
			   .carried = { { .vsize = 1 }, { .vsize = 1 } } };
	__u64 nbufs = t->rp->bufs.n + t->rp->cuda_bufs.n + aside_count(&t->rp->aside), nown = 0,
	      seq = t->ord.last_acct;

	tl_replay__owners(t->rp, count_staged, &nown);
	if (seq < nbufs + nown)
		seq = nbufs + nown; /* cannot be (each came with an event): stay consistent */
	if (seq)
		rec_writer__start(w, ts, t->pid, seq, nbufs, nown);
	c.seq = seq - nbufs - nown;
	carry_aside(&c, &t->rp->aside);
	carry_bufs(&c, &t->rp->bufs);
	carry_bufs(&c, &t->rp->cuda_bufs);
	u64map__free(&c.carried[0]);
	u64map__free(&c.carried[1]);
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
		.trigger = flight_trigger_names[t->kind], .detail = t->detail, .trigger_ns = t->mono_ns,
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
		write_tail(w, &f->tails[i], window);
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
			 flight_trigger_names[f->next.kind], nth);
	else
		snprintf(buf, len, "inflight-%s-%u-%s-%s.infl", host, f->next.pid, when,
			 flight_trigger_names[f->next.kind]);
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
		fprintf(stderr, "inflight: flight recorder: the ring holds %llu events in %zu "
			"chunks, %llu bytes (limit %llu), and the state of %zu processes at its "
			"start\n", (unsigned long long)f->kept_events, f->nch,
			(unsigned long long)f->bytes, (unsigned long long)f->o.ring_bytes, f->ntails);
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
		f->written_by[f->next.kind]++;
		f->last_wall_ns = f->next.wall_ns;
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
	flight__check_triggers(f, snap, now);
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
	    !flight__judged_pid(f, f->h.target_pid)) {
		if (WIFEXITED(status) && WEXITSTATUS(status))
			flight__fire(f, FLIGHT_EXIT, f->h.target_pid, now, "pid %u exited with status %d",
			     f->h.target_pid, WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			flight__fire(f, FLIGHT_EXIT, f->h.target_pid, now, "pid %u killed by signal %d",
			     f->h.target_pid, WTERMSIG(status));
	}
	flight__check_triggers(f, snap, now);
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

void flight__stats(const struct flight *f, struct prom_dumps *st)
{
	memset(st, 0, sizeof(*st));
	st->trigger = flight_trigger_names;
	memcpy(st->written, f->written_by, sizeof(st->written));
	st->refused = f->refused_gap + f->refused_max;
	st->cut = f->truncated;
	st->failed = f->failed;
	st->last_unix_ns = f->last_wall_ns;
	st->ring_bytes = f->bytes;
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
