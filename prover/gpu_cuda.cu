// SPDX-License-Identifier: BSD-2-Clause
/*
 * The GPU stage's kernels: radix-2 NTT passes and the pointwise H step over Goldilocks,
 * the same arithmetic as the CPU path (field.h is shared). One launch per butterfly pass
 * keeps the kernels obvious; the H200 makes even 2^26 points quick this way.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include "field.h"
#include "gpu_cuda.h"

#define THREADS 256

static unsigned blocks_for(size_t items)
{
	return (unsigned)((items + THREADS - 1) / THREADS);
}

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

__global__ void k_bit_reverse(uint64_t *v, unsigned log_n, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t j;

	if (i >= n)
		return;
	j = __brevll(i) >> (64 - log_n);
	if (i < j) {
		uint64_t t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/* one decimation-in-time pass: butterflies of span 2^log_half */
__global__ void k_butterfly(uint64_t *v, const uint64_t *tw, unsigned log_n, unsigned log_half)
{
	size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t half = (size_t)1 << log_half, k, i;
	uint64_t u, w;

	if (t >= ((size_t)1 << (log_n - 1)))
		return;
	k = t & (half - 1);
	i = ((t >> log_half) << (log_half + 1)) + k;
	w = tw[k << (log_n - 1 - log_half)];
	u = v[i];
	w = gl_mul(v[i + half], w);
	v[i] = gl_add(u, w);
	v[i + half] = gl_sub(u, w);
}

/* v[j] *= first * step^j */
__global__ void k_scale_powers(uint64_t *v, size_t n, uint64_t first, uint64_t step)
{
	size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (j < n)
		v[j] = gl_mul(v[j], gl_mul(first, gl_pow(step, j)));
}

/* a = (a*b - c) / Z on the coset */
__global__ void k_pointwise_h(uint64_t *a, const uint64_t *b, const uint64_t *c, size_t n,
			      uint64_t z_inv)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = gl_mul(gl_sub(gl_mul(a[i], b[i]), c[i]), z_inv);
}

static void ntt(uint64_t *v, const uint64_t *tw, unsigned log_n)
{
	size_t n = (size_t)1 << log_n;

	k_bit_reverse<<<blocks_for(n), THREADS>>>(v, log_n, n);
	for (unsigned s = 0; s < log_n; s++)
		k_butterfly<<<blocks_for(n / 2), THREADS>>>(v, tw, log_n, s);
}

/* inverse NTT, then coefficient j times n^-1 * shift^j (shift 1: plain inverse) */
static void intt_scaled(const struct cuda_h_job *job, uint64_t *v, uint64_t shift)
{
	size_t n = (size_t)1 << job->log_n;

	ntt(v, job->tw_inv_dev, job->log_n);
	k_scale_powers<<<blocks_for(n), THREADS>>>(v, n, job->n_inv, shift);
}

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
	size_t n = (size_t)1 << job->log_n, bytes = n * sizeof(uint64_t);
	uint64_t *abc[3] = { job->dev_a, job->dev_b, job->dev_c };
	const uint64_t *host[3] = { job->host_a, job->host_b, job->host_c };

	for (int k = 0; k < 3; k++) {
		CUDA_TRY(cudaMemcpy(abc[k], host[k], bytes, cudaMemcpyHostToDevice), "upload");
		/* evaluations on <omega> -> coefficients -> evaluations on g*<omega> */
		intt_scaled(job, abc[k], job->shift);
		ntt(abc[k], job->tw_dev, job->log_n);
	}
	k_pointwise_h<<<blocks_for(n), THREADS>>>(job->dev_a, job->dev_b, job->dev_c, n,
						  job->z_inv);
	intt_scaled(job, job->dev_a, job->shift_inv);
	for (unsigned r = 0; r < job->extra_rounds; r++) {
		ntt(job->dev_a, job->tw_dev, job->log_n);
		intt_scaled(job, job->dev_a, 1);
	}
	CUDA_TRY(cudaGetLastError(), "kernel launch");
	CUDA_TRY(cudaMemcpy(job->host_a, job->dev_a, bytes, cudaMemcpyDeviceToHost), "download");
	return 0;
}
