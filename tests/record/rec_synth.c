// SPDX-License-Identifier: BSD-2-Clause
/*
 * Writes the scripted recording of scenario.h to a file, for the shell tests and the
 * viewer test. Usage: rec_synth OUT [slow] [drop] [hostile] [long]
 *   slow: every time doubled (a "before" for compare);  drop: one event lost;
 *   hostile: escape sequences and newlines in the host, argv and comm;
 *   long: a command line of 160 characters.
 */
#include <stdio.h>
#include <string.h>
#include "recording/rec_writer.h"
#include "scenario.h"

int main(int argc, char **argv)
{
	static struct script s;
	struct rec_writer *w;
	unsigned opts = 0;
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: rec_synth OUT [slow] [drop] [hostile] [long]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		opts |= !strcmp(argv[i], "slow") ? SCENARIO_SLOW
			: !strcmp(argv[i], "drop") ? SCENARIO_DROP_ONE
			: !strcmp(argv[i], "hostile") ? SCENARIO_HOSTILE
			: !strcmp(argv[i], "long") ? SCENARIO_LONG_CMD : 0;
	err = rec_writer__create(argv[1], REC_W_FORCE, &w);
	if (err) {
		fprintf(stderr, "rec_synth: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	scenario_write(&s, w, opts);
	err = rec_writer__close(w);
	if (err)
		fprintf(stderr, "rec_synth: %s: %s\n", argv[1], strerror(-err));
	return !!err;
}
