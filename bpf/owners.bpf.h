/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The atomic form's owner records: a hit's reference on one (owner_hold), and their removal
 * once retired (owner_retired). The program gives its maps in a struct owner_maps.
 *
 * An owner that retires keeps its record for OWNER_REAP_GRACE_NS, and a hit of the same owner
 * id in that time takes it up again (owner_admit, owner_move): threads that share owners
 * which retire and start again keep one record. Then the record goes. A hit may hold a
 * pointer from its lookup on, so only a record that no hit holds a reference on may go, and a
 * reference taken late must see that it went: the reaper marks it DOOMED by compare-and-swap
 * of its state (which fails if a hit took a reference meanwhile) and deletes its key; a hit
 * whose reference comes after sees DOOMED, or another key in a reused element, and looks it
 * up again (owner_hold). The keys wait in a ring per CPU, pushed by the retirement and
 * popped by later retirements on that CPU once their grace is over, or at once when the
 * ring is full (retirements faster than the grace lets go). The locked form deletes a record
 * under the lock as it retires (inflight.bpf.c).
 */
#ifndef INFLIGHT_OWNERS_BPF_H
#define INFLIGHT_OWNERS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"
#include "acct.bpf.h"

#define OWNER_REAP_GRACE_NS 2000000ull /* 2 ms */
#define OWNER_REAP_SLOTS 512		/* a CPU's ring (a per-CPU value holds 32 KiB at most): a
					 * grace's retirements at 256 k/s */
#define OWNER_REAP_BATCH 2		/* keys a retirement reaps at most */

struct owner_reap_entry {
	struct infl_owner_key k;
	__u64 ns;     /* when it retired */
	__u64 ticket; /* its place in the ring + 1, stored last: 0 or another lap, not yet */
};

struct owner_reap_ring {
	__u64 head; /* the next to reap */
	__u64 tail; /* the next to push */
	struct owner_reap_entry e[OWNER_REAP_SLOTS];
};

/* What the owner records' protocol needs from its program. */
struct owner_maps {
	void *owners; /* the owner map */
	void *procs;  /* the process map: whose counts a reference given back touches */
	void *reap;   /* a one-element per-CPU array of struct owner_reap_ring */
	const struct infl_owner *fresh; /* a new record (owner_hold) */
	__u64 *reaped;	 /* records reaped, all processes */
	__u64 *unreaped; /* retirements the reap ring had no room for (their records stay until
			  * their image ends) */
	__u16 terminal_mask;
};

/* This CPU's ring: a program runs with migration disabled, and two on one CPU (a preempted
 * one, on PREEMPT_RT) share it by compare-and-swap. */
static __always_inline struct owner_reap_ring *reap_ring(const struct owner_maps *om)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(om->reap, &zero);
}

static __always_inline void owner_reap_push(const struct owner_maps *om,
					    struct owner_reap_ring *r, struct infl_owner *o, __u64 now)
{
	struct owner_reap_entry *e;
	__u64 t;

	for (int i = 0; i < ACCT_TRIES; i++) {
		t = READ_ONCE(r->tail);
		/* signed: a head read after a tail that others have moved on may pass it */
		if ((__s64)(t - READ_ONCE(r->head)) >= OWNER_REAP_SLOTS)
			break;
		if (__sync_val_compare_and_swap(&r->tail, t, t + 1) != t)
			continue;
		e = &r->e[t & (OWNER_REAP_SLOTS - 1)];
		e->k.pid = READ_ONCE(o->id_pid);
		e->k.pad = 0;
		e->k.gen = READ_ONCE(o->id_gen);
		e->k.owner = READ_ONCE(o->id);
		e->ns = now;
		__sync_lock_test_and_set(&e->ticket, t + 1); /* xchg: the key before it */
		return;
	}
	__sync_fetch_and_add(om->unreaped, 1);
}

/* The record of key `k`, retired for its grace and held by no one, marked and deleted. */
static __always_inline bool owner_is(const struct infl_owner *o, const struct infl_owner_key *k)
{
	return READ_ONCE(o->id) == k->owner && READ_ONCE(o->id_gen) == k->gen &&
	       READ_ONCE(o->id_pid) == k->pid;
}

static __always_inline void owner_reap_one(const struct owner_maps *om,
					   const struct infl_owner_key *key, __u64 now)
{
	struct infl_owner_key k = *key;
	struct infl_owner *o;
	__u64 s;

	/* twice at most: the second time for the key found in the element, whose own
	 * reaper may have come under this one's mark */
	for (int i = 0; i < 2; i++) {
		o = bpf_map_lookup_elem(om->owners, &k);
		if (!o)
			return; /* reaped already, or its image ended */
		s = READ_ONCE(o->state);
		/* signed: a `now` read before the record retired again is within its grace */
		if (!(s & INFL_OS_RETIRED) ||
		    (s & (INFL_OS_REFS_MASK | INFL_OS_ADMITTED | INFL_OS_DOOMED)) ||
		    (__s64)(now - READ_ONCE(o->retired_ns)) < (__s64)OWNER_REAP_GRACE_NS ||
		    !owner_is(o, &k))
			return; /* taken up again (a later retirement queued it again), or another's */
		if (__sync_val_compare_and_swap(&o->state, s, s | INFL_OS_DOOMED) != s)
			return;
		if (owner_is(o, &k)) {
			if (!bpf_map_delete_elem(om->owners, &k))
				__sync_fetch_and_add(om->reaped, 1);
			return;
		}
		/* the element went and came back for another key between the look and the
		 * mark: the state goes back to `s`, the one marked. Under the mark nothing
		 * changes it but references of hits that saw the mark (it needed none held),
		 * and each gives its own back only while the mark stands (owner_undoom_ref):
		 * the exchange takes them all back at once, whether or not given back yet */
		__sync_lock_test_and_set(&o->state, s);
		/* `s` was that key's record retired and held by no one: its own reaper, had it
		 * come under the mark, found it DOOMED and left it, its ring entry spent. So it
		 * is reaped here, by the key the element carries (a key read while the element
		 * changes again leads nowhere, or fails the checks above), at the clock's time */
		k.pid = READ_ONCE(o->id_pid);
		k.pad = 0;
		k.gen = READ_ONCE(o->id_gen);
		k.owner = READ_ONCE(o->id);
		now = bpf_ktime_get_ns();
	}
}

/* The ring's oldest key reaped if its grace is over, or regardless when `force`. False when
 * there is none to reap. */
static __always_inline bool owner_reap_head(const struct owner_maps *om, struct owner_reap_ring *r,
					    __u64 now, bool force)
{
	struct owner_reap_entry *e;
	struct infl_owner_key k;
	__u64 h = READ_ONCE(r->head);

	if (h == READ_ONCE(r->tail))
		return false;
	e = &r->e[h & (OWNER_REAP_SLOTS - 1)];
	if (READ_ONCE(e->ticket) != h + 1)
		return false; /* still being pushed */
	if (!force && (__s64)(now - READ_ONCE(e->ns)) < (__s64)OWNER_REAP_GRACE_NS)
		return false; /* the oldest is still in its grace (or pushed after `now`) */
	k = e->k;
	if (READ_ONCE(e->ticket) != h + 1 || __sync_val_compare_and_swap(&r->head, h, h + 1) != h)
		return false; /* another program on this CPU took it */
	owner_reap_one(om, &k, force ? now + OWNER_REAP_GRACE_NS : now);
	return true;
}

/* After a retirement: its key queued (the oldest reaped first when the ring is full), and
 * keys whose grace is over reaped. */
static __always_inline void owner_retired(const struct owner_maps *om, struct infl_owner *o)
{
	struct owner_reap_ring *r = reap_ring(om);
	__u64 now;

	if (!r)
		return;
	now = bpf_ktime_get_ns();
	if ((__s64)(READ_ONCE(r->tail) - READ_ONCE(r->head)) >= OWNER_REAP_SLOTS)
		owner_reap_head(om, r, now, true);
	owner_reap_push(om, r, o, now);
	for (int i = 0; i < OWNER_REAP_BATCH; i++)
		if (!owner_reap_head(om, r, now, false))
			return;
}

/* How often owner_hold looks an owner up again: a record it found was removed by the sweep,
 * or reused for another key, before its reference held it */
#define OWNER_HOLD_TRIES 4

enum hold_result {
	HOLD_OK,
	HOLD_NONE, /* no record, and none to be made (a free's owner, not found) */
	HOLD_FULL, /* the owner map is full */
	HOLD_LOST, /* every look found a record being removed or reused (counted) */
};

/* A reference given back on a record that turned out not to be the one looked up: the owner
 * it belongs to now may have been left done by it, and is retired then, in its own process's
 * counts. */
static __always_inline void owner_giveback(const struct owner_maps *om, struct infl_owner *o,
					   __u64 nheld)
{
	struct infl_proc *q;
	__u32 pid = READ_ONCE(o->id_pid);

	q = bpf_map_lookup_elem(om->procs, &pid);
	if (!q || READ_ONCE(q->gen) != READ_ONCE(o->id_gen)) {
		__sync_fetch_and_add(&o->state, -(INFL_OS_REF + nheld));
		return;
	}
	if (owner_unref(q, o, -nheld, 0, om->terminal_mask, ACCT_ATOMIC))
		owner_retired(om, o);
}

/* A reference taken on a record being removed (DOOMED) goes back, but only while the state
 * still says so: once the element is reused for another record, its state was written over
 * with the reference in it; a mark taken back (owner_reap_one) took the reference with it. */
static __always_inline void owner_undoom_ref(struct infl_owner *o, __u64 nheld)
{
	__u64 s, d = INFL_OS_REF + nheld;

	for (int i = 0; i < ACCT_TRIES; i++) {
		s = READ_ONCE(o->state);
		if (!(s & INFL_OS_DOOMED) || !(s & INFL_OS_REFS_MASK))
			return;
		if (__sync_val_compare_and_swap(&o->state, s, s - d) == s)
			return;
	}
}

/*
 * The owner's record, referenced (`nheld`: an alloc's buffer counted held from now): found,
 * or made when `create`. The reference is taken on what the lookup found, then the record is
 * checked to be that key's: one being removed (DOOMED), or one removed and reused for
 * another key since the lookup, has its reference given back and is looked up again. A
 * record nobody claimed yet is claimed once the key is seen to lead to it, and one nobody
 * counted yet is taken only then too. *raced: another hit held a reference on it when this
 * one took its own (the two are in flight at once).
 */
static __always_inline struct infl_owner *owner_hold(const struct owner_maps *om,
						     struct infl_owner_key *k, __u64 nheld,
						     bool create, int *why, bool *raced)
{
	struct infl_owner *o;
	__u64 s, id;

	for (int i = 0; i < OWNER_HOLD_TRIES; i++) {
		o = bpf_map_lookup_elem(om->owners, k);
		if (!o) {
			if (!create) {
				*why = HOLD_NONE;
				return NULL;
			}
			/* EEXIST: another thread made it first; the look after finds it */
			bpf_map_update_elem(om->owners, k, om->fresh, BPF_NOEXIST);
			o = bpf_map_lookup_elem(om->owners, k);
			if (!o) {
				*why = HOLD_FULL;
				return NULL;
			}
		}
		s = owner_ref(o, nheld, ACCT_ATOMIC);
		/* another hit held it: the two came with no order between them */
		*raced = !!(s & INFL_OS_REFS_MASK);
		if (s & INFL_OS_DOOMED) {
			owner_undoom_ref(o, nheld);
			continue;
		}
		/* a record no hit has counted yet (no mark of a count, a move or a retirement)
		 * may be an element being copied for another key: the copy gives no order,
		 * and the new state may sit beside the old key words. Its key must lead to it */
		if (owner_is(o, k) &&
		    ((s & (INFL_OS_ADMITTED | INFL_OS_RETIRED | INFL_OS_MOVES_MASK)) ||
		     bpf_map_lookup_elem(om->owners, k) == o)) {
			*why = HOLD_OK;
			return o;
		}
		if (!READ_ONCE(o->id) && bpf_map_lookup_elem(om->owners, k) == o) {
			WRITE_ONCE(o->id_gen, k->gen);
			WRITE_ONCE(o->id_pid, k->pid);
			id = __sync_val_compare_and_swap(&o->id, 0, k->owner);
			if (!id || id == k->owner) {
				*why = HOLD_OK;
				return o;
			}
		}
		/* another key's record (the element was removed and reused since the lookup):
		 * the reference is on its live state, and goes back there */
		owner_giveback(om, o, nheld);
	}
	*why = HOLD_LOST;
	return NULL;
}

#endif /* INFLIGHT_OWNERS_BPF_H */
