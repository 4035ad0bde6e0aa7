// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format html`: one self-contained page of one process (no network: the style,
 * the script and the data are all inline). The stacked timeline of tracked bytes by stage
 * or by class with the RSS line and the peak, drawn by the page's own script from the
 * embedded columns (model/columns.h): hover for the composition at that instant, the wheel
 * zooms, a drag pans. Below it the peak's composition (stage x class) and dwell per stage,
 * as tables written here. Every string from the recording is escaped for HTML, and the data
 * block cannot close its <script> element.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "model/columns.h"
#include "render/html_assets.h"
#include "render/render.h"
#include "render/svg_plot.h"
#include "model/proc_facts.h"

#define HTML_COLS 4000 /* columns embedded: the zoom's finest detail */

/* Copies JSON text into the page: '<', '>' and '&' (only ever inside strings) become
 * escapes, so no string can end the <script> element that holds the data. */
static void json_into_html(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '<')
			fputs("\\u003c", f);
		else if (s[i] == '>')
			fputs("\\u003e", f);
		else if (s[i] == '&')
			fputs("\\u0026", f);
		else
			fputc(s[i], f);
	}
}

static void series_names(struct json *j, const char *key, bool by_stage, __u32 mask,
			 const struct infl_names *nm, unsigned *order, int *n)
{
	*n = 0;
	json_key(j, key);
	json_arr(j);
	for (unsigned i = 0; i < (by_stage ? INFL_SLOTS : INFL_CLASSES); i++) {
		/* stages stack from no stage up, in id order, as in the SVG */
		unsigned k = by_stage ? (i == 0 ? INFL_SLOT_NONE : i - 1) : i;

		if (!(mask & (1u << k)))
			continue;
		json_obj(j);
		json_kv_str(j, "name", by_stage ? names__stage(nm, k) : names__cls(nm, k));
		json_kv_str(j, "color", by_stage ? svg_plot__stage_color(k) : svg_plot__class_color(k));
		json_obj_end(j);
		order[(*n)++] = k;
	}
	json_arr_end(j);
}

static void columns_json(struct json *j, const struct timeline *tl, const struct column *col,
			 int n, const unsigned *cls, int ncls, const unsigned *slots, int nslots)
{
	json_key(j, "cols");
	json_obj(j);
	json_kv_f64(j, "dt", n ? render__t(tl, col[0].t1) - render__t(tl, col[0].t0) : 0, 9);
	json_key(j, "t");
	json_arr(j);
	for (int i = 0; i < n; i++)
		json_f64(j, render__t(tl, col[i].t0), 9);
	json_arr_end(j);
	json_key(j, "at");
	json_arr(j);
	for (int i = 0; i < n; i++)
		json_f64(j, render__t(tl, col[i].at), 6);
	json_arr_end(j);
	json_key(j, "total");
	json_arr(j);
	for (int i = 0; i < n; i++)
		json_u64(j, col[i].total);
	json_arr_end(j);
	json_key(j, "rss");
	json_arr(j);
	for (int i = 0; i < n; i++)
		json_u64(j, col[i].rss);
	json_arr_end(j);
	for (int w = 0; w < 3; w++) {
		json_key(j, w == 0 ? "cls" : w == 1 ? "slot" : "own");
		json_arr(j);
		for (int i = 0; i < n; i++) {
			json_arr(j);
			for (int k = 0; k < (w ? nslots : ncls); k++)
				json_u64(j, w == 0 ? col[i].cls[cls[k]] : w == 1 ? col[i].slot[slots[k]]
								    : col[i].owners_max[slots[k]]);
			json_arr_end(j);
		}
		json_arr_end(j);
	}
	json_obj_end(j);
}

static void peak_json(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	json_key(j, "peak");
	json_obj(j);
	json_kv_u64(j, "bytes", p->peak_bytes);
	json_kv_u64(j, "bufs", p->peak_bufs);
	json_kv_f64(j, "time_s", render__t(tl, p->peak_ts), 6);
	json_obj_end(j);
	json_key(j, "oom");
	if (!p->oom.ns) {
		json_null(j);
		return;
	}
	json_obj(j);
	json_kv_f64(j, "time_s", render__t(tl, p->oom.ns), 6);
	json_kv_u64(j, "tracked_bytes", p->oom.tracked_bytes);
	json_obj_end(j);
}

/* The data block: everything the script draws. */
static int data_block(FILE *f, const struct timeline *tl, const struct tl_proc *p,
		      const struct column *col, int n)
{
	const struct infl_names *nm = &tl->rec->names;
	unsigned cls[INFL_CLASSES], slots[INFL_SLOTS];
	int ncls, nslots;
	char clock[96], *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct json j;
	__u64 top = p->peak_bytes > p->rss_peak ? p->peak_bytes : p->rss_peak;

	if (!m)
		return -ENOMEM;
	snprintf(clock, sizeof(clock), "time since the first probe event (pid %u)", tl->t0_pid);
	json_init(&j, m);
	json_obj(&j);
	json_kv_str(&j, "clock", clock);
	json_kv_f64(&j, "t0", n ? render__t(tl, col[0].t0) : 0, 9);
	json_kv_f64(&j, "t1", n ? render__t(tl, col[n - 1].t1) : 0, 9);
	json_kv_f64(&j, "ymax", svg_plot__ymax(top), 0);
	series_names(&j, "classes", false, svg_plot__classes_used(col, n), nm, cls, &ncls);
	series_names(&j, "stages", true, svg_plot__slots_used(col, n), nm, slots, &nslots);
	columns_json(&j, tl, col, n, cls, ncls, slots, nslots);
	peak_json(&j, tl, p);
	json_obj_end(&j);
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	fputs("<script type=\"application/json\" id=\"data\">", f);
	json_into_html(f, buf, len);
	fputs("</script>\n", f);
	free(buf);
	return 0;
}

static void peak_table(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	__u32 classes = 0;
	char b[FMT_LEN];

	for (unsigned c = 0; c < INFL_CLASSES; c++)
		for (unsigned s = 0; s < INFL_SLOTS; s++)
			if (p->peak[c][s].bytes)
				classes |= 1u << c;
	fprintf(f, "<h2>At the peak: %s in %" PRIu64 " buffers at %.3f s</h2>\n",
		fmt_bytes(b, p->peak_bytes), (uint64_t)p->peak_bufs, render__t(tl, p->peak_ts));
	fprintf(f, "<table class=\"t\" id=\"peak-table\" data-bytes=\"%" PRIu64 "\" "
		"data-time-s=\"%.6f\">\n<tr><th>stage</th><th>owners</th><th>bytes</th>",
		(uint64_t)p->peak_bytes, render__t(tl, p->peak_ts));
	for (unsigned c = 0; c < INFL_CLASSES; c++)
		if (classes & (1u << c)) {
			fputs("<th>", f);
			svg_plot__text(f, names__cls(nm, c), 31);
			fputs("</th>", f);
		}
	fputs("</tr>\n", f);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		__u64 v = 0;

		for (unsigned c = 0; c < INFL_CLASSES; c++)
			v += p->peak[c][s].bytes;
		if (!v && !p->peak_owners[s])
			continue;
		fputs("<tr data-stage=\"", f);
		svg_plot__text(f, names__stage(nm, s), 31);
		fprintf(f, "\" data-bytes=\"%" PRIu64 "\"><td>", (uint64_t)v);
		svg_plot__text(f, names__stage(nm, s), 31);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%s</td>", (uint64_t)p->peak_owners[s],
			fmt_bytes(b, v));
		for (unsigned c = 0; c < INFL_CLASSES; c++)
			if (classes & (1u << c))
				fprintf(f, "<td title=\"%" PRIu64 " bytes\">%s</td>",
					(uint64_t)p->peak[c][s].bytes,
					p->peak[c][s].bytes ? fmt_bytes(b, p->peak[c][s].bytes) : "");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void dwell_table(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN];
	unsigned __int128 all = 0;

	for (unsigned s = 0; s < INFL_SLOTS; s++)
		all += tl_proc__slot_byte_ns(p, s);
	fputs("<h2>Per stage: dwell and memory x time</h2>\n<table class=\"t\" id=\"dwell-table\">"
	      "<tr><th>stage</th><th>stays</th><th>mean dwell</th><th>total dwell</th>"
	      "<th>most owners at once</th><th>memory x time</th><th>share</th></tr>\n", f);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		unsigned __int128 bn = tl_proc__slot_byte_ns(p, s);
		double mean = tl_proc__mean_dwell_ms(p, s);

		if (!(tl_proc__used_slots(p) & (1u << s)))
			continue;
		fputs("<tr data-stage=\"", f);
		svg_plot__text(f, names__stage(nm, s), 31);
		fprintf(f, "\" data-mean-ms=\"%.6f\" data-stays=\"%" PRIu64 "\"><td>",
			mean < 0 ? 0 : mean, (uint64_t)(s < INFL_MAX_STAGES ? p->dwell_count[s] : 0));
		svg_plot__text(f, names__stage(nm, s), 31);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%" PRIu64 "</td>"
			"<td>%s x s</td><td>%.1f%%</td></tr>\n",
			(uint64_t)(s < INFL_MAX_STAGES ? p->dwell_count[s] : 0),
			mean < 0 ? "-" : fmt_duration(b1, (__u64)(mean * 1e6)),
			s < INFL_MAX_STAGES && p->dwell_count[s] ? fmt_duration(b2, p->dwell_sum_ns[s]) : "-",
			(uint64_t)p->owners_peak[s], fmt_bytes(b3, (__u64)(bn / 1000000000u)),
			all ? 100.0 * (double)bn / (double)all : 0.0);
	}
	fputs("</table>\n", f);
}

static void head(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN];

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n<title>inflight: ", f);
	svg_plot__text(f, p->comm[0] ? p->comm : "process", 64);
	fprintf(f, " (pid %u)</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", p->pid, html_css);
	svg_plot__text(f, p->comm[0] ? p->comm : "process", 64);
	fprintf(f, " (pid %u): which stage holds the memory, and what it is</h1>\n"
		"<div class=\"facts cmd\" id=\"command\">", p->pid);
	svg_plot__text(f, timeline__command(tl, p), 4096);
	fputs("</div>\n<div class=\"facts\">host ", f);
	svg_plot__text(f, tl->rec->host, 64);
	fprintf(f, "; peak %s tracked, RSS peak %s; %s from the first event to the %s; %" PRIu64
		" owner%s, %" PRIu64 " done%s</div>\n", fmt_bytes(b1, p->peak_bytes),
		fmt_bytes(b2, p->rss_peak),
		fmt_duration(b3, p->t_end > tl->t0 ? p->t_end - tl->t0 : 0),
		p->exited ? "exit" : "end", (uint64_t)p->nlives, fmt_plural(p->nlives),
		(uint64_t)p->retired,
		tl_proc__exact(p) ? "" : "; events were lost: approximate");
	if (p->oom.ns) {
		char oom[160];

		fputs("<div class=\"facts oom\" id=\"oom\">OOM-KILLED: ", f);
		svg_plot__text(f, proc_facts__oom_text(oom, sizeof(oom), &p->oom, tl->t0), 160);
		fputs("</div>\n", f);
	}
	fputs("<div class=\"bar\"><button id=\"by-stage\">by stage</button><button id=\"by-class\">"
	      "by class</button><button id=\"zoom-in\">zoom in</button><button id=\"zoom-out\">"
	      "zoom out</button><button id=\"reset\">whole run</button><span id=\"range\"></span>"
	      "</div>\n<canvas id=\"chart\"></canvas>\n<div id=\"legend\"></div>\n"
	      "<div id=\"tip\"></div>\n<p class=\"note\">Hover for the composition; the wheel zooms, "
	      "a drag pans, a double click shows the whole run. Each column shows the instant of "
	      "its largest total.</p>\n", f);
}

int render__html(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct tl_proc *p = render__proc(tl, o);
	int ncols = o->columns > 0 && o->columns < HTML_COLS ? o->columns : HTML_COLS;
	struct column *col;
	__u64 t1;
	int err;

	if (!p) {
		fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
		      "inflight</title></head><body><p>no traced process in this recording</p>"
		      "</body></html>\n", f);
		return render__finish(f);
	}
	t1 = p->t_end > tl->t0 ? p->t_end : tl->t0 + 1;
	col = calloc(ncols, sizeof(*col));
	if (!col)
		return -ENOMEM;
	err = columns__build(p, tl->t0, t1, ncols, col);
	if (!err) {
		head(f, tl, p);
		peak_table(f, tl, p);
		dwell_table(f, tl, p);
		err = data_block(f, tl, p, col, ncols);
	}
	free(col);
	if (err)
		return err;
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", html_js);
	return render__finish(f);
}
