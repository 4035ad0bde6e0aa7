/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The atomic form's buffer records, one per live buffer, in an open-addressing table in a
 * BPF array (inflight.h: struct infl_buf_slot). A hash map's lookup, insert and delete are
 * chains of kernel calls; an array's lookup is inlined by the JIT, so a hit finds its
 * buffer's record with loads alone. The locked form (kernels before 5.17, whose BPF has no
 * compare-and-swap before 5.12) keeps the hash map.
 *
 * The protocol:
 *
 * - A key lives in the INFL_BUF_WINDOW slots from its hash on. A slot's state word holds its
 *   kind and a version that every change of kind raises, so that a compare-and-swap from a
 *   state read before a slot's fields were read fails if the slot changed meanwhile: reads
 *   of a slot are checked by the swap that acts on them.
 * - An insert first takes one of `limit` places in the table's count (`live`, all processes
 *   together: --max-bufs stays an exact number of buffers), then claims the first slot of
 *   its window that is empty or removed, by compare-and-swap to BUSY (a slot another insert
 *   claimed first is passed for the next), writes the key and the record, and publishes
 *   them by an atomic add to LIVE (fully ordered: the look for a twin below comes after
 *   it). A window with no such slot is full: the place is given back and the alloc counted
 *   as untracked (a full map). Fewer than INFL_BUF_WINDOW records never fill a window, and
 *   the table has at least INFL_BUF_SLOTS_PER_BUF times `limit` slots (inflight.h).
 * - A live record of the key that the insert passes is removed first (a dup alloc, the
 *   program's own: the record replaced is counted out after the alloc).
 * - Two threads allocating one id at once (a program's bug) may each claim a slot before
 *   either is published. Each looks at its window again after publishing, and of two live
 *   records of the key the one later in the window is removed, by whichever of the two
 *   swaps on it wins, and counted out as the dup's replaced record: one record stays, as the
 *   hash map's insert left one. An insert that already replaced a record cannot count out a
 *   second: it leaves both, and says so (`twice`: contention_lost).
 * - A free takes the live record of its key by compare-and-swap to DEAD: of two frees of one
 *   buffer at once, one wins.
 * - Slots never go back to empty, so a search stops at the first empty slot and steps over
 *   removed ones. The loader removes an ended image's records through the table's memory
 *   (mapped: BPF_F_MMAPABLE), each by the same swap, and gives back its place in `live`.
 *
 * Memory order: the publish and every removal are BPF atomics with a fetch or a
 * compare-and-swap, fully ordered; a slot's fields are read after its state (a compiler
 * barrier; x86-64 keeps loads in order: acct.bpf.h's build error says so) and checked by the
 * swap that acts on them.
 */
#ifndef INFLIGHT_BUF_TABLE_BPF_H
#define INFLIGHT_BUF_TABLE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"

#ifndef __TARGET_ARCH_x86
#error "buf_table.bpf.h: a slot's fields read after its state lean on x86-64's load order"
#endif

/* The table a program gives the steps below (its map and settings: inflight.bpf.c). */
struct buf_table {
	void *slots;  /* BPF_MAP_TYPE_ARRAY of struct infl_buf_slot, mask + 1 of them */
	__u64 *live;  /* records claimed and not removed, every process's: at most limit */
	__u64 limit;  /* --max-bufs */
	__u32 mask;   /* slots - 1, a power of two */
};

/* Every bit of the key reaches the bits that index the table (a 64-bit finalizer). */
static __always_inline __u32 buf_hash(const struct infl_buf_key *k)
{
	__u64 x = k->buf ^ (k->gen * 0x9E3779B97F4A7C15ull) ^ ((__u64)k->pid << 32 | k->space);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (__u32)x;
}

/* The i-th slot of the window from hash h (NULL only for a table smaller than its mask). */
static __always_inline struct infl_buf_slot *buf_slot(const struct buf_table *t, __u32 h,
						      __u32 i)
{
	__u32 idx = (h + i) & t->mask;

	return bpf_map_lookup_elem(t->slots, &idx);
}

static __always_inline bool buf_slot_is(const struct infl_buf_slot *s,
					const struct infl_buf_key *k)
{
	return s->key.buf == k->buf && s->key.gen == k->gen && s->key.pid == k->pid &&
	       s->key.space == k->space;
}

/* A slot's state, before its fields are read. */
static __always_inline __u64 buf_state(struct infl_buf_slot *s)
{
	__u64 st = READ_ONCE(s->state);

	barrier();
	return st;
}

/* Removes the record of a slot read in state `st` (its fields into *rec): true when this
 * swap did. */
static __always_inline bool buf_remove(const struct buf_table *t, struct infl_buf_slot *s,
				       __u64 st, struct infl_buf *rec)
{
	struct infl_buf r = s->rec;

	if (__sync_val_compare_and_swap(&s->state, st, INFL_BS_NEXT(st, INFL_BS_DEAD)) != st)
		return false;
	*rec = r;
	__sync_fetch_and_add(t->live, -1);
	return true;
}

/* The first window place at or after `from`, other than `skip`, that holds a live record
 * of k (hash h): its slot into *slot and state into *st; INFL_BUF_WINDOW when none does
 * before an empty slot (past which no record of k lies). */
static __always_inline __u32 buf_find(const struct buf_table *t, const struct infl_buf_key *k,
				      __u32 h, __u32 from, __u32 skip,
				      struct infl_buf_slot **slot, __u64 *st)
{
	for (__u32 i = from; i < INFL_BUF_WINDOW; i++) {
		struct infl_buf_slot *s = buf_slot(t, h, i);

		if (!s)
			break;
		*st = buf_state(s);
		if (INFL_BS_KIND(*st) == INFL_BS_EMPTY)
			break;
		if (i != skip && INFL_BS_KIND(*st) == INFL_BS_LIVE && buf_slot_is(s, k)) {
			*slot = s;
			return i;
		}
	}
	return INFL_BUF_WINDOW;
}

/* A free: the live record of k taken out of the table, its fields into *rec; false when it
 * has none (never published, or taken by another free first). */
static __always_inline bool buf_take(const struct buf_table *t, const struct infl_buf_key *k,
				     struct infl_buf *rec)
{
	struct infl_buf_slot *s = NULL;
	__u32 h = buf_hash(k), i;
	__u64 st = 0;

	for (i = buf_find(t, k, h, 0, INFL_BUF_WINDOW, &s, &st); i < INFL_BUF_WINDOW;
	     i = buf_find(t, k, h, i + 1, INFL_BUF_WINDOW, &s, &st))
		if (s && buf_remove(t, s, st, rec))
			return true;
	return false;
}

/* What an insert did besides its own record. */
struct buf_put {
	struct infl_buf prev; /* the record it removed (replaced), when it did */
	bool replaced;
	bool twice; /* a second live record of its key left in place (see above) */
};

/* After the publish of the record at window place j (state `mine`): a twin published by
 * another thread at once, the later of the two removed. */
static __always_inline void buf_twins(const struct buf_table *t, const struct infl_buf_key *k,
				      __u32 h, __u32 j, struct infl_buf_slot *at, __u64 mine,
				      struct buf_put *out)
{
	struct infl_buf_slot *s = NULL;
	__u64 st = 0;
	__u32 i = buf_find(t, k, h, 0, j, &s, &st);

	if (i >= INFL_BUF_WINDOW || !s)
		return;
	if (out->replaced)
		out->twice = true;
	else if (i > j)
		out->replaced = buf_remove(t, s, st, &out->prev);
	else
		out->replaced = buf_remove(t, at, mine, &out->prev);
}

/* An alloc's record into the table: 0, or -1 when it has no room (the table's count at its
 * limit, or no slot of the key's window free). One pass over the window: a live record of
 * the key removed, the first free slot claimed (one another insert claimed first is passed
 * for the next), the rest looked at until an empty slot; then the publish, and the look for
 * a twin. */
static __always_inline int buf_put(const struct buf_table *t, const struct infl_buf_key *k,
				   const struct infl_buf *rec, struct buf_put *out)
{
	struct infl_buf_slot *mine = NULL;
	__u32 h = buf_hash(k), j = 0;
	__u64 ms = 0;

	if (__sync_fetch_and_add(t->live, 1) >= t->limit) {
		__sync_fetch_and_add(t->live, -1);
		return -1;
	}
	for (__u32 i = 0; i < INFL_BUF_WINDOW; i++) {
		struct infl_buf_slot *s = buf_slot(t, h, i);
		__u64 st;

		if (!s)
			break;
		st = buf_state(s);
		if (INFL_BS_KIND(st) == INFL_BS_LIVE && !out->replaced && buf_slot_is(s, k) &&
		    buf_remove(t, s, st, &out->prev)) {
			out->replaced = true;
			st = INFL_BS_NEXT(st, INFL_BS_DEAD);
		}
		if (!mine && (INFL_BS_KIND(st) == INFL_BS_EMPTY || INFL_BS_KIND(st) == INFL_BS_DEAD)) {
			if (__sync_val_compare_and_swap(&s->state, st,
							INFL_BS_NEXT(st, INFL_BS_BUSY)) != st)
				continue; /* another insert's: the next one */
			mine = s;
			ms = INFL_BS_NEXT(st, INFL_BS_BUSY);
			j = i;
		}
		if (INFL_BS_KIND(st) == INFL_BS_EMPTY)
			break;
	}
	if (!mine) {
		__sync_fetch_and_add(t->live, -1);
		return -1;
	}
	mine->key = *k;
	mine->rec = *rec;
	__sync_fetch_and_add(&mine->state, INFL_BS_LIVE - INFL_BS_BUSY);
	buf_twins(t, k, h, j, mine, ms + INFL_BS_LIVE - INFL_BS_BUSY, out);
	return 0;
}

#endif /* INFLIGHT_BUF_TABLE_BPF_H */
