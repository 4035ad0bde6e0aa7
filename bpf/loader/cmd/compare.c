// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight compare A B`: two recordings side by side (the traced process of each: the
 * target, else the one with the largest peak): peak total and per class, the peak's
 * composition by stage, memory x time and mean dwell per stage, throughput overall and per
 * owner kind (the stage an owner entered first), RSS; and the ratio B/A of each. Text under
 * 80 columns, or --json.
 */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "util/errors.h"
#include "util/sanitize.h"
#include "util/fmt.h"
#include "contract/names.h"
#include "recording/rec_reader.h"
#include "render/render.h"
#include "render/timeline.h"

enum unit { U_BYTES, U_NS, U_BYTE_S, U_RATE, U_COUNT };

struct metric {
	const char *group;
	char name[48];
	enum unit unit;
	double a, b;
};

struct side {
	const char *file;
	struct recording *rec;
	struct timeline *tl;
	const struct tl_proc *p;
};

struct metrics {
	struct metric *m;
	size_t n, cap;
};

static void add(struct metrics *ms, const char *group, const char *name, enum unit u, double a,
		double b)
{
	if (ms->n == ms->cap) {
		size_t cap = ms->cap ? ms->cap * 2 : 64;
		struct metric *n = realloc(ms->m, cap * sizeof(*n));

		if (!n)
			return; /* metrics are dropped, not corrupted: the caller checks ms->m */
		ms->m = n;
		ms->cap = cap;
	}
	ms->m[ms->n].group = group;
	snprintf(ms->m[ms->n].name, sizeof(ms->m[ms->n].name), "%s", name);
	ms->m[ms->n].unit = u;
	ms->m[ms->n].a = a;
	ms->m[ms->n].b = b;
	ms->n++;
}

static __u64 peak_slot_bytes(const struct tl_proc *p, unsigned s)
{
	__u64 sum = 0;

	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++)
		sum += p->peak[c][s].bytes;
	return sum;
}

static void collect(struct metrics *ms, const struct side *A, const struct side *B)
{
	const struct tl_proc *a = A->p, *b = B->p;
	const struct infl_names *nm = &A->rec->names;
	__u32 classes = render_used_classes(a) | render_used_classes(b);
	__u32 slots = render_used_slots(a) | render_used_slots(b);

	add(ms, "run", "duration", U_NS, A->tl->t_end - A->tl->t0, B->tl->t_end - B->tl->t0);
	add(ms, "run", "active (first to last event)", U_NS, render_active_ns(a),
	    render_active_ns(b));
	add(ms, "run", "events", U_COUNT, a->nev, b->nev);
	add(ms, "peak", "tracked total", U_BYTES, a->peak_bytes, b->peak_bytes);
	add(ms, "peak", "RSS", U_BYTES, a->rss_peak, b->rss_peak);
	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++)
		if (classes & (1u << c))
			add(ms, "peak per class (each its own)", names__cls(nm, c), U_BYTES,
			    a->class_peak[c], b->class_peak[c]);
	for (unsigned s = 0; s < INFL_SLOTS; s++)
		if (peak_slot_bytes(a, s) || peak_slot_bytes(b, s))
			add(ms, "at the peak, bytes by stage", names__stage(nm, s), U_BYTES,
			    peak_slot_bytes(a, s), peak_slot_bytes(b, s));
	for (unsigned s = 0; s < INFL_SLOTS; s++)
		if (slots & (1u << s))
			add(ms, "memory x time by stage (bytes x seconds)", names__stage(nm, s), U_BYTE_S,
			    (double)render_slot_byte_ns(a, s) / 1e9,
			    (double)render_slot_byte_ns(b, s) / 1e9);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		double da = render_mean_dwell_ms(a, s), db = render_mean_dwell_ms(b, s);

		if (da >= 0 || db >= 0)
			add(ms, "mean dwell by stage", names__stage(nm, s), U_NS,
			    da < 0 ? NAN : da * 1e6, db < 0 ? NAN : db * 1e6);
	}
	add(ms, "owners done per minute", "all", U_RATE, render_per_minute(a, a->retired),
	    render_per_minute(b, b->retired));
	for (unsigned k = 0; k < INFL_SLOTS; k++) {
		char name[48];

		if (!a->retired_by_kind[k] && !b->retired_by_kind[k])
			continue;
		snprintf(name, sizeof(name), "from %s", names__stage(nm, k));
		add(ms, "owners done per minute", name, U_RATE,
		    render_per_minute(a, a->retired_by_kind[k]),
		    render_per_minute(b, b->retired_by_kind[k]));
	}
	add(ms, "owners done", "all", U_COUNT, a->retired, b->retired);
}

static const char *value(char buf[FMT_LEN], enum unit u, double v)
{
	if (isnan(v))
		return "-";
	switch (u) {
	case U_BYTES:
		return fmt_bytes(buf, (__u64)v);
	case U_NS:
		return fmt_duration(buf, (__u64)v);
	case U_BYTE_S: {
		char b[FMT_LEN];

		snprintf(buf, FMT_LEN, "%s x s", fmt_bytes(b, (__u64)v));
		return buf;
	}
	case U_RATE:
		snprintf(buf, FMT_LEN, "%.1f", v);
		return buf;
	case U_COUNT:
	default:
		snprintf(buf, FMT_LEN, "%.0f", v);
		return buf;
	}
}

static bool ratio(const struct metric *m, double *r)
{
	if (isnan(m->a) || isnan(m->b) || m->a == 0)
		return false;
	*r = m->b / m->a;
	return true;
}

static void print_text(FILE *f, const struct side *A, const struct side *B,
		       const struct metrics *ms)
{
	const char *group = NULL;
	char b1[FMT_LEN], b2[FMT_LEN], file[71], cmd[61];

	fprintf(f, "A  %s\n   pid %u: %s\n", san_str(file, sizeof(file), A->file), A->p->pid,
		san_str(cmd, sizeof(cmd), A->rec->cmdline));
	fprintf(f, "B  %s\n   pid %u: %s\n", san_str(file, sizeof(file), B->file), B->p->pid,
		san_str(cmd, sizeof(cmd), B->rec->cmdline));
	fprintf(f, "\n%-32s %14s %14s %9s\n", "", "A", "B", "B/A");
	for (size_t i = 0; i < ms->n; i++) {
		const struct metric *m = &ms->m[i];
		double r;

		if (m->group != group) {
			fprintf(f, "%s\n", m->group);
			group = m->group;
		}
		fprintf(f, "  %-30.30s %14s %14s", m->name, value(b1, m->unit, m->a),
			value(b2, m->unit, m->b));
		if (ratio(m, &r))
			fprintf(f, " %9.2f\n", r);
		else
			fprintf(f, " %9s\n", "-");
	}
	if (!tl_proc__exact(A->p) || !tl_proc__exact(B->p))
		fprintf(f, "\nnote: events were lost in %s: its figures are approximate\n",
			!tl_proc__exact(A->p) ? "A" : "B");
}

static void print_json(FILE *f, const struct side *A, const struct side *B,
		       const struct metrics *ms)
{
	static const char *const units[] = { "bytes", "ns", "byte_s", "per_minute", "count" };
	const struct side *sides[2] = { A, B };
	struct json j;

	json_init(&j, f);
	json_obj(&j);
	json_kv_str(&j, "format", "inflight-compare");
	json_kv_u64(&j, "version", 1);
	for (int k = 0; k < 2; k++) {
		json_key(&j, k ? "b" : "a");
		json_obj(&j);
		json_kv_str(&j, "file", sides[k]->file);
		json_kv_u64(&j, "pid", sides[k]->p->pid);
		json_kv_str(&j, "command", sides[k]->rec->cmdline);
		json_kv_bool(&j, "exact", tl_proc__exact(sides[k]->p));
		json_obj_end(&j);
	}
	json_key(&j, "metrics");
	json_arr(&j);
	for (size_t i = 0; i < ms->n; i++) {
		const struct metric *m = &ms->m[i];
		double r;

		json_obj(&j);
		json_kv_str(&j, "group", m->group);
		json_kv_str(&j, "name", m->name);
		json_kv_str(&j, "unit", units[m->unit]);
		for (int k = 0; k < 3; k++) {
			double v = k == 0 ? m->a : k == 1 ? m->b : (ratio(m, &r) ? r : NAN);

			json_key(&j, k == 0 ? "a" : k == 1 ? "b" : "ratio");
			if (isnan(v))
				json_null(&j);
			else
				json_f64(&j, v, k < 2 && (m->unit == U_BYTES ||
							  m->unit == U_COUNT) ? 0 : 6);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end_line(&j);
}

struct compare_args {
	const char *files[2];
	int nfiles;
	const char *out;
	bool json;
};

static const struct argp_option compare_options[] = {
	{ "json", 'j', NULL, 0, "One JSON object instead of the table (docs/rendering.md)", 0 },
	{ "output", 'o', "OUT", 0, "Write to OUT instead of stdout", 0 },
	{ 0 },
};

static error_t compare_parse(int key, char *arg, struct argp_state *state)
{
	struct compare_args *a = state->input;

	switch (key) {
	case 'j':
		a->json = true;
		return 0;
	case 'o':
		a->out = arg;
		return 0;
	case ARGP_KEY_ARG:
		if (a->nfiles == 2)
			infl_die(EXIT_USAGE, "give two recordings", "unexpected argument '%s'", arg);
		a->files[a->nfiles++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (a->nfiles != 2)
			infl_die(EXIT_USAGE, "see inflight compare --help", "give two recordings, "
				 "A (before) and B (after)");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char compare_doc[] =
	"Compare two recordings: A (e.g. before a fix) and B (after). For each figure: A, B "
	"and B/A. No BPF and no privileges needed.\v"
	"EXAMPLES:\n"
	"  inflight compare incident.rec fixed.rec\n"
	"  inflight compare --json incident.rec fixed.rec -o compare.json\n"
	"\n"
	"EXIT STATUS: 0 done, 2 usage, 8 a recording is unreadable, truncated or corrupt,\n"
	"9 the output cannot be written.";

static const struct argp compare_argp = { compare_options, compare_parse, "A B", compare_doc,
					  NULL,		   NULL,	  NULL };

static int load(struct side *s)
{
	int ret = rec_open_or_complain(s->file, 0, &s->rec), err;

	if (ret)
		return ret;
	err = timeline__build(s->rec, &s->tl);
	if (err)
		return infl_err(EXIT_GENERIC, NULL, "%s: %s", s->file, strerror(-err));
	s->p = timeline__primary(s->tl);
	if (!s->p)
		return infl_err(EXIT_BAD_FILE, NULL, "%s: no traced process in it", s->file);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args a = { 0 };
	struct side sides[2] = { 0 };
	struct metrics ms = { 0 };
	FILE *out;
	int ret;

	argp_parse(&compare_argp, argc, argv, 0, NULL, &a);
	sides[0].file = a.files[0];
	sides[1].file = a.files[1];
	ret = load(&sides[0]);
	if (!ret)
		ret = load(&sides[1]);
	if (!ret) {
		collect(&ms, &sides[0], &sides[1]);
		ret = ms.m ? render_output_open(a.out, &out)
			   : infl_err(EXIT_GENERIC, NULL, "compare: %s", strerror(ENOMEM));
	}
	if (!ret) {
		if (a.json)
			print_json(out, &sides[0], &sides[1], &ms);
		else
			print_text(out, &sides[0], &sides[1], &ms);
		ret = render_output_close(out, a.out, "comparison", 0);
	}
	for (int k = 0; k < 2; k++) {
		timeline__free(sides[k].tl);
		recording__free(sides[k].rec);
	}
	free(ms.m);
	return ret;
}
