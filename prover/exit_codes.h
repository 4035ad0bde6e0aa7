/* SPDX-License-Identifier: BSD-2-Clause */
/* The prover's exit codes, one per kind of failure (listed in --help and docs/prover.md). */
#ifndef PROVER_EXIT_CODES_H
#define PROVER_EXIT_CODES_H

enum prover_exit {
	PROVER_EXIT_OK = 0,
	PROVER_EXIT_CHECK = 1,	    /* a proof's H check failed */
	PROVER_EXIT_USAGE = 2,	    /* bad command line: option, number, missing argument */
	PROVER_EXIT_INPUT_IO = 3,   /* the C1 input cannot be read (or the output written) */
	PROVER_EXIT_INPUT_BAD = 4,  /* the C1 input is malformed */
	PROVER_EXIT_SYSTEM = 5,	    /* out of memory, threads, or another system failure */
	PROVER_EXIT_NO_CUDA = 6,    /* --gpu=cuda but no usable CUDA device */
};

#endif /* PROVER_EXIT_CODES_H */
