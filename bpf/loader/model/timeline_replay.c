// SPDX-License-Identifier: BSD-2-Clause
/*
 * The replay engine: applies one process's events with the kernel's accounting rules
 * (bpf/hit.bpf.h: acct_alloc, acct_replaced, acct_free, acct_stage, and the owner's
 * retirement), keeping its own buffer and owner tables. timeline.c runs it once with
 * collection hooks; renderers run it again through cursors.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/timeline.h"
#include "model/timeline_replay.h"
#include "util/grow.h"

/* Open addressing, linear probing, backward-shift deletion (no tombstones). */
static size_t map_hash(const struct u64map *m, __u64 key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);
}

static unsigned char *slot_at(const struct u64map *m, size_t i)
{
	return m->slots + i * (m->vsize + 16);
}

static bool slot_used(const unsigned char *s)
{
	return s[0];
}

static __u64 slot_key(const unsigned char *s)
{
	__u64 k;

	memcpy(&k, s + 8, 8);
	return k;
}

void *u64map__get(const struct u64map *m, __u64 key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = map_hash(m, key);; i = (i + 1) & (m->cap - 1)) {
		unsigned char *s = slot_at(m, i);

		if (!slot_used(s))
			return NULL;
		if (slot_key(s) == key)
			return s + 16;
	}
}

static int map_grow(struct u64map *m)
{
	struct u64map n = { .vsize = m->vsize, .cap = m->cap ? m->cap * 2 : 64 };

	n.slots = calloc(n.cap, n.vsize + 16);
	if (!n.slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		unsigned char *s = slot_at(m, i);
		bool created;

		if (slot_used(s))
			memcpy(u64map__put(&n, slot_key(s), &created), s + 16, m->vsize);
	}
	free(m->slots);
	*m = n;
	return 0;
}

void *u64map__put(struct u64map *m, __u64 key, bool *created)
{
	*created = false;
	if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m))
		return NULL;
	for (size_t i = map_hash(m, key);; i = (i + 1) & (m->cap - 1)) {
		unsigned char *s = slot_at(m, i);

		if (slot_used(s) && slot_key(s) == key)
			return s + 16;
		if (!slot_used(s)) {
			memset(s, 0, m->vsize + 16);
			s[0] = 1;
			memcpy(s + 8, &key, 8);
			m->n++;
			*created = true;
			return s + 16;
		}
	}
}

void u64map__del(struct u64map *m, __u64 key)
{
	size_t i, j;

	if (!u64map__get(m, key))
		return;
	for (i = map_hash(m, key); slot_key(slot_at(m, i)) != key; i = (i + 1) & (m->cap - 1))
		;
	/* shift later members of the cluster back so lookups never meet a hole early */
	for (j = (i + 1) & (m->cap - 1); slot_used(slot_at(m, j)); j = (j + 1) & (m->cap - 1)) {
		size_t home = map_hash(m, slot_key(slot_at(m, j)));

		/* j may move to i only if its home is not in (i, j] (cyclically) */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			memcpy(slot_at(m, i), slot_at(m, j), m->vsize + 16);
			i = j;
		}
	}
	slot_at(m, i)[0] = 0;
	m->n--;
}

void u64map__free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- the accounting rules ---- */

static void cell_add(struct tl_state *st, unsigned cls, unsigned slot, __u64 bytes)
{
	st->cur[cls][slot].count++;
	st->cur[cls][slot].bytes += bytes;
	st->total_bufs++;
	st->total_bytes += bytes;
}

/* Never below zero: a divergence (lost events) must not wrap the counters. */
static bool cell_sub(struct tl_state *st, unsigned cls, unsigned slot, __u64 bytes)
{
	struct infl_cell *c = &st->cur[cls][slot];

	if (!c->count || c->bytes < bytes || !st->total_bufs || st->total_bytes < bytes)
		return false;
	c->count--;
	c->bytes -= bytes;
	st->total_bufs--;
	st->total_bytes -= bytes;
	return true;
}

static bool holds_nothing(const struct tl_owner *o)
{
	for (int c = 0; c < INFL_CLASSES; c++)
		if (o->held[c].count)
			return false;
	return true;
}

static struct tl_owner *owner_create(struct tl_replay *rp, __u64 owner, __u64 ts)
{
	bool created;
	struct tl_owner *o = u64map__put(&rp->owners, owner, &created);

	if (!o) {
		rp->oom = true;
		return NULL;
	}
	if (created) {
		o->slot = INFL_SLOT_NONE;
		o->kind = INFL_SLOT_NONE;
		o->entered = ts;
		o->born = ts;
		o->life = rp->nlives++;
		rp->st.owners[INFL_SLOT_NONE]++;
		if (rp->hooks && rp->hooks->life_new)
			rp->hooks->life_new(rp->hook_ctx, owner, o, ts);
	}
	return o;
}

/* kernel owner_retire(): in a terminal stage and holding nothing -> done, forgotten */
static void owner_retire(struct tl_replay *rp, __u64 owner, struct tl_owner *o, __u64 ts)
{
	if (o->slot >= INFL_MAX_STAGES || !(rp->terminal_mask & (1u << o->slot)) ||
	    !holds_nothing(o))
		return;
	if (rp->st.owners[o->slot])
		rp->st.owners[o->slot]--;
	if (rp->hooks && rp->hooks->life_retire)
		rp->hooks->life_retire(rp->hook_ctx, owner, o, ts);
	u64map__del(&rp->owners, owner);
}

/* libcuda's pointers are not the program's buffer ids: a table of their own (the kernel's
 * INFL_SPACE_*; a VMM handle and a pointer share it, their values never meet in practice) */
static struct u64map *bufs_of(struct tl_replay *rp, const struct infl_event *ev)
{
	return ev->id >= INFL_MAX_CLASSES ? &rp->cuda_bufs : &rp->bufs;
}

/* splitmix64's finalizer: every bit of the input moves every bit of the key */
static __u64 mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

__u64 tl_aside__key(__u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	return mix64(mix64(mix64(mix64(buf) ^ bytes) ^ owner) ^ cls);
}

static bool aside_is(const struct tl_aside *a, __u64 buf, const struct tl_buf *b)
{
	return a->buf == buf && a->b.cls == b->cls && a->b.bytes == b->bytes &&
	       a->b.owner == b->owner && a->b.staged == b->staged;
}

/* The live record `b` of `buf`, replaced by a double alloc (dup_free), set aside still
 * counted: false when it cannot be (out of memory, or another buffer under its key: then
 * it goes at once, earlier than the kernel's, and the replay says it diverged). */
static bool set_aside(struct tl_replay *rp, __u64 buf, const struct tl_buf *b)
{
	bool created;
	struct tl_aside *a = u64map__put(&rp->aside, tl_aside__key(buf, b->cls, b->bytes,
								  b->owner), &created);

	if (!a) {
		rp->oom = true;
		return false;
	}
	if (created) {
		a->buf = buf;
		a->b = *b;
	} else if (!aside_is(a, buf, b)) {
		rp->diverged++;
		return false;
	}
	a->n++;
	return true;
}

/* The buffer a free with INFL_EVF_DUP names (its id, class, bytes and owner), taken from
 * those set aside; false when none is. */
static bool take_aside(struct tl_replay *rp, const struct infl_event *ev, struct tl_buf *out)
{
	__u64 key = tl_aside__key(ev->arg0, ev->id, ev->arg1, ev->arg2);
	struct tl_aside *a = u64map__get(&rp->aside, key);

	if (!a || a->buf != ev->arg0 || a->b.cls != ev->id || a->b.bytes != ev->arg1 ||
	    a->b.owner != ev->arg2)
		return false;
	*out = a->b;
	if (!--a->n)
		u64map__del(&rp->aside, key);
	return true;
}

static void apply_alloc(struct tl_replay *rp, const struct infl_event *ev)
{
	struct tl_owner *o = NULL;
	struct tl_buf *b;
	bool created;
	unsigned slot;

	if (ev->flags & INFL_EVF_REJECTED)
		return;
	/* UNTRACKED: the buffer table was full, the kernel counted nothing; UNSTAGED: the
	 * owner table was, the buffer counts in no stage */
	if (ev->flags & INFL_EVF_UNTRACKED)
		return;
	if (ev->arg2 && !(ev->flags & INFL_EVF_UNSTAGED))
		o = owner_create(rp, ev->arg2, rp->st.ts);
	b = u64map__put(bufs_of(rp, ev), ev->arg0, &created);
	if (!b) {
		rp->oom = true;
		return;
	}
	/* a live buffer allocated again: since 1.6 the kernel counts the old one out at a place
	 * of its own after this one (a free with INFL_EVF_DUP), so it stays counted until then */
	if (!created && !(rp->dup_free && (ev->flags & INFL_EVF_DUP) &&
			  set_aside(rp, ev->arg0, b))) {
		/* before 1.6 the kernel replaced the record at once; with no INFL_EVF_DUP it had
		 * none (the free was lost): the old one goes now */
		struct tl_owner *old_o = b->staged ? u64map__get(&rp->owners, b->owner) : NULL;
		unsigned old_slot = old_o ? old_o->slot : INFL_SLOT_NONE;

		if (old_o) {
			old_o->held[b->cls].count--;
			old_o->held[b->cls].bytes -= b->bytes;
		}
		if (!cell_sub(&rp->st, b->cls, old_slot, b->bytes))
			rp->diverged++;
	}
	slot = o ? o->slot : INFL_SLOT_NONE;
	if (slot != ev->from_slot)
		rp->diverged++;
	b->bytes = ev->arg1;
	b->owner = ev->arg2;
	b->cls = ev->id;
	b->staged = o != NULL;
	if (o) {
		o->held[ev->id].count++;
		o->held[ev->id].bytes += ev->arg1;
	}
	cell_add(&rp->st, ev->id, slot, ev->arg1);
}

/* A buffer's record out: its owner's holding and the cell of its owner's slot. */
static void count_out(struct tl_replay *rp, const struct infl_event *ev, const struct tl_buf *rec)
{
	struct tl_owner *o = rec->staged ? u64map__get(&rp->owners, rec->owner) : NULL;
	unsigned slot = o ? o->slot : INFL_SLOT_NONE;

	if (slot != ev->from_slot)
		rp->diverged++;
	if (o) {
		o->held[rec->cls].count--;
		o->held[rec->cls].bytes -= rec->bytes;
	}
	if (!cell_sub(&rp->st, rec->cls, slot, rec->bytes))
		rp->diverged++;
	if (o)
		owner_retire(rp, rec->owner, o, rp->st.ts);
}

static void apply_free(struct tl_replay *rp, const struct infl_event *ev)
{
	struct tl_owner *o = NULL;
	struct tl_buf *b, rec;

	if (ev->flags & (INFL_EVF_REJECTED | INFL_EVF_UNMATCHED))
		return;
	b = u64map__get(bufs_of(rp, ev), ev->arg0);
	if (rp->dup_free && (ev->flags & INFL_EVF_DUP)) {
		/* the buffer a double alloc replaced: the one it set aside; else the live record
		 * when it is that buffer (the alloc was not counted after all, INFL_EVF_UNTRACKED,
		 * or a dump's carried state has only the replaced one), never the live one
		 * that replaced it */
		if (take_aside(rp, ev, &rec)) {
			count_out(rp, ev, &rec);
			return;
		}
		if (b && (b->cls != ev->id || b->bytes != ev->arg1 || b->owner != ev->arg2))
			b = NULL;
	}
	if (!b) {
		/* its alloc was lost: trust the kernel's slot and the recorded size */
		rp->diverged++;
		if (!cell_sub(&rp->st, ev->id, ev->from_slot, ev->arg1))
			return;
		o = ev->from_slot < INFL_SLOT_NONE ? u64map__get(&rp->owners, ev->arg2) : NULL;
		if (o && o->held[ev->id].count) {
			o->held[ev->id].count--;
			o->held[ev->id].bytes -= ev->arg1;
			owner_retire(rp, ev->arg2, o, rp->st.ts);
		}
		return;
	}
	rec = *b;
	u64map__del(bufs_of(rp, ev), ev->arg0);
	count_out(rp, ev, &rec);
}

static void apply_stage(struct tl_replay *rp, const struct infl_event *ev)
{
	unsigned stage = ev->id, from;
	struct tl_owner *o;
	bool created;

	if (ev->flags & (INFL_EVF_REJECTED | INFL_EVF_UNTRACKED))
		return;
	created = !u64map__get(&rp->owners, ev->arg0);
	o = owner_create(rp, ev->arg0, rp->st.ts);
	if (!o)
		return;
	from = o->slot;
	if (from != ev->from_slot)
		rp->diverged++;
	if (o->kind == INFL_SLOT_NONE) {
		o->kind = stage;
		o->born_early = created && !(rp->entry_mask & (1u << stage));
	}
	if (rp->hooks && rp->hooks->stage_change)
		rp->hooks->stage_change(rp->hook_ctx, ev->arg0, o, from, stage, o->entered,
					rp->st.ts, created);
	for (int c = 0; c < INFL_CLASSES; c++) {
		struct infl_cell h = o->held[c], *src = &rp->st.cur[c][from];

		if (!h.count)
			continue;
		/* after lost events the owner may claim more than its stage holds: move what
		 * is there, never wrap below zero (the figures are marked approximate) */
		if (src->count < h.count || src->bytes < h.bytes) {
			rp->diverged++;
			h.count = h.count < src->count ? h.count : src->count;
			h.bytes = h.bytes < src->bytes ? h.bytes : src->bytes;
		}
		src->count -= h.count;
		src->bytes -= h.bytes;
		rp->st.cur[c][stage].count += h.count;
		rp->st.cur[c][stage].bytes += h.bytes;
	}
	if (rp->st.owners[from])
		rp->st.owners[from]--;
	rp->st.owners[stage]++;
	o->slot = stage;
	o->entered = rp->st.ts;
	owner_retire(rp, ev->arg0, o, rp->st.ts);
}

void tl_replay__apply(struct tl_replay *rp, const struct infl_event *ev)
{
	/* time never runs backwards in a timeline, whatever a clock said: every time below is
	 * this clamped one */
	if (ev->ts_ns > rp->st.ts)
		rp->st.ts = ev->ts_ns;
	switch (ev->type) {
	case INFL_EV_ALLOC:
		if (ev->id < INFL_CLASSES && ev->from_slot < INFL_SLOTS)
			apply_alloc(rp, ev);
		break;
	case INFL_EV_FREE:
		if (ev->id < INFL_CLASSES && ev->from_slot < INFL_SLOTS)
			apply_free(rp, ev);
		break;
	case INFL_EV_STAGE:
		if (ev->id < INFL_MAX_STAGES)
			apply_stage(rp, ev);
		break;
	default:
		break; /* RSS and exit change no accounting */
	}
}

struct tl_replay *tl_replay__new(__u16 entry_mask, __u16 terminal_mask, bool dup_free,
				 const struct tl_hooks *hooks, void *ctx)
{
	struct tl_replay *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->bufs.vsize = sizeof(struct tl_buf);
	rp->cuda_bufs.vsize = sizeof(struct tl_buf);
	rp->aside.vsize = sizeof(struct tl_aside);
	rp->dup_free = dup_free;
	rp->owners.vsize = sizeof(struct tl_owner);
	rp->entry_mask = entry_mask;
	rp->terminal_mask = terminal_mask;
	rp->hooks = hooks;
	rp->hook_ctx = ctx;
	return rp;
}

void tl_replay__free(struct tl_replay *rp)
{
	if (!rp)
		return;
	u64map__free(&rp->bufs);
	u64map__free(&rp->cuda_bufs);
	u64map__free(&rp->aside);
	u64map__free(&rp->owners);
	free(rp);
}

void tl_replay__owners(struct tl_replay *rp, void (*fn)(void *ctx, __u64 owner,
							 struct tl_owner *o), void *ctx)
{
	for (size_t i = 0; i < rp->owners.cap; i++) {
		unsigned char *s = slot_at(&rp->owners, i);

		if (slot_used(s))
			fn(ctx, slot_key(s), (struct tl_owner *)(s + 16));
	}
}

/* ---- accounting order ---- */

static bool accounting(const struct infl_event *ev)
{
	return ev->type <= INFL_EV_STAGE;
}

/* x before y in the kernel's order */
static bool before(const struct tl_oitem *x, const struct tl_oitem *y)
{
	if (x->ev.seq != y->ev.seq)
		return x->ev.seq < y->ev.seq;
	if (accounting(&x->ev) != accounting(&y->ev))
		return accounting(&x->ev);
	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns;
	return x->arrival < y->arrival;
}

int tl_order__push(struct tl_order *o, const struct infl_event *ev)
{
	struct tl_oitem *v;
	size_t i;

	v = grow_array(o->v, &o->cap, o->n, sizeof(*o->v));
	if (!v)
		return -ENOMEM;
	o->v = v;
	i = o->n++;
	o->v[i].ev = *ev;
	o->v[i].arrival = o->arrivals++;
	while (i && before(&o->v[i], &o->v[(i - 1) / 2])) {
		struct tl_oitem t = o->v[i];

		o->v[i] = o->v[(i - 1) / 2];
		o->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return 0;
}

bool tl_order__pop(struct tl_order *o, bool flush, struct infl_event *out)
{
	const struct infl_event *top;
	size_t i = 0;

	if (!o->n)
		return false;
	top = &o->v[0].ev;
	/* due: the next in seq (an accounting event), or what follows the last one released */
	if (!flush && o->n <= TL_ORDER_WINDOW &&
	    (accounting(top) ? top->seq > o->last_acct + 1 : top->seq > o->last_acct))
		return false;
	*out = *top;
	if (accounting(out)) {
		if (out->seq <= o->last_acct && o->last_acct)
			o->late++;
		if (out->seq > o->last_acct)
			o->last_acct = out->seq;
	}
	o->v[0] = o->v[--o->n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= o->n)
			break;
		if (c + 1 < o->n && before(&o->v[c + 1], &o->v[c]))
			c++;
		if (!before(&o->v[c], &o->v[i]))
			break;
		struct tl_oitem t = o->v[i];

		o->v[i] = o->v[c];
		o->v[c] = t;
		i = c;
	}
	return true;
}

void tl_order__free(struct tl_order *o)
{
	free(o->v);
	memset(o, 0, sizeof(*o));
}
