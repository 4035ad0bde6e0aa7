// SPDX-License-Identifier: BSD-2-Clause
/*
 * Prometheus / OpenMetrics text exposition of a snapshot, and the exporter's address parser.
 * See prom.h; the metric list is in docs/production.md. Every family is written whole
 * before the next (OpenMetrics forbids interleaving), processes in pid order inside it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "contract/usdt_notes.h"
#include "live/prom.h"
#include "model/figures.h"
#include "util/sanitize.h"

enum prom_type { GAUGE, COUNTER, HISTOGRAM, INFO };

struct prom_w {
	FILE *f;
	const struct infl_names *n;
	bool om;
	const struct prom_opts *o;
	const struct snapshot *snap;
	char none[INFL_NAME_LEN + 8]; /* the no-stage slot's label value */
};

/* A sample's labels: pid always, the others when set. */
struct labels {
	__u32 pid;
	const char *cls;
	const char *stage;
	const char *key; /* one more label (probe, reason) */
	const char *val;
};

static const char *const type_name[] = { "gauge", "counter", "histogram", "info" };

/* "# HELP" / "# TYPE" of a family. A counter family is named without "_total" in
 * OpenMetrics and with it in the 0.0.4 format; its samples always end in "_total". An info
 * family is OpenMetrics' "info" type there and a gauge named NAME_info in the 0.0.4 format;
 * its one sample is NAME_info{...} 1. */
static void family(struct prom_w *w, const char *name, enum prom_type t, const char *help)
{
	const char *suffix = t == COUNTER && !w->om ? "_total" : t == INFO && !w->om ? "_info" : "";
	enum prom_type shown = t == INFO && !w->om ? GAUGE : t;

	fprintf(w->f, "# HELP %s%s %s\n", name, suffix, help);
	fprintf(w->f, "# TYPE %s%s %s\n", name, suffix, type_name[shown]);
}

/* A label value: what came from outside (a comm, a path) as sanitize.h's escaped text, so
 * it holds no control character, no newline and only valid UTF-8 (Prometheus refuses a
 * scrape with invalid UTF-8); then the format's own escapes of backslash and quote. */
static void label_value(FILE *f, const char *v)
{
	char buf[4 * 1024];
	const char *e = san_is_safe(v) ? v : san_str(buf, sizeof(buf), v);

	fputc('"', f);
	for (; *e; e++) {
		if (*e == '\\' || *e == '"')
			fputc('\\', f);
		fputc(*e, f);
	}
	fputc('"', f);
}

static void label(FILE *f, const char *k, const char *v)
{
	fprintf(f, ",%s=", k);
	label_value(f, v);
}

/* name + suffix + {labels[, le]} + value text */
static void sample_text(struct prom_w *w, const char *name, const char *suffix,
			const struct labels *l, const char *le, const char *value)
{
	fprintf(w->f, "%s%s{pid=\"%u\"", name, suffix, l->pid);
	if (l->cls)
		label(w->f, "class", l->cls);
	if (l->stage)
		label(w->f, "stage", l->stage);
	if (l->key)
		label(w->f, l->key, l->val);
	if (le)
		label(w->f, "le", le);
	fprintf(w->f, "} %s\n", value);
}

static void sample(struct prom_w *w, const char *name, const char *suffix,
		   const struct labels *l, __u64 v)
{
	char value[24];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)v);
	sample_text(w, name, suffix, l, NULL, value);
}

/* ns as decimal seconds, exactly: "12.000345678" */
static const char *seconds(char buf[32], __u64 ns)
{
	snprintf(buf, 32, "%llu.%09llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull));
	return buf;
}

/*
 * The stage label: the declared name, or for the no-stage slot (buffers of no owner, owners
 * not yet staged) "none", which needs no quoting in PromQL regexps as "(none)" would; when
 * the binary declares a stage named "none" itself, underscores go in front until it is
 * unique ("_none").
 */
static void pick_none(struct prom_w *w)
{
	bool taken;

	snprintf(w->none, sizeof(w->none), "none");
	do {
		taken = false;
		for (int s = 0; s < INFL_MAX_STAGES; s++)
			taken |= !strcmp(names__stage(w->n, s), w->none);
		if (taken && strlen(w->none) + 1 < sizeof(w->none)) {
			memmove(w->none + 1, w->none, strlen(w->none) + 1);
			w->none[0] = '_';
		} else {
			taken = false;
		}
	} while (taken);
}

static const char *stage_label(const struct prom_w *w, int s)
{
	return s == INFL_SLOT_NONE ? w->none : names__stage(w->n, s);
}

/* Which (class, stage slot) cells get a sample: declared ones (zeros too) and any other
 * that holds something. The no-stage slot goes with the declared classes. */
static bool class_shown(const struct infl_names *n, int c)
{
	return n->cls_declared & (1u << c);
}

static bool slot_shown(const struct infl_names *n, int s)
{
	return s == INFL_SLOT_NONE || (n->stage_declared & (1u << s));
}

static bool cell_shown(const struct infl_names *n, int c, int s, const struct infl_cell *x)
{
	return x->count || x->bytes || (class_shown(n, c) && slot_shown(n, s));
}

/* --- families ------------------------------------------------------------------------- */

typedef void (*family_fn)(struct prom_w *w, const struct proc_snapshot *ps);

/* One sample per shown (class, stage) cell of `at` (now, or the exact peak's composition) */
static void cells(struct prom_w *w, const struct proc_snapshot *ps, const char *name,
		  const struct infl_cell at[INFL_CLASSES][INFL_SLOTS], bool bytes)
{
	for (int c = 0; c < INFL_CLASSES; c++) {
		for (int s = 0; s < INFL_SLOTS; s++) {
			const struct infl_cell *x = &at[c][s];
			struct labels l = { .pid = ps->pid, .cls = names__cls(w->n, c),
					    .stage = stage_label(w, s) };

			if (cell_shown(w->n, c, s, x))
				sample(w, name, "", &l, bytes ? x->bytes : x->count);
		}
	}
}

static void f_buffers(struct prom_w *w, const struct proc_snapshot *ps)
{
	cells(w, ps, "inflight_buffers", ps->st.cur, false);
}

static void f_buffer_bytes(struct prom_w *w, const struct proc_snapshot *ps)
{
	cells(w, ps, "inflight_buffer_bytes", ps->st.cur, true);
}

/* The exact peak's composition, as the kernel copied it when the peak was set: a spike
 * between two scrapes keeps its breakdown (the summary's peak table) */
static void f_peak_cell_bufs(struct prom_w *w, const struct proc_snapshot *ps)
{
	cells(w, ps, "inflight_peak_composition_buffers", ps->st.peak, false);
}

static void f_peak_cell_bytes(struct prom_w *w, const struct proc_snapshot *ps)
{
	cells(w, ps, "inflight_peak_composition_bytes", ps->st.peak, true);
}

static void owners(struct prom_w *w, const struct proc_snapshot *ps, const char *name,
		   const __u64 at[INFL_SLOTS])
{
	for (int s = 0; s < INFL_SLOTS; s++) {
		struct labels l = { .pid = ps->pid, .stage = stage_label(w, s) };

		if (at[s] || slot_shown(w->n, s))
			sample(w, name, "", &l, at[s]);
	}
}

static void f_owners(struct prom_w *w, const struct proc_snapshot *ps)
{
	owners(w, ps, "inflight_owners", ps->st.owners);
}

static void f_peak_owners(struct prom_w *w, const struct proc_snapshot *ps)
{
	owners(w, ps, "inflight_peak_owners", ps->st.peak_owners);
}

/* families with one sample per process, labelled by pid only */
#define PID_ONLY(fn, metric, suffix, expr)                                                      \
	static void fn(struct prom_w *w, const struct proc_snapshot *ps)                         \
	{                                                                                        \
		const struct infl_proc *p = &ps->st;                                             \
		struct labels l = { .pid = ps->pid };                                            \
                                                                                                 \
		sample(w, metric, suffix, &l, (expr));                                           \
	}

PID_ONLY(f_tracked_bytes, "inflight_tracked_bytes", "", p->total_bytes)
PID_ONLY(f_tracked_bufs, "inflight_tracked_buffers", "", p->total_bufs)
PID_ONLY(f_peak_bytes, "inflight_peak_bytes", "", p->peak_bytes)
PID_ONLY(f_peak_bufs, "inflight_peak_buffers", "", p->peak_bufs)
PID_ONLY(f_exited, "inflight_process_exited", "", p->exited ? 1 : 0)
PID_ONLY(f_exact, "inflight_counts_exact", "", figures__proc_inexact(p) ? 0 : 1)
PID_ONLY(f_started, "inflight_owners_started", "_total", p->owners_started)
PID_ONLY(f_done, "inflight_owners_done", "_total", p->owners_done)
PID_ONLY(f_dups, "inflight_duplicate_allocs", "_total", p->dup_alloc)

/* RSS families only for processes whose RSS is known (a zero would read as "no memory"). */
static bool rss_known(const struct infl_proc *p)
{
	return p->rss_total || p->rss_peak;
}

static void f_rss(struct prom_w *w, const struct proc_snapshot *ps)
{
	struct labels l = { .pid = ps->pid };

	if (rss_known(&ps->st))
		sample(w, "inflight_rss_bytes", "", &l, ps->st.rss_total);
}

static void f_rss_peak(struct prom_w *w, const struct proc_snapshot *ps)
{
	struct labels l = { .pid = ps->pid };

	if (rss_known(&ps->st))
		sample(w, "inflight_rss_peak_bytes", "", &l, ps->st.rss_peak);
}

/* RSS the probes do not explain; zero when the tracked buffers are not all resident yet. */
static void f_untracked(struct prom_w *w, const struct proc_snapshot *ps)
{
	const struct infl_proc *p = &ps->st;
	struct labels l = { .pid = ps->pid };

	if (rss_known(p))
		sample(w, "inflight_untracked_bytes", "", &l,
		       p->rss_total > p->total_bytes ? p->rss_total - p->total_bytes : 0);
}

static void f_events(struct prom_w *w, const struct proc_snapshot *ps)
{
	for (int i = 0; i < INFL_PROBE__COUNT; i++) {
		struct labels l = { .pid = ps->pid, .key = "probe", .val = usdt_contract[i].name };

		sample(w, "inflight_events", "_total", &l, ps->st.events[i]);
	}
}

/* Lifetime totals per class: every alloc and free accounted since tracing began. */
#define LIFETIME(fn, metric, field, member)                                                     \
	static void fn(struct prom_w *w, const struct proc_snapshot *ps)                       \
	{                                                                                      \
		for (int c = 0; c < INFL_CLASSES; c++) {                                   \
			struct labels l = { .pid = ps->pid, .cls = names__cls(w->n, c) };      \
                                                                                               \
			if (ps->st.field[c].count || class_shown(w->n, c))                     \
				sample(w, metric, "_total", &l, ps->st.field[c].member);       \
		}                                                                              \
	}
LIFETIME(f_allocs, "inflight_allocs", allocated, count)
LIFETIME(f_alloc_bytes, "inflight_allocated_bytes", allocated, bytes)
LIFETIME(f_frees, "inflight_frees", freed, count)
LIFETIME(f_free_bytes, "inflight_freed_bytes", freed, bytes)
/* frees of buffers allocated before the attach, per class */
LIFETIME(f_unmatched_frees, "inflight_unmatched_frees", unmatched_free, count)
LIFETIME(f_unmatched_free_bytes, "inflight_unmatched_free_bytes", unmatched_free, bytes)

static void f_unmatched_stages(struct prom_w *w, const struct proc_snapshot *ps)
{
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		struct labels l = { .pid = ps->pid, .stage = stage_label(w, s) };

		if (ps->st.unmatched_stage[s] || slot_shown(w->n, s))
			sample(w, "inflight_unmatched_stages", "_total", &l,
			       ps->st.unmatched_stage[s]);
	}
}

/* One family per anomaly kind, one `reason` label per anomaly (inflight.h INFL_ANOMALIES). */
static void anomalies_of_kind(struct prom_w *w, const struct proc_snapshot *ps,
			      enum infl_anomaly_kind kind, const char *metric)
{
	for (size_t i = 0; i < infl_nanomalies; i++) {
		struct labels l = { .pid = ps->pid, .key = "reason", .val = infl_anomalies[i].key };

		if (infl_anomalies[i].kind == kind)
			sample(w, metric, "_total", &l, figures__anomaly_count(&ps->st, i));
	}
}

static void f_dropped(struct prom_w *w, const struct proc_snapshot *ps)
{
	anomalies_of_kind(w, ps, INFL_AN_DROPPED, "inflight_dropped_events");
}

static void f_rejected(struct prom_w *w, const struct proc_snapshot *ps)
{
	anomalies_of_kind(w, ps, INFL_AN_REJECTED, "inflight_rejected_events");
}

static void f_violations(struct prom_w *w, const struct proc_snapshot *ps)
{
	anomalies_of_kind(w, ps, INFL_AN_VIOLATION, "inflight_violation_events");
}

static void f_waited(struct prom_w *w, const struct proc_snapshot *ps)
{
	anomalies_of_kind(w, ps, INFL_AN_WAITED, "inflight_waited_hits");
}

/*
 * The kernel's dwell slots: slot 0 holds [0, 2) us, slot k >= 1 holds [2^k, 2^(k+1)) us of
 * whole microseconds, the last slot everything from 2^31 us on. A dwell in slot k is below
 * 2^(k+1) us, so bucket le=2^(k+1) us counts slots 0..k; the last slot only reaches +Inf.
 */
static void f_dwell(struct prom_w *w, const struct proc_snapshot *ps)
{
	static const char name[] = "inflight_stage_dwell_seconds";
	const struct infl_proc *p = &ps->st;

	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		struct labels l = { .pid = ps->pid, .stage = stage_label(w, s) };
		char le[32], v[32];
		__u64 cum = 0;

		if (!p->dwell_count[s] && !slot_shown(w->n, s))
			continue;
		for (int k = 0; k < INFL_HIST_SLOTS - 1; k++) {
			__u64 us = 2ull << k;

			cum += p->dwell_hist[s][k];
			snprintf(le, sizeof(le), "%llu.%06llu", (unsigned long long)(us / 1000000),
				 (unsigned long long)(us % 1000000));
			snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
			sample_text(w, name, "_bucket", &l, le, v);
		}
		/* +Inf and _count from the same slots, so that they agree even in a torn copy */
		cum += p->dwell_hist[s][INFL_HIST_SLOTS - 1];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
		sample_text(w, name, "_bucket", &l, "+Inf", v);
		sample_text(w, name, "_sum", &l, NULL, seconds(le, p->dwell_sum_ns[s]));
		sample_text(w, name, "_count", &l, NULL, v);
	}
}

static int cmp_ident(const void *key, const void *elem)
{
	__u32 pid = *(const __u32 *)key, other = ((const struct prom_identity *)elem)->pid;

	return pid < other ? -1 : pid > other;
}

static const struct prom_identity *identity(const struct prom_w *w, __u32 pid)
{
	if (!w->o || !w->o->ident)
		return NULL;
	return bsearch(&pid, w->o->ident, w->o->nident, sizeof(*w->o->ident), cmp_ident);
}

/* Who the pid is, for a PromQL join: `... * on (instance, pid) group_left (binary, comm,
 * command) inflight_process_info`. One series per process lifetime; unknown fields are
 * empty. */
static void f_process_info(struct prom_w *w, const struct proc_snapshot *ps)
{
	const struct prom_identity *id = identity(w, ps->pid);
	char start[24] = "";

	if (id && id->start_time_s)
		snprintf(start, sizeof(start), "%llu", (unsigned long long)id->start_time_s);
	fprintf(w->f, "inflight_process_info{pid=\"%u\"", ps->pid);
	label(w->f, "binary", id && id->binary ? id->binary : "");
	label(w->f, "comm", id && id->comm ? id->comm : "");
	label(w->f, "command", id && id->command ? id->command : "");
	label(w->f, "start_time", start);
	fputs("} 1\n", w->f);
}

static void f_start_time(struct prom_w *w, const struct proc_snapshot *ps)
{
	const struct prom_identity *id = identity(w, ps->pid);
	struct labels l = { .pid = ps->pid };

	if (id && id->start_time_s)
		sample(w, "inflight_process_start_time_seconds", "", &l, id->start_time_s);
}

static const struct {
	const char *name; /* counters: without _total */
	enum prom_type type;
	family_fn fn;
	const char *help;
} families[] = {
	{ "inflight_buffers", GAUGE, f_buffers, "Live buffers per class and stage" },
	{ "inflight_buffer_bytes", GAUGE, f_buffer_bytes, "Bytes of live buffers per class and stage" },
	{ "inflight_owners", GAUGE, f_owners, "Live owners (work items) per stage" },
	{ "inflight_tracked_bytes", GAUGE, f_tracked_bytes, "Bytes of all live buffers" },
	{ "inflight_tracked_buffers", GAUGE, f_tracked_bufs, "Live buffers, all classes" },
	{ "inflight_peak_bytes", GAUGE, f_peak_bytes, "Exact high-water mark of tracked bytes" },
	{ "inflight_peak_buffers", GAUGE, f_peak_bufs, "Live buffers at the peak" },
	{ "inflight_peak_composition_buffers", GAUGE, f_peak_cell_bufs,
	  "Live buffers per class and stage at the exact peak" },
	{ "inflight_peak_composition_bytes", GAUGE, f_peak_cell_bytes,
	  "Bytes of live buffers per class and stage at the exact peak" },
	{ "inflight_peak_owners", GAUGE, f_peak_owners, "Live owners per stage at the exact peak" },
	{ "inflight_rss_bytes", GAUGE, f_rss, "Resident set size (file + anon + shmem)" },
	{ "inflight_rss_peak_bytes", GAUGE, f_rss_peak, "Highest resident set size seen" },
	{ "inflight_untracked_bytes", GAUGE, f_untracked,
	  "Resident bytes not explained by tracked buffers (RSS - tracked, at least 0)" },
	{ "inflight_process", INFO, f_process_info,
	  "Who the pid is: its executable, comm and start time (unix seconds); join on pid" },
	{ "inflight_process_start_time_seconds", GAUGE, f_start_time,
	  "When the process started, unix seconds" },
	{ "inflight_process_exited", GAUGE, f_exited, "1 once the process has exited" },
	{ "inflight_counts_exact", GAUGE, f_exact,
	  "0 when some update was not accounted (map full, lock timeout)" },
	{ "inflight_events", COUNTER, f_events, "Probe events accounted" },
	{ "inflight_owners_started", COUNTER, f_started, "Owners first seen at an entry stage" },
	{ "inflight_owners_done", COUNTER, f_done, "Owners that ended in a terminal stage" },
	{ "inflight_allocs", COUNTER, f_allocs, "Allocations per class since tracing began" },
	{ "inflight_allocated_bytes", COUNTER, f_alloc_bytes,
	  "Bytes allocated per class since tracing began" },
	{ "inflight_frees", COUNTER, f_frees, "Frees of live buffers per class since tracing began" },
	{ "inflight_freed_bytes", COUNTER, f_free_bytes,
	  "Bytes freed per class since tracing began" },
	{ "inflight_unmatched_frees", COUNTER, f_unmatched_frees,
	  "Frees of buffers allocated before the attach" },
	{ "inflight_unmatched_free_bytes", COUNTER, f_unmatched_free_bytes,
	  "Bytes of frees of buffers allocated before the attach" },
	{ "inflight_unmatched_stages", COUNTER, f_unmatched_stages,
	  "Owners from before the attach, first seen entering this stage" },
	{ "inflight_dropped_events", COUNTER, f_dropped, "Events not accounted or not recorded" },
	{ "inflight_rejected_events", COUNTER, f_rejected,
	  "Events rejected for an out-of-range class or stage id" },
	{ "inflight_violation_events", COUNTER, f_violations,
	  "Contract violations, applied anyway (an alloc of a live buffer, a free of a buffer "
	  "not live)" },
	{ "inflight_waited_hits", COUNTER, f_waited,
	  "Probe hits that waited on another thread of their process, accounted all the same" },
	{ "inflight_duplicate_allocs", COUNTER, f_dups, "Allocs of a buffer already live" },
	{ "inflight_stage_dwell_seconds", HISTOGRAM, f_dwell, "Time owners spent in a stage" },
};

static void build_info(struct prom_w *w)
{
	family(w, "inflight_build", INFO, "The exporter's version, probe contract and libbpf");
	fputs("inflight_build_info{version=", w->f);
	label_value(w->f, w->o->build_version);
	label(w->f, "contract", w->o->build_contract ? w->o->build_contract : "");
	label(w->f, "libbpf", w->o->build_libbpf ? w->o->build_libbpf : "");
	fputs("} 1\n", w->f);
}

/* The exporter's own connections (cmd/serve_guard.h): closing one is never silent. */
static void exporter(struct prom_w *w, const struct prom_exporter *x)
{
	family(w, "inflight_exporter_connections", GAUGE, "HTTP connections open now");
	fprintf(w->f, "inflight_exporter_connections %u\n", x->open);
	family(w, "inflight_exporter_connections_accepted", COUNTER, "HTTP connections accepted");
	fprintf(w->f, "inflight_exporter_connections_accepted_total %llu\n",
		(unsigned long long)x->accepted);
	family(w, "inflight_exporter_connections_closed", COUNTER,
	       "HTTP connections the exporter closed, by reason (deadline or budget)");
	for (unsigned i = 0; i < x->nreasons; i++) {
		fputs("inflight_exporter_connections_closed_total{reason=", w->f);
		label_value(w->f, x->reason[i]);
		fprintf(w->f, "} %llu\n", (unsigned long long)x->closed[i]);
	}
}

/* The flight recorder's dumps: a dump written is what an alert names. */
static void dumps(struct prom_w *w, const struct prom_dumps *d)
{
	family(w, "inflight_dumps", COUNTER, "Flight recorder dumps written, by trigger");
	for (unsigned i = 0; i < PROM_DUMP_TRIGGERS; i++) {
		fputs("inflight_dumps_total{trigger=", w->f);
		label_value(w->f, d->trigger[i]);
		fprintf(w->f, "} %llu\n", (unsigned long long)d->written[i]);
	}
	family(w, "inflight_dumps_refused", COUNTER,
	       "Triggers that made no dump: too soon after the last, or past --max-dumps");
	fprintf(w->f, "inflight_dumps_refused_total %llu\n", (unsigned long long)d->refused);
	family(w, "inflight_dumps_cut", COUNTER,
	       "Dumps cut short (a full disk): inflight report --partial reads them");
	fprintf(w->f, "inflight_dumps_cut_total %llu\n", (unsigned long long)d->cut);
	family(w, "inflight_dumps_failed", COUNTER, "Dumps that could not be created or renamed");
	fprintf(w->f, "inflight_dumps_failed_total %llu\n", (unsigned long long)d->failed);
	family(w, "inflight_last_dump_timestamp_seconds", GAUGE,
	       "When the last dump's trigger fired (Unix time; 0: none yet)");
	fprintf(w->f, "inflight_last_dump_timestamp_seconds %.3f\n", d->last_unix_ns / 1e9);
	family(w, "inflight_ring_bytes", GAUGE, "The flight recorder's memory now");
	fprintf(w->f, "inflight_ring_bytes %llu\n", (unsigned long long)d->ring_bytes);
}

int prom__render(FILE *f, const struct snapshot *snap, const struct infl_names *n,
		 const struct prom_opts *o)
{
	struct infl_names numeric;
	struct prom_w w = { .f = f, .n = n, .om = o && o->openmetrics, .o = o, .snap = snap };

	if (!n) {
		names__init(&numeric);
		w.n = &numeric;
	}
	pick_none(&w);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		family(&w, families[i].name, families[i].type, families[i].help);
		for (int p = 0; p < snap->nprocs; p++)
			families[i].fn(&w, &snap->procs[p]);
	}
	/* scrape-wide: no pid */
	if (o && o->build_version)
		build_info(&w);
	if (o && o->exporter)
		exporter(&w, o->exporter);
	if (o && o->dumps)
		dumps(&w, o->dumps);
	if (o && o->host_memory_bytes) {
		family(&w, "inflight_host_memory_bytes", GAUGE,
		       "The host's memory (MemTotal), for alerts on peaks near it");
		fprintf(f, "inflight_host_memory_bytes %llu\n",
			(unsigned long long)o->host_memory_bytes);
	}
	family(&w, "inflight_untraced_events", COUNTER,
	       "Events of processes that found no slot (--max-procs reached)");
	fprintf(f, "inflight_untraced_events_total %llu\n",
		(unsigned long long)snap->procs_map_full);
	family(&w, "inflight_traced_processes", GAUGE, "Processes in this scrape");
	fprintf(f, "inflight_traced_processes %d\n", snap->nprocs);
	family(&w, "inflight_rss_followed", GAUGE,
	       "1 when RSS is followed; 0 with --no-rss or on a kernel that cannot report it");
	fprintf(f, "inflight_rss_followed %d\n", snap->rss_off ? 0 : 1);
	family(&w, "inflight_torn_processes", GAUGE,
		"Processes copied while the kernel kept writing (values may disagree)");
	fprintf(f, "inflight_torn_processes %d\n", snap->torn);
	if (w.om)
		fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

/* --- content negotiation --------------------------------------------------------------- */

/* q of the media range starting at `p` (up to the next comma): 1 unless a q= says less. */
static double media_q(const char *p)
{
	const char *end = strchrnul(p, ',');

	for (const char *q = p; q < end; q++) {
		if (*q != ';')
			continue;
		while (q + 1 < end && q[1] == ' ')
			q++;
		if (q + 2 < end && q[1] == 'q' && q[2] == '=') {
			double v = 0, scale = 1;
			const char *d = q + 3;

			for (; d < end && *d >= '0' && *d <= '9'; d++)
				v = v * 10 + (*d - '0');
			if (d < end && *d == '.')
				for (d++; d < end && *d >= '0' && *d <= '9'; d++)
					v += (*d - '0') * (scale /= 10);
			return v;
		}
	}
	return 1;
}

bool prom__accepts_openmetrics(const char *accept)
{
	static const char om[] = "application/openmetrics-text";
	double best_om = 0, best_text = 0;

	if (!accept)
		return false;
	for (const char *p = accept; *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		if (!strncasecmp(p, om, sizeof(om) - 1)) {
			double q = media_q(p);

			best_om = q > best_om ? q : best_om;
		} else if (!strncasecmp(p, "text/plain", 10)) {
			double q = media_q(p);

			best_text = q > best_text ? q : best_text;
		}
		p = strchrnul(p, ',');
	}
	return best_om > 0 && best_om >= best_text;
}

/* --- the listen address ------------------------------------------------------------------ */

static int parse_port(const char *s, in_port_t *port)
{
	unsigned v = 0;

	if (!*s || strlen(s) > 5)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*port = htons((in_port_t)v);
	return 0;
}

int prom__parse_listen(const char *s, struct prom_listen *out)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon;
	size_t hlen;

	memset(out, 0, sizeof(*out));
	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out->addr;
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		hlen = close - s - 1;
		if (hlen == 0 || hlen >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hlen);
		host[hlen] = '\0';
		a6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1 ||
		    parse_port(close + 2, &a6->sin6_port))
			return -EINVAL;
		out->len = sizeof(*a6);
		out->loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		return 0;
	}
	colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	hlen = colon - s;
	if (hlen >= sizeof(host) || memchr(s, ':', hlen)) /* IPv6 needs its brackets */
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)&out->addr;

		a4->sin_family = AF_INET;
		if (hlen == 0)
			a4->sin_addr.s_addr = htonl(INADDR_ANY);
		else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		if (parse_port(colon + 1, &a4->sin_port))
			return -EINVAL;
		out->len = sizeof(*a4);
		out->loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

const char *prom__fmt_addr(char *buf, size_t len, const struct sockaddr *sa)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a6->sin6_port));
	} else {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a4->sin_port));
	}
	return buf;
}
