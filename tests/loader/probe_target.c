// SPDX-License-Identifier: BSD-2-Clause
/*
 * A tiny program implementing the probe contract with the reference prover's names, for the
 * loader's tests (`inflight list`, the ELF readers, the CLI end to end), with known answers:
 *
 *   loader_probe_target [--wait-attach] [--hold-ms MS] ROUNDS [EXIT_CODE]
 *
 * Each round runs owner 1 through parse -> synth -> done with one 4096-byte c1_data buffer
 * allocated in parse and freed in synth: 1 alloc, 1 free, 3 stage events, one owner started
 * and done. --hold-ms then leaves owner 2 in `done` holding one 1 MiB aux buffer (a leak
 * candidate), prints "holding" and sleeps MS before exiting. --wait-attach first waits (10 s at
 * most, else exit 99) until a tracer has attached, seen through the probes' USDT semaphores,
 * which the kernel raises on attach, then 50 ms more: a test can start this program first and
 * attach by pid or path without sleeping and hoping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "prover_trace.h"

#define WAIT_ATTACH_MS 10000
#define SETTLE_MS 50

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static int attached(void)
{
	/* volatile: the kernel changes them behind the compiler's back */
	return *(volatile unsigned short *)&prover_buf_alloc_semaphore &&
	       *(volatile unsigned short *)&prover_buf_free_semaphore &&
	       *(volatile unsigned short *)&prover_stage_semaphore;
}

int main(int argc, char **argv)
{
	static char small[4096], big[1 << 20];
	long rounds, hold_ms = -1;
	int i = 1, code;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--wait-attach")) {
			long waited = 0;

			while (!attached() && waited < WAIT_ATTACH_MS) {
				sleep_ms(1);
				waited++;
			}
			if (!attached())
				return 99;
			/* a semaphore rises when its uprobe registers, a moment before the BPF
			 * program is on it (and before the tracer's exit hook): let it settle */
			sleep_ms(SETTLE_MS);
		} else if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc) {
			hold_ms = strtol(argv[++i], NULL, 10);
		} else {
			return 98;
		}
	}
	rounds = i < argc ? strtol(argv[i], NULL, 10) : 0;
	code = i + 1 < argc ? (int)strtol(argv[i + 1], NULL, 10) : 0;

	for (long r = 0; r < rounds; r++) {
		trace_stage(1, STAGE_parse);
		trace_buf_alloc(small, CLS_c1_data, sizeof(small), 1);
		trace_stage(1, STAGE_synth);
		trace_buf_free(small, CLS_c1_data, sizeof(small));
		trace_stage(1, STAGE_done);
	}
	if (hold_ms >= 0) {
		trace_stage(2, STAGE_parse);
		trace_buf_alloc(big, CLS_aux, sizeof(big), 2);
		trace_stage(2, STAGE_done);
		/* tells a test that the hold began, every probe above having fired */
		printf("holding\n");
		fflush(stdout);
		sleep_ms(hold_ms);
	}
	return code;
}
