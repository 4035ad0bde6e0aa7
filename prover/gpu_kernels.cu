// SPDX-License-Identifier: BSD-2-Clause
/*
 * The GPU stage's kernels: gpu_plan.h's passes, one launch per pass, over the same
 * Goldilocks arithmetic as the CPU (field.h is compiled for both). Compiled to PTX only
 * (nvcc -ptx, prover/build.mk) and embedded in the prover, which loads it through the
 * driver API (prover/gpu_driver.c): the driver JIT-compiles it for whatever device it
 * finds. extern "C": the driver looks kernels up by these plain names. The parameters are
 * read by the stand-in driver of the tests (tests/cuda/libcuda.c) by the same signatures.
 */
#include "gpu_plan.h"

static __device__ size_t thread_index(void)
{
	return blockIdx.x * (size_t)blockDim.x + threadIdx.x;
}

extern "C" __global__ void k_bit_reverse(uint64_t *v, unsigned log_n)
{
	size_t i = thread_index();

	if (i < ((size_t)1 << log_n))
		gpu_bit_reverse_thread(v, log_n, i);
}

extern "C" __global__ void k_butterfly(uint64_t *v, const uint64_t *tw, unsigned log_n,
				       unsigned log_half)
{
	size_t t = thread_index();

	if (t < ((size_t)1 << (log_n - 1)))
		gpu_butterfly_thread(v, tw, log_n, log_half, t);
}

extern "C" __global__ void k_scale(uint64_t *v, size_t n, uint64_t first, uint64_t step)
{
	size_t j = thread_index();

	if (j < n)
		gpu_scale_thread(v, first, step, j);
}

extern "C" __global__ void k_pointwise_h(uint64_t *a, const uint64_t *b, const uint64_t *c,
					 size_t n, uint64_t z_inv)
{
	size_t i = thread_index();

	if (i < n)
		gpu_pointwise_h_thread(a, b, c, z_inv, i);
}
