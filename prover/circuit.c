// SPDX-License-Identifier: BSD-2-Clause
/* Synthesis of the multiplication-chain circuit (see circuit.h). */
#include <string.h>
#include "circuit.h"
#include "field.h"
#include "rng.h"

void circuit_shape(unsigned log_n, struct circuit_shape *s)
{
	size_t n = (size_t)1 << log_n, pad = n / 32;

	s->n = n;
	s->n_input = n / 8 < CIRCUIT_MAX_INPUTS ? n / 8 : CIRCUIT_MAX_INPUTS;
	/* rows: chain, one tie row, one row per input, padding */
	s->n_chain = n - pad - 1 - s->n_input;
	s->n_rows = s->n_chain + 1 + s->n_input;
	s->n_aux = s->n_chain + 2;
	s->density_bytes = 2 * ((s->n_aux + 7) / 8);
}

static void set_bit(uint8_t *bits, size_t i)
{
	bits[i / 8] |= (uint8_t)(1u << (i % 8));
}

void circuit_synthesize(const struct circuit_shape *s, uint64_t seed, unsigned rounds,
			const struct witness *w)
{
	uint8_t *a_bits = w->density, *b_bits = w->density + s->density_bytes / 2;
	uint64_t state = seed, *x = w->aux;
	size_t row, last = s->n_aux - 1;

	memset(w->density, 0, s->density_bytes);
	x[0] = gl_from_u64(rng_next(&state));
	x[1] = gl_from_u64(rng_next(&state));
	for (row = 0; row < s->n_chain; row++) {
		uint64_t k = gl_from_u64(rng_next(&state));

		for (unsigned r = 1; r < rounds; r++)
			k = gl_add(gl_sqr(k), r);
		w->a[row] = gl_add(x[row], k);
		w->b[row] = x[row + 1];
		x[row + 2] = gl_mul(w->a[row], w->b[row]);
		w->c[row] = x[row + 2];
		set_bit(a_bits, row);
		set_bit(b_bits, row + 1);
	}

	/* public inputs: ONE, the chain's output, then values the verifier would know */
	w->input[0] = 1;
	w->input[1] = x[last];
	for (size_t j = 2; j < s->n_input; j++)
		w->input[j] = gl_from_u64(rng_next(&state));

	/* tie row: x[last] * ONE = input[1] */
	w->a[row] = x[last];
	w->b[row] = 1;
	w->c[row] = w->input[1];
	set_bit(a_bits, last);
	row++;

	/* bellperson's input rows: input[j] * 0 = 0, so the A query covers every input */
	for (size_t j = 0; j < s->n_input; j++, row++) {
		w->a[row] = w->input[j];
		w->b[row] = 0;
		w->c[row] = 0;
	}
	for (; row < s->n; row++)
		w->a[row] = w->b[row] = w->c[row] = 0;
}

bool circuit_satisfied(const struct circuit_shape *s, const struct witness *w)
{
	for (size_t i = 0; i < s->n; i++)
		if (gl_mul(w->a[i], w->b[i]) != w->c[i])
			return false;
	return true;
}
