// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format svg`: one self-contained SVG (no script, no external reference) of one
 * process, answering "which stage holds the memory, and what is it": tracked bytes stacked
 * by stage, then the same bytes stacked by class, on one time and byte scale, each with the
 * RSS line and the exact peak marked and annotated with its composition; below them one
 * lane per stage with the owners in it. Each pixel column shows the composition at the
 * instant of its largest total (model/columns.h), so no peak falls between columns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "model/columns.h"
#include "render/render.h"
#include "render/svg_plot.h"
#include "model/proc_facts.h"

#define PANEL_H 250
#define TOP 92

/* The command, cut into lines of at most `w` characters between words. */
static int wrapped(FILE *f, const char *cmd, int x, int y, int w, int max_lines)
{
	size_t len = strlen(cmd), at = 0;
	int lines = 0;

	while (at < len && lines < max_lines) {
		size_t cut = len - at <= (size_t)w ? len - at : (size_t)w;
		char line[512];

		if (at + cut < len) {
			size_t sp = cut;

			while (sp > 0 && cmd[at + sp] != ' ')
				sp--;
			if (sp > 0)
				cut = sp;
		}
		snprintf(line, sizeof(line), "%.*s%s", (int)cut, cmd + at,
			 lines == max_lines - 1 && at + cut < len ? " ..." : "");
		fprintf(f, "<text class=\"command\" x=\"%d\" y=\"%d\" font-size=\"11\" "
			"fill=\"#555\" font-family=\"monospace\">", x, y + 14 * lines);
		svg_plot__text(f, line, sizeof(line));
		fprintf(f, "</text>\n");
		at += cut;
		while (at < len && cmd[at] == ' ')
			at++;
		lines++;
	}
	return lines;
}

int render__svg(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct tl_proc *p = render__proc(tl, o);
	const struct infl_names *nm = &tl->rec->names;
	struct column *col;
	struct svg_panel a, b;
	char b1[FMT_LEN], b2[FMT_LEN], b3[FMT_LEN], cap[160];
	__u32 slots, classes, lane_slots = 0;
	__u64 t1, top;
	int lines, height, y, err;

	if (!p) {
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/"
			"2000/svg\" width=\"400\" height=\"40\"><text x=\"10\" y=\"25\">no traced "
			"process in this recording</text></svg>\n");
		return render__finish(f);
	}
	t1 = p->t_end > tl->t0 ? p->t_end : tl->t0 + 1;
	col = calloc(SVG_NCOLS, sizeof(*col));
	if (!col)
		return -ENOMEM;
	err = columns__build(p, tl->t0, t1, SVG_NCOLS, col);
	if (err) {
		free(col);
		return err;
	}
	slots = svg_plot__slots_used(col, SVG_NCOLS);
	classes = svg_plot__classes_used(col, SVG_NCOLS);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++)
		if (p->owners_peak[s])
			lane_slots |= 1u << s;
	top = p->peak_bytes > p->rss_peak ? p->peak_bytes : p->rss_peak;
	a = (struct svg_panel){ .t0 = tl->t0, .t1 = t1, .origin = tl->t0, .ymax = svg_plot__ymax(top) };
	b = a;
	a.y0 = TOP + 30;
	a.y1 = a.y0 + PANEL_H;
	b.y0 = a.y1 + 50;
	b.y1 = b.y0 + PANEL_H;
	height = b.y1 + 60 + 22 * __builtin_popcount(lane_slots) + 50;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", SVG_W, height, SVG_W, height);
	fprintf(f, "<title>inflight: ");
	svg_plot__text(f, p->comm[0] ? p->comm : "process", 64);
	fprintf(f, " (pid %u)</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		p->pid);
	fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"16\" font-weight=\"bold\">", SVG_X0);
	svg_plot__text(f, p->comm[0] ? p->comm : "process", 64);
	fprintf(f, " (pid %u): which stage holds the memory, and what it is</text>\n", p->pid);
	lines = wrapped(f, timeline__command(tl, p), SVG_X0, 44, 140, 2);
	fprintf(f, "<text class=\"facts\" x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">host ",
		SVG_X0, 44 + 14 * lines);
	svg_plot__text(f, tl->rec->host, 64);
	fprintf(f, "; peak %s tracked, RSS peak %s; %s from the first event to the %s; %" PRIu64
		" owners, %" PRIu64 " done%s</text>\n", fmt_bytes(b1, p->peak_bytes),
		fmt_bytes(b2, p->rss_peak), fmt_duration(b3, p->t_end > tl->t0 ? p->t_end - tl->t0 : 0),
		p->exited ? "exit" : "end", (uint64_t)p->nlives, (uint64_t)p->retired,
		tl_proc__exact(p) ? "" : "; events were lost: approximate");
	if (p->oom.ns) {
		char oom[160];

		fprintf(f, "<text class=\"oom-facts\" x=\"%d\" y=\"%d\" font-size=\"12\" "
			"font-weight=\"bold\" fill=\"#7b1fa2\">OOM-KILLED: ", SVG_X0, 58 + 14 * lines);
		svg_plot__text(f, proc_facts__oom_text(oom, sizeof(oom), &p->oom, tl->t0), 160);
		fprintf(f, "</text>\n");
	}

	svg_plot__axes(f, &a, "tracked bytes by stage, RSS", true);
	svg_plot__stack(f, &a, col, SVG_NCOLS, true, slots, nm, "by-stage");
	svg_plot__rss(f, &a, col, SVG_NCOLS);
	svg_plot__peak(f, &a, p, nm, "peak");
	svg_plot__oom(f, &a, p);
	svg_plot__legend(f, SVG_X1 + 16, a.y0, true, slots, nm, true);

	svg_plot__axes(f, &b, "tracked bytes by class, RSS", true);
	svg_plot__stack(f, &b, col, SVG_NCOLS, false, classes, nm, "by-class");
	svg_plot__rss(f, &b, col, SVG_NCOLS);
	svg_plot__oom(f, &b, p);
	svg_plot__legend(f, SVG_X1 + 16, b.y0, false, classes, nm, true);

	y = svg_plot__lanes(f, &b, col, SVG_NCOLS, lane_slots, nm, b.y1 + 50);
	snprintf(cap, sizeof(cap), "seconds since the first probe event (pid %u); each column "
		 "shows its largest total", tl->t0_pid);
	svg_plot__time_caption(f, y + 18, cap);
	fprintf(f, "</svg>\n");
	free(col);
	return render__finish(f);
}
