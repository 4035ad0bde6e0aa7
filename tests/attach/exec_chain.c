// SPDX-License-Identifier: BSD-2-Clause
/*
 * A program with the contract that becomes another one: it fires one owner's life (stage
 * read, a 4 KiB input buffer, stage done after freeing it), holds a second buffer it never
 * frees (a leak candidate of this image: an exec ends it), then execs PROGRAM. For
 * tests/t_attach_libs.sh: the exec'd image must be attached before its first instruction.
 *   exec_chain PROGRAM [ARGS...]
 */
#include <stdio.h>
#include <unistd.h>
#include "inflight_probes.h"
#include "pipeline.h"

INFLIGHT_CONTRACT(EXAMPLE_CLASSES, EXAMPLE_STAGES);

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: exec_chain PROGRAM [ARGS...]\n");
		return 2;
	}
	inflight_stage(1, EX_STAGE_read);
	inflight_buf_alloc(0x100, EX_CLS_input, 4096, 1);
	inflight_buf_alloc(0x200, EX_CLS_scratch, 16384, 0);
	inflight_buf_free(0x100, EX_CLS_input, 4096);
	inflight_stage(1, EX_STAGE_done);
	execv(argv[1], argv + 1);
	perror("exec_chain: execv");
	return 127;
}
