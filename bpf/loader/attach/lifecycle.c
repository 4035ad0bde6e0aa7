// SPDX-License-Identifier: BSD-2-Clause
/*
 * The traced processes' lives, on the loader's side. The kernel side ends an image at exit
 * or exec by sending its final record through the control ring and removing it from
 * `procs` (inflight.bpf.c: image_end). Here the record is kept for every output until the
 * command forgets it and what the image left in `bufs` and `owners` is removed (a new image
 * that carries the contract is attached by the watch, attach/watch.c). The snapshot joins
 * the living, copied from the kernel seqlock style, with the ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/map_walk.h"
#include "attach/session_int.h"
#include "live/figures.h"
#include "util/errors.h"

#define SNAPSHOT_RETRIES 64 /* seqlock copies before a snapshot is taken as torn */

/* Keys of bufs and owners begin with the pid and the record's gen (inflight.h). */
struct key_head {
	__u32 pid;
	__u32 pad;
	__u64 gen;
};

struct doomed_keys {
	char *keys;
	size_t n, cap, key_size;
	__u32 pid;
	__u64 gen;
};

static int collect_doomed(const void *key, const void *value, void *ctx)
{
	const struct key_head *h = key;
	struct doomed_keys *d = ctx;

	(void)value;
	if (h->pid != d->pid || h->gen != d->gen)
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		char *more = realloc(d->keys, cap * d->key_size);

		if (!more)
			return -ENOMEM;
		d->keys = more;
		d->cap = cap;
	}
	memcpy(d->keys + d->n++ * d->key_size, key, d->key_size);
	return 0;
}

/* Deletes every key of `map` that belongs to image (pid, gen), collected first. */
static int forget_keys(struct bpf_map *map, __u32 pid, __u64 gen)
{
	struct doomed_keys d = { .key_size = bpf_map__key_size(map), .pid = pid, .gen = gen };
	int fd = bpf_map__fd(map);
	int err = map_walk(fd, d.key_size, bpf_map__value_size(map), bpf_map__max_entries(map),
			   collect_doomed, &d);

	for (size_t i = 0; !err && i < d.n; i++)
		bpf_map_delete_elem(fd, d.keys + i * d.key_size);
	free(d.keys);
	return err;
}

/* Could the image have left entries behind? A clean one (nothing held, no owner alive, no
 * update skipped) did not, and costs no walk of the maps. */
static bool may_have_left(const struct infl_proc *p)
{
	__u64 owners = 0;

	for (int s = 0; s < INFL_SLOTS; s++)
		owners += p->owners[s];
	return p->total_bufs || owners || p->lock_timeouts || p->dup_alloc;
}

/* Whether the OOM killer chose pid (bpf/oom.bpf.h): its record into *oom, zeroed when not;
 * `ended` drops the kernel's copy, which has then reached the process's final state. */
static void oom_take(struct session *s, __u32 pid, struct infl_oom_kill *oom, bool ended)
{
	int fd = bpf_map__fd(s->skel->maps.oom_kills);

	memset(oom, 0, sizeof(*oom));
	if (bpf_map_lookup_elem(fd, &pid, oom) == 0 && ended)
		bpf_map_delete_elem(fd, &pid);
}

static void keep_ended(struct session *s, __u32 pid, const struct infl_proc *final)
{
	if (s->nended == s->capended) {
		int cap = s->capended ? 2 * s->capended : 16;
		struct proc_snapshot *more = realloc(s->ended, cap * sizeof(*more));

		if (!more) {
			infl_warn("pid %u: out of memory: its final state is not kept", pid);
			return;
		}
		s->ended = more;
		s->capended = cap;
	}
	s->ended[s->nended].pid = pid;
	s->ended[s->nended].st = *final;
	oom_take(s, pid, &s->ended[s->nended].oom, true);
	s->nended++;
	if (may_have_left(final) &&
	    (forget_keys(s->skel->maps.bufs, pid, final->gen) ||
	     forget_keys(s->skel->maps.owners, pid, final->gen)))
		infl_warn("pid %u: cannot remove its buffers and owners from the kernel maps", pid);
}

int lifecycle__on_ctl(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct infl_ctl *c = data;

	if (size < sizeof(*c)) {
		s->ring_lost++;
		return 0;
	}
	/* an exec's new image, when it carries the contract, is the watch's to attach
	 * (attach/watch.c: the process stopped until then, from the service thread, which
	 * keeps the capabilities an attach needs after this thread has given them up) */
	keep_ended(s, c->pid, &c->final);
	return 0;
}

#define SWEEP_BATCH 64

struct sweep {
	struct session *s;
	__u32 doomed[SWEEP_BATCH];
	int n;
};

static int sweep_one(const void *key, const void *value, void *ctx)
{
	const struct infl_proc *rec = value;
	struct sweep *w = ctx;

	if (!rec->exited)
		return 0;
	keep_ended(w->s, *(const __u32 *)key, rec);
	w->doomed[w->n++] = *(const __u32 *)key;
	return w->n == SWEEP_BATCH; /* the rest at the next sweep */
}

/* Ended records the control ring had no room for stay in `procs`, marked exited, until
 * this moves them (the kernel's ctl_full tells when to look). */
void lifecycle__sweep(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.procs);
	__u64 full = s->skel->bss->ctl_full;
	struct sweep w = { .s = s };
	int err;

	if (full == s->ctl_full_seen)
		return;
	err = map_walk(fd, sizeof(__u32), sizeof(struct infl_proc),
		       bpf_map__max_entries(s->skel->maps.procs), sweep_one, &w);
	if (err < 0)
		infl_warn("cannot walk the kernel's process records: %s", strerror(-err));
	for (int i = 0; i < w.n; i++)
		bpf_map_delete_elem(fd, &w.doomed[i]);
	/* a full batch: there may be more */
	s->ctl_full_seen = w.n == SWEEP_BATCH ? full - 1 : full;
}

void lifecycle__free(struct session *s)
{
	free(s->ended);
	s->ended = NULL;
	s->nended = s->capended = 0;
}

int session__ident(const struct session *s, __u32 pid, __u64 gen, struct infl_ident *out)
{
	struct infl_ident_key k = { .pid = pid, .gen = gen };

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.idents), &k, out))
		return -errno;
	return 0;
}

/* The class and stage slots image `p` has counted anything in. */
static void counted_in(const struct infl_proc *p, struct image_slots_used *u)
{
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (p->allocated[c].count || p->freed[c].count || p->unmatched_free[c].count)
			u->cls |= 1u << c;
	for (int st = 0; st < INFL_MAX_STAGES; st++) {
		bool any = p->owners[st] || p->dwell_count[st] || p->unmatched_stage[st];

		for (int c = 0; !any && c < INFL_CLASSES; c++)
			any = p->cur[c][st].count != 0;
		if (any)
			u->stage |= 1u << st;
	}
}

static int counted_one(const void *key, const void *value, void *ctx)
{
	(void)key;
	counted_in(value, ctx);
	return 0;
}

void lifecycle__counted_slots(struct session *s, struct image_slots_used *u)
{
	memset(u, 0, sizeof(*u));
	map_walk(bpf_map__fd(s->skel->maps.procs), sizeof(__u32), sizeof(struct infl_proc),
		 bpf_map__max_entries(s->skel->maps.procs), counted_one, u);
	for (int i = 0; i < s->nended; i++)
		counted_in(&s->ended[i].st, u);
}

int session__ident_at(const struct session *s, __u32 pid, __u64 ts, struct infl_ident *out)
{
	int fd = bpf_map__fd(s->skel->maps.idents);
	struct infl_ident_key k, next, best = { 0 };
	bool found = false;
	void *prev = NULL;

	/* the image of `pid` made last at or before `ts`: a record's gen is when it was made */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (next.pid == pid && next.gen <= ts && (!found || next.gen > best.gen)) {
			best = next;
			found = true;
		}
		k = next;
		prev = &k;
	}
	if (!found)
		return -ENOENT;
	return session__ident(s, pid, best.gen, out);
}

int session__nended(const struct session *s)
{
	return s->nended;
}

static int forget(struct session *s, __u32 pid, __u64 gen, bool any_gen)
{
	int kept = 0, idents = bpf_map__fd(s->skel->maps.idents);

	for (int i = 0; i < s->nended; i++) {
		struct infl_ident_key k = { .pid = s->ended[i].pid, .gen = s->ended[i].st.gen };

		if (s->ended[i].pid != pid || (!any_gen && s->ended[i].st.gen != gen))
			s->ended[kept++] = s->ended[i];
		else
			bpf_map_delete_elem(idents, &k); /* its name goes with it */
	}
	if (kept == s->nended)
		return -ENOENT;
	s->nended = kept;
	return 0;
}

int session__forget(struct session *s, __u32 pid)
{
	return forget(s, pid, 0, true);
}

int session__forget_image(struct session *s, __u32 pid, __u64 gen)
{
	return forget(s, pid, gen, false);
}

/* One process's record, copied seqlock style (see struct infl_proc). */
static int copy_proc(int fd, __u32 pid, struct infl_proc *dst, bool *torn)
{
	for (int i = 0; i < SNAPSHOT_RETRIES; i++) {
		if (bpf_map_lookup_elem(fd, &pid, dst))
			return -errno;
		if (dst->write_end == dst->write_begin) {
			*torn = false;
			return 0;
		}
	}
	*torn = true;
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_snapshot *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->st.gen < y->st.gen ? -1 : x->st.gen > y->st.gen;
}

static int snap_add(struct snapshot *snap, int *cap, __u32 pid, const struct infl_proc *st)
{
	if (snap->nprocs == *cap) {
		struct proc_snapshot *more = realloc(snap->procs, 2 * *cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		snap->procs = more;
		*cap *= 2;
	}
	snap->procs[snap->nprocs].pid = pid;
	if (st)
		snap->procs[snap->nprocs].st = *st;
	memset(&snap->procs[snap->nprocs].oom, 0, sizeof(snap->procs[0].oom));
	snap->nprocs++;
	return 0;
}

/* Once tracing has stopped (session__stop), probe hits still queued behind a process's lock
 * (bpf/deferred.bpf.h) will not be applied: they are counted like hits that gave up on the
 * lock, as the kernel counts them when an image ends (inflight.bpf.c: image_end). */
static void count_unapplied(struct infl_proc *p)
{
	p->lock_timeouts += p->defer_tail - p->defer_head;
	p->defer_head = p->defer_tail;
}

struct living_walk {
	struct session *s;
	struct snapshot *snap;
	int *cap;
	int fd;
};

static int living_one(const void *key, const void *value, void *ctx)
{
	struct living_walk *w = ctx;
	__u32 pid = *(const __u32 *)key;
	struct proc_snapshot *ps;
	bool torn = false;
	int err = snap_add(w->snap, w->cap, pid, value);

	if (err)
		return err;
	ps = &w->snap->procs[w->snap->nprocs - 1];
	/* the batch copied it while BPF programs may write: a section in progress is copied
	 * again, seqlock style */
	if (ps->st.write_end != ps->st.write_begin)
		err = copy_proc(w->fd, pid, &ps->st, &torn);
	if (err == -ENOENT || (!err && !ps->st.seq && !proc_inexact(&ps->st))) {
		w->snap->nprocs--; /* gone meanwhile, or nothing to show */
		return 0;
	}
	if (err)
		return err;
	if (w->s->skel->bss->stopped)
		count_unapplied(&ps->st);
	oom_take(w->s, pid, &ps->oom, false);
	w->snap->torn += torn;
	return 0;
}

/* The living, from the map, each once however many end meanwhile. A record with no event
 * yet (a traced set's member that has not hit a probe) is nobody's business. */
static int snap_living(struct session *s, struct snapshot *snap, int *cap)
{
	struct living_walk w = { .s = s, .snap = snap, .cap = cap,
				 .fd = bpf_map__fd(s->skel->maps.procs) };

	return map_walk(w.fd, sizeof(__u32), sizeof(struct infl_proc),
			bpf_map__max_entries(s->skel->maps.procs), living_one, &w);
}

int session__snapshot(struct session *s, struct snapshot *snap)
{
	int cap = 8, err, living;

	memset(snap, 0, sizeof(*snap));
	snap->procs = calloc(cap, sizeof(*snap->procs));
	if (!snap->procs)
		return -ENOMEM;
	err = snap_living(s, snap, &cap);
	/* then the images that ended meanwhile: an image that ended after its copy above is in
	 * both, and its final record wins; one that ended before is in the ring alone */
	if (!err && ring_buffer__consume(s->ctl) < 0)
		err = -errno;
	lifecycle__sweep(s);
	living = snap->nprocs;
	for (int i = 0; !err && i < s->nended; i++) {
		const struct proc_snapshot *e = &s->ended[i];

		for (int j = 0; j < living; j++)
			if (snap->procs[j].pid == e->pid && snap->procs[j].st.gen == e->st.gen)
				snap->procs[j].pid = 0; /* superseded */
		err = snap_add(snap, &cap, e->pid, &e->st);
		if (!err)
			snap->procs[snap->nprocs - 1].oom = e->oom;
	}
	if (err) {
		snapshot__free(snap);
		return err;
	}
	for (int j = 0, k = 0, n = snap->nprocs; j < n; j++) {
		if (j < living && !snap->procs[j].pid)
			snap->nprocs--; /* pid 0 is never a traced process: the mark above */
		else
			snap->procs[k++] = snap->procs[j];
	}
	snap->mono_ns = session__now_ns();
	snap->procs_map_full = s->skel->bss->procs_map_full;
	snap->rss_off = s->rss_off;
	qsort(snap->procs, snap->nprocs, sizeof(*snap->procs), cmp_proc);
	return 0;
}

static int count_one(const void *key, const void *value, void *ctx)
{
	(void)key;
	(void)value;
	++*(__u32 *)ctx;
	return 0;
}

static __u32 map_count(struct bpf_map *map)
{
	__u32 n = 0;

	map_walk(bpf_map__fd(map), bpf_map__key_size(map), bpf_map__value_size(map),
		 bpf_map__max_entries(map), count_one, &n);
	return n;
}

int session__map_usage(struct session *s, __u32 *procs, __u32 *bufs, __u32 *owners)
{
	*procs = map_count(s->skel->maps.procs);
	*bufs = map_count(s->skel->maps.bufs);
	*owners = map_count(s->skel->maps.owners);
	return 0;
}
