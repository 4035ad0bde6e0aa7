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

/* Deletes every key of `map` that belongs to image (pid, gen). Keys are collected first:
 * deleting while iterating restarts a hash map walk. */
static int forget_keys(struct bpf_map *map, size_t key_size, __u32 pid, __u64 gen)
{
	int fd = bpf_map__fd(map);
	char cursor[32], next[32], *doomed = NULL;
	size_t n = 0, cap = 0;
	bool first = true;

	if (key_size > sizeof(next))
		return -EINVAL;
	while (bpf_map_get_next_key(fd, first ? NULL : cursor, next) == 0) {
		const struct key_head *h = (const void *)next;

		first = false;
		memcpy(cursor, next, key_size);
		if (h->pid != pid || h->gen != gen)
			continue;
		if (n == cap) {
			char *more = realloc(doomed, (cap ? 2 * cap : 256) * key_size);

			if (!more) {
				free(doomed);
				return -ENOMEM;
			}
			doomed = more;
			cap = cap ? 2 * cap : 256;
		}
		memcpy(doomed + n++ * key_size, next, key_size);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, doomed + i * key_size);
	free(doomed);
	return 0;
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
	    (forget_keys(s->skel->maps.bufs, sizeof(struct infl_buf_key), pid, final->gen) ||
	     forget_keys(s->skel->maps.owners, sizeof(struct infl_owner_key), pid, final->gen)))
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

/* Ended records the control ring had no room for stay in `procs`, marked exited, until
 * this moves them (the kernel's ctl_full tells when to look). */
void lifecycle__sweep(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.procs);
	__u32 key, next, *prev = NULL, doomed[64];
	static struct infl_proc rec;
	__u64 full = s->skel->bss->ctl_full;
	int n = 0;

	if (full == s->ctl_full_seen)
		return;
	while (n < 64 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &rec) == 0 && rec.exited) {
			keep_ended(s, key, &rec);
			doomed[n++] = key;
		}
	}
	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &doomed[i]);
	s->ctl_full_seen = n == 64 ? full - 1 : full; /* 64 moved: there may be more */
}

void lifecycle__free(struct session *s)
{
	free(s->ended);
	s->ended = NULL;
	s->nended = s->capended = 0;
}

int session__nended(const struct session *s)
{
	return s->nended;
}

static int forget(struct session *s, __u32 pid, __u64 gen, bool any_gen)
{
	int kept = 0;

	for (int i = 0; i < s->nended; i++)
		if (s->ended[i].pid != pid || (!any_gen && s->ended[i].st.gen != gen))
			s->ended[kept++] = s->ended[i];
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

/* The living, from the map. A record with no event yet (a traced set's member that has not
 * hit a probe) is nobody's business. */
static int snap_living(struct session *s, struct snapshot *snap, int *cap)
{
	int fd = bpf_map__fd(s->skel->maps.procs), err;
	__u32 key, next, *prev = NULL;
	bool torn = false;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct proc_snapshot *ps;

		key = next;
		prev = &key;
		err = snap_add(snap, cap, key, NULL);
		if (err)
			return err;
		ps = &snap->procs[snap->nprocs - 1];
		err = copy_proc(fd, key, &ps->st, &torn);
		if (err == -ENOENT || (!err && !ps->st.seq && !proc_inexact(&ps->st))) {
			snap->nprocs--; /* gone meanwhile, or nothing to show */
			continue;
		}
		if (err)
			return err;
		if (s->skel->bss->stopped)
			count_unapplied(&ps->st);
		oom_take(s, key, &ps->oom, false);
		snap->torn += torn;
	}
	return 0;
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

static __u32 map_count(struct bpf_map *map, size_t key_size)
{
	char cursor[32], next[32];
	__u32 n = 0;

	while (key_size <= sizeof(next) &&
	       bpf_map_get_next_key(bpf_map__fd(map), n ? cursor : NULL, next) == 0) {
		memcpy(cursor, next, key_size);
		n++;
	}
	return n;
}

int session__map_usage(struct session *s, __u32 *procs, __u32 *bufs, __u32 *owners)
{
	*procs = map_count(s->skel->maps.procs, sizeof(__u32));
	*bufs = map_count(s->skel->maps.bufs, sizeof(struct infl_buf_key));
	*owners = map_count(s->skel->maps.owners, sizeof(struct infl_owner_key));
	return 0;
}
