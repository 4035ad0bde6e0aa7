// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight report FILE`: renders a recording offline (no BPF, no privileges) as text, csv,
 * json, a Chrome trace, folded stacks or an SVG (docs/rendering.md).
 */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/parse.h"
#include "cmd/commands.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "recording/rec_reader.h"
#include "render/render.h"
#include "model/timeline.h"

typedef int (*render_fn)(FILE *f, const struct timeline *tl, const struct render_opts *o);

static const struct {
	const char *name;
	render_fn fn;
	const char *ext; /* output names ending so choose this format */
	const char *what;
} formats[] = {
	{ "text", render__text, ".txt", "text report" },
	{ "csv", render__csv, ".csv", "CSV timeline" },
	{ "json", render__json, NULL, "JSON report" },
	{ "chrome", render__chrome, ".trace.json", "Chrome trace" },
	{ "folded", render__folded, ".folded", "folded stacks" },
	{ "svg", render__svg, ".svg", "SVG" },
	{ "html", render__html, ".html", "HTML report" },
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

struct report_args {
	const char *file;
	const char *out;
	int format; /* index in formats, -1: from the output name, else text */
	struct render_opts ro;
	unsigned read_flags;
};

enum { OPT_STEP = 0x100, OPT_PID, OPT_PARTIAL };

static const struct argp_option report_options[] = {
	{ "format", 'f', "FORMAT", 0, "text (default), csv, json, chrome, folded, svg or html", 0 },
	{ "output", 'o', "OUT", 0, "Write to OUT instead of stdout", 0 },
	{ "step", OPT_STEP, "DURATION", 0,
	  "Timeline resolution of text, csv and json (e.g. 100ms, 1s); default: ~40 rows", 0 },
	{ "pid", OPT_PID, "PID", 0, "Only this traced process (svg and folded: the one shown)",
	  0 },
	{ "partial", OPT_PARTIAL, NULL, 0,
	  "Read a recording that was cut short, up to its last complete record", 0 },
	{ 0 },
};

static int format_by_name(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return i;
	return -1;
}

static int format_by_output(const char *out)
{
	size_t len = out ? strlen(out) : 0;

	/* longest suffix first: ".trace.json" before ".json" */
	for (size_t i = 0; i < NFORMATS; i++) {
		size_t el = formats[i].ext ? strlen(formats[i].ext) : 0;

		if (el && len > el && !strcmp(out + len - el, formats[i].ext))
			return i;
	}
	if (len > 5 && !strcmp(out + len - 5, ".json"))
		return format_by_name("json");
	return format_by_name("text");
}

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_args *a = state->input;
	pid_t pid;

	switch (key) {
	case 'f':
		a->format = format_by_name(arg);
		if (a->format < 0)
			infl_die(EXIT_USAGE, "use text, csv, json, chrome, folded, svg or html",
				 "unknown format '%s'", arg);
		return 0;
	case 'o':
		a->out = arg;
		return 0;
	case OPT_STEP:
		if (parse_duration_ns(arg, 1000, 86400000000000ull, &a->ro.step_ns))
			infl_die(EXIT_USAGE, "e.g. 100ms, 1s, 2m", "bad --step '%s'", arg);
		return 0;
	case OPT_PID:
		if (parse_pid(arg, &pid))
			infl_die(EXIT_USAGE, NULL, "bad --pid '%s'", arg);
		a->ro.pid = pid;
		return 0;
	case OPT_PARTIAL:
		a->read_flags |= REC_READ_PARTIAL;
		return 0;
	case ARGP_KEY_ARG:
		if (a->file)
			infl_die(EXIT_USAGE, "give one recording", "unexpected argument '%s'", arg);
		a->file = arg;
		return 0;
	case ARGP_KEY_END:
		if (!a->file)
			infl_die(EXIT_USAGE, "see inflight report --help", "no recording given");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char report_doc[] =
	"Render a recording made by `inflight record`: no BPF and no privileges needed.\n"
	"\n"
	"Formats: text (timeline table and summary), csv (one row per step), json (summary and "
	"timeline), chrome (Chrome Trace Event JSON for Perfetto, chrome://tracing and "
	"speedscope), folded (`stage;class byte-ms` lines for flamegraph.pl and speedscope), "
	"svg (a self-contained chart: bytes by stage and by class, owners per stage, RSS, the "
	"peak and its composition), html (one offline page: the timeline by stage or class, "
	"hover, zoom and pan, the peak's table, dwell per stage). With -o and no --format, "
	"the name chooses: .svg, .html, .csv, .folded, .txt, .trace.json (chrome), .json.\v"
	"EXAMPLES:\n"
	"  inflight report run.rec\n"
	"  inflight report run.rec -o run.svg\n"
	"  inflight report run.rec -o run.html                         (open it in a browser)\n"
	"  inflight report run.rec --format chrome -o run.trace.json   (open in ui.perfetto.dev)\n"
	"  inflight report run.rec --format folded | flamegraph.pl > run-memory.svg\n"
	"  inflight report run.rec --format csv --step 100ms\n"
	"\n"
	"EXIT STATUS: 0 done, 2 usage, 8 the recording is unreadable, truncated or corrupt,\n"
	"9 the output cannot be written.";

static const struct argp report_argp = { report_options, report_parse, "FILE", report_doc,
					 NULL,		 NULL,		NULL };

int cmd__report(int argc, char **argv)
{
	struct report_args a = { .format = -1 };
	struct recording *rec = NULL;
	struct timeline *tl = NULL;
	char err[REC_ERR_LEN];
	FILE *out;
	int ret;

	suggest_check_options(&report_argp, argc, argv);
	argp_parse(&report_argp, argc, argv, 0, NULL, &a);
	if (a.format < 0)
		a.format = format_by_output(a.out);
	a.ro.source = a.file;
	ret = recording__open_or_complain(a.file, a.read_flags, &rec);
	if (ret)
		return ret;
	ret = timeline__build(rec, &tl, err);
	if (ret) {
		ret = ret == -ENOMEM ? infl_err(EXIT_GENERIC, "free some memory and retry",
						"%s: %s", a.file, err)
				     : recording__complain(a.file, ret, err);
		recording__free(rec);
		return ret;
	}
	if (rec->cut)
		infl_warn("%s: cut short; read the %zu complete records before it: %s", a.file,
			  rec->nrecords, rec->cut_why);
	if (a.ro.pid && !timeline__proc(tl, a.ro.pid)) {
		timeline__free(tl);
		recording__free(rec);
		return infl_err(EXIT_USAGE, NULL, "--pid %u: no such process in %s", a.ro.pid,
				a.file);
	}
	if (a.ro.step_ns && (tl->t_end - tl->t0) / a.ro.step_ns > 1000000) {
		timeline__free(tl);
		recording__free(rec);
		return infl_err(EXIT_USAGE, "choose a larger --step", "--step gives more than a "
				"million rows for this recording");
	}
	ret = render__output_open_guarded(a.out, (const char *const *)&a.file, 1, &out);
	if (!ret) {
		int rerr = formats[a.format].fn(out, tl, &a.ro);

		ret = render__output_close(out, a.out, formats[a.format].what, rerr);
	}
	timeline__free(tl);
	recording__free(rec);
	return ret;
}
