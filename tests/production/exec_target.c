// SPDX-License-Identifier: BSD-2-Clause
/*
 * A traced command that execs another program once it runs (its own exec, after inflight
 * attached and let it go), for the privilege tests: what the program after that exec holds
 * is what a `--` command could get back.
 *
 *   exec_target PROG [ARGS...]
 *
 * Fires the contract's three probes once (owner 1: stage 0, one 4096-byte buffer of class 0
 * allocated and freed), then execvp(PROG, ARGS). Exit 127 when the exec fails.
 */
#include <stdio.h>
#include <unistd.h>
#include "prover_trace.h"

int main(int argc, char **argv)
{
	static char buf[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: exec_target PROG [ARGS...]\n");
		return 2;
	}
	if (PROVER_STAGE_ENABLED())
		PROVER_STAGE(1, 0);
	if (PROVER_BUF_ALLOC_ENABLED())
		PROVER_BUF_ALLOC((unsigned long)buf, 0, sizeof(buf), 1);
	if (PROVER_BUF_FREE_ENABLED())
		PROVER_BUF_FREE((unsigned long)buf, 0, sizeof(buf));
	fflush(stdout);
	execvp(argv[1], argv + 1);
	perror("exec_target: exec");
	return 127;
}
