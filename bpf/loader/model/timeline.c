// SPDX-License-Identifier: BSD-2-Clause
/*
 * Builds the timeline of a recording in one walk over its records: each process's events
 * are put back in accounting order (timeline_replay.h's tl_order) and replayed as they come,
 * collecting the exact peak, each class's and stage's peak, memory x time, dwell,
 * completions, anomalies, losses and RSS; then offers queries on the result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/figures.h"
#include "model/timeline.h"
#include "model/timeline_replay.h"
#include "recording/rec_format.h"
#include "util/grow.h"

#define RSS_RING 64 /* recent samples kept to find the one at a new tracked peak */

/* One RSS series (kernel, or /proc statm) while the walk goes on. */
struct rss_track {
	__u64 n, peak, peak_ts, last, last_ts, tracked_at_peak;
	__u64 at_peak, at_peak_ts; /* the latest sample at or before the tracked peak */
	bool at_peak_set;
	__u64 ring_ts[RSS_RING], ring_v[RSS_RING];
	unsigned ring_n;
};

/* A process while the walk goes on. */
struct pbuild {
	struct tl_proc p;
	struct tl_replay *rp;
	struct tl_order ord;
	__u64 prev_seq;
	__u64 carried_left; /* carried events still to come (a dump's starting state) */
	struct infl_event last_carried; /* the latest of them: where its state's peaks stand */
	__u64 carried_missing; /* announced and never seen (a damaged dump): not exact */
	struct rss_track kern, statm;
};

struct build {
	struct timeline *tl;
	struct recording *rec;
	struct pbuild *pb;
	size_t n, cap;
	size_t last;
	bool oom;
};

static bool accounting(const struct infl_event *ev)
{
	return ev->type <= INFL_EV_STAGE;
}

static struct pbuild *pbuild_of(struct build *b, __u32 pid)
{
	struct pbuild *pb;

	if (b->last < b->n && b->pb[b->last].p.pid == pid)
		return &b->pb[b->last];
	for (size_t i = 0; i < b->n; i++) {
		if (b->pb[i].p.pid == pid) {
			b->last = i;
			return &b->pb[i];
		}
	}
	pb = grow_array(b->pb, &b->cap, b->n, sizeof(*b->pb));
	if (!pb)
		return NULL;
	b->pb = pb;
	pb = &b->pb[b->n];
	memset(pb, 0, sizeof(*pb));
	pb->p.pid = pid;
	pb->p.comm = "";
	pb->p.cmdline = "";
	pb->p.rec = b->rec;
	pb->p.entry_mask = b->rec->names.entry_mask;
	pb->p.terminal_mask = b->rec->names.terminal_mask;
	pb->rp = tl_replay__new(pb->p.entry_mask, pb->p.terminal_mask,
				recording__dup_free(b->rec), NULL, NULL);
	if (!pb->rp)
		return NULL;
	{
		/* a dump begins mid-run: its seq numbers start after the carried state's */
		const struct rec_start *st = recording__start(b->rec, pid);

		if (st) {
			pb->carried_left = st->bufs + st->owners;
			pb->prev_seq = st->seq - pb->carried_left;
			pb->p.window_seq = st->seq;
		}
	}
	b->last = b->n++;
	return pb;
}

/* ---- what the replay tells (hooks) ---- */

static unsigned log2_bucket(__u64 ns)
{
	__u64 us = ns / 1000;
	unsigned k = 0;

	while (k < INFL_HIST_SLOTS - 1 && us >> (k + 1))
		k++;
	return k;
}

static void hook_stage_change(void *ctx, __u64 owner, struct tl_owner *o, unsigned from,
			      unsigned to, __u64 entered, __u64 ts, bool created)
{
	struct tl_proc *p = ctx;

	(void)owner;
	if (from < INFL_MAX_STAGES) {
		p->dwell_sum_ns[from] += ts - entered;
		p->dwell_count[from]++;
		p->dwell_hist[from][log2_bucket(ts - entered)]++;
	}
	/* started: its first stage is an entry stage, however it was first seen (a stage or an
	 * alloc, as the kernel counts owners_started) */
	if (from >= INFL_MAX_STAGES && !p->carrying) {
		if (p->entry_mask & (1u << to)) {
			p->started++;
			p->started_by_kind[to]++;
		}
	}
	if (o->born_early && o->kind == to && created && !p->carrying)
		p->born_early++;
}

static void hook_life_new(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts)
{
	struct tl_proc *p = ctx;

	(void)owner;
	(void)o;
	(void)ts;
	p->nlives++;
}

static void hook_life_retire(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts)
{
	struct tl_proc *p = ctx;

	(void)owner;
	(void)ts;
	p->retired++;
	p->retired_by_kind[o->kind < INFL_SLOTS ? o->kind : INFL_SLOT_NONE]++;
}

static const struct tl_hooks build_hooks = {
	.life_new = hook_life_new,
	.stage_change = hook_stage_change,
	.life_retire = hook_life_retire,
};

/* ---- RSS ---- */

static void rss_sample(struct rss_track *t, const struct tl_proc *p, __u64 ts, __u64 v,
		       __u64 tracked)
{
	t->n++;
	t->ring_ts[t->ring_n % RSS_RING] = ts;
	t->ring_v[t->ring_n % RSS_RING] = v;
	t->ring_n++;
	if (v > t->peak) {
		t->peak = v;
		t->peak_ts = ts;
		t->tracked_at_peak = tracked;
	}
	if (ts >= t->last_ts) {
		t->last = v;
		t->last_ts = ts;
	}
	if (p->peak_bytes && ts <= p->peak_ts && (!t->at_peak_set || ts >= t->at_peak_ts)) {
		t->at_peak = v;
		t->at_peak_ts = ts;
		t->at_peak_set = true;
	}
}

/* the tracked peak moved to p->peak_ts: the sample then is the latest at or before it */
static void rss_new_peak(struct rss_track *t, const struct tl_proc *p)
{
	unsigned n = t->ring_n < RSS_RING ? t->ring_n : RSS_RING;

	t->at_peak_set = false;
	t->at_peak = 0;
	for (unsigned i = 0; i < n; i++) {
		__u64 ts = t->ring_ts[i];

		if (ts <= p->peak_ts && (!t->at_peak_set || ts >= t->at_peak_ts)) {
			t->at_peak = t->ring_v[i];
			t->at_peak_ts = ts;
			t->at_peak_set = true;
		}
	}
}

/* ---- the replay of one event, in accounting order ---- */

static void integrate(struct tl_proc *p, const struct tl_state *st, __u64 dt)
{
	if (!dt || !st->total_bytes)
		return;
	for (int c = 0; c < INFL_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++)
			if (st->cur[c][s].bytes)
				p->byte_ns[c][s] += (unsigned __int128)st->cur[c][s].bytes * dt;
}

static void count_flags(struct tl_proc *p, const struct infl_event *ev, bool dup_free)
{
	if (ev->flags & INFL_EVF_REJECTED) {
		p->rejected++;
		if (ev->type == INFL_EV_STAGE)
			p->rejected_stage++;
		else
			p->rejected_class++;
	} else if (ev->flags & INFL_EVF_UNTRACKED) {
		p->untracked++;
	} else if (ev->flags & INFL_EVF_UNSTAGED) {
		p->unstaged++;
	}
	/* a double alloc once: since 1.6 the kernel counts it (dup_alloc) as it counts out the
	 * buffer it replaced, the free with INFL_EVF_DUP after it, which follows its alloc even
	 * when that was not tracked after all (INFL_EVF_UNTRACKED, no INFL_EVF_DUP) */
	if ((ev->flags & INFL_EVF_DUP) && !(dup_free && ev->type == INFL_EV_ALLOC))
		p->dups++;
	if (ev->type == INFL_EV_FREE && (ev->flags & INFL_EVF_UNMATCHED) &&
	    (ev->flags & INFL_EVF_DROPPED)) {
		p->untracked_free++; /* its alloc was dropped (full map, lock timeout) */
	} else if (ev->type == INFL_EV_FREE && (ev->flags & INFL_EVF_UNMATCHED) &&
		   (ev->flags & INFL_EVF_DOUBLE)) {
		p->double_free++; /* traced from its start: never live, or no more */
	} else if (ev->type == INFL_EV_FREE && (ev->flags & INFL_EVF_UNMATCHED)) {
		p->unmatched_free++;
		p->unmatched_free_bytes += ev->arg1;
		if (ev->id < INFL_CLASSES) {
			p->unmatched_free_cls[ev->id].count++;
			p->unmatched_free_cls[ev->id].bytes += ev->arg1;
		}
	}
	if (ev->type == INFL_EV_STAGE && (ev->flags & INFL_EVF_UNMATCHED)) {
		p->unmatched_stage++;
		if (ev->id < INFL_MAX_STAGES)
			p->unmatched_stage_by[ev->id]++;
	}
}

static void track_peaks(struct pbuild *b, const struct infl_event *ev)
{
	struct tl_proc *p = &b->p;
	const struct tl_state *st = &b->rp->st;

	if (st->total_bytes > p->peak_bytes) {
		p->peak_bytes = st->total_bytes;
		p->peak_bufs = st->total_bufs;
		p->peak_ts = st->ts;
		p->peak_ev_ts = ev->ts_ns;
		p->peak_seq = ev->seq;
		memcpy(p->peak, st->cur, sizeof(p->peak));
		memcpy(p->peak_owners, st->owners, sizeof(p->peak_owners));
		rss_new_peak(&b->kern, p);
		rss_new_peak(&b->statm, p);
	}
	if (ev->type <= INFL_EV_FREE && ev->id < INFL_CLASSES) {
		__u64 cb = tl_state__class_bytes(st, ev->id);

		if (cb > p->class_peak[ev->id]) {
			p->class_peak[ev->id] = cb;
			p->class_peak_ts[ev->id] = st->ts;
		}
	}
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		if (st->owners[s] > p->owners_peak[s])
			p->owners_peak[s] = st->owners[s];
	}
	if (ev->type <= INFL_EV_STAGE) {
		/* the slots this event can have grown: its own, and a stage move's target */
		unsigned slots[2] = { ev->from_slot, ev->type == INFL_EV_STAGE ? ev->id : ev->from_slot };

		for (int k = 0; k < 2; k++) {
			unsigned s = slots[k];
			__u64 sb;

			if (s >= INFL_SLOTS)
				continue;
			sb = tl_state__slot_bytes(st, s);
			if (sb > p->slot_peak[s]) {
				p->slot_peak[s] = sb;
				p->slot_peak_ts[s] = st->ts;
			}
		}
	}
}

/* Every class's and stage's high-water mark, once a dump's starting state is complete. */
static void track_all_peaks(struct pbuild *b, const struct infl_event *ev)
{
	struct infl_event e = *ev;

	for (unsigned c = 0; c < INFL_CLASSES; c++) {
		e.type = INFL_EV_ALLOC;
		e.id = c;
		e.from_slot = INFL_SLOT_NONE;
		track_peaks(b, &e);
	}
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		e.type = INFL_EV_STAGE;
		e.id = s;
		track_peaks(b, &e);
	}
}

/* A carried event (REC_EVF_CARRIED) builds the state a dump's window began in: it is no
 * probe hit, and the peaks see the state once it is whole, not its parts (the allocs come
 * before the owners' stages). */
static bool apply_carried(struct pbuild *b, const struct infl_event *ev)
{
	struct tl_proc *p = &b->p;

	if (!b->carried_left || !(ev->flags & REC_EVF_CARRIED) ||
	    (ev->type != INFL_EV_ALLOC && ev->type != INFL_EV_STAGE))
		return false;
	if (ev->seq > b->prev_seq)
		b->prev_seq = ev->seq;
	if (!p->first_ts)
		p->first_ts = ev->ts_ns;
	p->carrying = true;
	tl_replay__apply(b->rp, ev);
	p->carrying = false;
	p->last_ts = b->rp->st.ts;
	if (ev->type == INFL_EV_ALLOC)
		p->carried_bufs++;
	else
		p->carried_owners++;
	b->last_carried = *ev;
	if (!--b->carried_left)
		track_all_peaks(b, ev);
	return true;
}

/* A starting state that ended short of what the dump announced (a damaged file: a probe
 * hit came first, or the file ended): the peaks see it as it stands, so that no later
 * figure stands above a peak that missed it, and the events it lacks count as diverged
 * (the timeline is not exact). */
static void carried_cut_short(struct pbuild *b)
{
	if (!b->carried_left)
		return;
	b->carried_missing += b->carried_left;
	b->carried_left = 0;
	if (b->p.carried_bufs || b->p.carried_owners)
		track_all_peaks(b, &b->last_carried);
}

static void apply(struct pbuild *b, const struct infl_event *ev)
{
	struct tl_proc *p = &b->p;
	struct tl_replay *rp = b->rp;
	__u64 now;

	if (apply_carried(b, ev))
		return;
	if (accounting(ev))
		carried_cut_short(b); /* a probe hit after the state, which must be whole by then */
	if (ev->type == INFL_EV_EXIT) {
		p->exited = true;
		p->exit_ts = ev->ts_ns;
	}
	if (accounting(ev)) {
		if (ev->seq > b->prev_seq + 1)
			p->seq_gaps += ev->seq - b->prev_seq - 1;
		if (ev->seq > b->prev_seq)
			b->prev_seq = ev->seq;
		if (!p->first_ts)
			p->first_ts = ev->ts_ns;
	}
	now = ev->ts_ns > rp->st.ts ? ev->ts_ns : rp->st.ts;
	if (rp->st.ts)
		integrate(p, &rp->st, now - rp->st.ts);
	tl_replay__apply(rp, ev);
	if (ev->type == INFL_EV_RSS)
		rss_sample(&b->kern, p, ev->ts_ns, ev->arg0, rp->st.total_bytes);
	if (!accounting(ev))
		return;
	p->last_ts = rp->st.ts;
	/* probe hits: a double alloc's free of the buffer it replaced (1.6) is none */
	if (ev->type < INFL_PROBE__COUNT &&
	    !(rp->dup_free && ev->type == INFL_EV_FREE && (ev->flags & INFL_EVF_DUP)))
		p->events[ev->type]++;
	count_flags(p, ev, rp->dup_free);
	track_peaks(b, ev);
}

static void drain(struct pbuild *b, bool flush)
{
	struct infl_event ev;

	while (tl_order__pop(&b->ord, flush, &ev))
		apply(b, &ev);
}

/* ---- the walk's visitor ---- */

static void on_event(void *ctx, const struct infl_event *ev)
{
	struct build *bd = ctx;
	struct pbuild *b = bd->oom ? NULL : pbuild_of(bd, ev->pid);

	if (!b || tl_order__push(&b->ord, ev)) {
		bd->oom = true;
		return;
	}
	b->p.nev++;
	/* the hooks' context is the process, in bd->pb, which moves as it grows */
	b->rp->hooks = &build_hooks;
	b->rp->hook_ctx = &b->p;
	drain(b, false);
	if (b->rp->oom)
		bd->oom = true;
}

static void on_rss(void *ctx, const struct rec_rss *r)
{
	struct build *bd = ctx;
	struct pbuild *b = bd->oom ? NULL : pbuild_of(bd, r->pid);

	if (!b) {
		bd->oom = true;
		return;
	}
	rss_sample(r->source == REC_RSS_KERNEL ? &b->kern : &b->statm, &b->p, r->mono_ns,
		   r->bytes, b->rp->st.total_bytes);
}

static const struct rec_visitor build_visitor = { .event = on_event, .rss = on_rss };

/* ---- the end of the walk ---- */

/* The process's record as the replay counts it, in the kernel's terms (struct infl_proc),
 * for the figures every output shares. */
static void make_fig(struct tl_proc *p, const struct pbuild *b)
{
	struct infl_proc *f = &p->fig;
	const struct infl_proc *k = p->kernel_final;

	memset(f, 0, sizeof(*f));
	f->seq = b->prev_seq;
	f->first_ns = p->first_ts;
	f->last_ns = p->last_ts;
	f->exited = p->exited || (k && k->exited);
	f->exit_ns = p->exited ? p->exit_ts : k ? k->exit_ns : 0;
	f->total_bytes = p->final.total_bytes;
	f->total_bufs = p->final.total_bufs;
	f->peak_bytes = p->peak_bytes;
	f->peak_bufs = p->peak_bufs;
	f->peak_ns = p->peak_ts;
	f->peak_seq = p->peak_seq;
	memcpy(f->cur, p->final.cur, sizeof(f->cur));
	memcpy(f->peak, p->peak, sizeof(f->peak));
	memcpy(f->owners, p->final.owners, sizeof(f->owners));
	memcpy(f->peak_owners, p->peak_owners, sizeof(f->peak_owners));
	f->owners_started = p->started;
	f->owners_done = p->retired;
	memcpy(f->dwell_hist, p->dwell_hist, sizeof(f->dwell_hist));
	memcpy(f->dwell_sum_ns, p->dwell_sum_ns, sizeof(f->dwell_sum_ns));
	memcpy(f->dwell_count, p->dwell_count, sizeof(f->dwell_count));
	memcpy(f->events, p->events, sizeof(f->events));
	memcpy(f->unmatched_free, p->unmatched_free_cls, sizeof(f->unmatched_free));
	memcpy(f->unmatched_stage, p->unmatched_stage_by, sizeof(f->unmatched_stage));
	f->bad_class = p->rejected_class;
	f->bad_stage = p->rejected_stage;
	f->dup_alloc = p->dups;
	f->buf_map_full = p->untracked;
	f->owner_map_full = p->unstaged;
	f->ring_drops = p->lost_kernel;
	f->double_free = p->double_free;
	f->untracked_free = p->untracked_free;
	/* what no event carries: skipped updates, unreadable arguments, events before the
	 * process had a record; and who the process is (from its start, forked, exec-born) */
	f->lock_timeouts = k ? k->lock_timeouts : 0;
	f->contention_lost = k ? k->contention_lost : 0;
	f->dwell_lost = k ? k->dwell_lost : 0;
	f->owner_races = k ? k->owner_races : 0;
	f->arg_errors = k ? k->arg_errors : 0;
	f->missed_events = k ? k->missed_events : 0;
	/* an event keeps a refused id's low byte; the kernel's final counters the id itself */
	f->bad_class_seen = k ? k->bad_class_seen : 0;
	f->bad_stage_seen = k ? k->bad_stage_seen : 0;
	f->flags = k ? k->flags : 0;
	f->ppid = k ? k->ppid : 0;
	f->rss_total = p->rss_last;
	f->rss_peak = p->rss_peak;
	f->rss_peak_ns = p->rss_peak_ts;
	f->tracked_at_rss_peak = p->tracked_at_rss_peak;
}

static void finish_proc(struct pbuild *b, const struct timeline *tl)
{
	struct tl_proc *p = &b->p;
	const struct rec_proc_info *pi = recording__proc(tl->rec, p->pid);
	const struct rss_track *rs;
	struct tl_replay *rp = b->rp;

	b->rp->hooks = &build_hooks;
	b->rp->hook_ctx = p;
	p->kernel_final = recording__final(tl->rec, p->pid);
	if (recording__oom(tl->rec, p->pid))
		p->oom = recording__oom(tl->rec, p->pid)->k;
	drain(b, true);
	carried_cut_short(b);
	if (pi) {
		p->comm = pi->comm ? pi->comm : "";
		p->cmdline = pi->cmdline ? pi->cmdline : "";
		p->argv = pi->argv;
	}
	for (size_t k = 0; k < tl->rec->nlost; k++) {
		if (tl->rec->lost[k].pid != p->pid)
			continue;
		if (tl->rec->lost[k].kind == REC_LOST_KERNEL)
			p->lost_kernel += tl->rec->lost[k].count;
		else
			p->lost_user += tl->rec->lost[k].count;
	}
	if (p->kernel_final && p->kernel_final->seq > b->prev_seq)
		p->seq_gaps += p->kernel_final->seq - b->prev_seq;
	p->t_end = p->exited ? p->exit_ts : tl->t_end;
	if (p->kernel_final && p->kernel_final->exit_ns)
		p->t_end = p->kernel_final->exit_ns;
	/* a final record's exit after the recording's end is a damaged file's: the time axis
	 * ends where the recording does */
	if (p->t_end > tl->t_end)
		p->t_end = tl->t_end;
	if (p->t_end < rp->st.ts)
		p->t_end = rp->st.ts;
	if (rp->st.ts)
		integrate(p, &rp->st, p->t_end - rp->st.ts);
	p->final = rp->st;
	p->diverged = rp->diverged + b->ord.late + b->carried_missing;
	p->live_at_end = rp->owners.n;
	/* the kernel's figures when there are any (rss_stat sees every change), else statm */
	p->rss_kernel = b->kern.n > 0;
	rs = p->rss_kernel ? &b->kern : &b->statm;
	p->nrss = rs->n;
	p->rss_peak = rs->peak;
	p->rss_peak_ts = rs->peak_ts;
	p->rss_last = rs->last;
	p->rss_at_peak = rs->at_peak;
	p->tracked_at_rss_peak = rs->tracked_at_peak;
	make_fig(p, b);
}

static int pid_cmp(const void *a, const void *b)
{
	const struct tl_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void builds_free(struct build *b)
{
	for (size_t i = 0; i < b->n; i++) {
		tl_replay__free(b->pb[i].rp);
		tl_order__free(&b->pb[i].ord);
	}
	free(b->pb);
}

int timeline__build(struct recording *rec, struct timeline **out, char err[REC_ERR_LEN])
{
	struct timeline *tl = calloc(1, sizeof(*tl));
	struct build b = { .tl = tl, .rec = rec, .last = SIZE_MAX };
	int ret;

	*out = NULL;
	err[0] = 0;
	if (!tl) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	tl->rec = rec;
	ret = recording__scan(rec, &build_visitor, &b, err);
	if (!ret && b.oom) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		ret = -ENOMEM;
	}
	/* every pid the recording mentions, events or not */
	for (size_t i = 0; !ret && i < rec->nprocs + rec->nfinals; i++) {
		__u32 pid = i < rec->nprocs ? rec->procs[i].pid : rec->finals[i - rec->nprocs].pid;

		if (!pbuild_of(&b, pid))
			ret = -ENOMEM;
	}
	if (ret) {
		if (!err[0])
			snprintf(err, REC_ERR_LEN, "%s", strerror(-ret));
		builds_free(&b);
		free(tl);
		return ret;
	}
	tl->t_end = rec->has_end ? rec->end_mono_ns : rec->start_mono_ns;
	if (rec->max_ts > tl->t_end)
		tl->t_end = rec->max_ts;
	tl->procs = calloc(b.n + 1, sizeof(*tl->procs));
	if (!tl->procs) {
		builds_free(&b);
		free(tl);
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	tl->t0 = rec->start_mono_ns;
	for (size_t i = 0; i < b.n; i++) {
		finish_proc(&b.pb[i], tl);
		tl->procs[i] = b.pb[i].p;
		if (b.pb[i].p.first_ts && (!tl->t0_pid || b.pb[i].p.first_ts < tl->t0)) {
			tl->t0 = b.pb[i].p.first_ts;
			tl->t0_pid = b.pb[i].p.pid;
		}
	}
	tl->nprocs = b.n;
	if (tl->nprocs)
		qsort(tl->procs, tl->nprocs, sizeof(*tl->procs), pid_cmp);
	builds_free(&b);
	*out = tl;
	return 0;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->procs);
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
	       !(p->kernel_final && figures__proc_inexact(p->kernel_final));
}

__u64 tl_state__slot_bytes(const struct tl_state *s, unsigned slot)
{
	__u64 sum = 0;

	for (int c = 0; c < INFL_CLASSES; c++)
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
	/* a dump's window began mid-run: the kernel's peak counts when it lies in the window,
	 * owners started and done never (they count from the process's start) */
	bool window = p->window_seq, peak_in = !window || k->peak_seq > p->window_seq;
	/* the kernel's copy of the peak's composition is exact only when it says so; owners
	 * that two threads' hits reached at once follow their own order, which the events'
	 * order may not (bpf/acct.bpf.h): those figures are compared only where they are the
	 * same whatever the order */
	bool composition = peak_in && !k->peak_fuzz, owners = !k->owner_races;

	MISMATCH(peak_in && p->peak_bytes != k->peak_bytes, "peak: replay %llu, kernel %llu",
		 (unsigned long long)p->peak_bytes, (unsigned long long)k->peak_bytes);
	MISMATCH(composition && p->peak_bytes == k->peak_bytes && p->peak_ev_ts != k->peak_ns,
		 "peak time: replay %llu, kernel %llu", (unsigned long long)p->peak_ev_ts,
		 (unsigned long long)k->peak_ns);
	MISMATCH(!window && owners && p->retired != k->owners_done,
		 "owners done: replay %llu, kernel %llu", (unsigned long long)p->retired,
		 (unsigned long long)k->owners_done);
	MISMATCH(!window && owners && p->started != k->owners_started,
		 "owners started: replay %llu, kernel %llu", (unsigned long long)p->started,
		 (unsigned long long)k->owners_started);
	for (int s = 0; s < INFL_SLOTS; s++) {
		MISMATCH(owners && p->final.owners[s] != k->owners[s], "owners in slot %d: replay "
			 "%llu, kernel %llu", s, (unsigned long long)p->final.owners[s],
			 (unsigned long long)k->owners[s]);
		MISMATCH(composition && owners && p->peak_owners[s] != k->peak_owners[s],
			 "owners at peak in slot %d: replay %llu, kernel %llu", s,
			 (unsigned long long)p->peak_owners[s], (unsigned long long)k->peak_owners[s]);
		for (int c = 0; c < INFL_CLASSES; c++) {
			MISMATCH(owners && memcmp(&p->final.cur[c][s], &k->cur[c][s],
						  sizeof(k->cur[c][s])),
				 "class %d slot %d: replay %llu bytes, kernel %llu", c, s,
				 (unsigned long long)p->final.cur[c][s].bytes,
				 (unsigned long long)k->cur[c][s].bytes);
			MISMATCH(composition && owners &&
					 memcmp(&p->peak[c][s], &k->peak[c][s], sizeof(k->peak[c][s])),
				 "peak class %d slot %d: replay %llu bytes, kernel %llu", c, s,
				 (unsigned long long)p->peak[c][s].bytes,
				 (unsigned long long)k->peak[c][s].bytes);
		}
	}
	/* with owners left out, what holds in any order: each class's bytes, all stages */
	for (int c = 0; !owners && c < INFL_CLASSES; c++) {
		__u64 got = 0, want = 0;

		for (int s = 0; s < INFL_SLOTS; s++) {
			got += p->final.cur[c][s].bytes;
			want += k->cur[c][s].bytes;
		}
		MISMATCH(got != want, "class %d: replay %llu bytes, kernel %llu", c,
			 (unsigned long long)got, (unsigned long long)want);
	}
	return n;
}
