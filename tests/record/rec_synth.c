// SPDX-License-Identifier: BSD-2-Clause
/*
 * Writes the scripted recording of scenario.h to a file, for the shell tests and the
 * viewer test. Usage: rec_synth OUT [slow] [drop] [hostile] [long]
 *   slow: every time doubled (a "before" for compare);  drop: one event lost;
 *   hostile: escape sequences and newlines in the host, argv and comm;
 *   long: a command line of 160 characters.
 * Or the double alloc of scenario.h: rec_synth OUT dup [defer | v15]
 *   defer: the replaced buffer's free after another hit's;  v15: a file of format 1.5.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "recording/rec_writer.h"
#include "scenario.h"

int main(int argc, char **argv)
{
	static struct script s;
	struct rec_writer *w;
	unsigned opts = 0, dup_opts = 0;
	int err, dup = argc > 2 && !strcmp(argv[2], "dup");

	if (argc < 2) {
		fprintf(stderr, "usage: rec_synth OUT [slow] [drop] [hostile] [long]\n"
			"       rec_synth OUT dup [defer | v15]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		dup_opts |= !strcmp(argv[i], "defer") ? SCENARIO_DUP_DEFER
			    : !strcmp(argv[i], "v15") ? SCENARIO_DUP_V15 : 0;
		opts |= !strcmp(argv[i], "slow") ? SCENARIO_SLOW
			: !strcmp(argv[i], "drop") ? SCENARIO_DROP_ONE
			: !strcmp(argv[i], "hostile") ? SCENARIO_HOSTILE
			: !strcmp(argv[i], "long") ? SCENARIO_LONG_CMD : 0;
	}
	err = rec_writer__create(argv[1], REC_W_FORCE, &w);
	if (err) {
		fprintf(stderr, "rec_synth: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	if (dup)
		scenario_dup_write(&s, w, dup_opts);
	else
		scenario_write(&s, w, opts);
	err = rec_writer__close(w);
	if (!err && (dup_opts & SCENARIO_DUP_V15)) {
		int fd = open(argv[1], O_WRONLY);

		err = fd < 0 ? -errno : script_set_minor(fd, 5);
		if (fd >= 0)
			close(fd);
	}
	if (err)
		fprintf(stderr, "rec_synth: %s: %s\n", argv[1], strerror(-err));
	return !!err;
}
