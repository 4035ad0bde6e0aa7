/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Small deterministic generators: splitmix64 to expand seeds (witness constants, SRS points,
 * C1 payloads). Not cryptographic; the prover only needs reproducible, well-mixed values.
 */
#ifndef PROVER_RNG_H
#define PROVER_RNG_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* splitmix64: the state advances by a constant, the output is the mixed state */
static inline uint64_t rng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return rng_mix(*state);
}

/* Folds bytes into a 64-bit seed (8 bytes per step, so hashing a C1 slice is real work). */
static inline uint64_t rng_hash(uint64_t seed, const uint8_t *bytes, size_t len)
{
	uint64_t h = rng_mix(seed ^ len);
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w = 0;

		for (unsigned k = 0; k < 8; k++)
			w |= (uint64_t)bytes[i + k] << (8 * k);
		h = rng_mix(h ^ w);
	}
	for (; i < len; i++)
		h = rng_mix(h ^ bytes[i]);
	return h;
}

#endif /* PROVER_RNG_H */
