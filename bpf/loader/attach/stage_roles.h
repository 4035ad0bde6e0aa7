/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command line's entry and terminal stages (--entry-stages, --terminal-stages: names of
 * the binary's names note or ids), which replace the names notes' flags in every name set
 * the session shows.
 */
#ifndef INFLIGHT_ATTACH_STAGE_ROLES_H
#define INFLIGHT_ATTACH_STAGE_ROLES_H

#include <stdbool.h>
#include <linux/types.h>
#include "contract/names.h"

struct stage_roles {
	bool entry_set, terminal_set; /* given on the command line */
	__u16 entry_mask, terminal_mask;
};

/* The lists `entry` and `terminal` (NULL: not given), read against the names `n`. 0, or
 * EXIT_USAGE (printed: no such stage). */
int stage_roles__parse(const struct infl_names *n, const char *entry, const char *terminal,
		       struct stage_roles *r);

/* `n`'s entry and terminal stages, where the command line gave them. */
void stage_roles__apply(const struct stage_roles *r, struct infl_names *n);

#endif /* INFLIGHT_ATTACH_STAGE_ROLES_H */
