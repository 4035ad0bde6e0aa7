/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A probe hit accounted: what an alloc, a free, a stage event or a refused hit changes in its
 * process's record, as acct.bpf.h's steps, in both forms (acct.bpf.h states the protocol).
 * The caller holds the hit's owner (a reference on its record: inflight.bpf.c's hit_owner,
 * or the locked form's section) and gives its process's settings in a struct hit_env.
 *
 * What the program that includes this provides (static functions of its own, defined
 * anywhere in it): hit_event, which writes a hit's recorded event out (inflight.bpf.c: its
 * CPU's ring), and hit_from_start, whether the process is traced from its first instruction
 * (a free of an unknown buffer is then a double free). inflight.bpf.c is one such program;
 * tests/model/ is another, the same code compiled for user space with threads and a
 * preemption point at every shared access.
 */
#ifndef INFLIGHT_HIT_BPF_H
#define INFLIGHT_HIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"
#include "acct.bpf.h"

/* A hit's process's settings, read once by its handler. */
struct hit_env {
	void *bufs;	     /* the buffer map (the atomic form publishes a record: buf_publish) */
	__u32 pid;
	__u16 entry_mask;    /* stages that start an owner */
	__u16 terminal_mask; /* stages that end one */
	bool recording;	     /* every hit's event is written out (hit_event) */
};

/* the program's own (static, so that the locked form's programs, on kernels whose global
 * functions take no pointers, keep them in line); alone, this header has no definition */
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wundefined-internal"
#endif
static void hit_event(struct infl_proc *p, const struct infl_event *ev);
static bool hit_from_start(struct infl_proc *p);
#ifdef __clang__
#pragma clang diagnostic pop
#endif
enum alloc_kind { AK_NEW, AK_DUP, AK_BAD_CLASS, AK_MAP_FULL };
enum free_kind { FK_FOUND, FK_UNKNOWN };
enum stage_kind { SK_MOVE, SK_BAD_STAGE, SK_OWNER0, SK_MAP_FULL };
#define OPF_BAD_CLASS (1u << 7) /* op.flags of a free: the class it says is out of range */
#define OPF_REPLACED (1u << 6)	/* op.flags of an alloc: it removed a live record of its id,
				 * op.prev (counted out by acct_replaced) */
#define OPF_OWNER_LOST (1u << 5) /* op.flags: its owner's record was not held, for contention
				  * (counted: contention_lost), not for a full map */

/* The contract probe a hit counts in events[]; INFL_PROBE__COUNT, counted nowhere, for
 * libcuda's calls (not the program's probes) */
static __always_inline __u32 op_probe(const struct infl_op *op)
{
	return op->flags & INFL_BUF_CUDA ? INFL_PROBE__COUNT : op->probe;
}

/* The name space of a buffer's key (inflight.h, INFL_SPACE_*), from its INFL_BUF_* flags */
static __always_inline __u32 buf_space(__u32 flags)
{
	if (flags & INFL_BUF_HANDLE)
		return INFL_SPACE_CUDA_HANDLE;
	return flags & INFL_BUF_CUDA ? INFL_SPACE_CUDA_PTR : INFL_SPACE_CONTRACT;
}

/* Right after the place: the probe counts share acct's line (inflight.h,
 * INFL_PROC_VALUE_AT), which the place has just taken from whichever CPU had it. */
static __always_inline void hit_count(struct infl_proc *p, const struct infl_op *op,
				      const enum acct_mode m)
{
	__u32 probe = op_probe(op);

	/* clamped where it indexes: 5.10's verifier loses the bound of a value it spilled */
	if (probe < INFL_PROBE__COUNT)
		acct_add(&p->events[ACCT_CLAMP(probe, INFL_PROBE__COUNT)], 1, m);
}

/* Whether a hit reads the clock although it does not need the time itself: to record its
 * event, or to give the process its first time. */
static __always_inline bool hit_timed(const struct hit_env *env, struct infl_proc *p)
{
	return env->recording || !READ_ONCE(p->first_ns);
}

/* The clock, read once by a hit and only when something needs it (a stage's dwell, a
 * recorded event, a new peak, the first event, a retirement): it is the costliest helper on
 * this path, and most allocs and frees need no time at all. */
static __always_inline __u64 hit_clock(struct infl_proc *p, __u64 *now, const enum acct_mode m)
{
	if (*now)
		return *now;
	*now = bpf_ktime_get_ns();
	if (!READ_ONCE(p->first_ns)) {
		if (m == ACCT_ATOMIC)
			__sync_val_compare_and_swap(&p->first_ns, 0, *now);
		else
			p->first_ns = *now;
	}
	WRITE_ONCE(p->last_ns, *now);
	return *now;
}

/* Every recorded event is built here: `seq` is the accounting order it takes (or, for one
 * that is not an accounting event, follows). */
static __always_inline void event_fill(struct infl_event *ev, __u64 seq, __u64 now, __u32 pid,
				       __u32 tid, __u8 type, __u8 id, __u8 flags, __u8 slot,
				       __u64 a0, __u64 a1, __u64 a2)
{
	ev->ts_ns = now;
	ev->seq = seq;
	ev->pid = pid;
	ev->tid = tid;
	ev->type = type;
	ev->id = id;
	ev->flags = flags;
	ev->from_slot = slot;
	ev->pad = 0;
	ev->arg0 = a0;
	ev->arg1 = a1;
	ev->arg2 = a2;
}

/* A hit's recorded event, for the thread that hit the probe (`op->tid`: a holder of the
 * locked form may be applying another thread's queued hit); `before`: acct before its place,
 * which gives the event its number. */
static __always_inline void hit_record(const struct hit_env *env, struct infl_proc *p,
				       __u64 before, __u64 now, const struct infl_op *op, __u8 type,
				       __u8 id, __u8 flags, __u8 slot, __u64 a0, __u64 a1, __u64 a2)
{
	struct infl_event ev;

	if (!env->recording)
		return;
	event_fill(&ev, acct_seq(p, before), now, env->pid, op->tid, type, id, flags, slot, a0, a1,
		   a2);
	hit_event(p, &ev);
}
/* The time spent in stage `from`, into its histogram. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffff) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline void dwell_note(struct infl_proc *p, __u32 from, __u64 entered, __u64 now,
				       const enum acct_mode m)
{
	__u32 f = ACCT_CLAMP(from, INFL_MAX_STAGES);
	__u64 us = (now - entered) / 1000;
	__u32 b = us ? log2_u64(us) : 0;

	b = ACCT_CLAMP(b, INFL_HIST_SLOTS);
	acct_add(&p->dwell_hist[f][ACCT_CLAMP(b, INFL_HIST_SLOTS)], 1, m);
	acct_add(&p->dwell_sum_ns[ACCT_CLAMP(f, INFL_MAX_STAGES)], now - entered, m);
}

/* A free of a buffer the map does not hold. Which kind it is decides where it is counted;
 * see docs/cli.md ("unmatched events"). Returns the event's flags. */
static __always_inline __u8 free_unmatched(struct infl_proc *p, __u32 cls, __u64 bytes,
					   const enum acct_mode m)
{
	for (int i = 0; i < (m == ACCT_ATOMIC ? ACCT_TRIES : 1); i++) {
		__u64 uf = READ_ONCE(p->untracked_free);

		if (READ_ONCE(p->untracked_allocs) <= uf)
			break;
		/* its alloc was dropped (map full, lock timeout) */
		if (acct_cas(&p->untracked_free, uf, uf + 1, m))
			return INFL_EVF_UNMATCHED | INFL_EVF_DROPPED;
	}
	if (hit_from_start(p)) {
		acct_add(&p->double_free, 1, m); /* traced from its start: never live, or no more */
		return INFL_EVF_UNMATCHED | INFL_EVF_DOUBLE;
	}
	cls = ACCT_CLAMP(cls, INFL_CLASSES); /* late attach: allocated before we were there */
	acct_add(&p->unmatched_free[ACCT_CLAMP(cls, INFL_CLASSES)].count, 1, m);
	acct_add(&p->unmatched_free[ACCT_CLAMP(cls, INFL_CLASSES)].bytes, bytes, m);
	return INFL_EVF_UNMATCHED;
}

/*
 * The buffer's record into the map. The atomic form publishes it after the alloc's counts,
 * so that a free finds it only once they are there; the locked form before its section (the
 * lock's order then puts the alloc first). A live record of the same id is removed (a dup:
 * its fields go to op->prev, OPF_REPLACED, and acct_replaced counts it out after the alloc);
 * AK_MAP_FULL when the map has no room, or when threads allocating the same id at once keep
 * replacing each other's (then counted: contention_lost).
 */
#define BUF_PUBLISH_TRIES 4
static __always_inline void buf_publish(const struct hit_env *env, struct infl_proc *p,
					struct infl_op *op)
{
	struct infl_buf_key bk = { .pid = env->pid, .space = buf_space(op->flags), .gen = p->gen,
				   .buf = op->arg };
	struct infl_buf rec = { .bytes = op->bytes, .owner = op->owner, .cls = op->id,
				.flags = op->flags & ~(OPF_BAD_CLASS | OPF_REPLACED | OPF_OWNER_LOST) };
	struct infl_buf *old;
	long err;

	for (int i = 0; i < BUF_PUBLISH_TRIES; i++) {
		err = bpf_map_update_elem(env->bufs, &bk, &rec, BPF_NOEXIST);
		if (!err)
			return;
		/* a record of its id, or a full map (or one freed meanwhile): the look tells,
		 * and a map still full after every try (the error code alone does not tell on
		 * every kernel) */
		old = bpf_map_lookup_elem(env->bufs, &bk);
		if (!old)
			continue;
		if (op->flags & OPF_REPLACED) {
			/* a second live record: another thread allocates this id at once (the
			 * locked form's handler runs outside the lock: an atomic add) */
			__sync_fetch_and_add(&p->contention_lost, 1);
			break;
		}
		op->prev = *old;
		/* the delete decides who removes it if two threads race on it */
		if (bpf_map_delete_elem(env->bufs, &bk))
			continue;
		op->flags |= OPF_REPLACED;
		op->kind = AK_DUP;
	}
	op->kind = AK_MAP_FULL;
}

/* A hit refused for its ids, or whose owner is not tracked: its place, its count, its event. */
static __always_inline void acct_refused(const struct hit_env *env, struct infl_proc *p,
					 const struct infl_op *op,
					 __u64 *anomaly, __u8 type, __u8 flags, __u64 a2,
					 const enum acct_mode m)
{
	__u64 before = acct_place(p, 0, m), now = 0;

	hit_count(p, op, m);
	acct_add(anomaly, 1, m);
	if (type == INFL_EV_STAGE || hit_timed(env, p))
		hit_clock(p, &now, m);
	hit_record(env, p, before, now, op, type, op->id, flags, INFL_SLOT_NONE, op->arg, op->bytes, a2);
	acct_end(p, 1, m);
}

/*
 * An alloc: its place and bytes, its owner's holding (`o`, referenced with the buffer counted
 * held: hit_owner, or the locked form's section) or the no-stage slot, its record published
 * (the atomic form), the peak. True when its owner retired (an untracked buffer given back).
 */
static __always_inline bool acct_alloc(const struct hit_env *env, struct infl_proc *p,
				       struct infl_op *op, struct infl_owner *o, const enum acct_mode m)
{
	__u32 c = ACCT_CLAMP(op->id, INFL_CLASSES), slot = INFL_SLOT_NONE;
	__u64 before, now = 0, undo = 0, peak_was = acct_peak_before(p);
	bool peaked = false, retired = false;
	__u8 flags;

	before = acct_place(p, op->bytes, m);
	hit_count(p, op, m);
	if (o) {
		owner_admit(p, o, m);
		slot = held_add(p, o, c, 1, op->bytes, m);
	} else {
		acct_cell(p, c, INFL_SLOT_NONE, 1, op->bytes, m);
	}
	if (m == ACCT_ATOMIC)
		buf_publish(env, p, op);
	if (op->kind == AK_MAP_FULL) {
		/* not tracked after all: its counts taken back, within its own place */
		if (o)
			held_add(p, o, c, -1, -op->bytes, m);
		else
			acct_cell(p, c, INFL_SLOT_NONE, -1, -op->bytes, m);
		acct_bytes(p, -op->bytes, m);
		acct_add(&p->buf_map_full, 1, m);
		acct_add(&p->untracked_allocs, 1, m);
		undo = -1;
	} else {
		acct_add(&p->allocated[ACCT_CLAMP(c, INFL_CLASSES)].count, 1, m);
		acct_add(&p->allocated[ACCT_CLAMP(c, INFL_CLASSES)].bytes, op->bytes, m);
		if (op->bytes)
			peaked = acct_peak_offer(p, before + INFL_ACCT_SEQ_ONE + op->bytes,
						  peak_was, m);
	}
	if (op->owner && !o)
		acct_add(op->flags & OPF_OWNER_LOST ? &p->contention_lost : &p->owner_map_full, 1, m);
	if (peaked || hit_timed(env, p))
		hit_clock(p, &now, m);
	if (peaked)
		acct_peak_capture(p, before + INFL_ACCT_SEQ_ONE + op->bytes, now, m);
	flags = (op->kind == AK_DUP ? INFL_EVF_DUP : 0) | (peaked ? INFL_EVF_NEW_PEAK : 0) |
		(op->kind == AK_MAP_FULL ? INFL_EVF_UNTRACKED : 0) |
		(op->owner && !o ? INFL_EVF_UNSTAGED : 0);
	hit_record(env, p, before, now, op, INFL_EV_ALLOC, op->id, flags,
		   op->kind == AK_MAP_FULL ? INFL_SLOT_NONE : slot, op->arg, op->bytes, op->owner);
	if (o)
		retired = owner_unref(p, o, undo, now, env->terminal_mask, m);
	acct_end(p, 1, m);
	return retired;
}

/*
 * The buffer a dup alloc replaced (op->prev), counted out at a place of its own right after
 * the alloc's: the serialization has the new buffer in, then the old one out. Its event is a
 * free with INFL_EVF_DUP. `o`: its owner, referenced. True when that retired the owner.
 */
static __always_inline bool acct_replaced(const struct hit_env *env, struct infl_proc *p,
					  const struct infl_op *op,
					  struct infl_owner *o, const enum acct_mode m)
{
	const struct infl_buf *rec = &op->prev;
	__u32 c = ACCT_CLAMP(rec->cls, INFL_CLASSES), slot = INFL_SLOT_NONE;
	__u64 before = acct_place(p, -rec->bytes, m), now = 0;
	bool retired = false;

	if (o)
		slot = held_add(p, o, c, -1, -rec->bytes, m);
	else
		acct_cell(p, c, INFL_SLOT_NONE, -1, -rec->bytes, m);
	if (!o && !(rec->flags & INFL_BUF_UNSTAGED))
		acct_add(&p->contention_lost, 1, m); /* its owner's holding keeps it: inexact */
	acct_add(&p->dup_alloc, 1, m);
	if (hit_timed(env, p))
		hit_clock(p, &now, m);
	hit_record(env, p, before, now, op, INFL_EV_FREE, rec->cls, INFL_EVF_DUP, slot, op->arg,
		   rec->bytes, rec->owner);
	if (o)
		retired = owner_unref(p, o, -1, now, env->terminal_mask, m);
	acct_end(p, 1, m);
	return retired;
}

/*
 * A free: its place less the buffer's bytes as its record says them (op->prev, removed by
 * the handler), its owner's holding (`o`, referenced) or the no-stage slot; or a free of a
 * buffer not live, counted by its kind. True when that retired the owner.
 */
static __always_inline bool acct_free(const struct hit_env *env, struct infl_proc *p,
				      const struct infl_op *op,
				      struct infl_owner *o, const enum acct_mode m)
{
	const struct infl_buf *rec = &op->prev;
	bool found = op->kind == FK_FOUND, retired = false;
	__u32 c = ACCT_CLAMP(rec->cls, INFL_CLASSES), slot = INFL_SLOT_NONE;
	__u64 before, now = 0;
	__u8 flags = 0;

	before = acct_place(p, found ? -rec->bytes : 0, m);
	hit_count(p, op, m);
	if (op->flags & OPF_BAD_CLASS)
		acct_add(&p->bad_class, 1, m);
	if (found) {
		/* the recorded class and size are authoritative: they are what was added,
		 * whatever the free says (a class id out of range is still counted as one) */
		if (o)
			slot = held_add(p, o, c, -1, -rec->bytes, m);
		else
			acct_cell(p, c, INFL_SLOT_NONE, -1, -rec->bytes, m);
		if (!o && !(rec->flags & INFL_BUF_UNSTAGED))
			acct_add(&p->contention_lost, 1, m); /* its owner's holding keeps it */
		acct_add(&p->freed[ACCT_CLAMP(c, INFL_CLASSES)].count, 1, m);
		acct_add(&p->freed[ACCT_CLAMP(c, INFL_CLASSES)].bytes, rec->bytes, m);
	} else if (op->flags & OPF_BAD_CLASS) {
		flags = INFL_EVF_REJECTED;
	} else {
		flags = free_unmatched(p, op->id, op->bytes, m);
	}
	if (hit_timed(env, p))
		hit_clock(p, &now, m);
	hit_record(env, p, before, now, op, INFL_EV_FREE, found ? rec->cls : op->id, flags, slot,
		   op->arg, found ? rec->bytes : op->bytes, found ? rec->owner : 0);
	if (o)
		retired = owner_unref(p, o, -1, now, env->terminal_mask, m);
	acct_end(p, 1, m);
	return retired;
}

/* A stage event: the owner (`o`, referenced) moves, its dwell in the stage it left is noted,
 * its held words follow. True when it retired (a terminal stage, holding nothing). */
static __always_inline bool acct_stage(const struct hit_env *env, struct infl_proc *p,
				       const struct infl_op *op,
				       struct infl_owner *o, const enum acct_mode m)
{
	struct acct_move mv = {};
	__u32 stage = ACCT_CLAMP(op->id, INFL_MAX_STAGES);
	__u64 before, now = 0;
	bool unmatched = false, retired = false;

	before = acct_place(p, 0, m);
	hit_count(p, op, m);
	hit_clock(p, &now, m);
	if (!owner_move(p, o, stage, now, env->terminal_mask, &mv, m)) {
		/* counted (contention_lost): the event is recorded as not tracked */
		hit_record(env, p, before, now, op, INFL_EV_STAGE, op->id, INFL_EVF_UNTRACKED,
			   INFL_SLOT_NONE, op->arg, 0, 0);
		retired = owner_unref(p, o, 0, now, env->terminal_mask, m);
		acct_end(p, 1, m);
		return retired;
	}
	if (mv.from >= INFL_MAX_STAGES) {
		/* its first stage: an entry stage starts it; any other means it began before we
		 * were there (late attach), however it was first seen (a stage or an alloc) */
		unmatched = !(env->entry_mask & (1u << stage));
		if (unmatched)
			acct_add(&p->unmatched_stage[ACCT_CLAMP(stage, INFL_MAX_STAGES)], 1, m);
		else
			acct_add(&p->owners_started, 1, m);
	} else if (mv.entered) {
		dwell_note(p, mv.from, mv.entered, now, m);
	} else {
		acct_add(&p->dwell_lost, 1, m); /* the move before it was still being made */
	}
	owner_settle_all(p, o, m);
	hit_record(env, p, before, now, op, INFL_EV_STAGE, stage, unmatched ? INFL_EVF_UNMATCHED : 0,
		   mv.from < INFL_MAX_STAGES ? mv.from : INFL_SLOT_NONE, op->arg, 0, 0);
	owner_unref(p, o, 0, now, env->terminal_mask, m);
	acct_end(p, 1, m);
	return mv.retired;
}

#endif /* INFLIGHT_HIT_BPF_H */
