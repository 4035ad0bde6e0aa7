/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Number-theoretic transforms over Goldilocks on a domain of size n = 2^log_n.
 * The twiddle tables live in caller-provided storage so the prover can account for them
 * (they are process-wide, like the SRS) and tests can use plain malloc.
 */
#ifndef PROVER_NTT_H
#define PROVER_NTT_H

#include <stddef.h>
#include <stdint.h>

#define NTT_MAX_LOG_N 28

struct ntt_domain {
	unsigned log_n;
	size_t n;
	uint64_t omega;	    /* primitive n-th root of unity */
	uint64_t omega_inv;
	uint64_t n_inv;
	uint64_t shift;	    /* coset shift g: evaluations on g*<omega> avoid the roots of x^n - 1 */
	uint64_t shift_inv;
	uint64_t *tw;	    /* tw[j] = omega^j, j < n/2 */
	uint64_t *tw_inv;   /* tw_inv[j] = omega^-j */
};

/* Bytes of table storage a domain of 2^log_n needs (both tables). */
size_t ntt_table_bytes(unsigned log_n);

/* Fills `d` for 1 <= log_n <= NTT_MAX_LOG_N; `tables` holds ntt_table_bytes(log_n) bytes. */
void ntt_domain_init(struct ntt_domain *d, unsigned log_n, uint64_t *tables);

/* Coefficients -> evaluations at omega^0..omega^(n-1), in place, natural order. */
void ntt_forward(const struct ntt_domain *d, uint64_t *v);

/* Evaluations -> coefficients (times n^-1 included), in place. */
void ntt_inverse(const struct ntt_domain *d, uint64_t *v);

/* v[j] *= first * step^j for j < n: moves coefficients to or from a coset. */
void ntt_scale_powers(uint64_t *v, size_t n, uint64_t first, uint64_t step);

#endif /* PROVER_NTT_H */
