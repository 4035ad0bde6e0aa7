/* SPDX-License-Identifier: BSD-2-Clause */
/* Standard base64 (RFC 4648, padded), as the C1 output carries its binary payload. */
#ifndef PROVER_BASE64_H
#define PROVER_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* Writes base64_encoded_len(n) characters and a NUL. */
void base64_encode(const uint8_t *in, size_t n, char *out);

/*
 * The decoded length of a well-formed text of `len` characters, or false when `len` is not
 * a multiple of 4 or the padding is wrong (checked before a buffer is allocated).
 */
bool base64_decoded_len(const char *in, size_t len, size_t *out_len);

/* Decodes; on a character outside the alphabet, returns false with its offset in *bad_at. */
bool base64_decode(const char *in, size_t len, uint8_t *out, size_t *bad_at);

#endif /* PROVER_BASE64_H */
