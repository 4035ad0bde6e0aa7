// SPDX-License-Identifier: BSD-2-Clause
/* base64 both ways; the decoder is strict so that a damaged payload is reported, not guessed. */
#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		*out++ = '=';
	}
	*out = '\0';
}

bool base64_decoded_len(const char *in, size_t len, size_t *out_len)
{
	size_t pad = 0;

	if (len % 4)
		return false;
	if (len && in[len - 1] == '=')
		pad = len >= 2 && in[len - 2] == '=' ? 2 : 1;
	*out_len = len / 4 * 3 - pad;
	return true;
}

static int sextet(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

bool base64_decode(const char *in, size_t len, uint8_t *out, size_t *bad_at)
{
	size_t out_len, pad;

	if (!base64_decoded_len(in, len, &out_len)) {
		*bad_at = len;
		return false;
	}
	pad = len / 4 * 3 - out_len;
	for (size_t i = 0, o = 0; i < len; i += 4) {
		uint32_t v = 0;

		for (size_t k = 0; k < 4; k++) {
			int s = sextet(in[i + k]);
			/* '=' only in the padding positions base64_decoded_len counted */
			bool padding = in[i + k] == '=' && i + 4 == len && k >= 4 - pad;

			if (s < 0 && !padding) {
				*bad_at = i + k;
				return false;
			}
			v = v << 6 | (uint32_t)(s < 0 ? 0 : s);
		}
		for (size_t k = 0; k < 3 && o < out_len; k++)
			out[o++] = (uint8_t)(v >> (16 - 8 * k));
	}
	return true;
}
