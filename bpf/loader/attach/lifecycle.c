// SPDX-License-Identifier: BSD-2-Clause
/*
 * The traced processes' lives, on the loader's side (attach/lifecycle.h). The kernel side
 * ends an image at exit or exec by sending its final record through the control ring and
 * removing it from `procs` (inflight.bpf.c: image_end). Here the record is kept for every
 * output until the command forgets it and what the image left in `bufs` and `owners` is
 * removed (a new image that carries the contract is attached by the watch, attach/watch.c).
 * attach/snapshot_read.c joins the records kept here with the living.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/lifecycle.h"
#include "attach/map_walk.h"
#include "util/clock.h"
#include "util/errors.h"

struct lifecycle {
	struct inflight_bpf *skel;
	struct ring_buffer *ctl; /* the control ring: ended images */
	__u64 lost;		 /* its records too short to read */
	/* final records of ended images, kept for the outputs until forgotten */
	struct proc_snapshot *ended;
	int nended, capended;
	__u64 ctl_full_seen; /* the kernel's ctl_full when the maps were last swept */
};

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
	int err = map_walk__all(fd, d.key_size, bpf_map__value_size(map), bpf_map__max_entries(map),
			   collect_doomed, &d);

	for (size_t i = 0; !err && i < d.n; i++)
		bpf_map_delete_elem(fd, d.keys + i * d.key_size);
	free(d.keys);
	return err;
}

/* Could the image have left entries behind? A clean one (nothing held, no owner alive or
 * retired, whose record the kernel keeps a while: owners.bpf.h; no update skipped) did not,
 * and costs no walk of the maps. */
static bool may_have_left(const struct infl_proc *p)
{
	__u64 owners = 0;

	for (int s = 0; s < INFL_SLOTS; s++)
		owners += p->owners[s];
	return p->total_bufs || owners || p->owners_done || p->lock_timeouts || p->dup_alloc ||
	       p->contention_lost;
}

/* Whether the OOM killer chose pid (bpf/oom.bpf.h): its record into *oom, zeroed when not;
 * `ended` drops the kernel's copy, which has then reached the process's final state. */
static void oom_take(const struct lifecycle *l, __u32 pid, struct infl_oom_kill *oom, bool ended)
{
	int fd = bpf_map__fd(l->skel->maps.oom_kills);

	memset(oom, 0, sizeof(*oom));
	if (bpf_map_lookup_elem(fd, &pid, oom) == 0 && ended)
		bpf_map_delete_elem(fd, &pid);
}

static void keep_ended(struct lifecycle *l, __u32 pid, const struct infl_proc *final)
{
	if (l->nended == l->capended) {
		int cap = l->capended ? 2 * l->capended : 16;
		struct proc_snapshot *more = realloc(l->ended, cap * sizeof(*more));

		if (!more) {
			infl_warn("pid %u: out of memory: its final state is not kept", pid);
			return;
		}
		l->ended = more;
		l->capended = cap;
	}
	l->ended[l->nended].pid = pid;
	l->ended[l->nended].st = *final;
	oom_take(l, pid, &l->ended[l->nended].oom, true);
	l->nended++;
	if (may_have_left(final) &&
	    (forget_keys(l->skel->maps.bufs, pid, final->gen) ||
	     forget_keys(l->skel->maps.owners, pid, final->gen)))
		infl_warn("pid %u: cannot remove its buffers and owners from the kernel maps", pid);
}

static int on_ctl(void *ctx, void *data, size_t size)
{
	struct lifecycle *l = ctx;
	const struct infl_ctl *c = data;

	if (size < sizeof(*c)) {
		l->lost++;
		return 0;
	}
	/* an exec's new image, when it carries the contract, is the watch's to attach
	 * (attach/watch.c: the process stopped until then, from the service thread, which
	 * keeps the capabilities an attach needs after this thread has given them up) */
	keep_ended(l, c->pid, &c->final);
	return 0;
}

int lifecycle__new(struct inflight_bpf *skel, struct lifecycle **out)
{
	struct lifecycle *l = calloc(1, sizeof(*l));
	int err;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->skel = skel;
	l->ctl = ring_buffer__new(bpf_map__fd(skel->maps.ctl), on_ctl, l, NULL);
	if (!l->ctl) {
		err = -errno;
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

int lifecycle__epoll_fd(const struct lifecycle *l)
{
	return ring_buffer__epoll_fd(l->ctl);
}

int lifecycle__consume(struct lifecycle *l)
{
	return ring_buffer__consume(l->ctl);
}

__u64 lifecycle__lost(const struct lifecycle *l)
{
	return l ? l->lost : 0;
}

#define SWEEP_BATCH 64

struct sweep {
	struct lifecycle *l;
	__u32 doomed[SWEEP_BATCH];
	int n;
};

static int sweep_one(const void *key, const void *value, void *ctx)
{
	const struct infl_proc *rec = value;
	struct sweep *w = ctx;

	if (!rec->exited)
		return 0;
	keep_ended(w->l, *(const __u32 *)key, rec);
	w->doomed[w->n++] = *(const __u32 *)key;
	return w->n == SWEEP_BATCH; /* the rest at the next sweep */
}

/* Ended records the control ring had no room for stay in `procs`, marked exited, until
 * this moves them (the kernel's ctl_full tells when to look). */
void lifecycle__sweep(struct lifecycle *l)
{
	int fd = bpf_map__fd(l->skel->maps.procs);
	__u64 full = l->skel->bss->ctl_full;
	struct sweep w = { .l = l };
	int err;

	if (full == l->ctl_full_seen)
		return;
	err = map_walk__all(fd, sizeof(__u32), sizeof(struct infl_proc),
		       bpf_map__max_entries(l->skel->maps.procs), sweep_one, &w);
	if (err < 0)
		infl_warn("cannot walk the kernel's process records: %s", strerror(-err));
	for (int i = 0; i < w.n; i++)
		bpf_map_delete_elem(fd, &w.doomed[i]);
	/* a full batch: there may be more */
	l->ctl_full_seen = w.n == SWEEP_BATCH ? full - 1 : full;
}

/* The pid's byte in the kernel side's table, as its record creation sets it there: RSS
 * events of a pid without it are not looked at. The chunk is read and written whole: the
 * session's first record, no other can be made meanwhile in a traced set. */
static int mark_traced(struct lifecycle *l, __u32 pid)
{
	int fd = bpf_map__fd(l->skel->maps.traced_pids);
	__u32 chunk = pid / 64;
	__u8 bytes[64];

	if (bpf_map_lookup_elem(fd, &chunk, bytes))
		return errno == ENOENT ? 0 : infl_bpf_err(-errno, "read the traced pids");
	bytes[pid & 63] = 1;
	if (bpf_map_update_elem(fd, &chunk, bytes, BPF_EXIST))
		return infl_bpf_err(-errno, "mark the target traced");
	return 0;
}

int lifecycle__seed(struct lifecycle *l, pid_t pid, bool from_start)
{
	static struct infl_proc rec;

	memset(&rec, 0, sizeof(rec));
	rec.gen = mono_ns();
	rec.flags = (from_start ? INFL_PROC_FROM_START : 0) | INFL_PROC_FLAGS_SET;
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.procs), &pid, &rec, BPF_NOEXIST))
		return infl_bpf_err(-errno, "create the target's record");
	return mark_traced(l, (__u32)pid);
}

void lifecycle__free(struct lifecycle *l)
{
	if (!l)
		return;
	ring_buffer__free(l->ctl);
	free(l->ended);
	free(l);
}

int lifecycle__ident(const struct lifecycle *l, __u32 pid, __u64 gen, struct infl_ident *out)
{
	struct infl_ident_key k = { .pid = pid, .gen = gen };

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.idents), &k, out))
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

void lifecycle__counted_slots(struct lifecycle *l, struct image_slots_used *u)
{
	memset(u, 0, sizeof(*u));
	map_walk__all(bpf_map__fd(l->skel->maps.procs), sizeof(__u32), sizeof(struct infl_proc),
		 bpf_map__max_entries(l->skel->maps.procs), counted_one, u);
	for (int i = 0; i < l->nended; i++)
		counted_in(&l->ended[i].st, u);
}

int lifecycle__ident_at(const struct lifecycle *l, __u32 pid, __u64 ts, struct infl_ident *out)
{
	int fd = bpf_map__fd(l->skel->maps.idents);
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
	return lifecycle__ident(l, pid, best.gen, out);
}

const struct proc_snapshot *lifecycle__ended(const struct lifecycle *l, int *n)
{
	*n = l->nended;
	return l->ended;
}

void lifecycle__oom(const struct lifecycle *l, __u32 pid, struct infl_oom_kill *oom)
{
	oom_take(l, pid, oom, false);
}

int lifecycle__forget(struct lifecycle *l, __u32 pid, __u64 gen, bool any_gen)
{
	int kept = 0, idents = bpf_map__fd(l->skel->maps.idents);

	for (int i = 0; i < l->nended; i++) {
		struct infl_ident_key k = { .pid = l->ended[i].pid, .gen = l->ended[i].st.gen };

		if (l->ended[i].pid != pid || (!any_gen && l->ended[i].st.gen != gen))
			l->ended[kept++] = l->ended[i];
		else
			bpf_map_delete_elem(idents, &k); /* its name goes with it */
	}
	if (kept == l->nended)
		return -ENOENT;
	l->nended = kept;
	return 0;
}
