// SPDX-License-Identifier: BSD-2-Clause
/* The NTT against a naive O(n^2) DFT, and its inverse and coset scaling. */
#include "check.h"
#include "field.h"
#include "ntt.h"
#include "rng.h"

static void naive_dft(const uint64_t *in, uint64_t *out, size_t n, uint64_t omega)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t acc = 0, wi = gl_pow(omega, i), w = 1;

		for (size_t j = 0; j < n; j++) {
			acc = gl_add(acc, gl_mul(in[j], w));
			w = gl_mul(w, wi);
		}
		out[i] = acc;
	}
}

static void fill(uint64_t *v, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		v[i] = gl_from_u64(rng_next(&seed));
}

int main(void)
{
	for (unsigned log_n = 1; log_n <= 9; log_n++) {
		size_t n = (size_t)1 << log_n, diff_f = 0, diff_i = 0;
		uint64_t *tables = malloc(ntt_table_bytes(log_n));
		uint64_t *v = malloc(n * 8), *orig = malloc(n * 8), *want = malloc(n * 8);
		struct ntt_domain d;

		ntt_domain_init(&d, log_n, tables);
		fill(v, n, log_n);
		memcpy(orig, v, n * 8);
		naive_dft(orig, want, n, d.omega);
		ntt_forward(&d, v);
		for (size_t i = 0; i < n; i++)
			diff_f += v[i] != want[i];
		CHECK_EQ_U64(diff_f, 0, "forward NTT of 2^%u points equals the naive DFT", log_n);

		/* the inverse is the DFT with omega^-1, divided by n */
		naive_dft(orig, want, n, d.omega_inv);
		memcpy(v, orig, n * 8);
		ntt_inverse(&d, v);
		for (size_t i = 0; i < n; i++)
			diff_i += v[i] != gl_mul(want[i], d.n_inv);
		CHECK_EQ_U64(diff_i, 0, "inverse NTT of 2^%u points equals naive DFT(w^-1) / n",
			     log_n);
		free(tables), free(v), free(orig), free(want);
	}

	/* a bigger size: round trip and evaluation at one point */
	unsigned log_n = 14;
	size_t n = (size_t)1 << log_n, diff = 0;
	uint64_t *tables = malloc(ntt_table_bytes(log_n)), *v = malloc(n * 8), *orig = malloc(n * 8);
	struct ntt_domain d;

	ntt_domain_init(&d, log_n, tables);
	fill(v, n, 99);
	memcpy(orig, v, n * 8);
	ntt_forward(&d, v);
	/* evaluation 77 is the polynomial at omega^77 */
	uint64_t x = gl_pow(d.omega, 77), acc = 0;

	for (size_t j = n; j-- > 0;)
		acc = gl_add(gl_mul(acc, x), orig[j]);
	CHECK_EQ_U64(v[77], acc, "NTT(2^14)[77] is the polynomial at omega^77");
	ntt_inverse(&d, v);
	for (size_t i = 0; i < n; i++)
		diff += v[i] != orig[i];
	CHECK_EQ_U64(diff, 0, "inverse(forward(v)) = v for 2^14 points");

	/* coset scaling: v[j] * 5 * 3^j */
	memcpy(v, orig, n * 8);
	ntt_scale_powers(v, n, 5, 3);
	CHECK_EQ_U64(v[0], gl_mul(orig[0], 5), "scale_powers: j = 0 gets `first`");
	CHECK_EQ_U64(v[1000], gl_mul(orig[1000], gl_mul(5, gl_pow(3, 1000))),
		     "scale_powers: j = 1000 gets first * step^1000");
	CHECK_EQ_U64(gl_pow(d.omega, n), 1, "omega^n = 1");
	CHECK_EQ_U64(gl_mul(d.shift, d.shift_inv), 1, "shift * shift^-1 = 1");
	CHECK(gl_pow(d.shift, n) != 1, "the coset shift is outside the domain (g^n != 1)");
	free(tables), free(v), free(orig);
	return check_done();
}
