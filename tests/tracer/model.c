// SPDX-License-Identifier: BSD-2-Clause
/* The reference model: plain arrays and linear searches, clarity over speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

void model_init(struct model *m, __u16 entry_mask, __u16 terminal_mask)
{
	memset(m, 0, sizeof(*m));
	m->entry_mask = entry_mask;
	m->terminal_mask = terminal_mask;
}

void model_from_start(struct model *m)
{
	m->from_start = true;
	m->st.flags |= INFL_PROC_FROM_START;
}

void model_free_all(struct model *m)
{
	free(m->bufs);
	free(m->owners);
	memset(m, 0, sizeof(*m));
}

static struct model_buf *find_buf(struct model *m, __u64 id)
{
	for (size_t i = 0; i < m->nbufs; i++)
		if (m->bufs[i].live && m->bufs[i].id == id)
			return &m->bufs[i];
	return NULL;
}

static struct model_owner *find_owner(struct model *m, __u64 id)
{
	for (size_t i = 0; i < m->nowners; i++)
		if (m->owners[i].live && m->owners[i].id == id)
			return &m->owners[i];
	return NULL;
}

static void *grow(void *arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 64;
	arr = realloc(arr, *cap * size);
	if (!arr)
		abort();
	return arr;
}

static struct model_owner *new_owner(struct model *m, __u64 id)
{
	struct model_owner *o;

	m->owners = grow(m->owners, &m->capowners, m->nowners, sizeof(*o));
	o = &m->owners[m->nowners++];
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->slot = INFL_SLOT_NONE;
	o->live = true;
	m->st.owners[INFL_SLOT_NONE]++;
	return o;
}

static bool holds_nothing(const struct model_owner *o)
{
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (o->held[c].count)
			return false;
	return true;
}

static void maybe_retire(struct model *m, struct model_owner *o)
{
	if (o->slot >= INFL_MAX_STAGES || !(m->terminal_mask & (1u << o->slot)))
		return;
	if (!holds_nothing(o))
		return;
	m->st.owners[o->slot]--;
	m->st.owners_done++;
	o->live = false;
}

static __u32 slot_of(struct model *m, const struct model_buf *b)
{
	struct model_owner *o = b->unstaged ? NULL : find_owner(m, b->owner);

	return o ? o->slot : INFL_SLOT_NONE;
}

static void take(struct model *m, const struct model_buf *b, int sign)
{
	__u32 slot = slot_of(m, b);
	struct model_owner *o = b->unstaged ? NULL : find_owner(m, b->owner);

	if (o) {
		o->held[b->cls].count += sign;
		o->held[b->cls].bytes += sign * (long long)b->bytes;
	}
	m->st.cur[b->cls][slot].count += sign;
	m->st.cur[b->cls][slot].bytes += sign * (long long)b->bytes;
	m->st.total_bufs += sign;
	m->st.total_bytes += sign * (long long)b->bytes;
}

static void peak_check(struct model *m)
{
	if (m->st.total_bytes > m->st.peak_bytes) {
		m->st.peak_bytes = m->st.total_bytes;
		m->st.peak_bufs = m->st.total_bufs;
		m->st.peak_seq = m->st.seq;
		memcpy(m->st.peak, m->st.cur, sizeof(m->st.peak));
		memcpy(m->st.peak_owners, m->st.owners, sizeof(m->st.peak_owners));
	}
}

/* An alloc of a live buffer id (a dup) replaces the live buffer: the new one is in at the
 * alloc's place, the old one out at the place right after it (the kernel's serialization:
 * bpf/inflight.bpf.c, acct_replaced), its owner retired if that left it done. */
void model_alloc(struct model *m, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	struct model_owner *o = NULL, *old_o;
	struct model_buf *b, old = { 0 };
	bool dup;

	m->st.seq++;
	m->st.events[INFL_PROBE_ALLOC]++;
	if (cls >= INFL_MAX_CLASSES) {
		m->st.bad_class++;
		return;
	}
	if (owner) {
		o = find_owner(m, owner);
		if (!o)
			o = new_owner(m, owner);
	}
	b = find_buf(m, buf);
	dup = b != NULL;
	if (dup) {
		old = *b;
	} else {
		m->bufs = grow(m->bufs, &m->capbufs, m->nbufs, sizeof(*b));
		b = &m->bufs[m->nbufs++];
	}
	*b = (struct model_buf){ .id = buf, .owner = owner, .bytes = bytes, .cls = cls,
				 .unstaged = !o, .live = true };
	take(m, b, +1);
	m->st.allocated[cls].count++;
	m->st.allocated[cls].bytes += bytes;
	peak_check(m);
	if (!dup)
		return;
	m->st.seq++;
	m->st.dup_alloc++;
	old_o = old.unstaged ? NULL : find_owner(m, old.owner);
	take(m, &old, -1);
	if (old_o)
		maybe_retire(m, old_o);
}

/* A free names its buffer; the class and size recorded at alloc are what counts (contract:
 * "the tracer uses what it recorded"), even when the free's class id is out of range. */
void model_free(struct model *m, __u64 buf, __u32 cls, __u64 bytes)
{
	struct model_owner *o;
	struct model_buf *b;

	m->st.seq++;
	m->st.events[INFL_PROBE_FREE]++;
	if (cls >= INFL_MAX_CLASSES)
		m->st.bad_class++;
	b = find_buf(m, buf);
	if (!b) {
		if (cls >= INFL_MAX_CLASSES)
			return;
		if (m->from_start) {
			m->st.double_free++; /* never allocated, or freed already */
			return;
		}
		m->st.unmatched_free[cls].count++; /* allocated before the attach */
		m->st.unmatched_free[cls].bytes += bytes;
		return;
	}
	o = b->unstaged ? NULL : find_owner(m, b->owner);
	take(m, b, -1);
	m->st.freed[b->cls].count++;
	m->st.freed[b->cls].bytes += b->bytes;
	b->live = false;
	if (o)
		maybe_retire(m, o);
}

void model_stage(struct model *m, __u64 owner, __u32 stage)
{
	struct model_owner *o;
	__u32 from;

	m->st.seq++;
	m->st.events[INFL_PROBE_STAGE]++;
	if (stage >= INFL_MAX_STAGES) {
		m->st.bad_stage++;
		return;
	}
	if (!owner) {
		m->st.stage_owner0++; /* owner 0 is "no owner": never an owner with a stage */
		return;
	}
	o = find_owner(m, owner);
	if (!o)
		o = new_owner(m, owner);
	/* an owner's first stage (whether it was first seen here or through an alloc) */
	if (o->slot == INFL_SLOT_NONE) {
		if (m->entry_mask & (1u << stage))
			m->st.owners_started++;
		else
			m->st.unmatched_stage[stage]++;
	}
	from = o->slot;
	if (from < INFL_MAX_STAGES)
		m->st.dwell_count[from]++;
	for (int c = 0; c < INFL_MAX_CLASSES; c++) {
		m->st.cur[c][from].count -= o->held[c].count;
		m->st.cur[c][from].bytes -= o->held[c].bytes;
		m->st.cur[c][stage].count += o->held[c].count;
		m->st.cur[c][stage].bytes += o->held[c].bytes;
	}
	m->st.owners[from]--;
	m->st.owners[stage]++;
	o->slot = stage;
	maybe_retire(m, o);
}

bool model_apply_line(struct model *m, const char *line)
{
	unsigned long long a, b, c, d;

	if (sscanf(line, "alloc %lli %lli %lli %lli", &a, &b, &c, &d) == 4)
		model_alloc(m, a, b, c, d);
	else if (sscanf(line, "free %lli %lli %lli", &a, &b, &c) == 3)
		model_free(m, a, b, c);
	else if (sscanf(line, "stage %lli %lli", &a, &b) == 2)
		model_stage(m, a, b);
	else
		return false;
	return true;
}
