// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format text`: the recording's facts, then per process a timeline table (one
 * row per step: tracked bytes at its end and the most within it, RSS, owners per stage)
 * and the summary: peak with its composition, memory x time and dwell per stage,
 * completions, late-attach and loss notes, and whether the replay matches the kernel.
 * Under 80 columns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util/fmt.h"
#include "model/figures.h"
#include "model/proc_facts.h"
#include "recording/rec_reader.h"
#include "util/sanitize.h"
#include "render/render.h"

#define MAX_STAGE_COLS 9 /* 9 x 6 columns beside 28 of time and bytes: 82 would be too many */

/* `text` after a label of `indent` columns, escaped (util/sanitize.h) and wrapped between
 * words at 79 columns, never cut */
static void wrapped(FILE *f, const char *label, int indent, const char *raw)
{
	char *text = san_dup(raw ? raw : "");
	size_t len = text ? strlen(text) : 0, at = 0, w = 79 - indent;

	fprintf(f, "%-*s", indent, label);
	if (!len)
		fputc('\n', f);
	while (at < len) {
		size_t cut = len - at <= w ? len - at : w;

		if (at + cut < len) {
			size_t sp = cut;

			while (sp > 0 && text[at + sp] != ' ')
				sp--;
			if (sp > 0)
				cut = sp; /* else a word longer than the line: it goes whole */
			else
				while (at + cut < len && text[at + cut] != ' ')
					cut++;
		}
		fprintf(f, "%*s%.*s\n", at ? indent : 0, "", (int)cut, text + at);
		at += cut;
		while (at < len && text[at] == ' ')
			at++;
	}
	free(text);
}

/* A flight recorder's dump: what triggered it, when, and the window it holds. */
static void print_dump(FILE *f, const struct timeline *tl)
{
	const struct rec_dump *d = &tl->rec->dump;
	char trig[64], detail[256], line[512], b1[FMT_LEN], b2[FMT_LEN];

	snprintf(line, sizeof(line), "dump %llu of a flight recorder: trigger %s (%s) at %+.3f s; "
		 "the window from %+.3f s to %+.3f s (ring %s, then %s after the trigger)",
		 (unsigned long long)d->number, san_str(trig, sizeof(trig), d->trigger),
		 san_str(detail, sizeof(detail), d->detail), render__t(tl, d->trigger_ns),
		 render__t(tl, d->window_ns), render__t(tl, tl->t_end), fmt_duration(b1, d->ring_ns),
		 fmt_duration(b2, d->after_ns));
	wrapped(f, "trigger", 11, line);
	snprintf(line, sizeof(line), "%llu event%s before the window let go by the ring since it "
		 "began; %llu trigger%s refused so far (rate limits)",
		 (unsigned long long)d->evicted_events, fmt_plural(d->evicted_events),
		 (unsigned long long)d->refused, fmt_plural(d->refused));
	wrapped(f, "ring", 11, line);
}

static void print_header(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct recording *r = tl->rec;
	char b1[FMT_LEN], b2[FMT_LEN], when[64] = "?", src[512], host[31];
	time_t secs = r->start_wall_ns / 1000000000ull;
	struct tm tm;

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, "recording  %s (format %u.%u, %s, %zu records%s)\n",
		san_str(src, sizeof(src), o->source ? o->source : "-"), r->format_major,
		r->format_minor,
		fmt_bytes(b1, r->file_bytes), r->nrecords,
		r->cut ? ", cut short" : r->has_end ? "" : ", no end record");
	if (r->cut)
		wrapped(f, "cut", 11, r->cut_why);
	wrapped(f, "command", 11, timeline__command(tl, timeline__primary(tl))[0] ?
		timeline__command(tl, timeline__primary(tl)) : "(none)");
	wrapped(f, "binary", 11, r->binary[0] ? r->binary : "(unknown)");
	fprintf(f, "host       %s   contract %d (%s)\n", san_str(host, sizeof(host), r->host),
		r->names.contract_version,
		r->names.contract_version ? r->names.provider : "numeric names");
	fprintf(f, "recorded   %s for %s\n", when,
		fmt_duration(b2, tl->t_end > r->start_mono_ns ? tl->t_end - r->start_mono_ns : 0));
	if (tl->t0_pid)
		fprintf(f, "clock      t = 0 s is the first probe event (pid %u), %.3f s after\n"
			"           the recording started; every time below is on this clock\n",
			tl->t0_pid, tl->t0 > r->start_mono_ns ? (tl->t0 - r->start_mono_ns) / 1e9 : 0);
	if (r->has_dump)
		print_dump(f, tl);
}

#define COL_W 6	    /* a count column: a space and 5 digits */

/*
 * The header of `lead` (lead_w columns) and one COL_W column per name, whole: when a name is
 * wider than its column, the names go on staggered lines, right-aligned to their column's
 * end, as many lines as the longest name needs for the names of one line not to meet (two
 * for names of up to 11 letters, more for names qualified by their image).
 */
static void col_headers(FILE *f, const char *lead, int lead_w, const char *const *names, int n)
{
	char line[INFL_NAME_LEN / COL_W + 1][512];
	int width = lead_w + n * COL_W, lines = 1;

	for (int i = 0; i < n; i++) {
		int len = (int)strlen(names[i]), need = (len + COL_W) / COL_W;

		lines = need > lines ? need : lines;
	}
	if (width >= (int)sizeof(line[0]) || lines > (int)(sizeof(line) / sizeof(line[0])))
		return;
	memset(line, ' ', sizeof(line));
	memcpy(line[lines - 1], lead, strlen(lead));
	for (int i = 0; i < n; i++) {
		int len = (int)strlen(names[i]), end = lead_w + (i + 1) * COL_W;
		int k = i % lines; /* names on one line are `lines` columns apart */

		memcpy(line[k] + end - len, names[i], len);
	}
	for (int k = 0; k < lines; k++) {
		int end = width;

		while (end > 0 && line[k][end - 1] == ' ')
			end--;
		fprintf(f, "%.*s\n", end, line[k]);
	}
}

/* The width of a column of stage names: `min`, or the longest of those in `slots`. */
static int stage_width(const struct infl_names *nm, __u32 slots, int min)
{
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		int len = (int)strlen(names__stage(nm, s));

		if ((slots & (1u << s)) && len > min)
			min = len;
	}
	return min;
}

/* Up to MAX_STAGE_COLS stage columns, in id order, "(none)" last. */
static int stage_cols(const struct tl_proc *p, unsigned *cols)
{
	__u32 used = tl_proc__used_slots(p);
	int n = 0;

	for (unsigned s = 0; s < INFL_SLOTS && n < MAX_STAGE_COLS; s++)
		if ((used & (1u << s)) && s != INFL_SLOT_NONE)
			cols[n++] = s;
	return n;
}

static void print_table(FILE *f, const struct timeline *tl, const struct tl_proc *p,
			__u64 step)
{
	const struct infl_names *nm = &tl->rec->names;
	unsigned cols[MAX_STAGE_COLS];
	int ncols = stage_cols(p, cols);
	const char *names[MAX_STAGE_COLS];
	char lead[64];
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN];
	struct tl_cursor c;
	struct tl_sample s;
	int decimals = step < 10000000 ? 3 : step < 1000000000 ? 2 : 1;

	fprintf(f, "\n  owners per stage, every %s (bytes: at the step's end, max within)\n",
		fmt_duration(b1, step));
	for (int i = 0; i < ncols; i++)
		names[i] = names__stage(nm, cols[i]);
	snprintf(lead, sizeof(lead), "%8s %6s %6s %6s", "time s", "bytes", "max", "rss");
	col_headers(f, lead, (int)strlen(lead), names, ncols);
	if (tl_cursor__init(&c, p))
		return;
	/* one row at least; a clock saturated at its end (render__next_t) ends the rows */
	for (__u64 t = tl->t0, first = 1; first || t < p->t_end;
	     t = render__next_t(t, step), first = 0) {
		tl_cursor__sample(&c, t, step, &s);
		fprintf(f, "%8.*f %6s %6s %6s", decimals, render__t(tl, t + step),
			fmt_bytes_short(b1, s.at_end->total_bytes), fmt_bytes_short(b2, s.max_bytes),
			fmt_bytes_short(b3, tl_cursor__rss_at(&c, t + step - 1)));
		for (int i = 0; i < ncols; i++)
			fprintf(f, " %5" PRIu64, (uint64_t)s.at_end->owners[cols[i]]);
		fputc('\n', f);
	}
	tl_cursor__free(&c);
}

static void print_peak(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	__u32 slots = tl_proc__used_slots(p), classes = 0;
	char b1[FMT_LEN], b2[FMT_LEN], lead[64];
	const char *names[INFL_CLASSES];
	int ncls = 0, w = stage_width(nm, slots, 11);

	fprintf(f, "\n  peak     %s tracked in %" PRIu64 " buffer%s at %.3f s (event %" PRIu64 ")\n",
		fmt_bytes(b1, p->peak_bytes), (uint64_t)p->peak_bufs, fmt_plural(p->peak_bufs),
		render__t(tl, p->peak_ts),
		(uint64_t)p->peak_seq);
	if (p->rss_peak)
		fprintf(f, "  rss      peak %s at %.3f s; %s at the tracked peak\n",
			fmt_bytes(b1, p->rss_peak), render__t(tl, p->rss_peak_ts),
			fmt_bytes(b2, p->rss_at_peak));
	if (!p->peak_bytes)
		return;
	/* the classes present at the peak, 9 at most: 79 columns */
	for (int cl = 0; cl < INFL_CLASSES && ncls < 9; cl++)
		for (unsigned s = 0; s < INFL_SLOTS; s++)
			if (p->peak[cl][s].bytes && !(classes & (1u << cl))) {
				classes |= 1u << cl;
				ncls++;
			}
	for (int cl = 0, k = 0; cl < INFL_CLASSES; cl++)
		if (classes & (1u << cl))
			names[k++] = names__cls(nm, cl);
	snprintf(lead, sizeof(lead), "  %-*s %5s %5s", w, "at peak", "owner", "bytes");
	fputc('\n', f);
	col_headers(f, lead, (int)strlen(lead), names, ncls);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		__u64 bytes = 0;

		for (int cl = 0; cl < INFL_CLASSES; cl++)
			bytes += p->peak[cl][s].bytes;
		if (!(slots & (1u << s)) || (!bytes && !p->peak_owners[s]))
			continue;
		fprintf(f, "  %-*s %5" PRIu64 " %5s", w, names__stage(nm, s),
			(uint64_t)p->peak_owners[s], fmt_bytes_short(b1, bytes));
		for (int cl = 0; cl < INFL_CLASSES; cl++) {
			if (!(classes & (1u << cl)))
				continue;
			fprintf(f, " %5s", p->peak[cl][s].bytes ?
					   fmt_bytes_short(b1, p->peak[cl][s].bytes) : ".");
		}
		fputc('\n', f);
	}
}

static void print_stages(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	__u32 slots = tl_proc__used_slots(p);
	unsigned __int128 all = 0;
	char b1[FMT_LEN], b2[FMT_LEN], mxt[FMT_LEN + 8];
	int w = stage_width(nm, slots, 16);

	for (unsigned s = 0; s < INFL_SLOTS; s++)
		all += tl_proc__slot_byte_ns(p, s);
	/* memory x time in its unit, "14.2 MiB x s", as compare says it */
	fprintf(f, "\n  %-*s %14s %6s %7s %10s\n", w, "stage", "memory x time", "share", "stays",
		"mean dwell");
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		unsigned __int128 bn = tl_proc__slot_byte_ns(p, s);
		double dwell = tl_proc__mean_dwell_ms(p, s);

		if (!(slots & (1u << s)))
			continue;
		snprintf(mxt, sizeof(mxt), "%s x s", fmt_bytes(b1, (__u64)(bn / 1000000000u)));
		fprintf(f, "  %-*s %14s %5.1f%% %7" PRIu64 " %10s\n", w, names__stage(nm, s),
			mxt, all ? 100.0 * bn / all : 0.0,
			(uint64_t)(s < INFL_MAX_STAGES ? p->dwell_count[s] : 0),
			dwell < 0 ? "-" : fmt_duration(b2, (__u64)(dwell * 1e6)));
	}
}

static void print_notes(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	char b1[FMT_LEN], what[160];
	__u64 lost = p->seq_gaps > p->lost_kernel + p->lost_user ? p->seq_gaps
								 : p->lost_kernel + p->lost_user;
	__u64 leaking = 0;
	int bad;

	fprintf(f, "\n  completed %" PRIu64 " owner%s", (uint64_t)p->retired,
		fmt_plural(p->retired));
	for (unsigned k = 0, first = 1; k < INFL_SLOTS; k++) {
		if (!p->retired_by_kind[k])
			continue;
		fprintf(f, "%s%" PRIu64 " from %s", first ? " (" : ", ",
			(uint64_t)p->retired_by_kind[k], names__stage(nm, k));
		first = 0;
	}
	fprintf(f, "%s\n  throughput %.1f owners done per minute over %s active\n",
		p->retired ? ")" : "", tl_proc__per_minute(p, p->retired),
		fmt_duration(b1, tl_proc__active_ns(p)));
	leaking = p->live_at_end;
	if (leaking || p->final.total_bytes)
		fprintf(f, "  at the end %" PRIu64 " owner%s live, %s in %" PRIu64 " buffer%s "
			"still tracked\n", (uint64_t)leaking, fmt_plural(leaking),
			fmt_bytes(b1, p->final.total_bytes), (uint64_t)p->final.total_bufs,
			fmt_plural(p->final.total_bufs));
	if (p->unmatched_free || p->unmatched_stage)
		fprintf(f, "  late attach: %" PRIu64 " free%s (%s) and %" PRIu64 " owner%s from "
			"before the recording\n", (uint64_t)p->unmatched_free,
			fmt_plural(p->unmatched_free), fmt_bytes(b1, p->unmatched_free_bytes),
			(uint64_t)p->unmatched_stage, fmt_plural(p->unmatched_stage));
	if (p->window_seq)
		fprintf(f, "  carried  %" PRIu64 " buffer%s and %" PRIu64 " owner%s in flight when the "
			"window began (after event %" PRIu64 ")\n", (uint64_t)p->carried_bufs,
			fmt_plural(p->carried_bufs), (uint64_t)p->carried_owners,
			fmt_plural(p->carried_owners), (uint64_t)p->window_seq);
	proc_facts__unmatched_text(f, &p->fig);
	if (p->rejected || p->untracked || p->dups)
		fprintf(f, "  anomalies: %" PRIu64 " rejected ids, %" PRIu64 " untracked (map "
			"full), %" PRIu64 " double allocs\n", (uint64_t)p->rejected,
			(uint64_t)p->untracked, (uint64_t)p->dups);
	/* what the kernel could not account (its final counters): the same rule as the live
	 * summary's, so a report never reads exact where the trace said it was not */
	if (p->kernel_final && figures__proc_inexact(p->kernel_final)) {
		char seen[192];

		fprintf(f, "  INEXACT  the kernel skipped updates (docs/cli.md); the figures above "
			   "are approximate:\n");
		for (size_t i = 0; i < infl_nanomalies; i++) {
			__u64 v = figures__anomaly_count(p->kernel_final, i);

			if (v && infl_anomalies[i].inexact)
				fprintf(f, "           %s\n",
					figures__anomaly_phrase(seen, sizeof(seen), i,
							    p->kernel_final));
		}
	}
	/* what the kernel counted that leaves the figures exact (probe hits that waited on
	 * another thread, libcuda calls that failed): said too, as the live summary says it */
	for (size_t i = 0; p->kernel_final && i < infl_nanomalies; i++) {
		__u64 v = figures__anomaly_count(p->kernel_final, i);
		char seen[192];

		if (v && !infl_anomalies[i].inexact)
			fprintf(f, "  noted    %s\n",
				figures__anomaly_phrase(seen, sizeof(seen), i, p->kernel_final));
	}
	if (lost)
		fprintf(f, "  lost     %" PRIu64 " events (%" PRIu64 " in the kernel, %" PRIu64
			" in user space): figures after the first loss are approximate\n",
			(uint64_t)lost, (uint64_t)p->lost_kernel, (uint64_t)p->lost_user);
	else
		fprintf(f, "  lost     none\n");
	if (!p->kernel_final) {
		fprintf(f, "  check    no final counters recorded (recording cut short)\n");
		return;
	}
	bad = timeline__check(p, what, sizeof(what));
	if (!bad)
		fprintf(f, "  check    the replay matches the kernel's final counters\n");
	else
		fprintf(f, "  check    %d differences from the kernel's final counters; first: "
			"%.60s\n", bad, what);
	/* what the check left out, and why (timeline__check) */
	if (p->kernel_final->owner_races)
		fprintf(f, "           owners and stages left out: %llu probe hit%s on an owner "
			"another thread's hit was on (each owner follows its own order)\n",
			(unsigned long long)p->kernel_final->owner_races,
			fmt_plural(p->kernel_final->owner_races));
	if (p->kernel_final->peak_fuzz)
		fprintf(f, "           the peak's composition left out: the kernel's copy is not "
			"exact (hits in flight while it was copied)\n");
}

static uint64_t probe_events(const struct tl_proc *p)
{
	uint64_t n = 0;

	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		n += p->fig.events[i];
	return n;
}

int render__text(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	char b1[FMT_LEN], comm[4 * 16 + 1];
	__u64 step = o->step_ns ? o->step_ns : render__auto_step(tl, 40);
	size_t n;
	const struct tl_proc **procs = render__procs(tl, o, &n);

	if (!procs)
		return -ENOMEM;
	print_header(f, tl, o);
	for (size_t i = 0; i < n; i++) {
		const struct tl_proc *p = procs[i];

		/* records: its probe events and RSS changes, as recorded; probe events: those the
		 * live summary counts */
		fprintf(f, "\npid %u (%s): %" PRIu64 " probe event%s (%" PRIu64 " record%s), %" PRIu64
			" owner%s\n", p->pid, p->comm[0] ? san_str(comm, sizeof(comm), p->comm) : "?",
			probe_events(p), fmt_plural(probe_events(p)), (uint64_t)p->nev,
			fmt_plural(p->nev), (uint64_t)p->nlives, fmt_plural(p->nlives));
		if (n > 1 || strcmp(timeline__command(tl, p), timeline__command(tl, timeline__primary(tl))))
			wrapped(f, "  command", 11, timeline__command(tl, p));
		if (p->oom.ns) {
			char oom[160];

			wrapped(f, "  OOM-KILLED", 13, proc_facts__oom_text(oom, sizeof(oom), &p->oom, tl->t0));
		}
		fprintf(f, "  ran %.3f s to %.3f s: %s from its first event to its %s\n",
			render__t(tl, p->first_ts ? p->first_ts : tl->t0), render__t(tl, p->t_end),
			fmt_duration(b1, p->t_end > p->first_ts && p->first_ts ?
				     p->t_end - p->first_ts : 0), p->exited ? "exit" : "end");
		print_table(f, tl, p, step);
		print_peak(f, tl, p);
		print_stages(f, tl, p);
		print_notes(f, tl, p);
	}
	if (!n)
		fprintf(f, "\nno traced process in this recording\n");
	free(procs);
	return render__finish(f);
}
