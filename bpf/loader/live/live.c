// SPDX-License-Identifier: BSD-2-Clause
/* The per-interval timeline, text (plain or in place) and JSON. See live.h and docs/json.md. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "live/live.h"
#include "model/clock.h"
#include "model/figures.h"
#include "model/proc_facts.h"

#define STAGE_W 11 /* "wait_permit" */
#define CELL_W 10  /* "1234/23.4G" */
#define TEXT_CLASS_COLS 4 /* 11 + 7 + 7 + 10 + 4 * 11 = 79 columns */

/* ANSI sequences of the in-place view: home, erase to the end of the line / the screen */
#define TTY_HOME "\033[H"
#define TTY_CLEAR "\033[2J"
#define TTY_EOL "\033[K"
#define TTY_EOS "\033[J"

struct live {
	struct live_opts opts;
	const struct infl_names *names;
	FILE *out;
	__u64 seen_bytes[INFL_CLASSES]; /* most bytes each class held at once, so far */
	bool seen[INFL_CLASSES];
	__u64 origin;	  /* the clock: the run's first probe event, 0 before one */
	__u32 origin_pid;
	bool labelled;	  /* the clock was named (plain text) */
	bool drawn;	  /* the in-place view has drawn a frame */
	int rows;	  /* lines left on the terminal in the frame being drawn */
	int cut;	  /* lines that did not fit */
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

__u64 live__origin(const struct live *l, __u32 *pid)
{
	*pid = l->origin_pid;
	return l->origin;
}

/* One line of output: in the in-place view, erased to its end and only while it fits. */
static void line(struct live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(struct live *l, const char *fmt, ...)
{
	va_list ap;

	if (l->opts.tty && l->rows <= 1) {
		l->cut++;
		return;
	}
	va_start(ap, fmt);
	vfprintf(l->out, fmt, ap);
	va_end(ap);
	if (l->opts.tty) {
		fputs(TTY_EOL, l->out);
		l->rows--;
	}
	fputc('\n', l->out);
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

/*
 * `name` in w columns, cut with a `~` where it does not fit. A name qualified by its image
 * (libgpu.so:kbuf) keeps what tells it apart: its own name whole, and as much of the image's
 * as fits, without the "lib" and ".so" every library has (gpu:kbuf, gp~:kbuf).
 */
static const char *fit(char *buf, size_t len, const char *name, int w)
{
	const char *colon = strchr(name, ':');
	int nlen, llen;

	if ((int)strlen(name) <= w)
		return name;
	nlen = colon ? (int)strlen(colon + 1) : 0;
	if (colon && nlen + 2 < w) {
		const char *label = name, *end = colon, *so = strstr(name, ".so");

		if (!strncmp(label, "lib", 3) && label + 3 < end)
			label += 3;
		if (so && so < end && so > label)
			end = so;
		llen = (int)(end - label);
		if (llen + 1 + nlen <= w)
			snprintf(buf, len, "%.*s:%s", llen, label, colon + 1);
		else
			snprintf(buf, len, "%.*s~:%s", w - nlen - 2, label, colon + 1);
		return buf;
	}
	snprintf(buf, len, "%.*s~", w - 1, colon ? colon + 1 : name);
	return buf;
}

/* Which classes get a column: all of them when they fit (or --wide), else the ones that
 * held the most so far (stable from one interval to the next), the rest in "other". */
static int pick_columns(const struct live *l, int cols[INFL_CLASSES], bool *other)
{
	int present = 0, n = 0;
	bool pick[INFL_CLASSES] = { false };

	for (int c = 0; c < INFL_CLASSES; c++)
		present += l->seen[c];
	*other = !l->opts.wide && present > TEXT_CLASS_COLS;
	if (!*other) {
		for (int c = 0; c < INFL_CLASSES; c++)
			if (l->seen[c])
				cols[n++] = c;
		return n;
	}
	for (int k = 0; k < TEXT_CLASS_COLS - 1; k++) {
		int best = -1;

		for (int c = 0; c < INFL_CLASSES; c++)
			if (l->seen[c] && !pick[c] &&
			    (best < 0 || l->seen_bytes[c] > l->seen_bytes[best]))
				best = c;
		pick[best] = true;
	}
	for (int c = 0; c < INFL_CLASSES; c++)
		if (pick[c])
			cols[n++] = c;
	return n;
}

static void text_row(struct live *l, const char *label, __u64 owners, struct infl_cell all,
		     const struct infl_cell *by_cls, const int *cols, int ncols, bool other)
{
	char name[STAGE_W + 1], b[FMT_LEN], cb[2 * FMT_LEN], row[256];
	struct infl_cell rest = all;
	int o;

	o = snprintf(row, sizeof(row), "%-*s %6llu %6llu %9s", STAGE_W,
		     fit(name, sizeof(name), label, STAGE_W), (unsigned long long)owners,
		     (unsigned long long)all.count, all.count || all.bytes ? fmt_bytes(b, all.bytes) : "0");
	for (int k = 0; k < ncols && o < (int)sizeof(row); k++) {
		struct infl_cell x = by_cls[cols[k]];

		o += snprintf(row + o, sizeof(row) - o, " %*s", CELL_W, cell_text(cb, x));
		rest.count -= x.count;
		rest.bytes -= x.bytes;
	}
	if (other && o < (int)sizeof(row))
		snprintf(row + o, sizeof(row) - o, " %*s", CELL_W, cell_text(cb, rest));
	line(l, "%s", row);
}

static double rel_s(const struct live *l, __u64 t)
{
	return clock__rel_s(t, l->origin);
}

static void text_proc(struct live *l, const struct proc_snapshot *ps, __u64 now)
{
	const struct infl_proc *p = &ps->st;
	struct composition_totals t;
	int cols[INFL_CLASSES], ncols, o;
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN], name[CELL_W + 1], row[256];
	bool other;

	figures__composition_totals(p->cur, p->owners, &t);
	ncols = pick_columns(l, cols, &other);

	o = snprintf(row, sizeof(row), "pid %u  +%.2fs  tracked %s", ps->pid, rel_s(l, now),
		     fmt_bytes(b1, t.all.bytes));
	if (p->rss_total)
		snprintf(row + o, sizeof(row) - o, "  rss %s  untracked %s",
			 fmt_bytes(b2, p->rss_total),
			 fmt_bytes(b3, p->rss_total > t.all.bytes ? p->rss_total - t.all.bytes : 0));
	else
		snprintf(row + o, sizeof(row) - o, "  rss %s", l->rss_off ? "off" : "unknown");
	line(l, "%s", row);

	o = snprintf(row, sizeof(row), "%-*s %6s %6s %9s", STAGE_W, "stage", "owners", "bufs",
		     "bytes");
	for (int k = 0; k < ncols; k++)
		o += snprintf(row + o, sizeof(row) - o, " %*s", CELL_W,
			      fit(name, sizeof(name), names__cls(l->names, cols[k]), CELL_W));
	if (other)
		snprintf(row + o, sizeof(row) - o, " %*s", CELL_W, "other");
	line(l, "%s", row);

	for (int s = 0; s < INFL_SLOTS; s++) {
		struct infl_cell by_cls[INFL_CLASSES];

		if (!figures__composition_row_shown(&t, p->owners, s))
			continue;
		for (int c = 0; c < INFL_CLASSES; c++)
			by_cls[c] = p->cur[c][s];
		text_row(l, names__stage(l->names, s), p->owners[s], t.slot[s], by_cls, cols, ncols,
			 other);
	}
	text_row(l, "total", t.owners, t.all, t.cls, cols, ncols, other);

	o = snprintf(row, sizeof(row), "peak %s", fmt_bytes(b1, p->peak_bytes));
	if (p->peak_bytes)
		o += snprintf(row + o, sizeof(row) - o, " at +%.2fs", rel_s(l, p->peak_ns));
	o += snprintf(row + o, sizeof(row) - o, "  probe events %llu",
		      (unsigned long long)(p->events[INFL_PROBE_ALLOC] + p->events[INFL_PROBE_FREE] +
					   p->events[INFL_PROBE_STAGE]));
	if (figures__proc_inexact(p))
		o += snprintf(row + o, sizeof(row) - o, "  INEXACT (see summary)");
	snprintf(row + o, sizeof(row) - o, "%s", ps->oom.ns ? "  OOM-KILLED" : p->exited ? "  exited" : "");
	line(l, "%s", row);
	if (ps->oom.ns) {
		char oom[160];

		line(l, "  %s", proc_facts__oom_text(oom, sizeof(oom), &ps->oom, l->origin));
	}
	line(l, "%s", "");
}

static void json_proc(struct live *l, struct json *j, const struct proc_snapshot *ps)
{
	const struct infl_proc *p = &ps->st;

	json_obj(j);
	json_kv_u64(j, "pid", ps->pid);
	json_kv_bool(j, "exited", p->exited);
	json_kv_u64(j, "tracked_bytes", p->total_bytes);
	json_kv_u64(j, "tracked_bufs", p->total_bufs);
	json_kv_opt_u64(j, "rss_bytes", p->rss_total, p->rss_total);
	json_kv_opt_u64(j, "untracked_bytes", p->rss_total,
			p->rss_total > p->total_bytes ? p->rss_total - p->total_bytes : 0);
	/* the same keys as the summary's peak */
	json_key(j, "peak");
	json_obj(j);
	json_kv_u64(j, "bytes", p->peak_bytes);
	json_kv_u64(j, "bufs", p->peak_bufs);
	json_kv_opt_f64(j, "time_s", p->peak_bytes, rel_s(l, p->peak_ns), 6);
	json_kv_u64(j, "seq", p->peak_seq);
	json_obj_end(j);
	json_key(j, "events");
	json_obj(j);
	json_kv_u64(j, "buf_alloc", p->events[INFL_PROBE_ALLOC]);
	json_kv_u64(j, "buf_free", p->events[INFL_PROBE_FREE]);
	json_kv_u64(j, "stage", p->events[INFL_PROBE_STAGE]);
	json_obj_end(j);
	json_kv_bool(j, "exact", !figures__proc_inexact(p));
	proc_facts__oom_json(j, &ps->oom, l->origin);
	figures__json_composition(j, p->cur, p->owners, l->names);
	json_obj_end(j);
}

static void print_json(struct live *l, const struct snapshot *snap)
{
	struct json j;

	json_init(&j, l->out);
	json_obj(&j);
	json_kv_u64(&j, "schema", INFL_JSON_SCHEMA);
	json_kv_str(&j, "type", "interval");
	clock__json(&j, l->origin, l->origin_pid);
	json_kv_opt_f64(&j, "time_s", l->origin, rel_s(l, snap->mono_ns), 6);
	json_kv_u64(&j, "torn", snap->torn);
	json_kv_u64(&j, "procs_map_full", snap->procs_map_full);
	json_kv_opt_str(&j, "rss_off", snap->rss_off);
	json_key(&j, "processes");
	json_arr(&j);
	for (int i = 0; i < snap->nprocs; i++)
		json_proc(l, &j, &snap->procs[i]);
	json_arr_end(&j);
	json_obj_end(&j);
	json_end_line(&j);
}

static int tty_rows(const struct live *l)
{
	struct winsize ws;

	/* stdout may be a cookie stream (infl_track_stdout) without a descriptor of its own */
	if (ioctl(l->out == stdout ? STDOUT_FILENO : fileno(l->out), TIOCGWINSZ, &ws) ||
	    ws.ws_row < 5)
		return 24;
	return ws.ws_row;
}

static void note_seen(struct live *l, const struct snapshot *snap)
{
	__u32 pid;
	__u64 o = clock__origin(snap, &pid);

	if (o && (!l->origin || o < l->origin)) {
		l->origin = o;
		l->origin_pid = pid;
	}
	l->rss_off = snap->rss_off;
	/* classes seen so far decide the columns; update before rendering */
	for (int i = 0; i < snap->nprocs; i++) {
		const struct infl_proc *p = &snap->procs[i].st;

		for (int c = 0; c < INFL_CLASSES; c++) {
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
}

void live__print(struct live *l, const struct snapshot *snap)
{
	char b[FMT_LEN];

	note_seen(l, snap);
	if (l->opts.json) {
		print_json(l, snap);
		return;
	}
	if (l->opts.tty) {
		/* one screen, redrawn in place: clear it once, then home and overwrite */
		fputs(l->drawn ? TTY_HOME : TTY_CLEAR TTY_HOME, l->out);
		l->drawn = true;
		l->rows = tty_rows(l);
		l->cut = 0;
		if (l->origin)
			line(l, "inflight  every %s  times: seconds since the first probe event "
			     "(pid %u)", fmt_duration(b, l->opts.interval_ns), l->origin_pid);
		else
			line(l, "inflight  every %s", fmt_duration(b, l->opts.interval_ns));
		line(l, "%s", "");
	} else if (!l->labelled && l->origin) {
		fprintf(l->out, "inflight: times are seconds since the first probe event (pid %u)\n",
			l->origin_pid);
		l->labelled = true;
	}
	/* processes that hit probes and ended are left out of the view: nothing runs now */
	if (!snap->nprocs)
		line(l, "%s", l->origin ? "no traced process is running now"
				      : "no traced process has hit a probe yet");
	for (int i = 0; i < snap->nprocs; i++)
		text_proc(l, &snap->procs[i], snap->mono_ns);
	if (snap->procs_map_full)
		line(l, "%llu events of processes beyond --max-procs were not counted",
		     (unsigned long long)snap->procs_map_full);
	if (l->opts.tty) {
		if (l->cut) {
			l->rows = 2;
			line(l, "... %d more lines: a taller terminal shows them", l->cut);
		}
		fputs(TTY_EOS, l->out);
	} else if (!snap->nprocs || snap->procs_map_full) {
		fputc('\n', l->out);
	}
	fflush(l->out);
}
