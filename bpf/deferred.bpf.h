/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Probe hits that found their process's lock held: queued, not dropped (kernels with BPF
 * cmpxchg and bpf_loop, the LK_CAS form of proc_lock.bpf.h).
 *
 * A uprobe handler runs with migration, not preemption, disabled (6.0 on), so the holder of
 * a process's lock may be preempted: on PREEMPT_RT by any higher-priority thread, on one
 * CPU by the very thread that then waits for it. Waiting cannot help there. Instead a
 * handler that does not get the lock at once queues what its map operations found (struct
 * infl_op) and returns; whoever holds the lock applies the queue, in ticket order, before
 * its own update (so that what happened before it comes first) and after every release
 * (combining, inflight.bpf.c: drain_deferred, proc_combine). Nobody waits unless the queue
 * is full. The accounting order is still one that keeps every thread's own order and
 * everything the program orders between threads (a hit that returned before another began
 * is applied first), so the totals, the peak and its composition stay exact.
 *
 * Nothing is left behind: a producer tries the lock once more after it committed its slot,
 * and a holder looks at the queue again after its release (both full barriers: cmpxchg,
 * xchg). Either the producer gets the lock and applies the queue itself, or the holder it
 * failed against sees the committed slot once it has released. A combiner's work is
 * bounded (COMBINE_STEPS, a queue's length); when producers outrun it, their own next hits
 * apply the rest, and what is still queued when an image ends or tracing stops is counted
 * as lock_timeouts (never silent).
 *
 * The queue is a bounded ring of INFL_DEFER_SLOTS per process, drawn from a pool (the
 * array `deferred`, INFL_DEFER_MAX_QUEUES at most) by the first producer that needs one: it
 * takes a free queue by compare-and-swap of the queue's `owner` (0 when free) to its
 * image's gen, then names it in `deferred_of` (pid -> queue) with an insert that fails if
 * another producer of the process named one first (the loser frees its queue and takes the
 * winner's). The image's end gives the queue back. defer_tail (the next ticket)
 * is taken by compare-and-swap, defer_head (the next to apply) moves under the lock; both
 * live in struct infl_proc, where the handler that holds the lock finds them without a
 * lookup. A slot is committed for ticket t when its `state` is t + 1 and its `gen` is the
 * image's: a slot of an earlier owner of the queue, or of the ring's previous lap, never is.
 * Producers store the slot, then its state; the holder reads the state, then the slot
 * (x86-64's order; the compiler barriers keep clang's).
 */
#ifndef INFLIGHT_DEFERRED_BPF_H
#define INFLIGHT_DEFERRED_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"

/* The slot-then-state and state-then-slot orders above are x86-64's (TSO: stores are not
 * reordered with stores, nor loads with loads); the compiler barriers only keep clang from
 * reordering them. A weakly ordered CPU needs release and acquire there instead. */
#ifndef __TARGET_ARCH_x86
#error "deferred.bpf.h: the queue's memory order is x86-64's (TSO); add acquire/release for this architecture"
#endif

struct infl_deferred {
	__u64 owner; /* the gen of the image that holds it, 0 while free */
	struct infl_op ops[INFL_DEFER_SLOTS];
};

/* The queue of image (pid, gen) when it has one. */
/* `pool`: an array of struct infl_deferred; `names`: a hash, pid -> its queue's index. */
static __always_inline struct infl_deferred *deferred_queue(void *pool, void *names, __u32 pid,
							    __u64 gen)
{
	__u32 *idx = bpf_map_lookup_elem(names, &pid);
	struct infl_deferred *q;

	if (!idx)
		return NULL;
	q = bpf_map_lookup_elem(pool, idx);
	return q && READ_ONCE(q->owner) == gen ? q : NULL;
}

/* The image's queue, drawn from the pool when it has none yet; NULL when none is free. */
static __always_inline struct infl_deferred *deferred_claim(void *pool, void *names, __u32 pid,
							    __u64 gen)
{
	struct infl_deferred *q = deferred_queue(pool, names, pid, gen);

	if (q)
		return q;
	if (bpf_map_lookup_elem(names, &pid)) /* another thread of the image named one since */
		return deferred_queue(pool, names, pid, gen);
	/* unrolled: the index lives on the stack for the lookups, where the verifier cannot
	 * follow a loop counter ("infinite loop detected") */
#pragma clang loop unroll(full)
	for (int i = 0; i < INFL_DEFER_MAX_QUEUES; i++) {
		__u32 key = i;

		q = bpf_map_lookup_elem(pool, &key);
		if (!q)
			return NULL; /* the pool is smaller: all taken */
		if (READ_ONCE(q->owner) || __sync_val_compare_and_swap(&q->owner, 0, gen))
			continue;
		if (!bpf_map_update_elem(names, &pid, &key, BPF_NOEXIST))
			return q;
		/* another thread of the image named its queue first: this one goes back */
		WRITE_ONCE(q->owner, 0);
		return deferred_queue(pool, names, pid, gen);
	}
	return NULL;
}

/* The image ended: its queue goes back to the pool. No thread of it is left to use it. A
 * plain store: the exit tracepoint runs on every kernel, 5.10's too, which has no BPF xchg;
 * the next owner's slots are told apart by their gen, not by what this left in them. */
static __always_inline void deferred_release(void *pool, void *names, __u32 pid, __u64 gen)
{
	struct infl_deferred *q = deferred_queue(pool, names, pid, gen);

	if (q)
		WRITE_ONCE(q->owner, 0);
	bpf_map_delete_elem(names, &pid);
}

/* Tries at a ticket: each failed one is another producer's success, so only a storm of
 * them fails this many (8 did, with 8 threads sharing owners that retire, whose first hits
 * go through the queue) */
#define DEFER_TICKET_TRIES 64

/* Queues `op` in q for the holder of p's lock; 0 when the queue is full, or the tickets
 * went to others DEFER_TICKET_TRIES times (the caller then waits for the lock or a slot). */
static __always_inline int deferred_push(struct infl_deferred *q, struct infl_proc *p,
					 const struct infl_op *op)
{
	struct infl_op *slot;
	__u64 t, h;

	for (int i = 0; i < DEFER_TICKET_TRIES; i++) {
		/* the head first: it never passes the tail, so t - h cannot wrap (read the other
		 * way round, a head that moved between the two reads made a free queue look
		 * full, seen in tests/model/) */
		h = READ_ONCE(p->defer_head);
		t = READ_ONCE(p->defer_tail);
		if (t - h >= INFL_DEFER_SLOTS)
			return 0;
		if (__sync_val_compare_and_swap(&p->defer_tail, t, t + 1) != t)
			continue; /* another producer took ticket t */
		slot = &q->ops[t & (INFL_DEFER_SLOTS - 1)];
		*slot = *op;
		slot->gen = p->gen;
		barrier(); /* the slot before its state */
		WRITE_ONCE(slot->state, t + 1);
		return 1;
	}
	return 0;
}

/* What a try at the queue came to: queued, or why the hit must wait. */
enum defer_result {
	DEFER_NO_QUEUE = -1, /* the image has no queue and the pool none free */
	DEFER_FULL = 0,	     /* its queue is full (or its tickets went to others) */
	DEFER_QUEUED = 1,
};

/* Queues `op` in the queue of p's image (process `pid`), drawn from the pool if it has none
 * yet, and counts it in *queued: enum defer_result. */
static __always_inline int deferred_enqueue(void *pool, void *names, __u32 pid,
					    struct infl_proc *p, const struct infl_op *op,
					    __u64 *queued)
{
	struct infl_deferred *q = deferred_claim(pool, names, pid, p->gen);

	if (!q)
		return DEFER_NO_QUEUE;
	if (!deferred_push(q, p, op))
		return DEFER_FULL;
	__sync_fetch_and_add(queued, 1);
	return DEFER_QUEUED;
}

/* A hit that could not queue (`why`: enum defer_result) and now waits, counted in its
 * process's record by the reason (INFL_ANOMALIES: slot_waits, pool_waits). Outside the lock:
 * an atomic add. */
static __always_inline void deferred_count_wait(struct infl_proc *p, int why)
{
	if (why == DEFER_NO_QUEUE)
		__sync_fetch_and_add(&p->pool_waits, 1);
	else
		__sync_fetch_and_add(&p->slot_waits, 1);
}

/* The slot of ticket `h` when it is committed for this image, else NULL. */
static __always_inline struct infl_op *deferred_slot(struct infl_deferred *q, __u64 gen, __u64 h)
{
	struct infl_op *slot;

	if (!q)
		return NULL;
	slot = &q->ops[h & (INFL_DEFER_SLOTS - 1)];
	if (READ_ONCE(slot->state) != h + 1 || READ_ONCE(slot->gen) != gen)
		return NULL;
	barrier(); /* its state before the slot */
	return slot;
}

#endif /* INFLIGHT_DEFERRED_BPF_H */
