// SPDX-License-Identifier: BSD-2-Clause
/* The CUDA calls in a build without CUDA (no nvcc, or SAN=1): no device, ever. */
#include <stdio.h>
#include "gpu_cuda.h"

int cuda_probe(char *desc, size_t len)
{
	snprintf(desc, len, "this build has no CUDA support");
	return 0;
}

int cuda_malloc(void **dev, size_t bytes, char *err, size_t len)
{
	(void)bytes;
	*dev = NULL;
	snprintf(err, len, "this build has no CUDA support");
	return -1;
}

void cuda_free(void *dev)
{
	(void)dev;
}

int cuda_upload(void *dev, const void *host, size_t bytes, char *err, size_t len)
{
	(void)dev, (void)host, (void)bytes;
	snprintf(err, len, "this build has no CUDA support");
	return -1;
}

int cuda_h(const struct cuda_h_job *job, char *err, size_t len)
{
	(void)job;
	snprintf(err, len, "this build has no CUDA support");
	return -1;
}
