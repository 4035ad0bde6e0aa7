// SPDX-License-Identifier: BSD-2-Clause
/*
 * H correctness: the circuit's witness satisfies every row, and the H computed by the
 * recipe satisfies A(x)B(x) - C(x) = H(x)(x^n - 1) at random x; for a small domain, the
 * identity is also checked coefficient by coefficient with schoolbook products.
 */
#include "check.h"
#include "circuit.h"
#include "field.h"
#include "hpoly.h"
#include "rng.h"

struct case_bufs {
	struct circuit_shape s;
	struct ntt_domain d;
	uint64_t *tables;
	struct witness w;
};

static void make_case(struct case_bufs *cb, unsigned log_n, uint64_t seed)
{
	circuit_shape(log_n, &cb->s);
	cb->tables = malloc(ntt_table_bytes(log_n));
	ntt_domain_init(&cb->d, log_n, cb->tables);
	cb->w.a = malloc(cb->s.n * 8);
	cb->w.b = malloc(cb->s.n * 8);
	cb->w.c = malloc(cb->s.n * 8);
	cb->w.aux = malloc(cb->s.n_aux * 8);
	cb->w.input = malloc(cb->s.n_input * 8);
	cb->w.density = malloc(cb->s.density_bytes);
	circuit_synthesize(&cb->s, seed, 2, &cb->w);
}

static void free_case(struct case_bufs *cb)
{
	free(cb->tables), free(cb->w.a), free(cb->w.b), free(cb->w.c);
	free(cb->w.aux), free(cb->w.input), free(cb->w.density);
}

static uint64_t *coefficients(const struct ntt_domain *d, const uint64_t *evals)
{
	uint64_t *v = malloc(d->n * 8);

	memcpy(v, evals, d->n * 8);
	ntt_inverse(d, v);
	return v;
}

/* A*B - C == H * (X^n - 1), all coefficients, schoolbook (small n only) */
static bool identity_by_coefficients(const struct ntt_domain *d, const uint64_t *a,
				     const uint64_t *b, const uint64_t *c, const uint64_t *h)
{
	size_t n = d->n, m = 2 * n - 1;
	uint64_t *lhs = calloc(m, 8), *rhs = calloc(m, 8);
	bool same = true;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			lhs[i + j] = gl_add(lhs[i + j], gl_mul(a[i], b[j]));
	for (size_t i = 0; i < n; i++) {
		lhs[i] = gl_sub(lhs[i], c[i]);
		rhs[i] = gl_sub(rhs[i], h[i]); /* -H */
		if (i + n < m)
			rhs[i + n] = gl_add(rhs[i + n], h[i]); /* + H X^n */
	}
	for (size_t i = 0; i < m; i++)
		same &= lhs[i] == rhs[i];
	free(lhs), free(rhs);
	return same;
}

int main(void)
{
	static const unsigned sizes[] = { 4, 6, 8, 10, 12 };

	for (unsigned t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		unsigned log_n = sizes[t];
		struct case_bufs cb;
		uint64_t at_x[3], x, *ac, *bc, *cc;
		unsigned passed = 0, dense = 0;

		make_case(&cb, log_n, 1000 + log_n);
		CHECK(circuit_satisfied(&cb.s, &cb.w), "2^%u: the synthesized witness satisfies "
			"every row (a*b = c)", log_n);
		CHECK_EQ_U64(cb.w.input[0], 1, "2^%u: input[0] is the constant ONE", log_n);
		CHECK_EQ_U64(cb.w.input[1], cb.w.aux[cb.s.n_aux - 1],
			     "2^%u: input[1] is the chain's output", log_n);
		for (size_t i = 0; i < cb.s.n_aux; i++)
			dense += circuit_b_dense(&cb.s, cb.w.density, i);
		CHECK_EQ_U64(dense, cb.s.n_chain, "2^%u: the B density covers the chain's %zu "
			     "right-hand variables", log_n, cb.s.n_chain);

		/* the barycentric evaluation agrees with coefficients + Horner */
		ac = coefficients(&cb.d, cb.w.a);
		bc = coefficients(&cb.d, cb.w.b);
		cc = coefficients(&cb.d, cb.w.c);
		x = hpoly_pick_x(&cb.d, 7 * log_n);
		hpoly_eval_from_evals(&cb.d, cb.w.a, cb.w.b, cb.w.c, x, at_x);
		CHECK(at_x[0] == poly_eval(ac, cb.d.n, x) && at_x[1] == poly_eval(bc, cb.d.n, x) &&
			      at_x[2] == poly_eval(cc, cb.d.n, x),
		      "2^%u: A(x), B(x), C(x) from evaluations equal Horner on coefficients", log_n);

		hpoly_compute(&cb.d, cb.w.a, cb.w.b, cb.w.c); /* a now holds H */
		CHECK_EQ_U64(cb.w.a[cb.d.n - 1], 0, "2^%u: deg H <= n - 2", log_n);
		for (unsigned k = 0; k < 8; k++) {
			uint64_t xk = hpoly_pick_x(&cb.d, 31 * k + log_n), abc[3];

			abc[0] = poly_eval(ac, cb.d.n, xk);
			abc[1] = poly_eval(bc, cb.d.n, xk);
			abc[2] = poly_eval(cc, cb.d.n, xk);
			passed += hpoly_check(&cb.d, abc, cb.w.a, xk);
		}
		CHECK_EQ_U64(passed, 8, "2^%u: A(x)B(x) - C(x) = H(x)(x^n - 1) at 8 random x",
			     log_n);
		CHECK(hpoly_check(&cb.d, at_x, cb.w.a, x), "2^%u: the prover's own check passes",
		      log_n);
		if (log_n <= 8)
			CHECK(identity_by_coefficients(&cb.d, ac, bc, cc, cb.w.a),
			      "2^%u: A*B - C = H*(X^n - 1) coefficient by coefficient", log_n);

		/* extra GPU rounds are the identity */
		uint64_t *h = malloc(cb.d.n * 8);

		memcpy(h, cb.w.a, cb.d.n * 8);
		hpoly_round_trips(&cb.d, cb.w.a, 3);
		CHECK(!memcmp(h, cb.w.a, cb.d.n * 8), "2^%u: 3 NTT round trips leave H unchanged",
		      log_n);
		free(h), free(ac), free(bc), free(cc);
		free_case(&cb);
	}

	/* an unsatisfied witness must fail the check */
	struct case_bufs cb;
	uint64_t at_x[3], x;

	make_case(&cb, 10, 5);
	cb.w.c[17] = gl_add(cb.w.c[17], 1);
	CHECK(!circuit_satisfied(&cb.s, &cb.w), "a corrupted c is no longer satisfied");
	x = hpoly_pick_x(&cb.d, 3);
	hpoly_eval_from_evals(&cb.d, cb.w.a, cb.w.b, cb.w.c, x, at_x);
	hpoly_compute(&cb.d, cb.w.a, cb.w.b, cb.w.c);
	CHECK(!hpoly_check(&cb.d, at_x, cb.w.a, x), "the H check fails for it");
	free_case(&cb);
	return check_done();
}
