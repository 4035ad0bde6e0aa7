/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A probe hit's accounting, without a lock: the steps and the protocol they keep, written
 * once for both forms of the kernel side. ACCT_ATOMIC (kernels with BPF atomics and
 * bpf_loop, 5.17+) runs them as atomic operations, hits of one process at once on every CPU;
 * ACCT_LOCKED (before 5.17, no atomic that returns a value) runs the same steps as plain
 * loads and stores under the process's lock (inflight.bpf.c). No step waits for another
 * thread: a compare-and-swap that fails was another hit's success, and is tried again.
 *
 * The protocol:
 *
 * - Order. A hit takes its place by one fetch-and-add on its process's `acct`, which counts
 *   places in its high bits and holds the bytes in flight in its low ones (inflight.h:
 *   INFL_ACCT_*): the place and the bytes after it are one instant, so the total after
 *   every place is known exactly. That order keeps each thread's own (a thread's hits take
 *   places one after another) and every order the program makes between threads (a hit that
 *   returned before another began took its place first). Everything a hit changes in its
 *   process's record comes after its place, and its last step adds 1 to hits_done.
 * - Counts. Counts and bytes per (class, slot), probe counts, owners per slot, lifetime
 *   totals and anomalies are atomic adds: their order does not matter, so they are exact
 *   once the hits that change them have ended, and a copy of the record is whole when none
 *   is between its place and its end (infl_proc: hits_done against acct). The buffers'
 *   total and the dwell counts no hit writes: readers sum the cells and the histograms.
 * - Owners. An owner's buffers count in the slot of its stage, and a stage event moves them
 *   while other threads alloc and free them. Each of its held words (count and bytes per
 *   class) carries the slot its value is counted in (INFL_HELD_*), and that is the one
 *   invariant: a held word's value is in cur[class][its slot]. A hit adds to a held word by
 *   fetch-and-add and adds the same to cur at the slot the word had: a move that changed the
 *   word before the add is seen in its slot, one after it takes the add with the rest. A
 *   move sets the owner's slot in its state word by compare-and-swap, then settles every
 *   held word in use: a compare-and-swap from (old slot, v) to (new slot, v), and v moved
 *   from the old slot's cell to the new one. Any hit may settle a word (one that adds to it
 *   does, before it adds), always towards the slot it read from the state after the word, so
 *   a word never goes back to an older slot. A class is marked in use (`classes`) before
 *   its first add reads the state, and a move reads the mark after it set the state: either
 *   the move sees the class, or the add sees the move.
 * - Owner records. A hit holds a reference on its owner (state's refs) from before its
 *   place to after its end. An owner retires (terminal slot, nothing held) in the very
 *   compare-and-swap of the hit that leaves it so (a free of its last buffer, a move into a
 *   terminal stage), references or not, so that its life follows its own order; the record
 *   stays until it is removed, which only a retired record with no reference can be
 *   (owners.bpf.h). A reference taken on a record removed meanwhile is seen (DOOMED, or
 *   another key in it) and given back (owners.bpf.h: owner_take).
 * - The peak. A hit whose place raised the bytes offers acct's value after it to peak_acct,
 *   a compare-and-swap maximum (equal bytes: the earlier place, which only a peak set while
 *   the hit was in flight can lose to: the peak read before the place tells), exact. The
 *   composition is copied by whoever holds peak_cap, after the hit's own adds; a winner that
 *   finds it held leaves the copy to its holder, which looks again after its release. The
 *   copy is exact when every hit before the peak had ended and none after it had a place;
 *   otherwise peak_fuzz says how many hits may be in it wrongly (peak_capture), and the
 *   last of them to end copies it again, exactly, if no place came after the peak's
 *   (acct_peak_again).
 *
 * The count of places in acct wraps (INFL_ACCT_SEQ_BITS): two places compare by their low
 * bits, and a 64-bit number is found from hits_done, while no hit stays between its place
 * and its end for half the field's places of its process (524,288 hits).
 *
 * Memory order: every step that another CPU's step must see in order is a BPF atomic with
 * a fetch or a compare-and-swap, which are fully ordered; the plain loads that follow them
 * (the state after the class mark, the mark after the state, the state after a held word)
 * are ordered by them. The record's copy by the loader (front to back, hits_done first) and
 * the entered time's pair below lean on x86-64's store order as well.
 */
#ifndef INFLIGHT_ACCT_BPF_H
#define INFLIGHT_ACCT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"

#ifndef __TARGET_ARCH_x86
#error "acct.bpf.h: the loader's copy and the entered times lean on x86-64's store order (TSO)"
#endif

enum acct_mode {
	ACCT_ATOMIC, /* every CPU at once, atomic operations */
	ACCT_LOCKED, /* under the process's lock: plain loads and stores */
};

/* Tries at a compare-and-swap before a hit gives up on it (counted: contention_lost). Each
 * failure is another hit's success on the same word in the instants between a load and the
 * swap (an owner's state changes twice in every hit on it); under the lock one try always
 * succeeds. */
#define ACCT_TRIES 16

/* An index the verifier must see bounded even after clang spilled it (the barrier keeps
 * clang from dropping a clamp it can prove redundant): older verifiers (6.1, 5.10) lose a
 * bound checked before a spill, so the clamp sits where the index is used. */
#define ACCT_CLAMP(v, n) ({ __u32 __c = (v); barrier_var(__c); __c < (n) ? __c : (n) - 1; })

/* --- the operations, in both modes ---------------------------------------------------------- */

static __always_inline __u64 acct_fetch_add(__u64 *p, __u64 v, const enum acct_mode m)
{
	__u64 old;

	if (m == ACCT_ATOMIC)
		return __sync_fetch_and_add(p, v);
	old = *p;
	*p = old + v;
	return old;
}

/* an add whose result nobody needs (a count): the plain atomic add */
static __always_inline void acct_add(__u64 *p, __u64 v, const enum acct_mode m)
{
	if (m == ACCT_ATOMIC)
		__sync_fetch_and_add(p, v);
	else
		*p += v;
}

static __always_inline bool acct_cas(__u64 *p, __u64 old, __u64 new, const enum acct_mode m)
{
	if (m == ACCT_ATOMIC)
		return __sync_val_compare_and_swap(p, old, new) == old;
	if (*p != old)
		return false;
	*p = new;
	return true;
}

static __always_inline bool acct_cas32(__u32 *p, __u32 old, __u32 new, const enum acct_mode m)
{
	if (m == ACCT_ATOMIC)
		return __sync_val_compare_and_swap(p, old, new) == old;
	if (*p != old)
		return false;
	*p = new;
	return true;
}

/* marks bits, fully ordered: what the caller loads next is seen after the mark */
static __always_inline void acct_mark32(__u32 *p, __u32 bits, const enum acct_mode m)
{
	if (m == ACCT_ATOMIC) {
		__u32 was = __sync_fetch_and_or(p, bits);

		barrier_var(was); /* the fetch, not the plain or: the ordered form */
	} else {
		*p |= bits;
	}
}

/* --- the process: its place, its cells, its end --------------------------------------------- */

/* The hit's place, and the bytes it changes (two's complement for a decrease): acct before
 * it. */
static __always_inline __u64 acct_place(struct infl_proc *p, __u64 dbytes, const enum acct_mode m)
{
	return acct_fetch_add(&p->acct, INFL_ACCT_SEQ_ONE + dbytes, m);
}

/* Bytes changed again within a place already taken (an alloc the buffer map refused): no
 * borrow, they were added by the same hit. */
static __always_inline void acct_bytes(struct infl_proc *p, __u64 dbytes, const enum acct_mode m)
{
	acct_add(&p->acct, dbytes, m);
}

/* The 64-bit number of the place taken with acct `before` (1 for a process's first). */
static __always_inline __u64 acct_seq(struct infl_proc *p, __u64 before)
{
	return infl_seq_unwrap(infl_acct_seq_lo(before) + 1, READ_ONCE(p->hits_done) + 1);
}

static __always_inline void acct_cell(struct infl_proc *p, __u32 cls, __u32 slot, __u64 dcount,
				      __u64 dbytes, const enum acct_mode m)
{
	if (cls >= INFL_CLASSES || slot >= INFL_SLOTS)
		return;
	cls = ACCT_CLAMP(cls, INFL_CLASSES);
	slot = ACCT_CLAMP(slot, INFL_SLOTS);
	if (dcount)
		acct_add(&p->cur[cls][slot].count, dcount, m);
	if (dbytes)
		acct_add(&p->cur[cls][slot].bytes, dbytes, m);
}

/* one of a cell's two words: the count (bytes false) or the bytes */
static __always_inline void acct_cell_word(struct infl_proc *p, __u32 cls, __u32 slot, bool bytes,
					   __u64 d, const enum acct_mode m)
{
	acct_cell(p, cls, slot, bytes ? 0 : d, bytes ? d : 0, m);
}

static __always_inline void acct_owners(struct infl_proc *p, __u32 slot, __u64 d,
					const enum acct_mode m)
{
	if (slot < INFL_SLOTS)
		acct_add(&p->owners[ACCT_CLAMP(slot, INFL_SLOTS)], d, m);
}

/* --- the peak -------------------------------------------------------------------------------- */

/* a place's number before another's, within half the count's field */
static __always_inline bool acct_before(__u64 a, __u64 b)
{
	__u32 d = (infl_acct_seq_lo(b) - infl_acct_seq_lo(a)) & INFL_ACCT_SEQ_MASK;

	return d && d < (1u << (INFL_ACCT_SEQ_BITS - 1));
}

/* The peak before a hit's place (acct_peak_offer): read before it, so that a peak set
 * before the place is told from one set after it. Ordered before the place by the place's
 * fetch-and-add. */
static __always_inline __u64 acct_peak_before(struct infl_proc *p)
{
	return READ_ONCE(p->peak_acct);
}

/* acct value `a` a higher peak than `b`: more bytes, or as many at an earlier place (the
 * first time the total stood there, as a replay in place order finds it). `was`: the peak
 * before a's place. Only a peak set since (b != was) can be at a later place: its hit was in
 * flight with a's, within half the count's field of it, where the low bits order them; a
 * peak set before a's place came first, however far back its low bits wrapped. */
static __always_inline bool acct_peak_above(__u64 a, __u64 b, __u64 was)
{
	__u64 x = infl_acct_bytes(a), y = infl_acct_bytes(b);

	return x > y || (x && x == y && b != was && acct_before(a, b));
}

/* `after`: acct after a place that raised the bytes; `was`: acct_peak_before that place.
 * True when it is the peak (its event says so). */
static __always_inline bool acct_peak_offer(struct infl_proc *p, __u64 after, __u64 was,
					    const enum acct_mode m)
{
	/* the peak's bytes never go down: below the peak read before the place, the hit is
	 * below every later one, and the line need not be read again */
	if (infl_acct_bytes(after) < infl_acct_bytes(was))
		return false;
	for (int i = 0; i < (m == ACCT_ATOMIC ? ACCT_TRIES : 1); i++) {
		__u64 cur = READ_ONCE(p->peak_acct);

		if (!acct_peak_above(after, cur, was))
			return false;
		if (acct_cas(&p->peak_acct, cur, after, m))
			return true;
	}
	acct_add(&p->contention_lost, 1, m);
	return false;
}

/* The peak `after` (a value of acct) was set at `now`: where a hit that copies it finds it.
 * Two peaks set at once may both write: the value tells whose time it is. */
static __always_inline void peak_time_note(struct infl_proc *p, __u64 after, __u64 now)
{
	WRITE_ONCE(p->peak_time_acct, 0);
	barrier();
	WRITE_ONCE(p->peak_time_ns, now);
	barrier();
	WRITE_ONCE(p->peak_time_acct, after);
}

/* The time of peak `peak`, or 0 when its hit's note is not there (written over, or not yet). */
static __always_inline __u64 peak_time_of(struct infl_proc *p, __u64 peak)
{
	__u64 t;

	if (READ_ONCE(p->peak_time_acct) != peak)
		return 0;
	barrier();
	t = READ_ONCE(p->peak_time_ns);
	barrier();
	return READ_ONCE(p->peak_time_acct) == peak ? t : 0;
}

/* Copies the composition for the peak now in peak_acct, and says how exact the copy is.
 * `now`: the copier's time, the peak's own when its hit's note is gone. */
static __always_inline void peak_copy(struct infl_proc *p, __u64 peak, __u64 now,
				      const enum acct_mode m)
{
	__u64 done = READ_ONCE(p->hits_done), after, t = peak_time_of(p, peak), bufs = 0;
	__u32 n, k;

	for (int c = 0; c < INFL_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++) {
			p->peak[c][s] = p->cur[c][s];
			bufs += p->peak[c][s].count;
		}
	for (int s = 0; s < INFL_SLOTS; s++)
		p->peak_owners[s] = p->owners[s];
	p->peak_bufs = bufs;
	after = READ_ONCE(p->acct);
	p->peak_ns = t ? t : now;
	p->peak_seq = infl_seq_unwrap(infl_acct_seq_lo(peak), done + 1);
	if (m == ACCT_ATOMIC) {
		/* hits that may be in it wrongly: every place after the peak's (their changes
		 * may be in the copy), and every hit not ended when the copy began but the
		 * copier's own, whose changes came before it (they may be missing); and its time
		 * is not the peak's own when its note was gone (said as one more) */
		n = infl_acct_seq_lo(after);
		k = infl_acct_seq_lo(peak);
		p->peak_fuzz = ((n - k) & INFL_ACCT_SEQ_MASK) +
			       ((n - (__u32)done - 1) & INFL_ACCT_SEQ_MASK) + !t;
	} else {
		p->peak_fuzz = 0;
	}
	WRITE_ONCE(p->peak_cap_acct, peak);
}

/* Rounds of copying a copier makes while new peaks keep coming during its copies. */
#define PEAK_COPY_ROUNDS 64

/* One round of a copier: the flag, the copy if the newest peak has none, the flag back. */
static __always_inline bool peak_capture_once(struct infl_proc *p, __u64 now,
					      const enum acct_mode m)
{
	__u64 peak;

	if (!acct_cas32(&p->peak_cap, 0, 1, m))
		return true; /* its holder looks again after its release */
	peak = READ_ONCE(p->peak_acct);
	if (peak != READ_ONCE(p->peak_cap_acct))
		peak_copy(p, peak, now, m);
	if (m == ACCT_ATOMIC)
		__sync_lock_test_and_set(&p->peak_cap, 0); /* xchg: fully ordered */
	else
		p->peak_cap = 0;
	return READ_ONCE(p->peak_acct) == peak;
}

struct peak_round {
	struct infl_proc *p;
	__u64 now;
	bool again; /* acct_peak_again's copy */
};

/* The newest peak's copy made again, by a hit that is the only one in flight with no place
 * taken after the peak's (acct_end): the cells are the peak's composition then. */
static __always_inline void peak_copy_again(struct infl_proc *p)
{
	__u64 peak;

	if (!acct_cas32(&p->peak_cap, 0, 1, ACCT_ATOMIC))
		return; /* its holder is copying the newest peak */
	peak = READ_ONCE(p->peak_acct);
	if (peak == READ_ONCE(p->peak_cap_acct) && READ_ONCE(p->peak_fuzz))
		peak_copy(p, peak, READ_ONCE(p->peak_ns), ACCT_ATOMIC);
	__sync_lock_test_and_set(&p->peak_cap, 0); /* xchg: fully ordered */
}

/* bpf_loop callback: a round (a callback: the verifier walks its copy once, not once for
 * each round) */
static long peak_capture_round(__u32 i, void *ctx)
{
	struct peak_round *r = ctx;

	if (r->p && r->again) {
		peak_copy_again(r->p);
		return 1;
	}
	return !r->p || peak_capture_once(r->p, r->now, ACCT_ATOMIC);
}

/* After a hit's own changes, when its offer of `after` won at `now`: the composition of the
 * newest peak, copied by whoever holds peak_cap; one that finds it held leaves the copy to
 * the holder, which looks at peak_acct again once it released it. */
static __always_inline void acct_peak_capture(struct infl_proc *p, __u64 after, __u64 now,
					      const enum acct_mode m)
{
	struct peak_round r = { .p = p, .now = now };

	if (m == ACCT_LOCKED) {
		peak_capture_once(p, now, m);
		return;
	}
	peak_time_note(p, after, now);
	bpf_loop(PEAK_COPY_ROUNDS, peak_capture_round, &r, 0);
}

/*
 * A copy of the peak made while other hits were between their place and their end is fuzzy
 * (peak_fuzz): it may miss their changes. Once those have ended, if no hit took a place
 * after the peak's, the cells are the composition at the peak exactly: the last hit of them
 * to end copies it again, before its own end, so that a reader never finds a whole record
 * with the copy half made. Where places keep coming after the peak the fuzzy copy stays, and
 * says so. One load on every other hit, and while the copy is fuzzy three more, all on the
 * line of hits_done, which the hit's end writes next (inflight.h: struct infl_proc); the
 * words of the place's line, which another CPU's place may have taken meanwhile, only when
 * those tell that this hit is the last.
 */
static __always_inline void acct_peak_again(struct infl_proc *p, const enum acct_mode m)
{
	struct peak_round r = { .p = p, .again = true };
	__u64 cap, peak;

	if (m != ACCT_ATOMIC || !READ_ONCE(p->peak_fuzz))
		return;
	/* every hit but this one ended, and the last place is the peak's: in 64 bits (the
	 * copy's peak_seq, written before peak_cap_acct and read after it), the places in
	 * flight being fewer than half the count's field, so the low bits of acct settle it.
	 * The peak read after the copy's: equal, it was the peak when the copy's was read (it
	 * only grows) */
	cap = READ_ONCE(p->peak_cap_acct);
	if (READ_ONCE(p->hits_done) + 1 != READ_ONCE(p->peak_seq))
		return;
	peak = READ_ONCE(p->peak_acct);
	if (cap != peak || infl_acct_seq_lo(READ_ONCE(p->acct)) != infl_acct_seq_lo(peak))
		return;
	bpf_loop(1, peak_capture_round, &r, 0);
}

/* The hit's last step: `places` more hits whose accounting is complete (the peak's copy made
 * again first where it can be exact now). Fully ordered: every change the hit made is seen
 * before it. */
static __always_inline __u64 acct_end(struct infl_proc *p, __u64 places, const enum acct_mode m)
{
	acct_peak_again(p, m);
	return acct_fetch_add(&p->hits_done, places, m);
}

/* --- an owner ---------------------------------------------------------------------------- */

static __always_inline __u32 held_slot(__u64 h)
{
	return (__u32)(h >> INFL_HELD_SLOT_SHIFT);
}

static __always_inline __u64 os_moves(__u64 s)
{
	return (s & INFL_OS_MOVES_MASK) >> INFL_OS_MOVES_SHIFT;
}

static __always_inline bool os_terminal(__u32 slot, __u16 terminal_mask)
{
	return slot < INFL_MAX_STAGES && (terminal_mask & (1u << slot));
}

/* A reference on o, the state before it (`nheld`: an alloc's buffer, counted held from
 * before its place so that no free of it can come first). */
static __always_inline __u64 owner_ref(struct infl_owner *o, __u64 nheld, const enum acct_mode m)
{
	return acct_fetch_add(&o->state, INFL_OS_REF + nheld, m);
}

/* State `s` says the owner is done: counted, in a terminal slot, holding nothing (its
 * references do not count: hits in flight on it come after in its own order). */
static __always_inline bool os_done(__u64 s, __u16 terminal_mask)
{
	return !(s & (INFL_OS_NHELD_MASK | INFL_OS_RETIRED)) && (s & INFL_OS_ADMITTED) &&
	       os_terminal(infl_os_slot(s), terminal_mask);
}

static __always_inline __u64 os_retired(__u64 s)
{
	return (s & ~INFL_OS_ADMITTED) | INFL_OS_RETIRED;
}

/* Counted as done, out of its slot's count: the owner retired in `slot`. */
static __always_inline void owner_retired_count(struct infl_proc *p, struct infl_owner *o,
						__u32 slot, __u64 now, const enum acct_mode m)
{
	WRITE_ONCE(o->retired_ns, now ? now : bpf_ktime_get_ns());
	acct_owners(p, slot, -1, m);
	acct_add(&p->owners_done, 1, m);
}

/* The hit's reference goes (`nheld`: -1 for the buffer a free gives back, or an alloc's not
 * held after all; 0 for the others). A hit that leaves the owner done retires it in the same
 * compare-and-swap: in the owner's own order it is done right after that hit, whatever other
 * hits hold references then. True when it retired. */
static __always_inline bool owner_unref(struct infl_proc *p, struct infl_owner *o, __u64 nheld,
					__u64 now, __u16 terminal_mask, const enum acct_mode m)
{
	__u64 s, ns;
	bool done;

	if (!nheld) {
		acct_add(&o->state, -INFL_OS_REF, m);
		return false;
	}
	for (int i = 0; i < (m == ACCT_ATOMIC ? ACCT_TRIES : 1); i++) {
		s = READ_ONCE(o->state);
		ns = s + nheld - INFL_OS_REF;
		done = os_done(ns, terminal_mask);
		if (!acct_cas(&o->state, s, done ? os_retired(ns) : ns, m))
			continue;
		if (done)
			owner_retired_count(p, o, infl_os_slot(ns), now, m);
		return done;
	}
	/* every try lost to another hit's change: the reference and the buffer go back, the
	 * owner's retirement is left to its next hit (counted: inexact meanwhile) */
	acct_add(&o->state, nheld - INFL_OS_REF, m);
	acct_add(&p->contention_lost, 1, m);
	return false;
}

/* A held word's value counted in the owner's slot: from the slot it carries to the slot the
 * state says, by compare-and-swap, and the value moved between their cells. `bytes`: the
 * class's bytes word, else its count. */
static __always_inline void held_settle(struct infl_proc *p, struct infl_owner *o, __u32 c,
					bool bytes, const enum acct_mode m)
{
	__u64 *w, h, v;
	__u32 from, to;

	c = ACCT_CLAMP(c, INFL_CLASSES);
	w = bytes ? &o->held_bytes[c] : &o->held_count[c];
	for (int i = 0; i < (m == ACCT_ATOMIC ? ACCT_TRIES : 1); i++) {
		h = READ_ONCE(*w);
		to = infl_os_slot(READ_ONCE(o->state)); /* after the word: never an older slot */
		from = held_slot(h);
		if (from == to)
			return;
		if (!acct_cas(w, h, (h & INFL_HELD_VALUE_MASK) | ((__u64)to << INFL_HELD_SLOT_SHIFT), m))
			continue;
		v = h & INFL_HELD_VALUE_MASK;
		if (v) {
			acct_cell_word(p, c, from, bytes, -v, m);
			acct_cell_word(p, c, to, bytes, v, m);
		}
		return;
	}
	acct_add(&p->contention_lost, 1, m);
}

/* A buffer of class c comes to (dcount 1) or leaves (dcount -1) the owner's holding. Returns
 * the slot its bytes were counted in. */
static __always_inline __u32 held_add(struct infl_proc *p, struct infl_owner *o, __u32 c,
				      __u64 dcount, __u64 dbytes, const enum acct_mode m)
{
	__u32 bit;
	__u64 h;

	c = ACCT_CLAMP(c, INFL_CLASSES);
	bit = 1u << c;
	if (!(READ_ONCE(o->classes) & bit))
		acct_mark32(&o->classes, bit, m); /* before the state is read: a move sees it */
	held_settle(p, o, c, false, m);
	held_settle(p, o, c, true, m);
	h = acct_fetch_add(&o->held_count[ACCT_CLAMP(c, INFL_CLASSES)], dcount, m);
	acct_cell(p, c, held_slot(h), dcount, 0, m);
	h = acct_fetch_add(&o->held_bytes[ACCT_CLAMP(c, INFL_CLASSES)], dbytes, m);
	acct_cell(p, c, held_slot(h), 0, dbytes, m);
	return held_slot(h);
}

/* Counted in owners[] from now on, once, in the slot its state has (a new record's, or one
 * that retired: INFL_SLOT_NONE until its first stage). */
static __always_inline void owner_admit(struct infl_proc *p, struct infl_owner *o,
					const enum acct_mode m)
{
	__u64 s, ns;

	for (int i = 0; i < (m == ACCT_ATOMIC ? ACCT_TRIES : 1); i++) {
		s = READ_ONCE(o->state);
		if (s & INFL_OS_ADMITTED)
			return;
		ns = (s & ~((0x1full << INFL_OS_SLOT_SHIFT) | INFL_OS_RETIRED)) | INFL_OS_ADMITTED |
		     ((__u64)INFL_SLOT_NONE << INFL_OS_SLOT_SHIFT);
		if (acct_cas(&o->state, s, ns, m)) {
			acct_owners(p, INFL_SLOT_NONE, 1, m);
			return;
		}
	}
	acct_add(&p->contention_lost, 1, m);
}

/* When the owner entered the slot of its move number `moves`, or 0 when that entry has been
 * written since for a later move (a move held up while two more were made). */
static __always_inline __u64 owner_entered(struct infl_owner *o, __u64 moves)
{
	__u32 want = (__u32)moves | INFL_ENTERED_VALID, i = moves & 1;
	__u64 t;

	if (READ_ONCE(o->entered_move[i]) != want)
		return 0;
	barrier();
	t = READ_ONCE(o->entered_ns[i]);
	barrier();
	return READ_ONCE(o->entered_move[i]) == want ? t : 0;
}

/* Before the compare-and-swap of move number `moves`: its time, where the move after it
 * reads it. Two moves that race for the same number both write it, each a time of the
 * instants both were in flight; the one that loses writes the next number's entry for its
 * next try, the other of the two. */
static __always_inline void owner_entered_set(struct infl_owner *o, __u64 moves, __u64 now)
{
	__u32 i = moves & 1;

	WRITE_ONCE(o->entered_move[i], 0);
	barrier();
	WRITE_ONCE(o->entered_ns[i], now);
	barrier();
	WRITE_ONCE(o->entered_move[i], (__u32)moves | INFL_ENTERED_VALID);
}

/* What owner_move found: the slot it left, whether it was counted there, whether the move
 * retired it (a terminal stage, holding nothing). */
struct acct_move {
	__u32 from;	/* the slot, INFL_SLOT_NONE for an owner not counted yet */
	__u16 counted;	/* it was in owners[from] (else this is its first stage) */
	__u16 retired;	/* it is done: counted nowhere from now on */
	__u64 entered;	/* when it entered `from`, 0 when unknown */
};

/* The owner (referenced) goes to `stage`: its state by compare-and-swap, the owner counts,
 * then its held words (the caller: owner_settle_all). False when every try failed (counted). */
static __always_inline bool owner_move(struct infl_proc *p, struct infl_owner *o, __u32 stage,
				       __u64 now, __u16 terminal_mask, struct acct_move *mv,
				       const enum acct_mode m)
{
	__u64 s = 0, ns = 0, entered = 0, moves = ~0ull;
	bool moved = false, done = false;

	for (int i = 0; i < (m == ACCT_ATOMIC ? ACCT_TRIES : 1) && !moved; i++) {
		s = READ_ONCE(o->state);
		if (os_moves(s) != moves) {
			/* the move before it wrote its entry before its swap, which `s` follows:
			 * read before this one's swap, while no later move's try can have written
			 * over it; and this one's written. Only when another move came first: the
			 * other changes of the state (references, buffers held) leave them. */
			moves = os_moves(s);
			entered = owner_entered(o, moves);
			owner_entered_set(o, moves + 1, now);
		}
		ns = (s & ~((0x1full << INFL_OS_SLOT_SHIFT) | INFL_OS_RETIRED | INFL_OS_MOVES_MASK)) |
		     INFL_OS_ADMITTED | ((__u64)stage << INFL_OS_SLOT_SHIFT) |
		     (((moves + 1) << INFL_OS_MOVES_SHIFT) & INFL_OS_MOVES_MASK);
		done = os_done(ns, terminal_mask);
		moved = acct_cas(&o->state, s, done ? os_retired(ns) : ns, m);
	}
	if (!moved) {
		acct_add(&p->contention_lost, 1, m);
		return false;
	}
	mv->counted = !!(s & INFL_OS_ADMITTED);
	mv->from = mv->counted ? infl_os_slot(s) : INFL_SLOT_NONE;
	mv->entered = mv->counted ? entered : 0;
	mv->retired = done;
	if (mv->counted)
		acct_owners(p, mv->from, -1, m);
	if (done) {
		WRITE_ONCE(o->retired_ns, now);
		acct_add(&p->owners_done, 1, m);
	} else {
		acct_owners(p, stage, 1, m);
	}
	return true;
}

struct settle_ctx {
	struct infl_proc *p;
	struct infl_owner *o;
	__u32 used;
};

/* bpf_loop callback: the held words of round r's SETTLE_PER_ROUND classes settled, those in
 * use; no round after the one of the highest class in use. It reads its context and never
 * writes it: the verifier, which walks a callback again for as long as what it was given
 * changes, walks it once (a callback that took its class from a mask it cleared bit by bit
 * cost every attach a third of a second of verification). A callback: the verifier walks one
 * round's tries, not every class's. Several classes a round: each round is a call, and a
 * call and its return cost more than the look at a class not in use (a stage of an owner
 * holding classes 0-7 took 8 rounds, and 20-30 ns more than in 2). */
#define SETTLE_PER_ROUND 4
#define SETTLE_ROUNDS ((INFL_CLASSES + SETTLE_PER_ROUND - 1) / SETTLE_PER_ROUND)

static long settle_round(__u32 r, void *ctx)
{
	struct settle_ctx *x = ctx;

	if (r >= SETTLE_ROUNDS || !x->p || !x->o)
		return 1;
#pragma clang loop unroll(full)
	for (__u32 j = 0; j < SETTLE_PER_ROUND; j++) {
		__u32 c = r * SETTLE_PER_ROUND + j;

		/* the last round's place past the last class takes the last class again (a
		 * settled word is left as it is): a class number past the arrays, even one
		 * checked, made 6.12's verifier lose a spilled index's bounds and refuse */
		if (c > INFL_CLASSES - 1)
			c = INFL_CLASSES - 1;
		if (x->used & (1u << c)) {
			held_settle(x->p, x->o, c, false, ACCT_ATOMIC);
			held_settle(x->p, x->o, c, true, ACCT_ATOMIC);
		}
	}
	return !(x->used >> ((r + 1) * SETTLE_PER_ROUND - 1) >> 1);
}

/* After a move: every held word in use settled to the owner's slot. */
static __always_inline void owner_settle_all(struct infl_proc *p, struct infl_owner *o,
					     const enum acct_mode m)
{
	/* after the move's state: see acct_mark32 */
	struct settle_ctx x = { .p = p, .o = o, .used = READ_ONCE(o->classes) };

	if (m == ACCT_ATOMIC) {
		bpf_loop(SETTLE_ROUNDS, settle_round, &x, 0);
		return;
	}
	for (int c = 0; c < INFL_CLASSES; c++) {
		if (!(x.used & (1u << c)))
			continue;
		held_settle(p, o, c, false, m);
		held_settle(p, o, c, true, m);
	}
}

#endif /* INFLIGHT_ACCT_BPF_H */
