// SPDX-License-Identifier: BSD-2-Clause
/* The command line's entry and terminal stages (attach/stage_roles.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/stage_roles.h"
#include "util/errors.h"

/* A stage list of the command line ("done,failed" or "8,9") as a mask. */
static int stage_mask(const struct infl_names *n, const char *opt, const char *list, __u16 *mask)
{
	char buf[512], *save = NULL, *tok;

	*mask = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long id = strtoul(tok, &end, 10);
		int s = *tok >= '0' && *tok <= '9' && !*end && id < INFL_MAX_STAGES ? (int)id : -1;

		for (int i = 0; s < 0 && i < INFL_MAX_STAGES; i++)
			if ((n->stage_declared & (1u << i)) && !strcmp(n->stage[i], tok))
				s = i;
		if (s < 0)
			return infl_err(EXIT_USAGE, "give stage names of the binary's names note "
					"(`inflight list` shows them) or ids 0 to 15, comma-separated",
					"%s '%s': no such stage", opt, tok);
		*mask |= 1u << s;
	}
	return 0;
}

int stage_roles__parse(const struct infl_names *n, const char *entry, const char *terminal,
		       struct stage_roles *r)
{
	int err;

	memset(r, 0, sizeof(*r));
	if (entry) {
		err = stage_mask(n, "--entry-stages", entry, &r->entry_mask);
		if (err)
			return err;
		r->entry_set = true;
	}
	if (terminal) {
		err = stage_mask(n, "--terminal-stages", terminal, &r->terminal_mask);
		if (err)
			return err;
		r->terminal_set = true;
	}
	return 0;
}

void stage_roles__apply(const struct stage_roles *r, struct infl_names *n)
{
	if (r->entry_set)
		n->entry_mask = r->entry_mask;
	if (r->terminal_set)
		n->terminal_mask = r->terminal_mask;
}
