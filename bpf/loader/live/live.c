// SPDX-License-Identifier: BSD-2-Clause
/* The per-interval timeline, text and JSON. See live.h and docs/json.md. */
#include <stdlib.h>
#include <string.h>
#include "live/figures.h"
#include "live/live.h"

#define STAGE_W 11 /* "wait_permit" */
#define CELL_W 10  /* "1234/23.4G" */
#define TEXT_CLASS_COLS 4 /* 11 + 7 + 7 + 10 + 4 * 11 = 79 columns */

struct live {
	struct live_opts opts;
	const struct infl_names *names;
	FILE *out;
	__u64 seen_bytes[INFL_MAX_CLASSES]; /* most bytes each class held at once, so far */
	bool seen[INFL_MAX_CLASSES];
	const char *rss_off; /* the snapshot's: why RSS is not followed */
};

struct live *live__new(const struct live_opts *opts, const struct infl_names *names, FILE *out)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->opts = *opts;
	l->names = names;
	l->out = out;
	return l;
}

void live__free(struct live *l)
{
	free(l);
}

static const char *cell_text(char buf[2 * FMT_LEN], struct infl_cell x)
{
	char b[FMT_LEN];

	if (!x.count && !x.bytes)
		return "-";
	snprintf(buf, 2 * FMT_LEN, "%llu/%s", (unsigned long long)x.count,
		 fmt_bytes_short(b, x.bytes));
	return buf;
}

/* A name cut to `w` columns, '~' marking the cut. */
static const char *fit(char *buf, size_t len, const char *name, int w)
{
	if ((int)strlen(name) <= w)
		return name;
	snprintf(buf, len, "%.*s~", w - 1, name);
	return buf;
}

/* Which classes get a column: all of them when they fit (or --wide), else the ones that
 * held the most so far (stable from one interval to the next), the rest in "other". */
static int pick_columns(const struct live *l, int cols[INFL_MAX_CLASSES], bool *other)
{
	int present = 0, n = 0;
	bool pick[INFL_MAX_CLASSES] = { false };

	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		present += l->seen[c];
	*other = !l->opts.wide && present > TEXT_CLASS_COLS;
	if (!*other) {
		for (int c = 0; c < INFL_MAX_CLASSES; c++)
			if (l->seen[c])
				cols[n++] = c;
		return n;
	}
	for (int k = 0; k < TEXT_CLASS_COLS - 1; k++) {
		int best = -1;

		for (int c = 0; c < INFL_MAX_CLASSES; c++)
			if (l->seen[c] && !pick[c] &&
			    (best < 0 || l->seen_bytes[c] > l->seen_bytes[best]))
				best = c;
		pick[best] = true;
	}
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (pick[c])
			cols[n++] = c;
	return n;
}

static void text_row(struct live *l, const char *label, __u64 owners, struct infl_cell all,
		     const struct infl_cell *by_cls, const int *cols, int ncols, bool other)
{
	char name[STAGE_W + 1], b[FMT_LEN], cb[2 * FMT_LEN];
	struct infl_cell rest = all;

	fprintf(l->out, "%-*s %6llu %6llu %9s", STAGE_W, fit(name, sizeof(name), label, STAGE_W),
		(unsigned long long)owners, (unsigned long long)all.count,
		all.count || all.bytes ? fmt_bytes(b, all.bytes) : "0");
	for (int k = 0; k < ncols; k++) {
		struct infl_cell x = by_cls[cols[k]];

		fprintf(l->out, " %*s", CELL_W, cell_text(cb, x));
		rest.count -= x.count;
		rest.bytes -= x.bytes;
	}
	if (other)
		fprintf(l->out, " %*s", CELL_W, cell_text(cb, rest));
	fputc('\n', l->out);
}

/* seconds since the origin; 0 for an instant before it, never "-0.00" */
static double rel_s(__u64 t, __u64 origin)
{
	return t >= origin ? (t - origin) / 1e9 : 0;
}

static void text_proc(struct live *l, const struct proc_snapshot *ps, __u64 now)
{
	const struct infl_proc *p = &ps->st;
	struct composition_totals t;
	int cols[INFL_MAX_CLASSES], ncols;
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN], name[CELL_W + 1];
	bool other;

	composition_totals(p->cur, p->owners, &t);
	ncols = pick_columns(l, cols, &other);

	fprintf(l->out, "pid %u  +%.2fs  tracked %s", ps->pid, rel_s(now, l->opts.start_ns),
		fmt_bytes(b1, t.all.bytes));
	if (p->rss_total)
		fprintf(l->out, "  rss %s  untracked %s", fmt_bytes(b2, p->rss_total),
			fmt_bytes(b3, p->rss_total > t.all.bytes ? p->rss_total - t.all.bytes : 0));
	else
		fprintf(l->out, "  rss %s", l->rss_off ? "off" : "unknown");
	fputc('\n', l->out);

	fprintf(l->out, "%-*s %6s %6s %9s", STAGE_W, "stage", "owners", "bufs", "bytes");
	for (int k = 0; k < ncols; k++)
		fprintf(l->out, " %*s", CELL_W,
			fit(name, sizeof(name), names__cls(l->names, cols[k]), CELL_W));
	if (other)
		fprintf(l->out, " %*s", CELL_W, "other");
	fputc('\n', l->out);

	for (int s = 0; s < INFL_SLOTS; s++) {
		struct infl_cell by_cls[INFL_MAX_CLASSES];

		if (!composition_row_shown(&t, p->owners, s))
			continue;
		for (int c = 0; c < INFL_MAX_CLASSES; c++)
			by_cls[c] = p->cur[c][s];
		text_row(l, names__stage(l->names, s), p->owners[s], t.slot[s], by_cls, cols, ncols,
			 other);
	}
	text_row(l, "total", t.owners, t.all, t.cls, cols, ncols, other);

	fprintf(l->out, "peak %s", fmt_bytes(b1, p->peak_bytes));
	if (p->peak_bytes)
		fprintf(l->out, " at +%.2fs", rel_s(p->peak_ns, l->opts.start_ns));
	fprintf(l->out, "  events %llu",
		(unsigned long long)(p->events[INFL_PROBE_ALLOC] + p->events[INFL_PROBE_FREE] +
				     p->events[INFL_PROBE_STAGE]));
	if (proc_inexact(p))
		fprintf(l->out, "  INEXACT (see summary)");
	fprintf(l->out, "%s\n\n", p->exited ? "  exited" : "");
}

static void json_proc(struct live *l, struct json *j, const struct proc_snapshot *ps)
{
	const struct infl_proc *p = &ps->st;

	json_obj(j);
	json_kv_u64(j, "pid", ps->pid);
	json_kv_bool(j, "exited", p->exited);
	json_kv_u64(j, "tracked_bytes", p->total_bytes);
	json_kv_u64(j, "tracked_bufs", p->total_bufs);
	json_key(j, "rss_bytes");
	if (p->rss_total)
		json_u64(j, p->rss_total);
	else
		json_null(j);
	json_key(j, "untracked_bytes");
	if (p->rss_total)
		json_u64(j, p->rss_total > p->total_bytes ? p->rss_total - p->total_bytes : 0);
	else
		json_null(j);
	json_kv_u64(j, "peak_bytes", p->peak_bytes);
	json_key(j, "peak_time_s");
	if (p->peak_bytes)
		json_f64(j, rel_s(p->peak_ns, l->opts.start_ns), 6);
	else
		json_null(j);
	json_key(j, "events");
	json_obj(j);
	json_kv_u64(j, "buf_alloc", p->events[INFL_PROBE_ALLOC]);
	json_kv_u64(j, "buf_free", p->events[INFL_PROBE_FREE]);
	json_kv_u64(j, "stage", p->events[INFL_PROBE_STAGE]);
	json_obj_end(j);
	json_kv_bool(j, "exact", !proc_inexact(p));
	json_composition(j, p->cur, p->owners, l->names);
	json_obj_end(j);
}

void live__print(struct live *l, const struct snapshot *snap)
{
	if (!l->opts.start_ns)
		l->opts.start_ns = snap->mono_ns;
	l->rss_off = snap->rss_off;
	/* classes seen so far decide the columns; update before rendering */
	for (int i = 0; i < snap->nprocs; i++) {
		const struct infl_proc *p = &snap->procs[i].st;

		for (int c = 0; c < INFL_MAX_CLASSES; c++) {
			__u64 bytes = 0, count = 0;

			for (int s = 0; s < INFL_SLOTS; s++) {
				bytes += p->cur[c][s].bytes;
				count += p->cur[c][s].count;
			}
			if (count || bytes)
				l->seen[c] = true;
			if (bytes > l->seen_bytes[c])
				l->seen_bytes[c] = bytes;
		}
	}
	if (l->opts.json) {
		struct json j;

		json_init(&j, l->out);
		json_obj(&j);
		json_kv_str(&j, "type", "interval");
		json_kv_f64(&j, "time_s", rel_s(snap->mono_ns, l->opts.start_ns), 6);
		json_kv_u64(&j, "torn", snap->torn);
		json_kv_u64(&j, "procs_map_full", snap->procs_map_full);
		json_key(&j, "rss_off");
		if (snap->rss_off)
			json_str(&j, snap->rss_off);
		else
			json_null(&j);
		json_key(&j, "procs");
		json_arr(&j);
		for (int i = 0; i < snap->nprocs; i++)
			json_proc(l, &j, &snap->procs[i]);
		json_arr_end(&j);
		json_obj_end(&j);
		json_end_line(&j);
		return;
	}
	if (!snap->nprocs)
		fprintf(l->out, "+%.2fs  no traced process has hit a probe yet\n\n",
			rel_s(snap->mono_ns, l->opts.start_ns));
	for (int i = 0; i < snap->nprocs; i++)
		text_proc(l, &snap->procs[i], snap->mono_ns);
	if (snap->procs_map_full)
		fprintf(l->out, "%llu events of processes beyond --max-procs were not counted\n\n",
			(unsigned long long)snap->procs_map_full);
	fflush(l->out);
}
