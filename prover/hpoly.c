// SPDX-License-Identifier: BSD-2-Clause
/* The H recipe on the CPU (the GPU stage's fallback) and the independent check of H. */
#include "hpoly.h"
#include "field.h"
#include "rng.h"

uint64_t hpoly_z_inv_on_coset(const struct ntt_domain *d)
{
	return gl_inv(gl_sub(gl_pow(d->shift, d->n), 1));
}

/* evaluations on <omega> -> evaluations on g*<omega> */
static void to_coset(const struct ntt_domain *d, uint64_t *v)
{
	ntt_inverse(d, v);
	ntt_scale_powers(v, d->n, 1, d->shift);
	ntt_forward(d, v);
}

void hpoly_compute(const struct ntt_domain *d, uint64_t *a, uint64_t *b, uint64_t *c)
{
	uint64_t z_inv = hpoly_z_inv_on_coset(d);

	to_coset(d, a);
	to_coset(d, b);
	to_coset(d, c);
	for (size_t i = 0; i < d->n; i++)
		a[i] = gl_mul(gl_sub(gl_mul(a[i], b[i]), c[i]), z_inv);
	ntt_inverse(d, a);
	ntt_scale_powers(a, d->n, 1, d->shift_inv);
}

void hpoly_round_trips(const struct ntt_domain *d, uint64_t *h, unsigned rounds)
{
	for (unsigned r = 0; r < rounds; r++) {
		ntt_forward(d, h);
		ntt_inverse(d, h);
	}
}

uint64_t poly_eval(const uint64_t *coef, size_t n, uint64_t x)
{
	uint64_t acc = 0;

	while (n--)
		acc = gl_add(gl_mul(acc, x), coef[n]);
	return acc;
}

/* one batch inversion per chunk keeps the scratch on the stack and inversions rare */
#define BARY_CHUNK 256

void hpoly_eval_from_evals(const struct ntt_domain *d, const uint64_t *a, const uint64_t *b,
			   const uint64_t *c, uint64_t x, uint64_t out[3])
{
	uint64_t den[BARY_CHUNK], prefix[BARY_CHUNK], root[BARY_CHUNK];
	uint64_t sa = 0, sb = 0, sc = 0, scale;
	size_t half = d->n / 2;

	for (size_t i0 = 0; i0 < d->n; i0 += BARY_CHUNK) {
		size_t len = d->n - i0 < BARY_CHUNK ? d->n - i0 : BARY_CHUNK;
		uint64_t acc = 1, inv;

		for (size_t k = 0; k < len; k++) {
			size_t i = i0 + k;

			/* omega^(i + n/2) = -omega^i */
			root[k] = d->n == 1 ? 1 : i < half ? d->tw[i] : gl_neg(d->tw[i - half]);
			den[k] = gl_sub(x, root[k]);
			acc = gl_mul(acc, den[k]);
			prefix[k] = acc;
		}
		inv = gl_inv(acc);
		for (size_t k = len; k-- > 0;) {
			size_t i = i0 + k;
			uint64_t inv_k = k ? gl_mul(inv, prefix[k - 1]) : inv;
			uint64_t w = gl_mul(root[k], inv_k);

			inv = gl_mul(inv, den[k]);
			sa = gl_add(sa, gl_mul(a[i], w));
			sb = gl_add(sb, gl_mul(b[i], w));
			sc = gl_add(sc, gl_mul(c[i], w));
		}
	}
	/* L_i(x) = (x^n - 1) omega^i / (n (x - omega^i)) */
	scale = gl_mul(gl_sub(gl_pow(x, d->n), 1), d->n_inv);
	out[0] = gl_mul(sa, scale);
	out[1] = gl_mul(sb, scale);
	out[2] = gl_mul(sc, scale);
}

uint64_t hpoly_pick_x(const struct ntt_domain *d, uint64_t seed)
{
	uint64_t x;

	do
		x = gl_from_u64(rng_next(&seed));
	while (gl_pow(x, d->n) == 1);
	return x;
}

bool hpoly_check(const struct ntt_domain *d, const uint64_t abc_at_x[3], const uint64_t *h,
		 uint64_t x)
{
	uint64_t lhs = gl_sub(gl_mul(abc_at_x[0], abc_at_x[1]), abc_at_x[2]);
	uint64_t rhs = gl_mul(poly_eval(h, d->n, x), gl_sub(gl_pow(x, d->n), 1));

	return h[d->n - 1] == 0 && lhs == rhs;
}
