/* SPDX-License-Identifier: BSD-2-Clause */
/* The prover's command line (argp): `prover [OPTION...]` and `prover gen-c1 -o FILE ...`. */
#ifndef PROVER_CLI_H
#define PROVER_CLI_H

#include <stdbool.h>
#include "pipeline.h"

struct cli {
	bool gen_c1;		    /* the gen-c1 subcommand */
	const char *out;	    /* gen-c1: the file to write */
	bool json;		    /* summary as one JSON object */
	struct pipeline_config cfg; /* run options, and gen-c1's in cfg.gen */
};

/* Fills `cli` or exits: PROVER_EXIT_USAGE with one line on a bad argument, 0 after --help. */
void cli_parse(int argc, char **argv, struct cli *cli);

#endif /* PROVER_CLI_H */
