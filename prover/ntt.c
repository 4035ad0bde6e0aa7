// SPDX-License-Identifier: BSD-2-Clause
/* Iterative radix-2 decimation-in-time NTT: bit-reverse, then log_n butterfly passes. */
#include "ntt.h"
#include "field.h"

size_t ntt_table_bytes(unsigned log_n)
{
	size_t half = ((size_t)1 << log_n) / 2;

	return 2 * (half ? half : 1) * sizeof(uint64_t);
}

void ntt_domain_init(struct ntt_domain *d, unsigned log_n, uint64_t *tables)
{
	size_t half;

	d->log_n = log_n;
	d->n = (size_t)1 << log_n;
	half = d->n / 2 ? d->n / 2 : 1;
	d->omega = gl_root_of_unity(log_n);
	d->omega_inv = gl_inv(d->omega);
	d->n_inv = gl_inv(d->n % GL_P);
	d->shift = GL_GENERATOR;
	d->shift_inv = gl_inv(GL_GENERATOR);
	d->tw = tables;
	d->tw_inv = tables + half;
	d->tw[0] = d->tw_inv[0] = 1;
	for (size_t j = 1; j < half; j++) {
		d->tw[j] = gl_mul(d->tw[j - 1], d->omega);
		d->tw_inv[j] = gl_mul(d->tw_inv[j - 1], d->omega_inv);
	}
}

static void bit_reverse(uint64_t *v, size_t n)
{
	/* j walks 0..n-1 in bit-reversed order alongside i */
	for (size_t i = 1, j = 0; i < n; i++) {
		size_t bit = n >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j |= bit;
		if (i < j) {
			uint64_t t = v[i];

			v[i] = v[j];
			v[j] = t;
		}
	}
}

static void butterflies(uint64_t *v, size_t n, const uint64_t *tw)
{
	for (size_t len = 2; len <= n; len <<= 1) {
		size_t half = len / 2, step = n / len;

		for (size_t start = 0; start < n; start += len) {
			uint64_t *lo = v + start, *hi = v + start + half;

			for (size_t k = 0; k < half; k++) {
				uint64_t u = lo[k], t = k ? gl_mul(hi[k], tw[k * step]) : hi[k];

				lo[k] = gl_add(u, t);
				hi[k] = gl_sub(u, t);
			}
		}
	}
}

void ntt_forward(const struct ntt_domain *d, uint64_t *v)
{
	bit_reverse(v, d->n);
	butterflies(v, d->n, d->tw);
}

void ntt_inverse(const struct ntt_domain *d, uint64_t *v)
{
	bit_reverse(v, d->n);
	butterflies(v, d->n, d->tw_inv);
	for (size_t i = 0; i < d->n; i++)
		v[i] = gl_mul(v[i], d->n_inv);
}

void ntt_scale_powers(uint64_t *v, size_t n, uint64_t first, uint64_t step)
{
	uint64_t s = first;

	for (size_t j = 0; j < n; j++) {
		v[j] = gl_mul(v[j], s);
		s = gl_mul(s, step);
	}
}
