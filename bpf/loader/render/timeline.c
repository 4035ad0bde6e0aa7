// SPDX-License-Identifier: BSD-2-Clause
/*
 * Builds the timeline of a recording: groups events per process in accounting order,
 * replays them once collecting owners' lives and stage slices, the exact peak, each class's
 * peak, memory x time and losses; then offers queries on the result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "live/figures.h"
#include "recording/rec_format.h"
#include "render/timeline.h"
#include "render/timeline_replay.h"

#define NO_SLICE UINT32_MAX

struct build {
	struct tl_proc *p;
	__u32 *open_slice; /* per life: its slice still open, NO_SLICE when none */
	size_t cap_lives, cap_slices;
	bool oom;
};

static bool accounting(const struct infl_event *ev)
{
	return ev->type <= INFL_EV_STAGE;
}

/* pid, then the kernel's order (seq); an RSS or exit event follows the event whose seq it
 * carries; then time, for ties among those */
static int ev_cmp(const void *a, const void *b)
{
	const struct infl_event *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (accounting(x) != accounting(y))
		return accounting(x) ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return 0;
}

static __u32 hook_life_new(void *ctx, __u64 owner, __u64 ts)
{
	struct build *b = ctx;
	struct tl_proc *p = b->p;

	if (p->nlives == b->cap_lives) {
		size_t cap = b->cap_lives ? b->cap_lives * 2 : 64;
		struct tl_life *l = realloc(p->lives, cap * sizeof(*l));
		__u32 *o = realloc(b->open_slice, cap * sizeof(*o));

		if (l)
			p->lives = l;
		if (o)
			b->open_slice = o;
		if (!l || !o) {
			b->oom = true;
			return 0;
		}
		b->cap_lives = cap;
	}
	memset(&p->lives[p->nlives], 0, sizeof(p->lives[0]));
	p->lives[p->nlives].owner = owner;
	p->lives[p->nlives].t0 = ts;
	p->lives[p->nlives].kind = INFL_SLOT_NONE;
	b->open_slice[p->nlives] = NO_SLICE;
	return p->nlives++;
}

static void close_slice(struct build *b, __u32 life, __u64 ts)
{
	__u32 s = b->open_slice[life];

	if (s == NO_SLICE)
		return;
	b->p->slices[s].t1 = ts;
	b->open_slice[life] = NO_SLICE;
}

static void hook_stage_change(void *ctx, __u32 life, unsigned from, unsigned to, __u64 entered,
			      __u64 ts, bool created)
{
	struct build *b = ctx;
	struct tl_proc *p = b->p;
	struct tl_life *l;
	struct tl_slice *s;

	if (b->oom || life >= p->nlives)
		return;
	l = &p->lives[life];
	if (from < INFL_MAX_STAGES) {
		p->dwell_sum_ns[from] += ts - entered;
		p->dwell_count[from]++;
	}
	close_slice(b, life, ts);
	if (l->kind == INFL_SLOT_NONE)
		l->kind = to;
	if (created) {
		if (p->entry_mask & (1u << to))
			p->started++;
		else
			l->born_early = true;
	}
	if (p->nslices == b->cap_slices) {
		size_t cap = b->cap_slices ? b->cap_slices * 2 : 256;
		struct tl_slice *n = realloc(p->slices, cap * sizeof(*n));

		if (!n) {
			b->oom = true;
			return;
		}
		p->slices = n;
		b->cap_slices = cap;
	}
	s = &p->slices[p->nslices];
	memset(s, 0, sizeof(*s));
	s->t0 = ts;
	s->life = life;
	s->stage = to;
	b->open_slice[life] = p->nslices++;
}

static void hook_life_retire(void *ctx, __u32 life, __u64 ts)
{
	struct build *b = ctx;
	struct tl_proc *p = b->p;
	__u32 s;

	if (b->oom || life >= p->nlives)
		return;
	s = b->open_slice[life];
	close_slice(b, life, ts);
	/* retiring on entering the terminal stage leaves an empty slice: not worth a bar */
	if (s != NO_SLICE && s == p->nslices - 1 && p->slices[s].t0 == ts)
		p->nslices--;
	p->lives[life].retired = true;
	p->lives[life].t1 = ts;
	p->retired++;
	p->retired_by_kind[p->lives[life].kind < INFL_SLOTS ? p->lives[life].kind : INFL_SLOT_NONE]++;
}

static const struct tl_hooks build_hooks = {
	.life_new = hook_life_new,
	.stage_change = hook_stage_change,
	.life_retire = hook_life_retire,
};

static void integrate(struct tl_proc *p, const struct tl_state *st, __u64 dt)
{
	if (!dt || !st->total_bytes)
		return;
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++)
			if (st->cur[c][s].bytes)
				p->byte_ns[c][s] += (unsigned __int128)st->cur[c][s].bytes * dt;
}

static int slice_cmp(const void *a, const void *b)
{
	const struct tl_slice *x = a, *y = b;

	if (x->life != y->life)
		return x->life < y->life ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return 0;
}

static int rss_cmp(const void *a, const void *b)
{
	const struct tl_rss *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int collect_rss(struct tl_proc *p, const struct recording *rec)
{
	size_t n = 0, kernel = 0;

	for (size_t i = 0; i < p->nev; i++)
		kernel += p->ev[i].type == INFL_EV_RSS;
	for (size_t i = 0; i < rec->nrss; i++)
		if (rec->rss[i].pid == p->pid)
			kernel += rec->rss[i].source == REC_RSS_KERNEL;
	p->rss = calloc(p->nev + rec->nrss + 1, sizeof(*p->rss));
	if (!p->rss)
		return -ENOMEM;
	/* the kernel's figures when there are any (rss_stat sees every change), else statm */
	for (size_t i = 0; kernel && i < p->nev; i++)
		if (p->ev[i].type == INFL_EV_RSS)
			p->rss[n++] = (struct tl_rss){ p->ev[i].ts_ns, p->ev[i].arg0 };
	for (size_t i = 0; i < rec->nrss; i++) {
		const struct rec_rss *r = &rec->rss[i];

		if (r->pid == p->pid && (r->source == REC_RSS_KERNEL) == (kernel > 0))
			p->rss[n++] = (struct tl_rss){ r->mono_ns, r->bytes };
	}
	p->nrss = n;
	if (n)
		qsort(p->rss, n, sizeof(*p->rss), rss_cmp);
	for (size_t i = 0; i < n; i++) {
		if (p->rss[i].bytes > p->rss_peak) {
			p->rss_peak = p->rss[i].bytes;
			p->rss_peak_ts = p->rss[i].ts;
		}
	}
	return 0;
}

static int replay_proc(struct tl_proc *p, const struct timeline *tl)
{
	struct build b = { .p = p };
	struct tl_replay *rp = tl_replay__new(p->terminal_mask, &build_hooks, &b);
	__u64 prev_seq = 0, now;
	int err = 0;

	if (!rp)
		return -ENOMEM;
	p->t_end = tl->t_end;
	for (size_t i = 0; i < p->nev; i++) {
		const struct infl_event *ev = &p->ev[i];

		if (ev->type == INFL_EV_EXIT)
			p->t_end = ev->ts_ns;
		if (!accounting(ev))
			continue;
		if (ev->seq > prev_seq + 1)
			p->seq_gaps += ev->seq - prev_seq - 1;
		if (ev->seq > prev_seq)
			prev_seq = ev->seq;
		if (!p->first_ts)
			p->first_ts = ev->ts_ns;
	}
	if (p->kernel_final && p->kernel_final->seq > prev_seq)
		p->seq_gaps += p->kernel_final->seq - prev_seq;
	if (p->kernel_final && p->kernel_final->exit_ns)
		p->t_end = p->kernel_final->exit_ns;
	for (size_t i = 0; i < p->nev && !b.oom && !rp->oom; i++) {
		const struct infl_event *ev = &p->ev[i];

		now = ev->ts_ns > rp->st.ts ? ev->ts_ns : rp->st.ts;
		if (rp->st.ts)
			integrate(p, &rp->st, now - rp->st.ts);
		tl_replay__apply(rp, ev);
		if (!accounting(ev))
			continue;
		p->last_ts = rp->st.ts;
		if (ev->flags & INFL_EVF_REJECTED)
			p->rejected++;
		else if (ev->flags & (INFL_EVF_UNTRACKED | INFL_EVF_UNSTAGED))
			p->untracked++;
		if (ev->flags & INFL_EVF_DUP)
			p->dups++;
		if (ev->type == INFL_EV_FREE && (ev->flags & INFL_EVF_UNMATCHED)) {
			p->unmatched_free++;
			p->unmatched_free_bytes += ev->arg1;
		}
		if (ev->type == INFL_EV_STAGE && (ev->flags & INFL_EVF_UNMATCHED))
			p->unmatched_stage++;
		if (rp->st.total_bytes > p->peak_bytes) {
			p->peak_bytes = rp->st.total_bytes;
			p->peak_bufs = rp->st.total_bufs;
			p->peak_ts = rp->st.ts;
			p->peak_seq = ev->seq;
			memcpy(p->peak, rp->st.cur, sizeof(p->peak));
			memcpy(p->peak_owners, rp->st.owners, sizeof(p->peak_owners));
		}
		if (ev->type <= INFL_EV_FREE && ev->id < INFL_MAX_CLASSES) {
			__u64 cb = tl_state__class_bytes(&rp->st, ev->id);

			if (cb > p->class_peak[ev->id]) {
				p->class_peak[ev->id] = cb;
				p->class_peak_ts[ev->id] = rp->st.ts;
			}
		}
	}
	if (p->t_end < rp->st.ts)
		p->t_end = rp->st.ts;
	if (rp->st.ts)
		integrate(p, &rp->st, p->t_end - rp->st.ts);
	p->final = rp->st;
	p->diverged = rp->diverged;
	if (b.oom || rp->oom)
		err = -ENOMEM;
	/* stays still open at the end: their stage held them until the recording stopped */
	for (size_t l = 0; !err && l < p->nlives; l++) {
		if (b.open_slice[l] != NO_SLICE) {
			p->slices[b.open_slice[l]].t1 = p->t_end;
			p->slices[b.open_slice[l]].open = true;
		}
		if (!p->lives[l].retired)
			p->lives[l].t1 = p->t_end;
	}
	if (!err) {
		if (p->nslices) /* qsort's pointer must be valid even for no elements */
			qsort(p->slices, p->nslices, sizeof(*p->slices), slice_cmp);
		for (size_t s = p->nslices; s-- > 0;) {
			struct tl_life *l = &p->lives[p->slices[s].life];

			l->first_slice = s;
			l->nslices++;
		}
	}
	free(b.open_slice);
	tl_replay__free(rp);
	return err;
}

static struct tl_proc *proc_add(struct timeline *tl, size_t *cap, __u32 pid)
{
	for (size_t i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].pid == pid)
			return &tl->procs[i];
	if (tl->nprocs == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct tl_proc *n = realloc(tl->procs, ncap * sizeof(*n));

		if (!n)
			return NULL;
		tl->procs = n;
		*cap = ncap;
	}
	memset(&tl->procs[tl->nprocs], 0, sizeof(tl->procs[0]));
	tl->procs[tl->nprocs].pid = pid;
	tl->procs[tl->nprocs].comm = "";
	return &tl->procs[tl->nprocs++];
}

static int pid_cmp(const void *a, const void *b)
{
	const struct tl_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int timeline__build(const struct recording *rec, struct timeline **out)
{
	struct timeline *tl = calloc(1, sizeof(*tl));
	struct infl_event *sorted = NULL;
	size_t cap = 0;
	int err = -ENOMEM;

	*out = NULL;
	if (!tl)
		return -ENOMEM;
	tl->rec = rec;
	tl->t0 = rec->start_mono_ns;
	tl->t_end = rec->has_end ? rec->end_mono_ns : rec->start_mono_ns;
	for (size_t i = 0; i < rec->nevents; i++)
		if (rec->events[i].ts_ns > tl->t_end)
			tl->t_end = rec->events[i].ts_ns;
	for (size_t i = 0; i < rec->nsnaps; i++)
		if (rec->snaps[i].mono_ns > tl->t_end)
			tl->t_end = rec->snaps[i].mono_ns;
	/* every pid the recording mentions, events or not */
	for (size_t i = 0; i < rec->nprocs; i++)
		if (!proc_add(tl, &cap, rec->procs[i].pid))
			goto fail;
	for (size_t i = 0; i < rec->nfinals; i++)
		if (!proc_add(tl, &cap, rec->finals[i].pid))
			goto fail;
	sorted = malloc((rec->nevents + 1) * sizeof(*sorted));
	if (!sorted)
		goto fail;
	if (rec->nevents)
		memcpy(sorted, rec->events, rec->nevents * sizeof(*sorted));
	if (rec->nevents)
		qsort(sorted, rec->nevents, sizeof(*sorted), ev_cmp);
	for (size_t i = 0; i < rec->nevents;) {
		size_t j = i;
		struct tl_proc *p;

		while (j < rec->nevents && sorted[j].pid == sorted[i].pid)
			j++;
		p = proc_add(tl, &cap, sorted[i].pid);
		if (!p)
			goto fail;
		p->ev = sorted + i;
		p->nev = j - i;
		i = j;
	}
	if (tl->nprocs)
		qsort(tl->procs, tl->nprocs, sizeof(*tl->procs), pid_cmp);
	/* the first process owns the sorted array: events of pid order start with it */
	for (size_t i = 0; i < tl->nprocs; i++) {
		struct tl_proc *p = &tl->procs[i];

		for (size_t k = 0; k < rec->nprocs; k++)
			if (rec->procs[k].pid == p->pid && rec->procs[k].comm)
				p->comm = rec->procs[k].comm;
		p->kernel_final = recording__final(rec, p->pid);
		p->entry_mask = rec->names.entry_mask;
		p->terminal_mask = rec->names.terminal_mask;
		for (size_t k = 0; k < rec->nlost; k++) {
			if (rec->lost[k].pid != p->pid)
				continue;
			if (rec->lost[k].kind == REC_LOST_KERNEL)
				p->lost_kernel += rec->lost[k].count;
			else
				p->lost_user += rec->lost[k].count;
		}
		err = replay_proc(p, tl);
		if (!err)
			err = collect_rss(p, rec);
		if (err)
			goto fail;
	}
	tl->events = sorted;
	*out = tl;
	return 0;
fail:
	tl->events = sorted;
	timeline__free(tl);
	return err;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nprocs; i++) {
		free(tl->procs[i].lives);
		free(tl->procs[i].slices);
		free(tl->procs[i].rss);
	}
	free(tl->procs);
	free(tl->events);
	free(tl);
}

const struct tl_proc *timeline__proc(const struct timeline *tl, __u32 pid)
{
	for (size_t i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].pid == pid)
			return &tl->procs[i];
	return NULL;
}

const struct tl_proc *timeline__primary(const struct timeline *tl)
{
	const struct tl_proc *best = timeline__proc(tl, tl->rec->target_pid);

	if (best && best->nev)
		return best;
	for (size_t i = 0; i < tl->nprocs; i++)
		if (!best || tl->procs[i].peak_bytes > best->peak_bytes ||
		    (!best->nev && tl->procs[i].nev))
			best = &tl->procs[i];
	return best;
}

bool tl_proc__exact(const struct tl_proc *p)
{
	return !p->seq_gaps && !p->lost_kernel && !p->lost_user && !p->diverged &&
	       !(p->kernel_final && proc_inexact(p->kernel_final));
}

__u64 tl_state__slot_bytes(const struct tl_state *s, unsigned slot)
{
	__u64 sum = 0;

	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		sum += s->cur[c][slot].bytes;
	return sum;
}

__u64 tl_state__class_bytes(const struct tl_state *s, unsigned cls)
{
	__u64 sum = 0;

	for (int sl = 0; sl < INFL_SLOTS; sl++)
		sum += s->cur[cls][sl].bytes;
	return sum;
}

__u64 tl_proc__rss_at(const struct tl_proc *p, __u64 ts)
{
	size_t lo = 0, hi = p->nrss;

	/* the last sample with ts <= t */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->rss[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? p->rss[lo - 1].bytes : 0;
}

#define MISMATCH(cond, ...)                                                                    \
	do {                                                                                   \
		if (cond) {                                                                    \
			if (!n++)                                                              \
				snprintf(what, len, __VA_ARGS__);                              \
		}                                                                              \
	} while (0)

int timeline__check(const struct tl_proc *p, char *what, size_t len)
{
	const struct infl_proc *k = p->kernel_final;
	int n = 0;

	if (len)
		what[0] = 0;
	if (!k) {
		snprintf(what, len, "no final counters for pid %u", p->pid);
		return 1;
	}
	MISMATCH(p->final.total_bytes != k->total_bytes, "total bytes: replay %llu, kernel %llu",
		 (unsigned long long)p->final.total_bytes, (unsigned long long)k->total_bytes);
	MISMATCH(p->final.total_bufs != k->total_bufs, "total buffers: replay %llu, kernel %llu",
		 (unsigned long long)p->final.total_bufs, (unsigned long long)k->total_bufs);
	MISMATCH(p->peak_bytes != k->peak_bytes, "peak: replay %llu, kernel %llu",
		 (unsigned long long)p->peak_bytes, (unsigned long long)k->peak_bytes);
	MISMATCH(p->peak_bytes == k->peak_bytes && p->peak_ts != k->peak_ns,
		 "peak time: replay %llu, kernel %llu", (unsigned long long)p->peak_ts,
		 (unsigned long long)k->peak_ns);
	MISMATCH(p->retired != k->owners_done, "owners done: replay %llu, kernel %llu",
		 (unsigned long long)p->retired, (unsigned long long)k->owners_done);
	MISMATCH(p->started != k->owners_started, "owners started: replay %llu, kernel %llu",
		 (unsigned long long)p->started, (unsigned long long)k->owners_started);
	for (int s = 0; s < INFL_SLOTS; s++) {
		MISMATCH(p->final.owners[s] != k->owners[s], "owners in slot %d: replay %llu, "
			 "kernel %llu", s, (unsigned long long)p->final.owners[s],
			 (unsigned long long)k->owners[s]);
		MISMATCH(p->peak_owners[s] != k->peak_owners[s], "owners at peak in slot %d: "
			 "replay %llu, kernel %llu", s, (unsigned long long)p->peak_owners[s],
			 (unsigned long long)k->peak_owners[s]);
		for (int c = 0; c < INFL_MAX_CLASSES; c++) {
			MISMATCH(memcmp(&p->final.cur[c][s], &k->cur[c][s], sizeof(k->cur[c][s])),
				 "class %d slot %d: replay %llu bytes, kernel %llu", c, s,
				 (unsigned long long)p->final.cur[c][s].bytes,
				 (unsigned long long)k->cur[c][s].bytes);
			MISMATCH(memcmp(&p->peak[c][s], &k->peak[c][s], sizeof(k->peak[c][s])),
				 "peak class %d slot %d: replay %llu bytes, kernel %llu", c, s,
				 (unsigned long long)p->peak[c][s].bytes,
				 (unsigned long long)k->peak[c][s].bytes);
		}
	}
	return n;
}
