/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The H polynomial of a Groth16-style prover, computed exactly as cuzk's recipe says
 * (docs/prover.md): for a, b, c given as evaluations on the domain <omega>,
 * H = (A*B - C) / (x^n - 1) via iNTT, coset NTT, pointwise division, coset iNTT.
 * Plus the check that proves it: A(x)B(x) - C(x) = H(x)(x^n - 1) at a random x.
 */
#ifndef PROVER_HPOLY_H
#define PROVER_HPOLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ntt.h"

/* (g^n - 1)^-1: Z(X) = X^n - 1 is the constant g^n - 1 on the coset g*<omega>. */
uint64_t hpoly_z_inv_on_coset(const struct ntt_domain *d);

/*
 * On the CPU, in place: a, b, c hold evaluations on <omega>; afterwards a holds the n
 * coefficients of H (h[n-1] = 0 when the witness is satisfied); b and c are clobbered.
 */
void hpoly_compute(const struct ntt_domain *d, uint64_t *a, uint64_t *b, uint64_t *c);

/* `rounds` forward+inverse NTT round trips of h: the identity, done as real work. */
void hpoly_round_trips(const struct ntt_domain *d, uint64_t *h, unsigned rounds);

/* Horner: sum coef[j] x^j. */
uint64_t poly_eval(const uint64_t *coef, size_t n, uint64_t x);

/*
 * A(x), B(x), C(x) straight from the evaluations (barycentric Lagrange form), without any
 * NTT, so that the check does not trust the code it checks. x^n must not be 1.
 */
void hpoly_eval_from_evals(const struct ntt_domain *d, const uint64_t *a, const uint64_t *b,
			   const uint64_t *c, uint64_t x, uint64_t out[3]);

/* A check point outside the domain (x^n != 1), derived from `seed`. */
uint64_t hpoly_pick_x(const struct ntt_domain *d, uint64_t seed);

/* h[n-1] = 0 and A(x)B(x) - C(x) = H(x)(x^n - 1), with abc_at_x from hpoly_eval_from_evals. */
bool hpoly_check(const struct ntt_domain *d, const uint64_t abc_at_x[3], const uint64_t *h,
		 uint64_t x);

#endif /* PROVER_HPOLY_H */
