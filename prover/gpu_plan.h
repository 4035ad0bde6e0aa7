/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The GPU stage's computation, written once for the CUDA kernels (prover/gpu_kernels.cu),
 * for a host emulation that the unit tests compare with the CPU path and for the stand-in
 * driver of the tests that runs the kernels' launches on the host (tests/cuda/libcuda.c):
 * what one GPU thread does (the *_thread functions) and the order of the passes
 * (gpu_plan_h). Only the launching differs.
 */
#ifndef PROVER_GPU_PLAN_H
#define PROVER_GPU_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "field.h"

GL_FN size_t gpu_bit_reverse_index(size_t i, unsigned log_n)
{
#ifdef __CUDA_ARCH__
	return (size_t)(__brevll((unsigned long long)i) >> (64 - log_n));
#else
	size_t r = 0;

	for (unsigned b = 0; b < log_n; b++, i >>= 1)
		r = r << 1 | (i & 1);
	return r;
#endif
}

/* thread i of n: swaps v[i] with v[bitrev(i)] once per pair */
GL_FN void gpu_bit_reverse_thread(uint64_t *v, unsigned log_n, size_t i)
{
	size_t j = gpu_bit_reverse_index(i, log_n);

	if (i < j) {
		uint64_t t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/* thread t of n/2 in the decimation-in-time pass with butterflies of span 2^log_half */
GL_FN void gpu_butterfly_thread(uint64_t *v, const uint64_t *tw, unsigned log_n,
				unsigned log_half, size_t t)
{
	size_t half = (size_t)1 << log_half;
	size_t k = t & (half - 1);
	size_t i = ((t >> log_half) << (log_half + 1)) + k;
	/* omega_len^k = omega^(k * n / len), len = 2 * half */
	uint64_t w = tw[k << (log_n - 1 - log_half)];
	uint64_t u = v[i], x = gl_mul(v[i + half], w);

	v[i] = gl_add(u, x);
	v[i + half] = gl_sub(u, x);
}

/* thread j of n: v[j] *= first * step^j */
GL_FN void gpu_scale_thread(uint64_t *v, uint64_t first, uint64_t step, size_t j)
{
	v[j] = gl_mul(v[j], gl_mul(first, gl_pow(step, j)));
}

/* thread i of n: a = (a*b - c) / Z on the coset */
GL_FN void gpu_pointwise_h_thread(uint64_t *a, const uint64_t *b, const uint64_t *c,
				  uint64_t z_inv, size_t i)
{
	a[i] = gl_mul(gl_sub(gl_mul(a[i], b[i]), c[i]), z_inv);
}

/* one launch per call: each runs its *_thread function over every index */
struct gpu_ops {
	void (*bit_reverse)(void *ctx, uint64_t *v);
	void (*butterflies)(void *ctx, uint64_t *v, const uint64_t *tw, unsigned log_half);
	void (*scale)(void *ctx, uint64_t *v, uint64_t first, uint64_t step);
	void (*pointwise_h)(void *ctx, uint64_t *a, const uint64_t *b, const uint64_t *c,
			    uint64_t z_inv);
};

struct gpu_plan {
	unsigned log_n;
	uint64_t n_inv, shift, shift_inv, z_inv;
	const uint64_t *tw, *tw_inv; /* n/2 each, where the ops can read them */
	unsigned extra_rounds;
};

static inline void gpu_plan_ntt(const struct gpu_ops *ops, void *ctx, const struct gpu_plan *p,
				uint64_t *v, const uint64_t *tw)
{
	ops->bit_reverse(ctx, v);
	for (unsigned s = 0; s < p->log_n; s++)
		ops->butterflies(ctx, v, tw, s);
}

/* inverse NTT, then coefficient j times n^-1 * shift^j (shift 1: the plain inverse) */
static inline void gpu_plan_intt(const struct gpu_ops *ops, void *ctx, const struct gpu_plan *p,
				 uint64_t *v, uint64_t shift)
{
	gpu_plan_ntt(ops, ctx, p, v, p->tw_inv);
	ops->scale(ctx, v, p->n_inv, shift);
}

/* the recipe: a, b, c evaluations on <omega> -> H's coefficients in a */
static inline void gpu_plan_h(const struct gpu_ops *ops, void *ctx, const struct gpu_plan *p,
			      uint64_t *a, uint64_t *b, uint64_t *c)
{
	uint64_t *abc[3] = { a, b, c };

	for (int k = 0; k < 3; k++) {
		gpu_plan_intt(ops, ctx, p, abc[k], p->shift); /* coefficients, moved to g*<omega> */
		gpu_plan_ntt(ops, ctx, p, abc[k], p->tw);     /* evaluations on the coset */
	}
	ops->pointwise_h(ctx, a, b, c, p->z_inv);
	gpu_plan_intt(ops, ctx, p, a, p->shift_inv);
	for (unsigned r = 0; r < p->extra_rounds; r++) {
		gpu_plan_ntt(ops, ctx, p, a, p->tw);
		gpu_plan_intt(ops, ctx, p, a, 1);
	}
}

#endif /* PROVER_GPU_PLAN_H */
