// SPDX-License-Identifier: BSD-2-Clause
/*
 * Section cuda_cost's program: cuMemAlloc_v2 and cuMemFree_v2 of the stand-in libcuda.so.1
 * (tests/cuda/libcuda.c) in a loop, one thread, for -d seconds after -w seconds of warm-up.
 * Prints "ns_per_call=X calls=N": wall nanoseconds per driver call (an alloc or a free),
 * inflight's entry and return probes included when it traces the process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "cuda_api.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long run(double seconds)
{
	double end = now_s() + seconds;
	unsigned long calls = 0;
	CUdeviceptr d;

	while (now_s() < end) {
		for (int i = 0; i < 256; i++) {
			if (cuMemAlloc_v2(&d, 4096) != CUDA_SUCCESS || cuMemFree_v2(d) != CUDA_SUCCESS)
				exit(3);
		}
		calls += 512;
	}
	return calls;
}

int main(int argc, char **argv)
{
	double seconds = 1, warm = 0.3, t0;
	unsigned long calls;
	int opt;

	while ((opt = getopt(argc, argv, "d:w:")) != -1) {
		if (opt == 'd')
			seconds = atof(optarg);
		else if (opt == 'w')
			warm = atof(optarg);
		else
			return 2;
	}
	run(warm);
	t0 = now_s();
	calls = run(seconds);
	printf("ns_per_call=%.1f calls=%lu\n", (now_s() - t0) * 1e9 / calls, calls);
	return 0;
}
