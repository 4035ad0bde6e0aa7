// SPDX-License-Identifier: BSD-2-Clause
/*
 * The GPU stage on CUDA: gpu_plan.h's passes as kernels, one launch per pass, over the same
 * Goldilocks arithmetic as the CPU (field.h is compiled for both). One launch per butterfly
 * pass keeps the kernels obvious; the tests run the same plan on the host.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include "gpu_cuda.h"
#include "gpu_plan.h"

#define THREADS 256

static unsigned blocks_for(size_t items)
{
	return (unsigned)((items + THREADS - 1) / THREADS);
}

static __device__ size_t thread_index(void)
{
	return blockIdx.x * (size_t)blockDim.x + threadIdx.x;
}

__global__ void k_bit_reverse(uint64_t *v, unsigned log_n)
{
	size_t i = thread_index();

	if (i < ((size_t)1 << log_n))
		gpu_bit_reverse_thread(v, log_n, i);
}

__global__ void k_butterfly(uint64_t *v, const uint64_t *tw, unsigned log_n, unsigned log_half)
{
	size_t t = thread_index();

	if (t < ((size_t)1 << (log_n - 1)))
		gpu_butterfly_thread(v, tw, log_n, log_half, t);
}

__global__ void k_scale(uint64_t *v, size_t n, uint64_t first, uint64_t step)
{
	size_t j = thread_index();

	if (j < n)
		gpu_scale_thread(v, first, step, j);
}

__global__ void k_pointwise_h(uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n,
			      uint64_t z_inv)
{
	size_t i = thread_index();

	if (i < n)
		gpu_pointwise_h_thread(a, b, c, z_inv, i);
}

/* launches on the default stream; errors surface at the next synchronous call */
static void launch_bit_reverse(void *ctx, uint64_t *v)
{
	unsigned log_n = *(const unsigned *)ctx;

	k_bit_reverse<<<blocks_for((size_t)1 << log_n), THREADS>>>(v, log_n);
}

static void launch_butterflies(void *ctx, uint64_t *v, const uint64_t *tw, unsigned log_half)
{
	unsigned log_n = *(const unsigned *)ctx;

	k_butterfly<<<blocks_for((size_t)1 << (log_n - 1)), THREADS>>>(v, tw, log_n, log_half);
}

static void launch_scale(void *ctx, uint64_t *v, uint64_t first, uint64_t step)
{
	size_t n = (size_t)1 << *(const unsigned *)ctx;

	k_scale<<<blocks_for(n), THREADS>>>(v, n, first, step);
}

static void launch_pointwise_h(void *ctx, uint64_t *a, const uint64_t *b, const uint64_t *c,
			       uint64_t z_inv)
{
	size_t n = (size_t)1 << *(const unsigned *)ctx;

	k_pointwise_h<<<blocks_for(n), THREADS>>>(a, b, c, n, z_inv);
}

static const struct gpu_ops cuda_ops = {
	launch_bit_reverse, launch_butterflies, launch_scale, launch_pointwise_h,
};

static int cuda_fail(cudaError_t e, const char *what, char *err, size_t len)
{
	snprintf(err, len, "CUDA %s: %s", what, cudaGetErrorString(e));
	return -1;
}

#define CUDA_TRY(call, what)                                                                   \
	do {                                                                                   \
		cudaError_t e_ = (call);                                                       \
		if (e_ != cudaSuccess)                                                         \
			return cuda_fail(e_, what, err, len);                                  \
	} while (0)

extern "C" int cuda_probe(char *desc, size_t len)
{
	struct cudaDeviceProp prop;
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);

	if (e != cudaSuccess) {
		snprintf(desc, len, "no CUDA device: %s", cudaGetErrorString(e));
		return 0;
	}
	if (!count) {
		snprintf(desc, len, "no CUDA device found");
		return 0;
	}
	e = cudaGetDeviceProperties(&prop, 0);
	if (e != cudaSuccess) {
		snprintf(desc, len, "CUDA device 0 unusable: %s", cudaGetErrorString(e));
		return 0;
	}
	snprintf(desc, len, "CUDA device 0, %s (sm_%d%d)", prop.name, prop.major, prop.minor);
	return 1;
}

extern "C" int cuda_malloc(void **dev, size_t bytes, char *err, size_t len)
{
	CUDA_TRY(cudaMalloc(dev, bytes), "cudaMalloc");
	return 0;
}

extern "C" void cuda_free(void *dev)
{
	cudaFree(dev);
}

extern "C" int cuda_upload(void *dev, const void *host, size_t bytes, char *err, size_t len)
{
	CUDA_TRY(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "upload");
	return 0;
}

extern "C" int cuda_h(const struct cuda_h_job *job, char *err, size_t len)
{
	size_t bytes = ((size_t)1 << job->log_n) * sizeof(uint64_t);
	unsigned log_n = job->log_n;
	struct gpu_plan plan;

	plan.log_n = job->log_n;
	plan.n_inv = job->n_inv;
	plan.shift = job->shift;
	plan.shift_inv = job->shift_inv;
	plan.z_inv = job->z_inv;
	plan.tw = job->tw_dev;
	plan.tw_inv = job->tw_inv_dev;
	plan.extra_rounds = job->extra_rounds;
	CUDA_TRY(cudaMemcpy(job->dev_a, job->host_a, bytes, cudaMemcpyHostToDevice), "upload");
	CUDA_TRY(cudaMemcpy(job->dev_b, job->host_b, bytes, cudaMemcpyHostToDevice), "upload");
	CUDA_TRY(cudaMemcpy(job->dev_c, job->host_c, bytes, cudaMemcpyHostToDevice), "upload");
	gpu_plan_h(&cuda_ops, &log_n, &plan, job->dev_a, job->dev_b, job->dev_c);
	CUDA_TRY(cudaGetLastError(), "kernel launch");
	CUDA_TRY(cudaMemcpy(job->host_a, job->dev_a, bytes, cudaMemcpyDeviceToHost), "download");
	return 0;
}
