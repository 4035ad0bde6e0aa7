/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Goldilocks field arithmetic: p = 2^64 - 2^32 + 1. Chosen because it is NTT-friendly
 * (2-adicity 32, so domains up to 2^32) and a product reduces with shifts and adds only.
 * Every function takes and returns canonical values (< p).
 */
#ifndef PROVER_FIELD_H
#define PROVER_FIELD_H

#include <stdbool.h>
#include <stdint.h>

#define GL_P 0xffffffff00000001ull
/* 2^64 mod p: adding it undoes a wrap-around of a 64-bit sum */
#define GL_EPSILON 0xffffffffull
#define GL_GENERATOR 7ull /* generates the whole multiplicative group */
#define GL_TWO_ADICITY 32

/* the same arithmetic serves the CUDA kernels (prover/gpu_kernels.cu) and, on the host, the
 * stand-in driver of the tests that emulates them (tests/cuda/libcuda.c) */
#ifdef __CUDACC__
#define GL_FN __host__ __device__ static inline
#else
#define GL_FN static inline
#endif

GL_FN uint64_t gl_add(uint64_t a, uint64_t b)
{
	uint64_t s = a + b;

	if (s < a) /* wrapped: a + b = s + 2^64, and 2^64 = EPSILON (mod p) */
		return s + GL_EPSILON;
	return s >= GL_P ? s - GL_P : s;
}

GL_FN uint64_t gl_sub(uint64_t a, uint64_t b)
{
	uint64_t d = a - b;

	if (a < b) /* borrowed: the wrapped d is a - b + 2^64; a - b + p = d - EPSILON */
		return d - GL_EPSILON;
	return d;
}

GL_FN uint64_t gl_neg(uint64_t a)
{
	return a ? GL_P - a : 0;
}

/*
 * Reduces hi * 2^64 + lo. With hi = hh * 2^32 + hl: 2^64 = 2^32 - 1 and 2^96 = -1 (mod p),
 * so the value is lo - hh + hl * (2^32 - 1).
 */
GL_FN uint64_t gl_reduce128(uint64_t hi, uint64_t lo)
{
	uint64_t hh = hi >> 32, hl = hi & GL_EPSILON;
	uint64_t t0 = lo - hh, t1, t2;

	if (lo < hh) /* t0 wrapped to lo - hh + 2^64: take 2^64 = EPSILON back off */
		t0 -= GL_EPSILON;
	t1 = hl * GL_EPSILON; /* < 2^64: both factors < 2^32 */
	t2 = t0 + t1;
	if (t2 < t1)
		t2 += GL_EPSILON; /* cannot wrap again: t2 < t1 <= 2^64 - 2^33 + 1 */
	return t2 >= GL_P ? t2 - GL_P : t2;
}

GL_FN uint64_t gl_mul(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
	return gl_reduce128(__umul64hi(a, b), a * b);
#else
	unsigned __int128 p = (unsigned __int128)a * b;

	return gl_reduce128((uint64_t)(p >> 64), (uint64_t)p);
#endif
}

GL_FN uint64_t gl_sqr(uint64_t a)
{
	return gl_mul(a, a);
}

GL_FN uint64_t gl_pow(uint64_t base, uint64_t e)
{
	uint64_t r = 1;

	while (e) {
		if (e & 1)
			r = gl_mul(r, base);
		base = gl_sqr(base);
		e >>= 1;
	}
	return r;
}

/* Fermat: a^(p-2). a must be non-zero (returns 0 for 0). */
GL_FN uint64_t gl_inv(uint64_t a)
{
	return gl_pow(a, GL_P - 2);
}

/* Any 64-bit value, reduced to canonical form (for PRNG output and hashed bytes). */
GL_FN uint64_t gl_from_u64(uint64_t v)
{
	return v >= GL_P ? v - GL_P : v;
}

/* A primitive 2^log_n-th root of unity: g^((p-1) / 2^log_n), log_n <= 32. */
GL_FN uint64_t gl_root_of_unity(unsigned log_n)
{
	return gl_pow(GL_GENERATOR, (GL_P - 1) >> log_n);
}

#endif /* PROVER_FIELD_H */
