// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format svg`: one self-contained SVG (no script, no external reference) of one
 * process: a stacked area of tracked bytes by class over time with the RSS line on the same
 * scale and the exact peak marked and annotated; below it one lane per stage with the
 * number of owners in it over time; axes, grid and a legend. Each pixel column shows the
 * composition at the instant of the largest total within it, so no peak falls between
 * columns; each lane shows the most owners within the column.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "render/render.h"

#define W 1200
#define PLOT_X0 90
#define PLOT_X1 990
#define PLOT_Y0 80
#define PLOT_Y1 400
#define LANE_Y0 450
#define LANE_H 26
#define NCOLS (PLOT_X1 - PLOT_X0)

static const char *const palette[INFL_MAX_CLASSES] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
	"#9c755f", "#bab0ac", "#1f77b4", "#aec7e8", "#98df8a", "#c5b0d5", "#c49c94", "#dbdb8d",
};

/* Text into XML: markup escaped, anything but printable ASCII replaced, so it always parses. */
static void xml_text(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; *s && i < max; s++, i++) {
		unsigned char ch = *s;

		if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '"')
			fputs("&quot;", f);
		else
			fputc(ch >= 0x20 && ch < 0x7f ? ch : '?', f);
	}
}

struct column {
	__u64 cls[INFL_MAX_CLASSES]; /* at the column's largest total */
	__u64 total;
	__u64 owners[INFL_MAX_STAGES]; /* most within the column */
};

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

static void sample_columns(struct tl_cursor *c, const struct timeline *tl, __u64 span,
			   struct column *col)
{
	struct column cur = { 0 };

	for (int i = 0; i < NCOLS; i++) {
		__u64 end = tl->t0 + (__u64)((double)span * (i + 1) / NCOLS);

		/* the state carried into the column counts too */
		col[i] = cur;
		for (unsigned s = 0; s < INFL_MAX_STAGES; s++)
			col[i].owners[s] = c->st->owners[s];
		while (tl_cursor__next_ts(c) < end || (i == NCOLS - 1 &&
						       tl_cursor__next_ts(c) != UINT64_MAX)) {
			tl_cursor__step(c);
			for (unsigned s = 0; s < INFL_MAX_STAGES; s++)
				if (c->st->owners[s] > col[i].owners[s])
					col[i].owners[s] = c->st->owners[s];
			if (c->st->total_bytes > col[i].total) {
				col[i].total = c->st->total_bytes;
				for (unsigned k = 0; k < INFL_MAX_CLASSES; k++)
					col[i].cls[k] = tl_state__class_bytes(c->st, k);
			}
		}
		/* what the next column starts from */
		cur.total = c->st->total_bytes;
		for (unsigned k = 0; k < INFL_MAX_CLASSES; k++)
			cur.cls[k] = tl_state__class_bytes(c->st, k);
	}
}

static double ypos(__u64 v, double ymax)
{
	return PLOT_Y1 - (PLOT_Y1 - PLOT_Y0) * (double)v / ymax;
}

static void axes(FILE *f, const struct timeline *tl, __u64 span, double ymax, int lanes_y1)
{
	double secs = span / 1e9, ts = nice_step(secs, 10), unit = 1, ys;

	/* byte ticks at round binary units: 1 MiB, 2 MiB, not 0.954 MiB */
	while (unit * 1024 * 2 <= ymax)
		unit *= 1024;
	ys = nice_step(ymax / unit, 6) * unit;
	char b[FMT_LEN];

	fprintf(f, "<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">\n");
	for (double y = 0; y <= ymax * 1.0001; y += ys)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PLOT_X0,
			ypos((__u64)y, ymax), PLOT_X1, ypos((__u64)y, ymax));
	for (double t = 0; t <= secs * 1.0001 && secs > 0; t += ts)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n",
			PLOT_X0 + NCOLS * t / secs, PLOT_Y0, PLOT_X0 + NCOLS * t / secs, lanes_y1);
	fprintf(f, "</g>\n<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	for (double y = 0; y <= ymax * 1.0001; y += ys)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PLOT_X0 - 6,
			ypos((__u64)y, ymax) + 4, fmt_bytes(b, (__u64)y));
	for (double t = 0; t <= secs * 1.0001 && secs > 0; t += ts)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g s</text>\n",
			PLOT_X0 + NCOLS * t / secs, lanes_y1 + 16, t);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the recording "
		"started</text>\n", (PLOT_X0 + PLOT_X1) / 2, lanes_y1 + 34);
	fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">"
		"tracked bytes, RSS</text>\n", (PLOT_Y0 + PLOT_Y1) / 2);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", PLOT_X0,
		PLOT_Y1, PLOT_X1, PLOT_Y1);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", PLOT_X0,
		PLOT_Y0, PLOT_X0, PLOT_Y1);
	fprintf(f, "</g>\n");
	(void)tl;
}

static void areas(FILE *f, const struct timeline *tl, const struct column *col, __u32 classes,
		  double ymax)
{
	static __u64 below[NCOLS];
	const struct infl_names *nm = &tl->rec->names;

	memset(below, 0, sizeof(below));
	fprintf(f, "<g class=\"areas\" stroke=\"none\">\n");
	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++) {
		if (!(classes & (1u << c)))
			continue;
		fprintf(f, "<path fill=\"%s\" fill-opacity=\"0.85\" d=\"M%d %.1f", palette[c],
			PLOT_X0, ypos(below[0], ymax));
		for (int i = 0; i < NCOLS; i++)
			fprintf(f, " L%d %.1f L%d %.1f", PLOT_X0 + i,
				ypos(below[i] + col[i].cls[c], ymax), PLOT_X0 + i + 1,
				ypos(below[i] + col[i].cls[c], ymax));
		for (int i = NCOLS - 1; i >= 0; i--)
			fprintf(f, " L%d %.1f L%d %.1f", PLOT_X0 + i + 1, ypos(below[i], ymax),
				PLOT_X0 + i, ypos(below[i], ymax));
		fprintf(f, " Z\"><title>");
		xml_text(f, names__cls(nm, c), 64);
		fprintf(f, "</title></path>\n");
		for (int i = 0; i < NCOLS; i++)
			below[i] += col[i].cls[c];
	}
	fprintf(f, "</g>\n");
}

static double xpos(const struct timeline *tl, __u64 span, __u64 ts)
{
	double rel = ts > tl->t0 ? (double)(ts - tl->t0) : 0;

	return span ? PLOT_X0 + NCOLS * rel / span : PLOT_X0;
}

static void rss_line(FILE *f, const struct timeline *tl, const struct tl_proc *p, __u64 span,
		     double ymax)
{
	if (!p->nrss)
		return;
	fprintf(f, "<path class=\"rss\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" "
		"d=\"M%.1f %.1f", xpos(tl, span, p->rss[0].ts), ypos(p->rss[0].bytes, ymax));
	for (size_t i = 1; i < p->nrss; i++)
		fprintf(f, " H%.1f V%.1f", xpos(tl, span, p->rss[i].ts), ypos(p->rss[i].bytes, ymax));
	fprintf(f, " H%.1f\"><title>RSS</title></path>\n", xpos(tl, span, p->t_end));
}

static void peak_mark(FILE *f, const struct timeline *tl, const struct tl_proc *p, __u64 span,
		      double ymax)
{
	const struct infl_names *nm = &tl->rec->names;
	double x = xpos(tl, span, p->peak_ts), y = ypos(p->peak_bytes, ymax);
	char b[FMT_LEN], label[128];
	bool left = x > PLOT_X0 + NCOLS * 0.6;

	if (!p->peak_bytes)
		return;
	snprintf(label, sizeof(label), "peak %s at %.3f s", fmt_bytes(b, p->peak_bytes),
		 render_t(tl, p->peak_ts));
	fprintf(f, "<g class=\"peak\" id=\"peak\">\n<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		"y2=\"%d\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n", x, PLOT_Y0, x, PLOT_Y1);
	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#c00\"/>\n", x, y);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" "
		"fill=\"#c00\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\" "
		"text-anchor=\"%s\">%s</text>\n", left ? x - 8 : x + 8,
		y < PLOT_Y0 + 30 ? y + 30 : y - 10, left ? "end" : "start", label);
	fprintf(f, "<title>%s:", label);
	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++) {
		__u64 bytes = 0;

		for (unsigned s = 0; s < INFL_SLOTS; s++)
			bytes += p->peak[c][s].bytes;
		if (!bytes)
			continue;
		fputc(' ', f);
		xml_text(f, names__cls(nm, c), 64);
		fprintf(f, " %s", fmt_bytes(b, bytes));
	}
	fprintf(f, "</title>\n</g>\n");
}

static int lanes(FILE *f, const struct timeline *tl,
		 const struct column *col, __u32 slots)
{
	const struct infl_names *nm = &tl->rec->names;
	int y = LANE_Y0;

	fprintf(f, "<g class=\"lanes\" font-size=\"11\">\n<text x=\"%d\" y=\"%d\" "
		"font-size=\"12\" font-weight=\"bold\">owners per stage</text>\n", PLOT_X0,
		LANE_Y0 - 10);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		__u64 most = 0;

		if (!(slots & (1u << s)))
			continue;
		for (int i = 0; i < NCOLS; i++)
			if (col[i].owners[s] > most)
				most = col[i].owners[s];
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", PLOT_X0 - 6,
			y + LANE_H / 2 + 4);
		xml_text(f, names__stage(nm, s), 40);
		fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"fill=\"#f4f4f4\"/>\n", PLOT_X0, y, NCOLS, LANE_H - 4);
		if (most) {
			fprintf(f, "<path fill=\"#6a7f99\" d=\"M%d %d", PLOT_X0, y + LANE_H - 4);
			for (int i = 0; i < NCOLS; i++) {
				double h = (LANE_H - 6) * (double)col[i].owners[s] / most;

				fprintf(f, " V%.1f H%d", y + LANE_H - 4 - h, PLOT_X0 + i + 1);
			}
			fprintf(f, " V%d Z\"><title>", y + LANE_H - 4);
			xml_text(f, names__stage(nm, s), 40);
			fprintf(f, ": at most %" PRIu64 " owners</title></path>\n", (uint64_t)most);
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\">max %" PRIu64 "</text>\n", PLOT_X1 + 6,
			y + LANE_H / 2 + 4, (uint64_t)most);
		y += LANE_H;
	}
	fprintf(f, "</g>\n");
	return y;
}

static void legend(FILE *f, const struct timeline *tl, __u32 classes)
{
	const struct infl_names *nm = &tl->rec->names;
	int y = PLOT_Y0;

	fprintf(f, "<g class=\"legend\" font-size=\"12\">\n");
	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++) {
		if (!(classes & (1u << c)))
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">", PLOT_X1 + 20, y, palette[c], PLOT_X1 + 38, y + 10);
		xml_text(f, names__cls(nm, c), 40);
		fprintf(f, "</text>\n");
		y += 18;
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\" "
		"stroke-width=\"1.5\"/><text x=\"%d\" y=\"%d\">RSS</text>\n", PLOT_X1 + 20, y + 6,
		PLOT_X1 + 32, y + 6, PLOT_X1 + 38, y + 10);
	y += 18;
	fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"#c00\"/><text x=\"%d\" y=\"%d\">"
		"tracked peak</text>\n</g>\n", PLOT_X1 + 26, y + 6, PLOT_X1 + 38, y + 10);
}

int render_svg(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct tl_proc *p = render_proc(tl, o);
	__u64 span = tl->t_end > tl->t0 ? tl->t_end - tl->t0 : 0, top;
	__u32 classes, slots;
	struct column *col;
	struct tl_cursor c;
	char b1[FMT_LEN], b2[FMT_LEN];
	int nlanes = 0, height, lanes_y1;
	double ymax;

	if (!p) {
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/"
			"2000/svg\" width=\"400\" height=\"40\"><text x=\"10\" y=\"25\">no traced "
			"process in this recording</text></svg>\n");
		return render_finish(f);
	}
	classes = render_used_classes(p);
	slots = render_used_slots(p);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++)
		nlanes += !!(slots & (1u << s));
	lanes_y1 = LANE_Y0 + nlanes * LANE_H;
	height = lanes_y1 + 50;
	top = p->peak_bytes > p->rss_peak ? p->peak_bytes : p->rss_peak;
	ymax = top ? top * 1.1 : 1;
	col = calloc(NCOLS, sizeof(*col));
	if (!col || tl_cursor__init(&c, p)) {
		free(col);
		return -ENOMEM;
	}
	sample_columns(&c, tl, span, col);
	tl_cursor__free(&c);

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", W, height, W, height);
	fprintf(f, "<title>inflight: ");
	xml_text(f, p->comm[0] ? p->comm : "process", 64);
	fprintf(f, " (pid %u)</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		p->pid);
	fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\" font-weight=\"bold\">", PLOT_X0);
	xml_text(f, p->comm[0] ? p->comm : "process", 64);
	fprintf(f, " (pid %u): tracked bytes by class over %s</text>\n", p->pid,
		fmt_duration(b1, span));
	fprintf(f, "<text x=\"%d\" y=\"48\" font-size=\"11\" fill=\"#555\">", PLOT_X0);
	xml_text(f, tl->rec->cmdline, 120);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"64\" font-size=\"11\" fill=\"#555\">host ",
		PLOT_X0);
	xml_text(f, tl->rec->host, 64);
	fprintf(f, "; peak %s tracked, RSS peak %s; %zu owners, %" PRIu64 " done%s</text>\n",
		fmt_bytes(b1, p->peak_bytes), fmt_bytes(b2, p->rss_peak), p->nlives,
		(uint64_t)p->retired, tl_proc__exact(p) ? "" : "; events were lost: approximate");
	axes(f, tl, span, ymax, lanes_y1);
	areas(f, tl, col, classes, ymax);
	rss_line(f, tl, p, span, ymax);
	peak_mark(f, tl, p, span, ymax);
	lanes(f, tl, col, slots);
	legend(f, tl, classes);
	fprintf(f, "</svg>\n");
	free(col);
	return render_finish(f);
}
