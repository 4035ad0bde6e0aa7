/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The R1CS-like circuit every partition synthesizes: a multiplication chain
 *   x[i+2] = (x[i] + k[i]) * x[i+1]
 * whose constants k come from the partition's slice of the C1 input, one row tying the
 * chain's output to a public input, and bellperson's input rows (input[j] * 0 = 0).
 * Synthesis evaluates every row's A, B, C linear combinations into a, b, c (so a*b = c
 * row by row), and fills the aux and input assignments and the density bit vectors.
 */
#ifndef PROVER_CIRCUIT_H
#define PROVER_CIRCUIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CIRCUIT_MIN_LOG_N 4
#define CIRCUIT_MAX_INPUTS 328 /* a 32 GiB PoRep partition has 328 public inputs */

struct circuit_shape {
	size_t n;	      /* rows of a, b, c: the FFT domain, 2^log_n */
	size_t n_chain;	      /* multiplication rows */
	size_t n_rows;	      /* rows used; the rest (about n/32, as in cuzk) is zero padding */
	size_t n_aux;	      /* aux variables: the chain */
	size_t n_input;	      /* public inputs, the constant ONE first */
	size_t density_bytes; /* A bits then B bits over the aux variables */
};

struct witness {
	uint64_t *a, *b, *c; /* n each */
	uint64_t *aux;	     /* n_aux */
	uint64_t *input;     /* n_input */
	uint8_t *density;    /* density_bytes */
};

void circuit_shape(unsigned log_n, struct circuit_shape *s);

/*
 * Fills every byte of the witness buffers. `seed` stands for the partition's C1 slice;
 * `rounds` >= 1 scales the work spent deriving each row's constant (the synthesis-cost knob).
 */
void circuit_synthesize(const struct circuit_shape *s, uint64_t seed, unsigned rounds,
			const struct witness *w);

/* Row by row a*b = c (a test's view of "the witness satisfies the R1CS"). */
bool circuit_satisfied(const struct circuit_shape *s, const struct witness *w);

/* density bit `var` of the B query (the one the b_g2 MSM runs over) */
static inline bool circuit_b_dense(const struct circuit_shape *s, const uint8_t *density,
				   size_t var)
{
	const uint8_t *b_bits = density + s->density_bytes / 2;

	return b_bits[var / 8] >> (var % 8) & 1;
}

#endif /* PROVER_CIRCUIT_H */
