// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format chrome`: Chrome Trace Event JSON (the object form, one event per line)
 * for Perfetto, chrome://tracing and speedscope. Timestamps are integer microseconds since
 * the run's first probe event (the report's clock), so that slices that follow each other
 * meet exactly and never overlap. Per traced process:
 *   - counter tracks ("C"): bytes by class, bytes by stage, owners by stage, rss, sampled
 *     once per microsecond with changes (after every event of it); a run with more such
 *     instants than COUNTER_BUDGET is sampled per bucket instead, at the instant of each
 *     bucket's largest total (otherData says so), the exact peak always included;
 *   - one thread per stage with complete slices ("X") "N in STAGE" for each run of time the
 *     stage had N > 0 owners: siblings, never nested (speedscope shows one profile per
 *     stage; the time spent at each N is each name's weight);
 *   - the owners' stages on a bounded set of lanes: owners are grouped by kind (the stage
 *     they entered first: partitions, proof jobs, ...), and each owner takes the lowest lane
 *     of its kind free before it started; a slice per stage it went through (args: owner,
 *     life). Lanes are as many as owners of a kind were alive at once, not one per owner;
 *   - the peak as an instant event with its composition; process and thread names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "render/render.h"
#include "model/timeline_replay.h"

#define STAGE_TID_BASE 100   /* tid of the lane of stage s: STAGE_TID_BASE + s */
#define OWNER_TID_BASE 10000 /* owners of kind k, lane j: OWNER_TID_BASE * (k + 1) + j */
#define MAX_LANES 4096	     /* lanes per kind; more owners alive at once share the last */
#define COUNTER_BUDGET 100000 /* counter samples per process before sampling per bucket */
#define LIFE_BUDGET 20000     /* owner lives drawn per process before 1 in k is drawn */

struct chrome {
	FILE *f;
	const struct timeline *tl;
	const struct tl_proc *p;
	bool first;
	/* lanes: per kind, when each lane is free again (us), and how many exist */
	__s64 *lane_free[INFL_SLOTS];
	__u32 nlanes[INFL_SLOTS];
	/* stage occupancy: since when the stage has had `count` owners */
	__s64 occ_since[INFL_MAX_STAGES];
	__u64 occ_count[INFL_MAX_STAGES];
	/* the counters last written */
	__u64 last_cls[INFL_CLASSES], last_slot[INFL_SLOTS], last_own[INFL_SLOTS];
	bool counters_out;
	__u64 last_rss;
	bool rss_out;
	__s64 rss_us;
	__u32 life_every; /* draw the owners whose life number is a multiple of it */
	int err;
};

static void ev_begin(struct chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
}

/* the report's clock in whole microseconds, never before 0 */
static __s64 us(const struct chrome *c, __u64 ns)
{
	return ns > c->tl->t0 ? (__s64)((ns - c->tl->t0) / 1000) : 0;
}

static void meta(struct chrome *c, const char *what, __u32 tid, const char *name, int sort)
{
	ev_begin(c);
	fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
		what, c->p->pid, tid);
	fmt_json_str(c->f, name);
	fputs("}}", c->f);
	if (sort >= 0) {
		ev_begin(c);
		fprintf(c->f, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"sort_index\":%d}}", c->p->pid, tid, sort);
	}
}

static void slice(struct chrome *c, __u32 tid, const char *cat, const char *name, __s64 t0,
		  __s64 t1, const char *args)
{
	ev_begin(c);
	fprintf(c->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	fmt_json_str(c->f, name);
	fprintf(c->f, ",\"pid\":%u,\"tid\":%u,\"ts\":%lld,\"dur\":%lld,\"args\":{%s}}", c->p->pid,
		tid, (long long)t0, (long long)(t1 - t0), args);
}

/* ---- owners on lanes (replay hooks) ---- */

static __u32 lane_take(struct chrome *c, unsigned kind, __s64 t)
{
	__u32 j;

	for (j = 0; j < c->nlanes[kind]; j++)
		if (c->lane_free[kind][j] < t) /* strictly: slices of two owners never meet */
			break;
	if (j == c->nlanes[kind]) {
		if (j == MAX_LANES) {
			j = MAX_LANES - 1;
		} else {
			__s64 *n = realloc(c->lane_free[kind], (j + 1) * sizeof(*n));

			if (!n) {
				c->err = -ENOMEM;
				return 0;
			}
			c->lane_free[kind] = n;
			c->nlanes[kind]++;
		}
	}
	c->lane_free[kind][j] = INT64_MAX;
	return j;
}

static __u32 lane_tid(unsigned kind, __u32 lane)
{
	return OWNER_TID_BASE * (kind + 1) + lane;
}

/* the owner's stay in `stage` from `since` to `ts`, on its lane (0 us long when shorter) */
static void stay(struct chrome *c, __u64 owner, const struct tl_owner *o, unsigned stage,
		 __u64 since, __u64 ts)
{
	char args[96];
	__s64 t0 = us(c, since), t1 = us(c, ts);

	if (stage >= INFL_MAX_STAGES || o->kind >= INFL_SLOTS || o->life % c->life_every)
		return;
	snprintf(args, sizeof(args), "\"owner\":\"0x%" PRIx64 "\",\"life\":%u", (uint64_t)owner,
		 o->life);
	slice(c, lane_tid(o->kind, o->lane), "owner", names__stage(&c->tl->rec->names, stage),
	      t0, t1 > t0 ? t1 : t0, args);
}

static void hook_stage(void *ctx, __u64 owner, struct tl_owner *o, unsigned from, unsigned to,
		       __u64 entered, __u64 ts, bool created)
{
	struct chrome *c = ctx;

	(void)created;
	(void)entered;
	if (from >= INFL_MAX_STAGES) {
		if (!(o->life % c->life_every))
			o->lane = lane_take(c, o->kind, us(c, ts));
		o->mark = ts;
		return;
	}
	/* a stage event into the stage it is in continues the stay: two slices of one name
	 * that meet would read as nested in speedscope */
	if (to == from)
		return;
	stay(c, owner, o, from, o->mark, ts);
	o->mark = ts;
}

static void hook_retire(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts)
{
	struct chrome *c = ctx;

	/* retired on entering its terminal stage: that stay has no length, no slice */
	if (o->slot < INFL_MAX_STAGES && o->mark != ts)
		stay(c, owner, o, o->slot, o->mark, ts);
	if (o->kind < INFL_SLOTS && o->lane < c->nlanes[o->kind] && !(o->life % c->life_every))
		c->lane_free[o->kind][o->lane] = us(c, ts);
}

static const struct tl_hooks lane_hooks = { .stage_change = hook_stage,
					    .life_retire = hook_retire };

struct end_ctx {
	struct chrome *c;
	__u64 t_end;
};

static void close_open(void *ctx, __u64 owner, struct tl_owner *o)
{
	struct end_ctx *e = ctx;

	if (o->slot < INFL_MAX_STAGES)
		stay(e->c, owner, o, o->slot, o->mark, e->t_end);
}

/* ---- counters and stage occupancy ---- */

static void counter(struct chrome *c, const char *name, __s64 t, const __u64 *v, __u32 mask,
		    bool by_stage)
{
	const struct infl_names *nm = &c->tl->rec->names;
	bool first = true;

	ev_begin(c);
	fprintf(c->f, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%u,\"tid\":0,\"ts\":%lld,\"args\":{",
		name, c->p->pid, (long long)t);
	for (unsigned k = 0; k < (by_stage ? INFL_SLOTS : INFL_CLASSES); k++) {
		if (!(mask & (1u << k)))
			continue;
		fputs(first ? "" : ",", c->f);
		fmt_json_str(c->f, by_stage ? names__stage(nm, k) : names__cls(nm, k));
		fprintf(c->f, ":%" PRIu64, (uint64_t)v[k]);
		first = false;
	}
	fputs("}}", c->f);
}

static void counters(struct chrome *c, const struct tl_state *st, __s64 t)
{
	__u32 classes = tl_proc__used_classes(c->p), slots = tl_proc__used_slots(c->p);
	__u64 cls[INFL_CLASSES], slot[INFL_SLOTS];

	for (unsigned k = 0; k < INFL_CLASSES; k++)
		cls[k] = tl_state__class_bytes(st, k);
	for (unsigned s = 0; s < INFL_SLOTS; s++)
		slot[s] = tl_state__slot_bytes(st, s);
	if (!c->counters_out || memcmp(cls, c->last_cls, sizeof(cls)))
		counter(c, "bytes by class", t, cls, classes, false);
	if (!c->counters_out || memcmp(slot, c->last_slot, sizeof(slot)))
		counter(c, "bytes by stage", t, slot, slots, true);
	if (!c->counters_out || memcmp(st->owners, c->last_own, sizeof(c->last_own)))
		counter(c, "owners by stage", t, st->owners, slots, true);
	memcpy(c->last_cls, cls, sizeof(cls));
	memcpy(c->last_slot, slot, sizeof(slot));
	memcpy(c->last_own, st->owners, sizeof(c->last_own));
	c->counters_out = true;
}

static void occupancy(struct chrome *c, const __u64 *owners, __s64 t, bool end)
{
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		char name[64], args[48];

		if (!end && owners[s] == c->occ_count[s])
			continue;
		if (c->occ_count[s] && t > c->occ_since[s]) {
			snprintf(name, sizeof(name), "%" PRIu64 " in %s", (uint64_t)c->occ_count[s],
				 names__stage(&c->tl->rec->names, s));
			snprintf(args, sizeof(args), "\"owners\":%" PRIu64, (uint64_t)c->occ_count[s]);
			slice(c, STAGE_TID_BASE + s, "stage", name, c->occ_since[s], t, args);
		}
		if (!end) {
			c->occ_count[s] = owners[s];
			c->occ_since[s] = t;
		}
	}
}

static void on_rss(void *ctx, __u64 ts, __u64 bytes)
{
	struct chrome *c = ctx;
	__s64 t = us(c, ts);

	if (c->rss_out && bytes == c->last_rss)
		return;
	ev_begin(c);
	fprintf(c->f, "{\"ph\":\"C\",\"name\":\"rss\",\"pid\":%u,\"tid\":0,\"ts\":%lld,"
		"\"args\":{\"rss\":%" PRIu64 "}}", c->p->pid, (long long)(t < c->rss_us ? c->rss_us : t),
		(uint64_t)bytes);
	c->rss_us = t < c->rss_us ? c->rss_us : t;
	c->last_rss = bytes;
	c->rss_out = true;
}

/* Walks the process once: lanes from the hooks, counters and occupancy per microsecond
 * (or per bucket of `bucket_us`, at the bucket's largest total). */
static int walk(struct chrome *c, __s64 bucket_us)
{
	const struct tl_proc *p = c->p;
	struct end_ctx e = { c, p->t_end };
	struct tl_cursor cur;
	struct tl_state best;
	int err = tl_cursor__init_hooks(&cur, p, &lane_hooks, on_rss, c);

	if (err)
		return err;
	counters(c, cur.st, 0);
	while (tl_cursor__next_ts(&cur) != UINT64_MAX && !c->err) {
		__s64 t = us(c, tl_cursor__next_ts(&cur));
		__s64 t_end = bucket_us > 1 ? (t / bucket_us + 1) * bucket_us : t + 1;
		__u64 until = c->tl->t0 + (__u64)t_end * 1000;

		bool have = false;

		/* every event of the microsecond (or bucket), then one sample */
		while (tl_cursor__next_ts(&cur) < until) {
			tl_cursor__step(&cur);
			if (!have || cur.st->total_bytes > best.total_bytes) {
				best = *cur.st;
				have = true;
			}
		}
		if (bucket_us <= 1) {
			/* a high that fell again within the microsecond is shown at it, what
			 * followed one microsecond later: no peak hides inside a sample */
			if (best.total_bytes > cur.st->total_bytes) {
				__u64 nx = tl_cursor__next_ts(&cur);

				counters(c, &best, t);
				if (nx == UINT64_MAX || us(c, nx) > t + 1)
					counters(c, cur.st, t + 1);
			} else {
				counters(c, cur.st, t);
			}
			occupancy(c, cur.st->owners, t, false);
		} else {
			/* the bucket's largest total, at its own instant (the peak's included) */
			counters(c, &best, us(c, best.ts));
			occupancy(c, best.owners, us(c, best.ts), false);
		}
	}
	tl_cursor__rss_drain(&cur);
	occupancy(c, c->occ_count, us(c, p->t_end), true);
	tl_replay__owners(cur.rp, close_open, &e);
	err = cur.err ? cur.err : c->err;
	tl_cursor__free(&cur);
	return err;
}

static void peak_event(struct chrome *c)
{
	const struct tl_proc *p = c->p;
	const struct infl_names *nm = &c->tl->rec->names;
	char b[FMT_LEN];
	bool first = true;

	if (!p->peak_bytes)
		return;
	ev_begin(c);
	fprintf(c->f, "{\"ph\":\"i\",\"s\":\"p\",\"name\":\"peak %s\",\"pid\":%u,\"tid\":0,"
		"\"ts\":%lld,\"args\":{\"bytes\":%" PRIu64 ",\"time_s\":%.6f,\"by_stage\":{",
		fmt_bytes(b, p->peak_bytes), p->pid, (long long)us(c, p->peak_ts),
		(uint64_t)p->peak_bytes, render__t(c->tl, p->peak_ts));
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		__u64 v = 0;

		for (unsigned k = 0; k < INFL_CLASSES; k++)
			v += p->peak[k][s].bytes;
		if (!v)
			continue;
		fputs(first ? "" : ",", c->f);
		fmt_json_str(c->f, names__stage(nm, s));
		fprintf(c->f, ":%" PRIu64, (uint64_t)v);
		first = false;
	}
	fputs("}}}", c->f);
}

static void oom_event(struct chrome *c)
{
	const struct tl_proc *p = c->p;

	if (!p->oom.ns)
		return;
	ev_begin(c);
	fprintf(c->f, "{\"ph\":\"i\",\"s\":\"p\",\"name\":\"OOM kill\",\"pid\":%u,\"tid\":0,"
		"\"ts\":%lld,\"args\":{\"time_s\":%.6f,\"tracked_bytes\":%" PRIu64 ",\"tracked_bufs\":%"
		PRIu64 ",\"rss_bytes\":%" PRIu64 "}}", p->pid, (long long)us(c, p->oom.ns),
		render__t(c->tl, p->oom.ns), (uint64_t)p->oom.tracked_bytes,
		(uint64_t)p->oom.tracked_bufs, (uint64_t)p->oom.rss_bytes);
}

static void thread_names(struct chrome *c)
{
	const struct infl_names *nm = &c->tl->rec->names;
	char name[160];

	meta(c, "thread_name", 0, "counters", 0);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		if (!(tl_proc__used_slots(c->p) & (1u << s)))
			continue;
		snprintf(name, sizeof(name), "stage %s", names__stage(nm, s));
		meta(c, "thread_name", STAGE_TID_BASE + s, name, 1 + s);
	}
	for (unsigned k = 0; k < INFL_SLOTS; k++)
		for (__u32 j = 0; j < c->nlanes[k]; j++) {
			snprintf(name, sizeof(name), "owners from %s #%u", names__stage(nm, k), j + 1);
			meta(c, "thread_name", lane_tid(k, j), name, 100 + k * MAX_LANES + j);
		}
}

static int one_process(struct chrome *c)
{
	const struct tl_proc *p = c->p;
	char name[160];
	__s64 bucket = 1;
	int err;

	snprintf(name, sizeof(name), "%s", p->comm[0] ? p->comm : "process");
	meta(c, "process_name", 0, name, -1);
	/* a long run's owners: 1 life in k on the lanes, so the trace stays loadable */
	c->life_every = p->nlives > LIFE_BUDGET ? (__u32)((p->nlives + LIFE_BUDGET - 1) / LIFE_BUDGET) : 1;
	/* the instants with changes are at most the events */
	if (p->nev > COUNTER_BUDGET) {
		__s64 span = us(c, p->t_end);

		bucket = span / COUNTER_BUDGET + 1;
	}
	err = walk(c, bucket);
	thread_names(c);
	peak_event(c);
	oom_event(c);
	if (bucket > 1 || c->life_every > 1) {
		ev_begin(c);
		fprintf(c->f, "{\"ph\":\"M\",\"name\":\"inflight_sampling\",\"pid\":%u,\"tid\":0,"
			"\"args\":{\"counter_bucket_us\":%lld,\"owner_lives_drawn_one_in\":%u}}",
			p->pid, (long long)bucket, c->life_every);
	}
	for (unsigned k = 0; k < INFL_SLOTS; k++)
		free(c->lane_free[k]);
	return err;
}

int render__chrome(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct recording *r = tl->rec;
	size_t n;
	const struct tl_proc **procs = render__procs(tl, o, &n);
	char clock[160];
	int err = 0;

	if (!procs)
		return -ENOMEM;
	snprintf(clock, sizeof(clock), "ts: microseconds since the first probe event of pid %u "
		 "(CLOCK_MONOTONIC %llu ns)", tl->t0_pid, (unsigned long long)tl->t0);
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":", f);
	fmt_json_str(f, r->tool);
	fputs(",\"command\":", f);
	fmt_json_str(f, timeline__command(tl, timeline__primary(tl)));
	fputs(",\"host\":", f);
	fmt_json_str(f, r->host);
	fputs(",\"recording\":", f);
	fmt_json_str(f, o->source ? o->source : "");
	fputs(",\"clock\":", f);
	fmt_json_str(f, clock);
	fputs("},\n\"traceEvents\":[", f);
	{
		struct chrome c = { .f = f, .tl = tl, .first = true };

		for (size_t i = 0; i < n && !err; i++) {
			struct chrome next = { .f = f, .tl = tl, .first = c.first, .p = procs[i] };

			c = next;
			err = one_process(&c);
		}
		/* a trace with no event at all still needs one for viewers to accept it */
		if (c.first)
			fputs("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
			      "\"args\":{\"name\":\"no traced process\"}}", f);
	}
	fputs("\n]}\n", f);
	free(procs);
	return err ? err : render__finish(f);
}
