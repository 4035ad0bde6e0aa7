// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight`: counts every large buffer of a traced program in flight, per class and stage.
 * This file only dispatches: `inflight NAME ...` runs command NAME, anything else is the
 * default command (trace). Each command parses its own options (argp).
 */
#include <argp.h>
#include <stdio.h>
#include <string.h>
#include "cmd/commands.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "inflight_note.h"

const char *argp_program_version =
	"inflight " INFL_VERSION " (probe contract " INFLIGHT__XSTR(INFLIGHT_CONTRACT_VERSION) ")";

const struct infl_command infl_commands[] = {
	{ "trace", cmd__trace, "[OPTION...] TARGET", "live timeline and final summary (default)" },
	{ "serve", cmd__serve, "[--listen ADDR:PORT] TARGET", "Prometheus exporter (/metrics)" },
	{ "list", cmd__list, "[--json] PATH|PID", "probes and class/stage names a binary carries" },
	{ "record", cmd__record, "-o FILE [OPTION...] TARGET", "record events for report, compare" },
	{ "report", cmd__report, "[OPTION...] FILE", "render: text csv json chrome folded svg html" },
	{ "compare", cmd__compare, "[--json] A B", "two recordings side by side, B/A ratios" },
	{ NULL, NULL, NULL, NULL },
};

/* A first word that is no command but near one is a misspelt command, not a program to
 * trace: say which it would be ("reprot" -> report). */
static void refuse_misspelt(const char *word)
{
	const char *names[sizeof(infl_commands) / sizeof(infl_commands[0])];
	const char *near;
	char hint[64];
	size_t n = 0;

	if (word[0] == '-')
		return;
	for (const struct infl_command *c = infl_commands; c->name; c++)
		names[n++] = c->name;
	names[n] = NULL;
	near = suggest_nearest(word, names);
	if (!near)
		return;
	snprintf(hint, sizeof(hint), "did you mean `inflight %s`?", near);
	infl_die(EXIT_USAGE, hint, "unknown command '%s'", word);
}

int main(int argc, char **argv)
{
	static char name[64];

	argp_err_exit_status = EXIT_USAGE;
	infl_track_stdout(); /* a failed write to stdout is reported with its reason */
	if (argc > 1) {
		for (const struct infl_command *c = infl_commands; c->name; c++) {
			if (strcmp(argv[1], c->name))
				continue;
			/* argp names the program after argv[0]: "inflight list: ..." */
			snprintf(name, sizeof(name), "inflight %s", c->name);
			argv[1] = name;
			return c->run(argc - 1, argv + 1);
		}
	}
	if (argc > 1)
		refuse_misspelt(argv[1]);
	argv[0] = "inflight";
	return cmd__trace(argc, argv);
}
