// SPDX-License-Identifier: BSD-2-Clause
/*
 * A program without the contract that links the CUDA driver library (the stand-in,
 * cuda_api.h): device memory by owner (none). cuMemAlloc 1000, 2000 and 3000 bytes, the
 * 2000 freed: 2 buffers, 4000 bytes at the end; the peak 6000 bytes; and one failed call.
 */
#include <stdio.h>
#include "cuda_api.h"

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
	printf("cuda_plain: done\n");
	return 0;
}
