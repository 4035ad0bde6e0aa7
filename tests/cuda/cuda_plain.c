// SPDX-License-Identifier: BSD-2-Clause
/*
 * A program without the contract that links the CUDA driver library (the stand-in,
 * cuda_api.h): device memory by owner (none). cuMemAlloc 1000, 2000 and 3000 bytes, the
 * 2000 freed: 2 buffers, 4000 bytes at the end; the peak 6000 bytes; and one failed call.
 * With CUDA_PLAIN_GATE set it then says "gated", waits for SIGUSR1 (a tracer attaches with
 * -p meanwhile), frees the other two and allocates 500 bytes: frees of memory from before
 * the attach.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "cuda_api.h"
#include "gate.h"

int main(void)
{
	CUdeviceptr d[3], big;

	for (int i = 0; i < 3; i++)
		if (cuMemAlloc_v2(&d[i], 1000 * (i + 1)) != CUDA_SUCCESS)
			return 3;
	if (cuMemFree_v2(d[1]) != CUDA_SUCCESS)
		return 3;
	if (cuMemAlloc_v2(&big, STANDIN_MAX_BYTES + 1) == CUDA_SUCCESS)
		return 4;
	if (getenv("CUDA_PLAIN_GATE")) {
		gate("CUDA_PLAIN_GATE");
		if (cuMemFree_v2(d[0]) != CUDA_SUCCESS || cuMemFree_v2(d[2]) != CUDA_SUCCESS ||
		    cuMemAlloc_v2(&d[1], 500) != CUDA_SUCCESS)
			return 3;
	}
	printf("cuda_plain: done\n");
	return 0;
}
