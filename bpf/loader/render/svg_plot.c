// SPDX-License-Identifier: BSD-2-Clause
/* The pieces of the SVG charts. render/svg_plot.h */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/sanitize.h"
#include "util/fmt.h"
#include "render/render.h"
#include "render/svg_plot.h"

static const char *const class_palette[INFL_CLASSES] = {
	"#9c755f", "#bab0ac", "#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
	"#ff9da7", "#e15759", "#1f77b4", "#aec7e8", "#98df8a", "#c5b0d5", "#c49c94", "#dbdb8d",
	"#17becf", "#9edae5", "#393b79", /* libcuda's device, pinned host, managed */
};
/* stages in pipeline order read as a sequence: cool early, hot where things wait */
static const char *const stage_palette[INFL_MAX_STAGES] = {
	"#8dd3c7", "#bebada", "#80b1d3", "#fb8072", "#fdb462", "#b3de69", "#fccde5", "#bc80bd",
	"#ccebc5", "#ffed6f", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
};

const char *svg_plot__class_color(unsigned c)
{
	return c < INFL_CLASSES ? class_palette[c] : "#999";
}

const char *svg_plot__stage_color(unsigned s)
{
	return s < INFL_MAX_STAGES ? stage_palette[s] : "#c8c8c8";
}

void svg_plot__text(FILE *f, const char *s, size_t max)
{
	char *buf = san_dup(s ? s : "");

	if (!buf)
		return;
	/* at most `max` bytes of the escaped text, cut before a UTF-8 continuation byte */
	if (strlen(buf) > max) {
		size_t cut = max;

		while (cut && ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
		buf[cut] = 0;
	}
	for (const char *p = buf; *p; p++) {
		if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '"')
			fputs("&quot;", f);
		else
			fputc(*p, f);
	}
	free(buf);
}

/* 1, 2 or 5 x 10^k at or above v / n: a tick step giving about n ticks */
static double nice_step(double v, int n)
{
	double raw = v / n, dec = 1;

	while (dec * 10 <= raw)
		dec *= 10;
	while (dec > raw && dec > 1e-9)
		dec /= 10;
	if (raw <= dec)
		return dec;
	if (raw <= 2 * dec)
		return 2 * dec;
	if (raw <= 5 * dec)
		return 5 * dec;
	return 10 * dec;
}

/* byte ticks at round binary units: 1 MiB, 2 MiB, not 0.954 MiB */
static double byte_step(double ymax)
{
	double unit = 1;

	while (unit * 1024 * 2 <= ymax)
		unit *= 1024;
	return nice_step(ymax / unit, 5) * unit;
}

double svg_plot__ymax(__u64 top)
{
	double step;

	if (!top)
		return 1024;
	step = byte_step(top * 1.08);
	return (double)((__u64)(top * 1.05 / step) + 1) * step;
}

static double ypos(const struct svg_panel *pn, double v)
{
	return pn->y1 - (pn->y1 - pn->y0) * v / pn->ymax;
}

static double xpos(const struct svg_panel *pn, __u64 ts)
{
	__u64 span = pn->t1 > pn->t0 ? pn->t1 - pn->t0 : 0;
	double rel = ts > pn->t0 ? (double)(ts - pn->t0) : 0;

	if (rel > span)
		rel = span;
	return span ? SVG_X0 + SVG_NCOLS * rel / span : SVG_X0;
}

void svg_plot__axes(FILE *f, const struct svg_panel *pn, const char *title, bool time_labels)
{
	double secs = (pn->t1 - pn->t0) / 1e9, ts = nice_step(secs > 0 ? secs : 1, 10);
	double ys = byte_step(pn->ymax), first = 0;
	char b[FMT_LEN];

	/* ticks at round times on the clock of the labels */
	if (pn->t0 > pn->origin)
		first = ts * (__u64)((pn->t0 - pn->origin) / 1e9 / ts + 0.999999);
	fprintf(f, "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n");
	for (double y = 0; y <= pn->ymax * 1.0001; y += ys)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", SVG_X0,
			ypos(pn, y), SVG_X1, ypos(pn, y));
	for (double t = first; secs > 0 && t <= (pn->t1 - pn->origin) / 1e9 + 1e-9; t += ts) {
		double x = xpos(pn, pn->origin + (__u64)(t * 1e9));

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, pn->y0, x,
			pn->y1);
	}
	fprintf(f, "</g>\n<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">", SVG_X0,
		pn->y0 - 8);
	svg_plot__text(f, title, 200);
	fprintf(f, "</text>\n");
	for (double y = 0; y <= pn->ymax * 1.0001; y += ys)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", SVG_X0 - 6,
			ypos(pn, y) + 4, fmt_bytes(b, (__u64)y));
	for (double t = first; time_labels && secs > 0 &&
	     t <= (pn->t1 - pn->origin) / 1e9 + 1e-9; t += ts)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g s</text>\n",
			xpos(pn, pn->origin + (__u64)(t * 1e9)), pn->y1 + 15, t);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", SVG_X0,
		pn->y1, SVG_X1, pn->y1);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n</g>\n",
		SVG_X0, pn->y0, SVG_X0, pn->y1);
}

void svg_plot__time_caption(FILE *f, int y, const char *what)
{
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#333\" "
		"text-anchor=\"middle\">", (SVG_X0 + SVG_X1) / 2, y);
	svg_plot__text(f, what, 200);
	fprintf(f, "</text>\n");
}

static __u64 series(const struct column *c, bool by_stage, unsigned k)
{
	return by_stage ? c->slot[k] : c->cls[k];
}

/* The order series stack in, bottom first: buffers of no stage (the process-wide ones,
 * such as an SRS) under the stages, the stages in id order (the pipeline's). */
static unsigned series_at(bool by_stage, unsigned i)
{
	if (!by_stage)
		return i;
	return i == 0 ? INFL_SLOT_NONE : i - 1;
}

/* A polyline along the tops of the columns, one point per change of height. */
static void tops(FILE *f, const struct svg_panel *pn, const __u64 *v, int n, bool reverse)
{
	double last = -1;

	for (int k = 0; k < n; k++) {
		int i = reverse ? n - 1 - k : k;
		double y = ypos(pn, v[i]);
		double xa = SVG_X0 + (double)SVG_NCOLS * (reverse ? i + 1 : i) / n;
		double xb = SVG_X0 + (double)SVG_NCOLS * (reverse ? i : i + 1) / n;

		if (y != last)
			fprintf(f, " L%.1f %.1f", xa, y);
		if (k == n - 1 || ypos(pn, v[reverse ? i - 1 : i + 1]) != y)
			fprintf(f, " L%.1f %.1f", xb, y);
		last = y;
	}
}

void svg_plot__stack(FILE *f, const struct svg_panel *pn, const struct column *col, int n,
	       bool by_stage, __u32 mask, const struct infl_names *nm, const char *id)
{
	__u64 *below = calloc(n, sizeof(*below)), *above = calloc(n, sizeof(*above));
	unsigned nser = by_stage ? INFL_SLOTS : INFL_CLASSES;

	if (!below || !above) {
		free(below);
		free(above);
		return;
	}
	fprintf(f, "<g class=\"areas\" id=\"%s\" stroke=\"none\">\n", id);
	for (unsigned i = 0; i < nser; i++) {
		unsigned k = series_at(by_stage, i);
		const char *name = by_stage ? names__stage(nm, k) : names__cls(nm, k);

		if (!(mask & (1u << k)))
			continue;
		for (int c = 0; c < n; c++)
			above[c] = below[c] + series(&col[c], by_stage, k);
		fprintf(f, "<path data-series=\"");
		svg_plot__text(f, name, 64);
		fprintf(f, "\" fill=\"%s\" d=\"M%d %.1f", by_stage ? svg_plot__stage_color(k) :
			svg_plot__class_color(k), SVG_X0, ypos(pn, below[0]));
		tops(f, pn, above, n, false);
		tops(f, pn, below, n, true);
		fprintf(f, " Z\"><title>");
		svg_plot__text(f, name, 64);
		fprintf(f, "</title></path>\n");
		memcpy(below, above, n * sizeof(*below));
	}
	fprintf(f, "</g>\n");
	free(below);
	free(above);
}

void svg_plot__rss(FILE *f, const struct svg_panel *pn, const struct column *col, int n)
{
	int i = 0;

	while (i < n && !col[i].rss)
		i++;
	if (i == n)
		return;
	fprintf(f, "<path class=\"rss\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" "
		"d=\"M%.1f %.1f", SVG_X0 + (double)SVG_NCOLS * i / n, ypos(pn, col[i].rss));
	for (; i < n; i++)
		fprintf(f, " V%.1f H%.1f", ypos(pn, col[i].rss),
			SVG_X0 + (double)SVG_NCOLS * (i + 1) / n);
	fprintf(f, "\"><title>RSS</title></path>\n");
}

/* The classes of one stage at the peak, largest first, as "abc 150M, aux 48.4M" */
static void peak_classes(char *out, size_t len, const struct tl_proc *p, unsigned s,
			 const struct infl_names *nm, int most)
{
	bool used[INFL_CLASSES] = { false };
	size_t o = 0;

	out[0] = 0;
	for (int k = 0; k < most; k++) {
		int best = -1;
		char b[FMT_LEN];

		for (int c = 0; c < INFL_CLASSES; c++)
			if (!used[c] && p->peak[c][s].bytes &&
			    (best < 0 || p->peak[c][s].bytes > p->peak[best][s].bytes))
				best = c;
		if (best < 0)
			break;
		used[best] = true;
		o += snprintf(out + o, o < len ? len - o : 0, "%s%s %s", k ? ", " : "",
			      names__cls(nm, best), fmt_bytes_short(b, p->peak[best][s].bytes));
	}
}

#define LABEL_CHAR_W 7.6 /* a 13 px bold sans-serif character, wide: the label's extent */

/*
 * The peak's label beside its point, drawn last: below the composition box `box` (x, y,
 * width, height) when beside the point it would fall under it, and on an opaque ground, so
 * that the RSS line or the areas never run through it.
 */
static void peak_label(FILE *f, const struct svg_panel *pn, const char *label, double x,
		       double y, bool left, const double box[4])
{
	double w = strlen(label) * LABEL_CHAR_W, lx = left ? x - 8 : x + 8;
	double ly = y < pn->y0 + 30 ? y + 18 : y - 8, x0 = left ? lx - w : lx;

	if (x0 < box[0] + box[2] && x0 + w > box[0] && ly - 13 < box[1] + box[3] &&
	    ly + 4 > box[1])
		ly = box[1] + box[3] + 18;
	fprintf(f, "<rect class=\"label-bg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"18\" fill=\"white\" fill-opacity=\"0.9\"/>\n", x0 - 3, ly - 14, w + 6);
	fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"13\" "
		"font-weight=\"bold\" fill=\"#c00\" text-anchor=\"%s\">%s</text>\n", lx, ly,
		left ? "end" : "start", label);
}

void svg_plot__peak(FILE *f, const struct svg_panel *pn, const struct tl_proc *p,
	      const struct infl_names *nm, const char *id)
{
	const struct timeline tl0 = { .t0 = pn->origin };
	double x = xpos(pn, p->peak_ts), y = ypos(pn, p->peak_bytes);
	bool left = x > SVG_X0 + SVG_NCOLS * 0.55;
	char b[FMT_LEN], label[128];
	unsigned order[INFL_SLOTS];
	int n = 0, rows = 0;
	double bx, by;

	if (!p->peak_bytes)
		return;
	snprintf(label, sizeof(label), "peak %s at %.3f s", fmt_bytes(b, p->peak_bytes),
		 render__t(&tl0, p->peak_ts));
	fprintf(f, "<g class=\"peak\" id=\"%s\">\n<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		"y2=\"%d\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n", id, x, pn->y0, x, pn->y1);
	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#c00\"/>\n", x, y);
	/* the composition: stages by bytes at the peak, largest first */
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		__u64 v = 0;

		for (int c = 0; c < INFL_CLASSES; c++)
			v += p->peak[c][s].bytes;
		if (v)
			order[n++] = s;
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0; j--) {
			__u64 a = 0, bb = 0;

			for (int c = 0; c < INFL_CLASSES; c++) {
				a += p->peak[c][order[j]].bytes;
				bb += p->peak[c][order[j - 1]].bytes;
			}
			if (a > bb) {
				unsigned t = order[j];

				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		}
	rows = n < 6 ? n : 6;
	bx = left ? SVG_X0 + 12 : SVG_X1 - 452;
	by = pn->y0 + 8;
	fprintf(f, "<g class=\"composition\" font-size=\"11\">\n<rect x=\"%.1f\" y=\"%.1f\" "
		"width=\"440\" height=\"%d\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#c00\" "
		"stroke-width=\"0.8\"/>\n", bx, by, 20 + 15 * rows);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\" fill=\"#c00\">at the peak "
		"(%" PRIu64 " buffer%s):</text>\n", bx + 8, by + 14, (uint64_t)p->peak_bufs,
		fmt_plural(p->peak_bufs));
	for (int i = 0; i < rows; i++) {
		unsigned s = order[i];
		__u64 v = 0;
		char cl[160];

		for (int c = 0; c < INFL_CLASSES; c++)
			v += p->peak[c][s].bytes;
		peak_classes(cl, sizeof(cl), p, s, nm, 3);
		fprintf(f, "<text class=\"row\" x=\"%.1f\" y=\"%.1f\"><tspan fill=\"%s\">"
			"&#9632;</tspan> <tspan font-weight=\"bold\">", bx + 8, by + 29 + 15 * i,
			svg_plot__stage_color(s));
		svg_plot__text(f, names__stage(nm, s), 31);
		fprintf(f, "</tspan> %s, %" PRIu64 " owner%s: ", fmt_bytes(b, v),
			(uint64_t)p->peak_owners[s], fmt_plural(p->peak_owners[s]));
		svg_plot__text(f, cl, 120);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</g>\n");
	peak_label(f, pn, label, x, y, left, (double[4]){ bx, by, 440, 20 + 15 * rows });
	fprintf(f, "</g>\n");
}

void svg_plot__oom(FILE *f, const struct svg_panel *pn, const struct tl_proc *p)
{
	const struct timeline tl0 = { .t0 = pn->origin };
	double x = xpos(pn, p->oom.ns);
	char b[FMT_LEN];

	if (!p->oom.ns)
		return;
	fprintf(f, "<g class=\"oom\">\n<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
		"stroke=\"#7b1fa2\" stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%d\" font-size=\"12\" "
		"font-weight=\"bold\" fill=\"#7b1fa2\" text-anchor=\"end\" stroke=\"white\" "
		"stroke-width=\"3\" paint-order=\"stroke\">OOM kill at %.3f s (%s tracked)</text>\n"
		"</g>\n", x, pn->y0, x, pn->y1, x - 4, pn->y1 - 8, render__t(&tl0, p->oom.ns),
		fmt_bytes(b, p->oom.tracked_bytes));
}

int svg_plot__lanes(FILE *f, const struct svg_panel *pn, const struct column *col, int n,
	      __u32 slots, const struct infl_names *nm, int y0)
{
	const int h = 22;
	int y = y0;

	fprintf(f, "<g class=\"lanes\" font-size=\"11\">\n<text x=\"%d\" y=\"%d\" "
		"font-size=\"13\" font-weight=\"bold\">owners per stage (the most within each "
		"column)</text>\n", SVG_X0, y0 - 8);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		__u64 most = 0;

		if (!(slots & (1u << s)))
			continue;
		for (int i = 0; i < n; i++)
			if (col[i].owners_max[s] > most)
				most = col[i].owners_max[s];
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", SVG_X0 - 6, y + h / 2 + 3);
		svg_plot__text(f, names__stage(nm, s), 31);
		fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"fill=\"#f4f4f4\"/>\n", SVG_X0, y, SVG_NCOLS, h - 4);
		if (most) {
			fprintf(f, "<path data-stage=\"");
			svg_plot__text(f, names__stage(nm, s), 31);
			fprintf(f, "\" fill=\"%s\" stroke=\"#555\" stroke-width=\"0.4\" "
				"d=\"M%d %d", svg_plot__stage_color(s), SVG_X0, y + h - 4);
			for (int i = 0; i < n; i++) {
				double hh = (h - 6) * (double)col[i].owners_max[s] / most;

				/* one step per change of the count */
				if (i && col[i].owners_max[s] == col[i - 1].owners_max[s])
					continue;
				fprintf(f, " H%.1f V%.1f", SVG_X0 + (double)SVG_NCOLS * i / n,
					y + h - 4 - hh);
			}
			fprintf(f, " H%d", SVG_X1);
			fprintf(f, " V%d Z\"><title>", y + h - 4);
			svg_plot__text(f, names__stage(nm, s), 31);
			fprintf(f, ": at most %" PRIu64 " owners</title></path>\n", (uint64_t)most);
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\">max %" PRIu64 "</text>\n", SVG_X1 + 6,
			y + h / 2 + 3, (uint64_t)most);
		y += h;
	}
	fprintf(f, "</g>\n");
	(void)pn;
	return y;
}

int svg_plot__legend(FILE *f, int x, int y, bool by_stage, __u32 mask, const struct infl_names *nm,
	       bool rss)
{
	unsigned nser = by_stage ? INFL_SLOTS : INFL_CLASSES;

	fprintf(f, "<g class=\"legend\" font-size=\"12\">\n");
	/* top to bottom as the areas stack: the last series is drawn on top */
	for (unsigned i = nser; i-- > 0;) {
		unsigned k = series_at(by_stage, i);

		if (!(mask & (1u << k)))
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">", x, y, by_stage ? svg_plot__stage_color(k) :
			svg_plot__class_color(k), x + 18, y + 10);
		svg_plot__text(f, by_stage ? names__stage(nm, k) : names__cls(nm, k), 31);
		fprintf(f, "</text>\n");
		y += 17;
	}
	if (rss) {
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\" "
			"stroke-width=\"1.5\"/><text x=\"%d\" y=\"%d\">RSS</text>\n", x, y + 6,
			x + 12, y + 6, x + 18, y + 10);
		y += 17;
	}
	fprintf(f, "</g>\n");
	return y;
}

__u32 svg_plot__slots_used(const struct column *col, int n)
{
	__u32 m = 0;

	for (int i = 0; i < n; i++)
		for (unsigned s = 0; s < INFL_SLOTS; s++)
			if (col[i].slot[s])
				m |= 1u << s;
	return m;
}

__u32 svg_plot__classes_used(const struct column *col, int n)
{
	__u32 m = 0;

	for (int i = 0; i < n; i++)
		for (unsigned c = 0; c < INFL_CLASSES; c++)
			if (col[i].cls[c])
				m |= 1u << c;
	return m;
}
