// SPDX-License-Identifier: BSD-2-Clause
/*
 * A snapshot read from the kernel (attach/snapshot_read.h): the living processes' records,
 * each copied seqlock style, and the final records of those that ended (attach/lifecycle.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/map_walk.h"
#include "attach/snapshot_read.h"
#include "model/figures.h"

#define SNAPSHOT_RETRIES 64 /* copies before a snapshot is taken as torn */

/* One process's record, copied until a copy is whole (see struct infl_proc). */
static int copy_proc(int fd, __u32 pid, struct infl_proc *dst, bool *torn)
{
	for (int i = 0; i < SNAPSHOT_RETRIES; i++) {
		if (bpf_map_lookup_elem(fd, &pid, dst))
			return -errno;
		if (infl_proc_whole(dst)) {
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
 * (the locked form) will not be applied: they are counted like hits that gave up on the
 * lock, as the kernel counts them when an image ends (inflight.bpf.c: image_end). */
static void count_unapplied(struct infl_proc *p)
{
	p->lock_timeouts += p->defer_tail - p->defer_head;
	p->defer_head = p->defer_tail;
}

struct living_walk {
	struct inflight_bpf *skel;
	const struct lifecycle *life;
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
	/* the batch copied it while BPF programs may write: a copy made while a hit was in
	 * flight is made again */
	if (!infl_proc_whole(&ps->st))
		err = copy_proc(w->fd, pid, &ps->st, &torn);
	if (!err)
		infl_proc_derive(&ps->st);
	if (err == -ENOENT || (!err && !ps->st.seq && !figures__proc_inexact(&ps->st))) {
		w->snap->nprocs--; /* gone meanwhile, or nothing to show */
		return 0;
	}
	if (err)
		return err;
	if (w->skel->bss->stopped)
		count_unapplied(&ps->st);
	lifecycle__oom(w->life, pid, &ps->oom);
	w->snap->torn += torn;
	return 0;
}

/* The living, from the map, each once however many end meanwhile. A record with no event
 * yet (a traced set's member that has not hit a probe) is nobody's business. */
static int snap_living(struct inflight_bpf *skel, const struct lifecycle *life,
		       struct snapshot *snap, int *cap)
{
	struct living_walk w = { .skel = skel, .life = life, .snap = snap, .cap = cap,
				 .fd = bpf_map__fd(skel->maps.procs) };

	return map_walk__all(w.fd, sizeof(__u32), sizeof(struct infl_proc),
			bpf_map__max_entries(skel->maps.procs), living_one, &w);
}

int snapshot_read__take(struct inflight_bpf *skel, struct lifecycle *life, struct snapshot *snap)
{
	const struct proc_snapshot *ended;
	int cap = 8, err, living, nended;

	memset(snap, 0, sizeof(*snap));
	snap->procs = calloc(cap, sizeof(*snap->procs));
	if (!snap->procs)
		return -ENOMEM;
	err = snap_living(skel, life, snap, &cap);
	/* then the images that ended meanwhile: an image that ended after its copy above is in
	 * both, and its final record wins; one that ended before is in the ring alone */
	if (!err && lifecycle__consume(life) < 0)
		err = -errno;
	lifecycle__sweep(life);
	living = snap->nprocs;
	ended = lifecycle__ended(life, &nended);
	for (int i = 0; !err && i < nended; i++) {
		const struct proc_snapshot *e = &ended[i];

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
	snap->procs_map_full = skel->bss->procs_map_full;
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

	map_walk__all(bpf_map__fd(map), bpf_map__key_size(map), bpf_map__value_size(map),
		 bpf_map__max_entries(map), count_one, &n);
	return n;
}

int snapshot_read__map_usage(struct inflight_bpf *skel, __u32 *procs, __u32 *bufs,
			     __u32 *owners)
{
	*procs = map_count(skel->maps.procs);
	*bufs = map_count(skel->maps.bufs);
	*owners = map_count(skel->maps.owners);
	return 0;
}
