// SPDX-License-Identifier: BSD-2-Clause
/* Goldilocks arithmetic against 128-bit reference arithmetic, plus its structure. */
#include "check.h"
#include "field.h"
#include "rng.h"

typedef unsigned __int128 u128;

static uint64_t ref_mul(uint64_t a, uint64_t b)
{
	return (uint64_t)((u128)a * b % GL_P);
}

static uint64_t ref_add(uint64_t a, uint64_t b)
{
	return (uint64_t)(((u128)a + b) % GL_P);
}

static uint64_t ref_sub(uint64_t a, uint64_t b)
{
	return (uint64_t)(((u128)a + GL_P - b) % GL_P);
}

int main(void)
{
	/* values where carries, borrows and the reduction's corner cases live */
	static const uint64_t edge[] = { 0, 1, 2, GL_EPSILON, GL_EPSILON + 1, 1ull << 32,
					 1ull << 63, GL_P - 1, GL_P - 2, GL_P - GL_EPSILON,
					 0xffffffff00000000ull, 0x00000000ffffffffull };
	unsigned n_edge = sizeof(edge) / sizeof(edge[0]), bad_mul = 0, bad_add = 0, bad_sub = 0;
	unsigned bad_inv = 0, bad_canon = 0, bad_sqr = 0;
	uint64_t state = 42;

	for (unsigned i = 0; i < n_edge; i++)
		for (unsigned j = 0; j < n_edge; j++) {
			uint64_t a = edge[i], b = edge[j];

			bad_mul += gl_mul(a, b) != ref_mul(a, b);
			bad_add += gl_add(a, b) != ref_add(a, b);
			bad_sub += gl_sub(a, b) != ref_sub(a, b);
		}
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t a = gl_from_u64(rng_next(&state)), b = gl_from_u64(rng_next(&state));
		uint64_t m = gl_mul(a, b), s = gl_add(a, b), d = gl_sub(a, b);

		bad_mul += m != ref_mul(a, b);
		bad_add += s != ref_add(a, b);
		bad_sub += d != ref_sub(a, b);
		bad_sqr += gl_sqr(a) != ref_mul(a, a);
		bad_canon += m >= GL_P || s >= GL_P || d >= GL_P;
		if (i < 2000 && a)
			bad_inv += gl_mul(a, gl_inv(a)) != 1;
	}
	CHECK_EQ_U64(bad_mul, 0, "gl_mul matches (a*b) mod p on edge and 200000 random pairs");
	CHECK_EQ_U64(bad_add, 0, "gl_add matches (a+b) mod p");
	CHECK_EQ_U64(bad_sub, 0, "gl_sub matches (a-b) mod p");
	CHECK_EQ_U64(bad_sqr, 0, "gl_sqr matches a*a mod p");
	CHECK_EQ_U64(bad_canon, 0, "results are canonical (< p)");
	CHECK_EQ_U64(bad_inv, 0, "a * a^-1 = 1 for 2000 random a");
	CHECK_EQ_U64(gl_mul(GL_P - 1, GL_P - 1), 1, "(-1)^2 = 1");
	CHECK_EQ_U64(gl_neg(0), 0, "-0 = 0");
	CHECK_EQ_U64(gl_add(gl_neg(12345), 12345), 0, "-a + a = 0");
	CHECK_EQ_U64(gl_from_u64(UINT64_MAX), UINT64_MAX - GL_P, "2^64-1 reduces to 2^32-2");
	CHECK_EQ_U64(gl_from_u64(GL_P), 0, "p reduces to 0");
	CHECK_EQ_U64(gl_pow(3, 0), 1, "x^0 = 1");
	CHECK_EQ_U64(gl_pow(2, 64), GL_EPSILON, "2^64 = 2^32 - 1 (mod p)");
	CHECK_EQ_U64(gl_pow(2, 96), GL_P - 1, "2^96 = -1 (mod p)");

	/* p - 1 = 2^32 * 3 * 5 * 17 * 257 * 65537: 7 generates the group iff no 7^((p-1)/q) = 1 */
	static const uint64_t primes[] = { 2, 3, 5, 17, 257, 65537 };
	unsigned ones = 0;

	for (unsigned i = 0; i < 6; i++)
		ones += gl_pow(GL_GENERATOR, (GL_P - 1) / primes[i]) == 1;
	CHECK_EQ_U64(ones, 0, "7 generates the multiplicative group");
	CHECK_EQ_U64((1ull << 32) * 3 * 5 * 17 * 257 * 65537, GL_P - 1,
		     "p - 1 factors as 2^32 * 3 * 5 * 17 * 257 * 65537");

	unsigned bad_roots = 0;

	for (unsigned k = 1; k <= GL_TWO_ADICITY; k++) {
		uint64_t w = gl_root_of_unity(k);

		/* primitive: w^(2^k) = 1 but w^(2^(k-1)) = -1 */
		bad_roots += gl_pow(w, 1ull << k) != 1 || gl_pow(w, 1ull << (k - 1)) != GL_P - 1;
	}
	CHECK_EQ_U64(bad_roots, 0, "root of unity of order 2^k is primitive for k = 1..32");
	return check_done();
}
