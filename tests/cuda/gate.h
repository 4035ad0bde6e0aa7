/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The test programs' gate: with environment variable `env` set, say "gated" and wait for
 * SIGUSR1 (a tracer attaches, or scrapes, meanwhile). Returns at once without it.
 */
#ifndef INFLIGHT_TESTS_CUDA_GATE_H
#define INFLIGHT_TESTS_CUDA_GATE_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static inline void gate(const char *env)
{
	sigset_t set;
	int sig;

	if (!getenv(env))
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("gated\n");
	fflush(stdout);
	sigwait(&set, &sig);
}

#endif /* INFLIGHT_TESTS_CUDA_GATE_H */
