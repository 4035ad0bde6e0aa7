// SPDX-License-Identifier: BSD-2-Clause
/* compare's outputs: text, JSON, SVG (analysis/compare.h). render/render.h */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "util/sanitize.h"
#include "contract/names.h"
#include "model/clock.h"
#include "model/proc_facts.h"
#include "model/columns.h"
#include "analysis/compare.h"
#include "render/render.h"
#include "render/svg_plot.h"

#define WIDTH 79

/* `text` from column `col` on, escaped (util/sanitize.h) and wrapped between words at
 * WIDTH, continuing at `indent`; never cut */
static void wrap(FILE *f, int col, int indent, const char *raw)
{
	char *text = san_dup(raw ? raw : "");
	size_t len = text ? strlen(text) : 0, at = 0;

	while (at < len) {
		size_t w = WIDTH - col, cut = len - at <= w ? len - at : w;

		if (at + cut < len) {
			size_t sp = cut;

			while (sp > 0 && text[at + sp] != ' ')
				sp--;
			if (sp > 0)
				cut = sp;
			else /* one word wider than the line: it goes whole, never cut */
				while (at + cut < len && text[at + cut] != ' ')
					cut++;
		}
		fprintf(f, "%.*s\n", (int)cut, text + at);
		at += cut;
		while (at < len && text[at] == ' ')
			at++;
		if (at < len)
			col = fprintf(f, "%*s", indent, "");
	}
	if (!len)
		fputc('\n', f);
	free(text);
}

static const char *value(char buf[FMT_LEN], enum cmp_unit u, double v)
{
	char b[FMT_LEN];

	if (isnan(v))
		return "-";
	switch (u) {
	case U_BYTES:
		return fmt_bytes(buf, (__u64)v);
	case U_NS:
		return fmt_duration(buf, (__u64)v);
	case U_BYTE_S:
		snprintf(buf, FMT_LEN, "%s x s", fmt_bytes(b, (__u64)v));
		return buf;
	case U_RATE:
		snprintf(buf, FMT_LEN, "%.1f", v);
		return buf;
	case U_SHARE:
		snprintf(buf, FMT_LEN, "%.1f%%", v * 100);
		return buf;
	case U_COUNT:
	default:
		snprintf(buf, FMT_LEN, "%.0f", v);
		return buf;
	}
}

static bool ratio(const struct cmp_metric *m, double *r)
{
	if (isnan(m->v[0]) || isnan(m->v[1]) || m->v[0] == 0 || m->unit == U_SHARE)
		return false;
	*r = m->v[1] / m->v[0];
	return true;
}

static void runs_text(FILE *f, const struct cmp *c, int s)
{
	const struct cmp_side *sd = &c->side[s];
	char b[FMT_LEN];

	for (size_t i = 0; i < sd->n; i++) {
		const struct cmp_run *r = &sd->runs[i];
		int col;

		if (sd->n > 1)
			fprintf(f, "%c%zu ", 'A' + s, i + 1);
		else
			fprintf(f, "%c  ", 'A' + s);
		wrap(f, 3, 3, r->file);
		col = fprintf(f, "   pid %u: ", r->p->pid);
		wrap(f, col, col, timeline__command(r->tl, r->p));
		fprintf(f, "   %s from its first event to its %s%s\n",
			fmt_duration(b, r->p->first_ts && r->p->t_end > r->p->first_ts ?
				     r->p->t_end - r->p->first_ts : 0),
			r->p->exited ? "exit" : "end",
			tl_proc__exact(r->p) ? "" : "; events were lost: approximate");
	}
}

int render__compare_text(FILE *f, const struct cmp *c)
{
	const char *group = NULL, *line = c->verdict;
	char b1[FMT_LEN], b2[FMT_LEN];

	runs_text(f, c, 0);
	runs_text(f, c, 1);
	fprintf(f, "\nverdict (times: each run from its own first probe event)\n");
	while (*line) {
		const char *eol = strchr(line, '\n');
		char one[1024];
		size_t n = eol ? (size_t)(eol - line) : strlen(line);

		snprintf(one, sizeof(one), "%.*s", (int)n, line);
		fputs("  ", f);
		wrap(f, 2, 12, one);
		line += n + (eol != NULL);
	}
	fprintf(f, "\n%-32s %14s %14s %9s\n", c->side[0].n > 1 || c->side[1].n > 1 ?
		"(means of the runs)" : "", "A", "B", "B/A");
	for (size_t i = 0; i < c->nm; i++) {
		const struct cmp_metric *m = &c->m[i];
		double r;

		/* nothing on either side: no row (JSON keeps every figure) */
		if ((isnan(m->v[0]) || !m->v[0]) && (isnan(m->v[1]) || !m->v[1]))
			continue;
		if (m->group != group) {
			fprintf(f, "%s\n", m->group);
			group = m->group;
		}
		fprintf(f, "  %-30.30s %14s %14s", m->name, value(b1, m->unit, m->v[0]),
			value(b2, m->unit, m->v[1]));
		if (ratio(m, &r))
			fprintf(f, " %9.2f\n", r);
		else
			fprintf(f, " %9s\n", "-");
	}
	return render__finish(f);
}

static void json_num(struct json *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	if (isnan(v))
		json_null(j);
	else
		json_f64(j, v, decimals);
}

static void runs_json(struct json *j, const struct cmp *c, int s)
{
	const struct cmp_side *sd = &c->side[s];

	json_key(j, s ? "b" : "a");
	json_obj(j);
	json_key(j, "runs");
	json_arr(j);
	for (size_t i = 0; i < sd->n; i++) {
		const struct cmp_run *r = &sd->runs[i];

		json_obj(j);
		json_kv_str(j, "file", r->file);
		json_kv_u64(j, "pid", r->p->pid);
		json_kv_str(j, "command", timeline__command(r->tl, r->p));
		json_kv_bool(j, "exact", tl_proc__exact(r->p));
		json_kv_f64(j, "program_s", r->p->first_ts && r->p->t_end > r->p->first_ts ?
			    (r->p->t_end - r->p->first_ts) / 1e9 : 0, 6);
		json_kv_f64(j, "peak_time_s", clock__rel_s(r->p->peak_ts, r->tl->t0), 6);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

int render__compare_json(FILE *f, const struct cmp *c)
{
	static const char *const units[] = { "bytes", "ns", "byte_s", "per_minute", "count",
					     "share" };
	const char *line = c->verdict;
	struct json j;

	json_init(&j, f);
	json_obj(&j);
	json_kv_u64(&j, "schema", INFL_JSON_SCHEMA);
	json_kv_str(&j, "format", "inflight-compare");
	json_kv_u64(&j, "version", 2);
	json_kv_str(&j, "clock", "each run: seconds since its own first probe event");
	runs_json(&j, c, 0);
	runs_json(&j, c, 1);
	json_key(&j, "verdict");
	json_obj(&j);
	json_key(&j, "lines");
	json_arr(&j);
	while (*line) {
		const char *eol = strchr(line, '\n');
		char one[1024];
		size_t n = eol ? (size_t)(eol - line) : strlen(line);

		snprintf(one, sizeof(one), "%.*s", (int)n, line);
		json_str(&j, one);
		line += n + (eol != NULL);
	}
	json_arr_end(&j);
	json_key(&j, "findings");
	json_arr(&j);
	for (size_t i = 0; i < c->nf; i++) {
		const struct cmp_finding *x = &c->f[i];

		json_obj(&j);
		json_kv_str(&j, "what", x->what);
		json_kv_str(&j, "name", x->name);
		json_num(&j, "a", x->a, 6);
		json_num(&j, "b", x->b, 6);
		json_num(&j, "spread", x->spread, 6);
		json_key(&j, "beyond_spread");
		if (x->beyond < 0)
			json_null(&j);
		else
			json_boolean(&j, x->beyond);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_key(&j, "metrics");
	json_arr(&j);
	for (size_t i = 0; i < c->nm; i++) {
		const struct cmp_metric *m = &c->m[i];
		int d = m->unit == U_BYTES || m->unit == U_COUNT ? 0 : 6;
		double r;

		json_obj(&j);
		json_kv_str(&j, "group", m->group);
		json_kv_str(&j, "name", m->name);
		json_kv_str(&j, "unit", units[m->unit]);
		json_num(&j, "a", m->v[0], d);
		json_num(&j, "b", m->v[1], d);
		json_num(&j, "ratio", ratio(m, &r) ? r : NAN, 6);
		json_num(&j, "a_min", m->lo[0], d);
		json_num(&j, "a_max", m->hi[0], d);
		json_num(&j, "b_min", m->lo[1], d);
		json_num(&j, "b_max", m->hi[1], d);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end_line(&j);
	return render__finish(f);
}

#define PANEL_H 240

int render__compare_svg(FILE *f, const struct cmp *c)
{
	const struct cmp_run *r[2] = { &c->side[0].runs[0], &c->side[1].runs[0] };
	struct column *col[2] = { calloc(SVG_NCOLS, sizeof(struct column)),
				  calloc(SVG_NCOLS, sizeof(struct column)) };
	__u64 span = 1, top = 0;
	__u32 slots = 0;
	int err = 0, y, height;
	char cap[128];

	for (int s = 0; s < 2; s++) {
		const struct tl_proc *p = r[s]->p;
		__u64 d = p->t_end > r[s]->tl->t0 ? p->t_end - r[s]->tl->t0 : 0;

		span = d > span ? d : span;
		top = p->peak_bytes > top ? p->peak_bytes : top;
		top = p->rss_peak > top ? p->rss_peak : top;
	}
	for (int s = 0; s < 2 && !err; s++) {
		if (!col[s])
			err = -ENOMEM;
		else
			err = columns__build(r[s]->p, r[s]->tl->t0, r[s]->tl->t0 + span, SVG_NCOLS,
					     col[s]);
		if (!err)
			slots |= svg_plot__slots_used(col[s], SVG_NCOLS);
	}
	if (err) {
		free(col[0]);
		free(col[1]);
		return err;
	}
	height = 150 + 2 * (PANEL_H + 70) + 20;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>inflight compare"
		"</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		SVG_W, height, SVG_W, height);
	fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"16\" font-weight=\"bold\">A against B: "
		"which stage holds the memory, on one time and byte scale</text>\n", SVG_X0);
	y = 46;
	/* the verdict, its lines cut between words at 170 characters */
	for (const char *line = c->verdict; *line && y < 124;) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line), cut = n;
		char one[1024];

		if (n > 170) {
			cut = 170;
			while (cut > 0 && line[cut] != ' ')
				cut--;
			cut = cut ? cut : 170;
		}
		snprintf(one, sizeof(one), "%s%.*s", line == c->verdict || line[-1] == '\n' ? "" :
			 "          ", (int)cut, line);
		fprintf(f, "<text class=\"verdict\" x=\"%d\" y=\"%d\" font-size=\"11\" "
			"fill=\"#333\" xml:space=\"preserve\">", SVG_X0, y);
		svg_plot__text(f, one, sizeof(one));
		fprintf(f, "</text>\n");
		y += 14;
		line += cut;
		while (*line == ' ')
			line++;
		if (*line == '\n')
			line++;
	}
	y = 150;
	for (int s = 0; s < 2; s++) {
		struct svg_panel pn = { .y0 = y, .y1 = y + PANEL_H, .t0 = r[s]->tl->t0,
					.t1 = r[s]->tl->t0 + span, .origin = r[s]->tl->t0,
					.ymax = svg_plot__ymax(top) };
		char title[600], id[16];

		snprintf(title, sizeof(title), "%c: %s (pid %u), tracked bytes by stage, RSS",
			 'A' + s, r[s]->file, r[s]->p->pid);
		snprintf(id, sizeof(id), "%c", 'a' + s);
		svg_plot__axes(f, &pn, title, true);
		fprintf(f, "<g id=\"side-%c\">\n", 'a' + s);
		svg_plot__stack(f, &pn, col[s], SVG_NCOLS, true, slots, c->names, s ? "by-stage-b" :
			  "by-stage-a");
		svg_plot__rss(f, &pn, col[s], SVG_NCOLS);
		snprintf(id, sizeof(id), "peak-%c", 'a' + s);
		svg_plot__peak(f, &pn, r[s]->p, c->names, id);
		fprintf(f, "</g>\n");
		fprintf(f, "<text class=\"command\" x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#555\" "
			"font-family=\"monospace\">", SVG_X0, pn.y1 + 30);
		svg_plot__text(f, timeline__command(r[s]->tl, r[s]->p), 180);
		fprintf(f, "</text>\n");
		y = pn.y1 + 70;
	}
	svg_plot__legend(f, SVG_X1 + 16, 150, true, slots, c->names, true);
	snprintf(cap, sizeof(cap), "seconds since each run's first probe event");
	svg_plot__time_caption(f, y - 14, cap);
	fprintf(f, "</svg>\n");
	free(col[0]);
	free(col[1]);
	return render__finish(f);
}
