/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The target and limit options every attaching command shares (trace, record, serve), as
 * an argp child parser, and the validated number parsers behind them.
 *
 * Use: put { &attach_argp, 0, NULL, 0 } in the command's argp children, point
 * state->child_inputs[i] at a struct attach_opts in the command's ARGP_KEY_INIT, parse with
 * ARGP_IN_ORDER (so that a stray word before `--` is refused instead of being taken as the
 * command), then hand `so` to session__open(), which resolves and checks the target.
 */
#ifndef INFLIGHT_ATTACH_OPTS_H
#define INFLIGHT_ATTACH_OPTS_H

#include <argp.h>
#include <sys/types.h>
#include <linux/types.h>
#include "attach/session.h"
#include "util/parse.h"

#define ATTACH_LIMIT_MAX (1u << 24) /* per map: ample, and far below what the kernel refuses */

struct attach_opts {
	struct session_opts so; /* what session__open() takes */
	bool target_given;
	const char *user; /* --user, resolved into so.user at the end of parsing */
};

extern const struct argp attach_argp;

/* --help's words on the commands that attach (trace, record): how one ends, and its exit
 * status once it runs; each command adds the codes of its own failures before it does */
#define ATTACH_SIGNALS_DOC                                                                     \
	"SIGNALS: Ctrl-C (SIGINT) or SIGTERM end "
#define ATTACH_EXIT_DOC                                                                        \
	"EXIT STATUS: with -- CMD the command's status (128+N if signal N killed it, or\n"       \
	"128+N if inflight got signal N first); otherwise 0. Before "

/* Fills defaults (the child parser does it too, at ARGP_KEY_INIT). */
void attach_opts__init(struct attach_opts *a);

/* About what the kernel preallocates for the maps at these limits, in bytes (a warning is
 * printed at the end of parsing when it is a lot). */
__u64 attach_opts__map_bytes(const struct session_opts *so);

#endif /* INFLIGHT_ATTACH_OPTS_H */
