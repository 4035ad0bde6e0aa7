// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight compare A B`, `inflight compare A1 A2 ... vs B1 B2 ...`: runs side by side
 * (analysis/compare.h): the figures of each side's traced process, averaged over its runs,
 * B/A, and a verdict computed from them. Text under 80 columns, --json, or an SVG (-o X.svg
 * or --format svg). Works offline, in memory bounded by the processes (docs/bench.md).
 */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "recording/rec_reader.h"
#include "analysis/compare.h"
#include "render/render.h"
#include "model/timeline.h"

#define MAX_RUNS 64 /* recordings per side */

enum { F_TEXT, F_JSON, F_SVG };

struct compare_args {
	const char *files[2][MAX_RUNS];
	size_t n[2];
	int side; /* 1 once "vs" was seen */
	bool vs;
	const char *out;
	int format; /* -1: from the output's name */
};

static const struct argp_option compare_options[] = {
	{ "json", 'j', NULL, 0, "One JSON object instead of the table (docs/json.md)", 0 },
	{ "format", 'f', "FORMAT", 0, "text (default), json or svg (both sides' bytes by stage "
	  "on one time and byte scale)", 0 },
	{ "output", 'o', "OUT", 0, "Write to OUT instead of stdout (.svg, .json choose the "
	  "format); never over one of the recordings", 0 },
	{ 0 },
};

static error_t compare_parse(int key, char *arg, struct argp_state *state)
{
	struct compare_args *a = state->input;

	switch (key) {
	case 'j':
		a->format = F_JSON;
		return 0;
	case 'f':
		a->format = !strcmp(arg, "text") ? F_TEXT : !strcmp(arg, "json") ? F_JSON :
			    !strcmp(arg, "svg") ? F_SVG : -2;
		if (a->format == -2)
			infl_die(EXIT_USAGE, "use text, json or svg", "unknown format '%s'", arg);
		return 0;
	case 'o':
		a->out = arg;
		return 0;
	case ARGP_KEY_ARG:
		if (!strcmp(arg, "vs")) {
			if (a->vs || !a->n[0])
				infl_die(EXIT_USAGE, "A1 [A2...] vs B1 [B2...]", "'vs' must come once, "
					 "after A's recordings");
			a->vs = true;
			a->side = 1;
			return 0;
		}
		if (a->n[a->side] == MAX_RUNS)
			infl_die(EXIT_USAGE, NULL, "more than %d recordings on one side", MAX_RUNS);
		a->files[a->side][a->n[a->side]++] = arg;
		return 0;
	case ARGP_KEY_END:
		/* without "vs": exactly A and B */
		if (!a->vs && a->n[0] == 2) {
			a->files[1][0] = a->files[0][1];
			a->n[0] = a->n[1] = 1;
		}
		if (!a->n[0] || !a->n[1] || (!a->vs && a->n[0] != 1))
			infl_die(EXIT_USAGE, "see inflight compare --help", "give two recordings, "
				 "A (before) and B (after), or several per side: A1 A2 vs B1 B2");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char compare_doc[] =
	"Compare runs: A (e.g. before a fix) and B (after), one recording each or several per "
	"side (runs of the same configuration: the verdict then judges throughput against the "
	"spread between them). For each figure: A, B and B/A, owners kept apart by kind; then "
	"a verdict: how the peak changed and which stages and classes made it, where memory x "
	"time moved, throughput. No BPF and no privileges needed.\v"
	"EXAMPLES:\n"
	"  inflight compare incident.infl fixed.infl\n"
	"  inflight compare a1.infl a2.infl a3.infl vs b1.infl b2.infl b3.infl\n"
	"  inflight compare incident.infl fixed.infl -o compare.svg\n"
	"  inflight compare --json incident.infl fixed.infl -o compare.json\n"
	"\n"
	"EXIT STATUS: 0 done, 2 usage, 8 a recording is unreadable, truncated or corrupt,\n"
	"9 the output cannot be written.";

static const struct argp compare_argp = {
	compare_options, compare_parse, "A B | A1 [A2...] vs B1 [B2...]", compare_doc, NULL, NULL,
	NULL,
};

static int load(struct cmp_run *r)
{
	int ret = recording__open_or_complain(r->file, 0, &r->rec), err;
	char why[REC_ERR_LEN];

	if (ret)
		return ret;
	err = timeline__build(r->rec, &r->tl, why);
	if (err)
		return err == -ENOMEM ? infl_err(EXIT_GENERIC, NULL, "%s: %s", r->file, why)
				      : recording__complain(r->file, err, why);
	r->p = timeline__primary(r->tl);
	if (!r->p)
		return infl_err(EXIT_BAD_FILE, "record a run with `inflight record`",
				"%s: no traced process in it", r->file);
	return 0;
}

static int format_of(const struct compare_args *a)
{
	size_t len = a->out ? strlen(a->out) : 0;

	if (a->format >= 0)
		return a->format;
	if (len > 4 && !strcmp(a->out + len - 4, ".svg"))
		return F_SVG;
	if (len > 5 && !strcmp(a->out + len - 5, ".json"))
		return F_JSON;
	return F_TEXT;
}

int cmd__compare(int argc, char **argv)
{
	static const char *const what[] = { "comparison", "JSON comparison", "SVG comparison" };
	struct compare_args a = { .format = -1 };
	const char *inputs[2 * MAX_RUNS];
	struct cmp c = { 0 };
	size_t ninputs = 0;
	int ret = 0, fmt;
	FILE *out;

	suggest_check_options(&compare_argp, argc, argv);
	argp_parse(&compare_argp, argc, argv, 0, NULL, &a);
	fmt = format_of(&a);
	for (int s = 0; s < 2 && !ret; s++) {
		c.side[s].runs = calloc(a.n[s], sizeof(*c.side[s].runs));
		if (!c.side[s].runs) {
			ret = infl_err(EXIT_GENERIC, NULL, "compare: %s", strerror(ENOMEM));
			break;
		}
		c.side[s].n = a.n[s];
		for (size_t i = 0; i < a.n[s] && !ret; i++) {
			c.side[s].runs[i].file = a.files[s][i];
			inputs[ninputs++] = a.files[s][i];
			ret = load(&c.side[s].runs[i]);
		}
	}
	if (!ret && cmp__build(&c))
		ret = infl_err(EXIT_GENERIC, NULL, "compare: %s", strerror(ENOMEM));
	if (!ret)
		ret = render__output_open_guarded(a.out, inputs, ninputs, &out);
	if (!ret) {
		int err = fmt == F_SVG ? render__compare_svg(out, &c) : fmt == F_JSON ?
			  render__compare_json(out, &c) : render__compare_text(out, &c);

		ret = render__output_close(out, a.out, what[fmt], err);
	}
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; c.side[s].runs && i < c.side[s].n; i++) {
			timeline__free(c.side[s].runs[i].tl);
			recording__free(c.side[s].runs[i].rec);
		}
		free(c.side[s].runs);
	}
	cmp__free(&c);
	return ret;
}
