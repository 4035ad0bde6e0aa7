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
 * The queue is a ring of INFL_DEFER_SLOTS tickets per process, its memory drawn from a pool
 * shared by all processes (the array `deferred`) a segment of INFL_DEFER_SEG_SLOTS at a
 * time, as its tickets need it, and given back as its head leaves it. So a process that
 * queues a few hits holds one segment, and the pool's size bounds the hits queued on the
 * host, not the number of processes that ever queued. The ring is INFL_DEFER_RING_SEGS
 * segments of INFL_DEFER_SEG_SLOTS tickets, more than the INFL_DEFER_SEGS its
 * INFL_DEFER_SLOTS tickets can span, and p->defer_segs names, for each, the pool's segment
 * that holds its tickets (index + 1; 0: none).
 *
 * - defer_tail (the next ticket) is taken by compare-and-swap, defer_head (the next to
 *   apply) moves under the lock; both live in struct infl_proc, where the handler that
 *   holds the lock finds them without a lookup.
 * - Room: ticket t may be taken when t - head is less than INFL_DEFER_SLOTS. The ring's
 *   segment of t was last used a lap before, INFL_DEFER_RING_SEGS segments back, more
 *   than INFL_DEFER_SLOTS: every ticket of that lap has been applied.
 * - Before it takes ticket t, a producer makes sure t's ring segment names a pool segment:
 *   it claims a free one (compare-and-swap of the segment's `owner` from 0 to its image's
 *   gen) and names it (compare-and-swap of the name from 0); a producer that lost the
 *   naming to another gives its own back and takes the other's.
 * - The holder that applies a segment's last ticket unnames it and gives it back, then
 *   moves the head past it. No producer writes into a segment after it went back: every
 *   ticket it held has been applied, and the next that needs the ring's segment again
 *   needs a head that has moved on (the ring is longer than its tickets).
 *   A producer that finds no name for its ticket's segment claims one, unless the head has
 *   left that segment since it read the tail (its ticket is gone: it reads again).
 * - The image's end gives back what it still holds. A slot is committed for ticket t when
 *   its `state` is t + 1 and its `gen` is the image's: a slot of an earlier owner of the
 *   segment, or of an earlier lap, never is.
 * - Producers store the slot, then its state; the holder reads the state, then the slot
 *   (x86-64's order; the compiler barriers keep clang's).
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

/* A segment of a process's queue, from the pool. */
struct infl_deferred {
	__u64 owner; /* the gen of the image that holds it, 0 while free */
	struct infl_op ops[INFL_DEFER_SEG_SLOTS];
};

/* What a try at the queue came to: queued, or why the hit must wait. */
enum defer_result {
	DEFER_NO_QUEUE = -1, /* the pool had no segment free for the ticket */
	DEFER_FULL = 0,	     /* its queue is full (or its tickets went to others) */
	DEFER_QUEUED = 1,
};

/* The pool (`pool`: an array of `segs` struct infl_deferred) and where a claim begins to
 * look (`next`: a counter that spreads the claims over the pool). */
struct defer_pool {
	void *pool;
	__u64 *next;
	__u32 segs;
};

/* p's name for the pool segment that holds ticket t's slot */
static __always_inline __u32 *deferred_name(struct infl_proc *p, __u64 t)
{
	return &p->defer_segs[(t / INFL_DEFER_SEG_SLOTS) & (INFL_DEFER_RING_SEGS - 1)];
}

/* The pool segment that holds ticket t's slot, when p's image has one named. */
static __always_inline struct infl_deferred *deferred_seg(void *pool, struct infl_proc *p,
							  __u64 t)
{
	__u32 name = READ_ONCE(*deferred_name(p, t)), idx;
	struct infl_deferred *q;

	if (!name)
		return NULL;
	idx = name - 1;
	q = bpf_map_lookup_elem(pool, &idx);
	return q && READ_ONCE(q->owner) == p->gen ? q : NULL;
}

struct claim_ctx {
	void *pool;
	__u64 *next;
	__u64 gen;
	__u32 segs;
	__u32 got; /* index + 1 of the segment claimed; 0: none yet */
};

/* bpf_loop callback: one look at the pool for a free segment */
static long claim_one(__u32 i, void *ctx)
{
	struct claim_ctx *c = ctx;
	struct infl_deferred *q;
	__u32 idx;

	if (!c->segs)
		return 1;
	idx = (__u32)(__sync_fetch_and_add(c->next, 1) % c->segs);
	q = bpf_map_lookup_elem(c->pool, &idx);
	if (!q || READ_ONCE(q->owner) || __sync_val_compare_and_swap(&q->owner, 0, c->gen))
		return 0;
	c->got = idx + 1;
	return 1;
}

/* The pool segment for ticket t of p's image, claimed and named if it has none yet; NULL
 * when the pool has none free. */
static __always_inline struct infl_deferred *deferred_claim(const struct defer_pool *dp,
							    struct infl_proc *p, __u64 t)
{
	struct claim_ctx c = { .pool = dp->pool, .next = dp->next, .gen = p->gen,
			       .segs = dp->segs };
	struct infl_deferred *q = deferred_seg(dp->pool, p, t);
	__u32 *name = deferred_name(p, t), idx;

	if (q)
		return q;
	if (READ_ONCE(*name)) /* another thread of the image named one since */
		return deferred_seg(dp->pool, p, t);
	bpf_loop(dp->segs, claim_one, &c, 0);
	if (!c.got) /* all taken, but maybe by another thread of the image, for this one */
		return deferred_seg(dp->pool, p, t);
	idx = c.got - 1;
	q = bpf_map_lookup_elem(dp->pool, &idx);
	if (!q)
		return NULL;
	if (!__sync_val_compare_and_swap(name, 0, c.got))
		return q;
	/* another thread of the image named one first: this one goes back */
	WRITE_ONCE(q->owner, 0);
	return deferred_seg(dp->pool, p, t);
}

/* The holder applied ticket t, the last of its segment: the segment goes back to the pool
 * (before the head moves past it, the caller's barrier). */
static __always_inline void deferred_retire(void *pool, struct infl_proc *p, __u64 t)
{
	struct infl_deferred *q = deferred_seg(pool, p, t);

	WRITE_ONCE(*deferred_name(p, t), 0);
	if (q)
		WRITE_ONCE(q->owner, 0);
}

/* The image ended: its segments go back to the pool. No thread of it is left to use them.
 * Plain stores: the exit tracepoint runs on every kernel, 5.10's too, which has no BPF xchg;
 * the next owner's slots are told apart by their gen, not by what this left in them. */
static __always_inline void deferred_release(void *pool, struct infl_proc *p)
{
#pragma clang loop unroll(full)
	for (int i = 0; i < INFL_DEFER_RING_SEGS; i++) {
		__u64 t = (__u64)i * INFL_DEFER_SEG_SLOTS;

		if (READ_ONCE(p->defer_segs[i]))
			deferred_retire(pool, p, t);
	}
}

/* Tries at a ticket: each failed one is another producer's success, so only a storm of
 * them fails this many (8 did, with 8 threads sharing owners that retire, whose first hits
 * go through the queue) */
#define DEFER_TICKET_TRIES 64

struct push_ctx {
	struct defer_pool dp;
	struct infl_proc *p;
	const struct infl_op *op;
	int result; /* enum defer_result */
};

/* bpf_loop callback: one try at a ticket for c->op (a callback, so that the verifier checks
 * one try, not DEFER_TICKET_TRIES of them in every program) */
static long push_try(__u32 i, void *ctx)
{
	struct push_ctx *c = ctx;
	struct infl_proc *p = c->p;
	struct infl_deferred *q;
	struct infl_op *slot;
	__u64 t, h;

	if (!p || !c->op)
		return 1;
	/* the head first: it never passes the tail, so t - h cannot wrap (read the other way
	 * round, a head that moved between the two reads made a free queue look full, seen in
	 * tests/model/); and the name after both, so that a name given back before the head
	 * moved is seen gone */
	h = READ_ONCE(p->defer_head);
	t = READ_ONCE(p->defer_tail);
	if (t - h >= INFL_DEFER_SLOTS) {
		c->result = DEFER_FULL;
		return 1;
	}
	q = deferred_seg(c->dp.pool, p, t);
	/* none named for t's segment: t is the first ticket to need it, or t is stale and the
	 * head has left its segment, which went back to the pool (a claim for it would hold a
	 * segment until the ring comes round again) */
	if (!q && t < (READ_ONCE(p->defer_head) & ~(__u64)(INFL_DEFER_SEG_SLOTS - 1)))
		return 0;
	if (!q)
		q = deferred_claim(&c->dp, p, t);
	if (!q) {
		c->result = DEFER_NO_QUEUE;
		return 1;
	}
	if (__sync_val_compare_and_swap(&p->defer_tail, t, t + 1) != t)
		return 0; /* another producer took ticket t */
	slot = &q->ops[t & (INFL_DEFER_SEG_SLOTS - 1)];
	*slot = *c->op;
	slot->gen = p->gen;
	barrier(); /* the slot before its state */
	WRITE_ONCE(slot->state, t + 1);
	c->result = DEFER_QUEUED;
	return 1;
}

/* Queues `op` for the holder of p's lock (enum defer_result): DEFER_FULL when the queue is
 * full, or the tickets went to others DEFER_TICKET_TRIES times; DEFER_NO_QUEUE when the pool
 * had no segment for the ticket (the caller then waits for the lock or a slot). */
static __always_inline int deferred_push(const struct defer_pool *dp, struct infl_proc *p,
					 const struct infl_op *op)
{
	struct push_ctx c = { .dp = *dp, .p = p, .op = op, .result = DEFER_FULL };

	bpf_loop(DEFER_TICKET_TRIES, push_try, &c, 0);
	return c.result;
}

/* Queues `op` in the queue of p's image, its memory drawn from the pool as it needs it, and
 * counts it in *queued: enum defer_result. */
static __always_inline int deferred_enqueue(const struct defer_pool *dp, struct infl_proc *p,
					    const struct infl_op *op, __u64 *queued)
{
	int r = deferred_push(dp, p, op);

	if (r == DEFER_QUEUED)
		__sync_fetch_and_add(queued, 1);
	return r;
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
static __always_inline struct infl_op *deferred_slot(void *pool, struct infl_proc *p, __u64 h)
{
	struct infl_deferred *q = deferred_seg(pool, p, h);
	struct infl_op *slot;

	if (!q)
		return NULL;
	slot = &q->ops[h & (INFL_DEFER_SEG_SLOTS - 1)];
	if (READ_ONCE(slot->state) != h + 1 || READ_ONCE(slot->gen) != p->gen)
		return NULL;
	barrier(); /* its state before the slot */
	return slot;
}

#endif /* INFLIGHT_DEFERRED_BPF_H */
