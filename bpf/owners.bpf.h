/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The atomic form's owner records: a hit's reference on one (owner_hold_side, then
 * owner_hold_round), and their removal once retired (owner_retired). The
 * program gives its maps in a struct owner_maps.
 *
 * An owner that retires keeps its record for OWNER_REAP_GRACE_NS, and a hit of the same owner
 * id in that time takes it up again (owner_admit, owner_move): threads that share owners
 * which retire and start again keep one record. Then the record goes. A hit may hold a
 * pointer from its lookup on, so only a record that no hit holds a reference on may go, and a
 * reference taken late must see that it went: the reaper marks it DOOMED by compare-and-swap
 * of its state (which fails if a hit took a reference meanwhile) and deletes its key; a hit
 * whose reference comes after sees DOOMED, or another key in a reused element, and looks it
 * up again (owner_take). The keys wait in a ring per CPU, pushed by the retirement and
 * popped by later retirements on that CPU once their grace is over, or at once when the
 * ring is full (retirements faster than the grace lets go). Between its mark and its delete
 * a reaper may be stalled (its vCPU descheduled by the host, or preempted on PREEMPT_RT),
 * and a hit can neither finish the delete for it nor wait: so an owner id has a second key,
 * side 1, under which its next life lives meanwhile (owner_hold_round says how the two
 * sides are kept to one record). The locked form deletes a record under the lock as it
 * retires (inflight.bpf.c).
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
	const struct infl_owner *fresh; /* a new record (owner_hold_round) */
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
		e->k.side = READ_ONCE(o->id_side);
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
	       READ_ONCE(o->id_pid) == k->pid && READ_ONCE(o->id_side) == k->side;
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
		 * mark: the state goes back to `s`, the one marked, and VOID. Under the mark
		 * nothing changes it but references of hits that saw the mark (it needed none
		 * held), and each gives its own back only while the mark stands
		 * (owner_undoom_ref): the exchange takes them all back at once, whether or not
		 * given back yet. VOID: a hit of that key that saw the mark may have made and
		 * claimed its side-1 record meanwhile, so this retired one is taken up by no
		 * hit again, as if it had been deleted (owner_hold_round) */
		__sync_lock_test_and_set(&o->state, s | INFL_OS_VOID);
		/* `s` was that key's record retired and held by no one: its own reaper, had it
		 * come under the mark, found it DOOMED and left it, its ring entry spent. So it
		 * is reaped here, by the key the element carries (a key read while the element
		 * changes again leads nowhere, or fails the checks above), at the clock's time */
		k.pid = READ_ONCE(o->id_pid);
		k.side = READ_ONCE(o->id_side);
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

/* A retirement's key queued, its reaping left to the next retirement on this CPU: for the
 * records a hit retires while it looks for its own (owner_take, owner_void), on paths the
 * verifier would otherwise walk the reaping at, one copy each. */
static __always_inline void owner_queue(const struct owner_maps *om, struct infl_owner *o)
{
	struct owner_reap_ring *r = reap_ring(om);

	if (r)
		owner_reap_push(om, r, o, bpf_ktime_get_ns());
}

/* How often a hit looks for its owner's record (owner_hold_round, again): a record it found
 * was removed, reused for another key, or claimed by another hit, before its reference held
 * it; or it made one */
#define OWNER_HOLD_TRIES 4

enum hold_result {
	HOLD_OK,
	HOLD_NONE, /* no record, and none to be made (a free's owner, not found) */
	HOLD_FULL, /* the owner map is full */
	HOLD_LOST, /* every look found a record being removed or reused (counted) */
	HOLD_AGAIN, /* (owner_hold_round: look again) */
};

/* A reference given back on a record not kept: one that turned out not to be the one looked
 * up, or one not claimed when it was taken, which another hit may have claimed since. The
 * owner it belongs to now may have been left done by it, and is retired then, in its own
 * process's counts. */
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
		owner_queue(om, o);
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

/* What a reference on a record found by key k's lookup holds (owner_take). */
enum take_result {
	TAKE_ABSENT, /* (no record under the key) */
	TAKE_OWNER,  /* the owner's record (CLAIMED), referenced */
	TAKE_FRESH,  /* k's record, claimed by no hit yet, referenced */
	TAKE_DEAD,   /* being removed (DOOMED) or never to be the owner's (VOID): let go */
	TAKE_STALE,  /* another key's record since the lookup (the element reused): let go */
};

/*
 * A reference on `o`, found under key k, and what it holds. A record not claimed yet may be
 * an element being copied for another key: the copy gives no order, and the new state may
 * sit beside the old key words, so its key must lead to it (a second lookup, on a record's
 * first hits alone), and an element nobody took yet is given k's identity. *raced: another
 * hit held a reference on it when this one took its own.
 */
static __always_inline int owner_take(const struct owner_maps *om, const struct infl_owner_key *k,
				      struct infl_owner *o, __u64 nheld, bool *raced)
{
	__u64 s = owner_ref(o, nheld, ACCT_ATOMIC), id;

	*raced = !!(s & INFL_OS_REFS_MASK);
	if (s & INFL_OS_DOOMED) {
		owner_undoom_ref(o, nheld);
		return TAKE_DEAD;
	}
	if (owner_is(o, k)) {
		if (s & INFL_OS_VOID) {
			/* held by this reference: not reaped, not reused; never the owner's, or
			 * not any more (owner_reap_one) */
			__sync_fetch_and_add(&o->state, -(INFL_OS_REF + nheld));
			return TAKE_DEAD;
		}
		if (s & INFL_OS_CLAIMED)
			return TAKE_OWNER;
		if (bpf_map_lookup_elem(om->owners, k) == o)
			return TAKE_FRESH;
	} else if (!READ_ONCE(o->id) && bpf_map_lookup_elem(om->owners, k) == o) {
		WRITE_ONCE(o->id_gen, k->gen);
		WRITE_ONCE(o->id_pid, k->pid);
		WRITE_ONCE(o->id_side, k->side);
		id = __sync_val_compare_and_swap(&o->id, 0, k->owner);
		if (!id || id == k->owner)
			return TAKE_FRESH; /* (a VOID since is seen by the claim) */
	}
	/* another key's record (the element was removed and reused since the lookup): the
	 * reference is on its live state, and goes back there */
	owner_giveback(om, o, nheld);
	return TAKE_STALE;
}

/* The record under key k, referenced (TAKE_*, *op the record). */
static __always_inline int owner_look(const struct owner_maps *om, const struct infl_owner_key *k,
				      __u64 nheld, struct infl_owner **op, bool *raced)
{
	*op = bpf_map_lookup_elem(om->owners, k);
	return *op ? owner_take(om, k, *op, nheld, raced) : TAKE_ABSENT;
}

/* `o`, referenced and not claimed: the owner's record from now on, unless it was voided. */
static __always_inline bool owner_claim_side(struct infl_owner *o)
{
	__u64 s;

	for (int i = 0; i < ACCT_TRIES; i++) {
		s = READ_ONCE(o->state);
		if (s & (INFL_OS_VOID | INFL_OS_DOOMED))
			return false;
		if ((s & INFL_OS_CLAIMED) ||
		    __sync_val_compare_and_swap(&o->state, s, s | INFL_OS_CLAIMED) == s)
			return true;
	}
	return false; /* (counted by the caller's caller: every look lost) */
}

/* `o`, referenced (`nheld` with it) and not claimed: never the owner's record. The reference
 * goes in the same compare-and-swap, and the record retires, queued for the reaper like any
 * other. False when a hit claimed it first (the reference stays). */
static __always_inline bool owner_void(const struct owner_maps *om, struct infl_owner *o,
				       __u64 nheld)
{
	int how = 0; /* 1: voided here, 2: claimed, 0: void already, or every try lost */
	__u64 s;

	WRITE_ONCE(o->retired_ns, bpf_ktime_get_ns());
	for (int i = 0; i < ACCT_TRIES; i++) {
		s = READ_ONCE(o->state);
		if (s & (INFL_OS_CLAIMED | INFL_OS_VOID)) {
			how = s & INFL_OS_CLAIMED ? 2 : 0;
			break;
		}
		if (__sync_val_compare_and_swap(&o->state, s,
						(s - INFL_OS_REF - nheld) | INFL_OS_VOID |
							INFL_OS_RETIRED) == s) {
			how = 1;
			break;
		}
	}
	if (how == 2)
		return false;
	if (how == 1)
		owner_queue(om, o);
	else /* (every try lost to references coming and going: it stays unclaimed, to be
	      * decided by a later hit) */
		owner_giveback(om, o, nheld);
	return true;
}

/* Side 0's record, looked at without a reference: one that is neither being removed nor
 * void (a record read while its element is reused reads as one: the caller looks again). */
static __always_inline bool owner_side0_live(const struct owner_maps *om,
					     struct infl_owner_key *k)
{
	struct infl_owner *o;

	k->side = 0;
	o = bpf_map_lookup_elem(om->owners, k);
	k->side = 1;
	return o && !(READ_ONCE(o->state) & (INFL_OS_DOOMED | INFL_OS_VOID));
}

/* A side-1 record this hit made and did not take (its owner's record turned out to be side
 * 0's): voided unless claimed, so that none is left unclaimed under a key no hit looks at
 * while side 0's record lives. */
static __always_inline void owner_unmake1(const struct owner_maps *om, struct infl_owner_key *k)
{
	struct infl_owner *o;
	bool raced;
	int r;

	k->side = 1;
	r = owner_look(om, k, 0, &o, &raced);
	k->side = 0;
	if (r == TAKE_FRESH && !owner_void(om, o, 0))
		owner_giveback(om, o, 0);
	else if (r == TAKE_OWNER)
		owner_giveback(om, o, 0);
}

/*
 * One look for the owner's record, referenced (`nheld`: an alloc's buffer counted held from
 * now): found, or made when `create` (HOLD_*; HOLD_OK: the reference held on the record
 * under k, whose side it set, which therefore stays under that key: only a record no hit
 * holds is removed; HOLD_AGAIN: look again, *made1 kept between looks). owner_hold_side
 * first: this is what a hit does whose record is not side 0's claimed one (owner_hold_slow,
 * or the program's own loop of them). An owner id has two keys, side 0 and side 1: while
 * side 0's record is being removed (marked DOOMED by a reaper that has not deleted it yet,
 * and which may be stalled there), the owner's new life cannot live under that key, which
 * the reaper's delete is to remove, so it lives under side 1, until that one retires and is
 * removed in turn.
 * Side 1 is made only while side 0's record is being removed or void, and a record made is
 * the owner's only once claimed (INFL_OS_CLAIMED): a hit claims it after its reference holds
 * it and it then looked at the other side and found it absent, DOOMED or VOID. Side 0 is
 * preferred: a hit that finds both unclaimed voids side 1 (INFL_OS_VOID: retired, never to
 * be taken up), and a claimed one voids the other. Of two hits that claim opposite sides,
 * each referenced its own before it looked at the other (fully ordered atomics), so the
 * later look sees the other's record, and voids it or its own; the state's compare-and-swap
 * decides each tie.
 */
static __always_inline int owner_hold_round(const struct owner_maps *om,
					    struct infl_owner_key *k, __u64 nheld, bool create,
					    bool *raced, bool *made1)
{
	struct infl_owner *o0, *o1;
	bool raced1 = false;
	int r0, r1;

	k->side = 0;
	r0 = owner_look(om, k, nheld, &o0, raced);
	if (r0 == TAKE_OWNER)
		goto side0;
	if (r0 == TAKE_STALE)
		return HOLD_AGAIN;
	k->side = 1;
	r1 = owner_look(om, k, nheld, &o1, &raced1);
	if (r1 == TAKE_STALE) {
		if (r0 == TAKE_FRESH)
			owner_giveback(om, o0, nheld);
		return HOLD_AGAIN;
	}
	if (r0 == TAKE_FRESH && r1 == TAKE_FRESH && !owner_void(om, o1, nheld))
		r1 = TAKE_OWNER; /* claimed by another hit since its look */
	if (r1 == TAKE_OWNER) {
		if (r0 == TAKE_FRESH && !owner_void(om, o0, nheld))
			owner_giveback(om, o0, nheld); /* (claimed too: cannot be) */
		goto side1;
	}
	if (r0 == TAKE_FRESH) { /* side 1 absent, dead, or voided here */
		k->side = 0;
		if (owner_claim_side(o0))
			goto side0;
		owner_giveback(om, o0, nheld);
		return HOLD_AGAIN;
	}
	if (r1 == TAKE_FRESH) {
		/* side 0 was absent or dead at a look before this reference: looked at again
		 * after it, where a record made since is preferred */
		if (owner_side0_live(om, k)) {
			if (owner_void(om, o1, nheld))
				return HOLD_AGAIN;
			goto side1; /* claimed by another hit since its look */
		}
		if (owner_claim_side(o1))
			goto side1;
		owner_giveback(om, o1, nheld);
		return HOLD_AGAIN;
	}
	/* neither side holds the owner's record: side 0 is made where it is absent; side 1
	 * only while side 0's record is still being removed or void, and absent itself */
	if (!create)
		return HOLD_NONE;
	k->side = 0;
	if (r0 == TAKE_DEAD) {
		if (r1 != TAKE_ABSENT)
			return HOLD_AGAIN; /* both being removed: look again */
		o0 = bpf_map_lookup_elem(om->owners, k);
		if (o0 && !(READ_ONCE(o0->state) & (INFL_OS_DOOMED | INFL_OS_VOID)))
			return HOLD_AGAIN; /* side 0 made again since: look again */
		if (o0)
			k->side = 1;
	}
	/* EEXIST: another thread made it first; the look after finds it */
	if (!bpf_map_update_elem(om->owners, k, om->fresh, BPF_NOEXIST) && k->side)
		*made1 = true;
	if (!bpf_map_lookup_elem(om->owners, k))
		return HOLD_FULL;
	return HOLD_AGAIN;
side0:
	if (*made1)
		owner_unmake1(om, k);
	k->side = 0;
	return HOLD_OK;
side1:
	k->side = 1;
	*raced = raced1;
	return HOLD_OK;
}

/* owner_hold_round until it holds the record or gives up (HOLD_*). */
static __always_inline int owner_hold_slow(const struct owner_maps *om,
					   struct infl_owner_key *k, __u64 nheld, bool create,
					   bool *raced)
{
	bool made1 = false;
	int why;

	for (int i = 0; i < OWNER_HOLD_TRIES; i++) {
		why = owner_hold_round(om, k, nheld, create, raced, &made1);
		if (why != HOLD_AGAIN)
			return why;
	}
	return HOLD_LOST;
}

/* The owner's record if side `side`'s is the owner's (claimed), referenced; NULL: nothing
 * held. Side 0: the common case, inline, before owner_hold_slow. Side 1, after side 0 had
 * none: where the owner of a buffer (a free's, a dup's replaced one) is then, which while
 * it holds the buffer can be neither retired nor reaped (NULL: counted by the caller). */
static __always_inline struct infl_owner *owner_hold_side(const struct owner_maps *om,
							  struct infl_owner_key *k, __u32 side,
							  __u64 nheld, bool *raced)
{
	struct infl_owner *o;
	int r;

	k->side = side;
	r = owner_look(om, k, nheld, &o, raced);
	if (r == TAKE_OWNER)
		return o;
	if (r == TAKE_FRESH)
		owner_giveback(om, o, nheld);
	return NULL;
}

#endif /* INFLIGHT_OWNERS_BPF_H */
