/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A probe hit's way past its process's lock where the queue behind it is a ring (LK_CAS:
 * kernels with BPF cmpxchg and bpf_loop; proc_lock.bpf.h's lock word, deferred.bpf.h's
 * ring and its protocol): take the lock and apply what was queued before the hit, or queue
 * the hit for the holder; after a release, combine (apply what others queued meanwhile).
 *
 * What the program that includes this provides, as global functions (the verifier checks
 * each once, whatever calls it): apply_queued, which accounts a queued hit under the lock,
 * its records looked up again; queue_op, which queues a hit in its process's ring
 * (deferred_enqueue's enum defer_result); and queue_op_waiting, which counts the wait
 * (deferred_count_wait: why the hit could not queue) and waits for a slot (queue_wait).
 * Every wait is counted in the hit's process's record.
 * inflight.bpf.c is one such program; tests/model/ is another, the same code compiled for
 * user space with threads and a preemption point at every shared access.
 */
#ifndef INFLIGHT_COMBINING_BPF_H
#define INFLIGHT_COMBINING_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"
#include "deferred.bpf.h"
#include "proc_lock.bpf.h"

int apply_queued(struct infl_proc *p, struct infl_op *op);
int queue_op(struct infl_proc *p, const struct infl_op *op);
int queue_op_waiting(struct infl_proc *p, const struct infl_op *op, int why);

#define LOCK_LOOPS (1 << 20) /* bpf_loop's bound for waits: 10-20 ms of looks here */

/* How a probe hit got past the lock (lock_or_defer). */
enum lock_outcome {
	LOCKED,	  /* the lock is ours, the hits queued before applied: account it, release */
	DEFERRED, /* queued: the lock's holder applies it (deferred.bpf.h) */
	GAVE_UP,  /* the lock held and the queue full for lock_wait_ns: counted (lock_timeouts) */
	WAIT_MORE, /* LK_MAP: the lock held and no room in a queue: go on in lock_wait_more */
};

struct drain_ctx {
	struct infl_proc *p;
	void *pool; /* deferred.bpf.h's segments */
	__u32 pid;
	__u32 locked; /* combine_queued: the lock is ours */
};

/* The lock held: the slot at the queue's head, applied if its producer has committed it
 * (else it is still being written, and its producer applies it). True when one was. The
 * last slot of a segment gives the segment back before the head moves past it. */
static __always_inline bool apply_next(struct drain_ctx *d, struct infl_proc *p)
{
	__u64 h = p->defer_head;
	struct infl_op *op = deferred_slot(d->pool, p, h);

	if (!op)
		return false;
	apply_queued(p, op);
	barrier(); /* done with the slot before it is handed out again */
	if ((h & (INFL_DEFER_SEG_SLOTS - 1)) == INFL_DEFER_SEG_SLOTS - 1)
		deferred_retire(d->pool, p, h);
	barrier(); /* the segment given back before the head moves past it */
	WRITE_ONCE(p->defer_head, h + 1);
	return true;
}

/* bpf_loop callback, the lock held: the queue up to a slot not committed yet */
static long drain_one(__u32 i, void *ctx)
{
	struct drain_ctx *d = ctx;
	struct infl_proc *p = d->p;

	return !p || !apply_next(d, p);
}

/* Under the lock, before the holder's own hit: what was queued before it got the lock (it
 * may have happened before the holder's hit), in ticket order. */
static __always_inline void drain_deferred(struct infl_proc *p, __u32 pid, void *pool)
{
	struct drain_ctx d = { .p = p, .pool = pool, .pid = pid };

	if (READ_ONCE(p->defer_head) == READ_ONCE(p->defer_tail))
		return;
	bpf_loop(INFL_DEFER_SLOTS, drain_one, &d, 0);
}

/*
 * bpf_loop callback, one step of a combiner: with something queued, take the lock (or stop:
 * another holder looks after its release), apply the next committed slot; when none is
 * left, release and look once more (a producer may have committed just before the release,
 * and failed to take the lock).
 */
static long combine_one(__u32 i, void *ctx)
{
	struct drain_ctx *d = ctx;
	struct infl_proc *p = d->p;
	__u64 h;

	if (!p)
		return 1;
	if (!d->locked) {
		if (READ_ONCE(p->defer_head) == READ_ONCE(p->defer_tail) || !cas_try(p))
			return 1;
		d->locked = 1;
		section_begin(p);
	}
	h = p->defer_head;
	if (apply_next(d, p))
		return 0;
	section_end(p);
	proc_lock_release(NULL, p, d->pid, LK_CAS);
	d->locked = 0;
	/* go on if the head was committed meanwhile: its producer may have failed to take the
	 * lock from us; if it is still being written, its producer takes the lock after */
	return !deferred_slot(d->pool, p, h);
}

/*
 * After a hit's section and release, or after queueing it: what is queued is applied by
 * whoever can take the lock now (combining), the whole queue if need be. A combiner that
 * stopped early could be the last hit of a burst: what it left would wait for a next hit
 * that may never come, and be counted at the image's end (seen on 6.12-rt, where a holder
 * preempted during a burst had 90 hits queued behind it and each combiner applied 64). Only
 * producers that keep outrunning it for a whole queue's length leave the rest to their own
 * next hits.
 */
#define COMBINE_STEPS INFL_DEFER_SLOTS
static __always_inline void combine_queued(struct infl_proc *p, __u32 pid, void *pool)
{
	struct drain_ctx d = { .p = p, .pool = pool, .pid = pid };

	if (READ_ONCE(p->defer_head) == READ_ONCE(p->defer_tail))
		return;
	bpf_loop(COMBINE_STEPS, combine_one, &d, 0);
	if (d.locked)
		proc_unlock(NULL, p, pid, LK_CAS);
}

/* How many looks a hit gives a held lock before it queues: ~0.4-1 us here, a few sections'
 * length, so that plain contention between running threads takes the lock with what the
 * handler found (a queued hit's lookups are made again by its holder, which costs more than
 * the wait: 2 threads flat out, 32 looks queued 11% of hits and cost 4-9% more per hit than
 * 128, by the kernel's BPF statistics) and only a holder that is off its CPU, or applying a
 * queue, makes others queue. */
#define LOCK_LOOKS 128

struct room_wait {
	struct infl_proc *p;
	const struct infl_op *op;
	__u64 deadline;
	__u32 pid;
	__u32 got; /* LOCKED (the lock) or DEFERRED (a slot); before room_wait_one's first look,
		    * why the hit could not queue (enum defer_result) */
};

/* bpf_loop callback: a few looks at a held lock before queueing (most sections are over in
 * a fraction of a microsecond; a holder still there after that is off its CPU or busy) */
static long lock_look_one(__u32 i, void *ctx)
{
	struct room_wait *w = ctx;

	if (!w->p || !cas_try(w->p))
		return 0;
	w->got = LOCKED;
	return 1;
}

/* bpf_loop callback: a full queue waits for the lock or a slot, the clock every 64 looks; the
 * first look counts the wait by why the hit could not queue (w->got, until then) */
static long room_wait_one(__u32 i, void *ctx)
{
	struct room_wait *w = ctx;

	if (!w->p || !w->op)
		return 1;
	if (i == 0) {
		deferred_count_wait(w->p, (int)w->got);
		w->got = GAVE_UP;
	}
	if (cas_try(w->p)) {
		w->got = LOCKED;
		return 1;
	}
	if ((i & 15) == 15 && queue_op(w->p, w->op) == DEFER_QUEUED) {
		w->got = DEFERRED;
		return 1;
	}
	return (i & 63) == 63 && bpf_ktime_get_ns() > w->deadline;
}

/* bpf_loop callback: a full queue waits for a slot, the clock every 64 looks */
static long slot_wait_one(__u32 i, void *ctx)
{
	struct room_wait *w = ctx;

	if (!w->p || !w->op)
		return 1;
	if ((i & 15) == 15 && queue_op(w->p, w->op) == DEFER_QUEUED) {
		w->got = DEFERRED;
		return 1;
	}
	return (i & 63) == 63 && bpf_ktime_get_ns() > w->deadline;
}

/* A slot for `op`, within `wait_ns` (the ring was full): 1 when it was queued. */
static __always_inline int queue_wait(struct infl_proc *p, const struct infl_op *op,
				      __u64 wait_ns)
{
	struct room_wait w = { .p = p, .op = op, .got = GAVE_UP };

	w.deadline = bpf_ktime_get_ns() + wait_ns;
	bpf_loop(LOCK_LOOPS, slot_wait_one, &w, 0);
	return w.got == DEFERRED;
}

/* Queues `op`, or waits for a slot (counted there, by `why` it could not queue); 1 when it
 * was queued. The count is in queue_op_waiting's frame, not the handler's, which 6.1's
 * verifier adds to the drain's frames (512 bytes in all). */
static __always_inline int queue_wait_counted(struct infl_proc *p, const struct infl_op *op)
{
	int why = queue_op(p, op);

	return why == DEFER_QUEUED || queue_op_waiting(p, op, why);
}

/*
 * The one way past the lock for a probe hit (LK_CAS). A hit that finds the lock held is
 * queued and the handler returns; only when the queue is full does it wait, `wait_ns` at
 * most, for the lock or a slot (`full` counts those waits). A hit that gets the lock
 * applies what was queued before it first (it may have happened before this hit); when
 * that stops at a slot its producer is still writing, the slots behind it may have too, so
 * the hit goes behind them instead. `defer_all` queues every hit, as if the lock were
 * always held (the tests). A hit given up is counted in p->lock_timeouts.
 */
static __always_inline enum lock_outcome lock_or_defer_cas(struct infl_proc *p, __u32 pid,
							   const struct infl_op *op,
							   bool defer_all, __u64 wait_ns,
							   void *pool, __u64 *full)
{
	struct room_wait w = { .p = p, .op = op, .pid = pid, .got = GAVE_UP };
	bool mine = false;

	if (!defer_all) {
		mine = cas_try(p);
		if (!mine) {
			bpf_loop(LOCK_LOOKS, lock_look_one, &w, 0);
			mine = w.got == LOCKED;
		}
	}
	if (mine) {
		section_begin(p);
		drain_deferred(p, pid, pool);
		if (READ_ONCE(p->defer_head) == READ_ONCE(p->defer_tail))
			return LOCKED;
		proc_unlock(NULL, p, pid, LK_CAS);
	}
	/* why it could not queue goes to the wait in w, which counts it: not in the handler's
	 * frame, which 6.1's verifier adds to the drain's frames (512 bytes in all) */
	w.got = queue_op(p, op);
	if (w.got == DEFER_QUEUED)
		return DEFERRED;
	__sync_fetch_and_add(full, 1);
	w.deadline = bpf_ktime_get_ns() + wait_ns;
	bpf_loop(LOCK_LOOPS, room_wait_one, &w, 0);
	if (w.got == DEFERRED)
		return DEFERRED;
	if (w.got != LOCKED)
		goto gave_up;
	section_begin(p);
	drain_deferred(p, pid, pool);
	if (READ_ONCE(p->defer_head) == READ_ONCE(p->defer_tail))
		return LOCKED;
	/* behind a slot still being written: queue behind it, waiting for room again (the
	 * queue was full a moment ago) */
	proc_unlock(NULL, p, pid, LK_CAS);
	if (queue_wait_counted(p, op))
		return DEFERRED;
	goto gave_up;
gave_up:
	__sync_fetch_and_add(&p->lock_timeouts, 1);
	return GAVE_UP;
}

/* The lock held, a record the hit's section found stale (inflight.bpf.c: owner_current):
 * the lock goes, and the hit goes through the queue, where its holder looks the records up
 * again; waiting for a slot if the queue is full, given up (counted) past that. */
static __always_inline enum lock_outcome requeue_cas(struct infl_proc *p, __u32 pid,
						     const struct infl_op *op)
{
	proc_unlock(NULL, p, pid, LK_CAS);
	if (queue_wait_counted(p, op))
		return DEFERRED;
	__sync_fetch_and_add(&p->lock_timeouts, 1);
	return GAVE_UP;
}

#endif /* INFLIGHT_COMBINING_BPF_H */
