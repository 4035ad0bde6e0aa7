// SPDX-License-Identifier: BSD-2-Clause
/* Escaping of outside text for every output. util/escape.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/escape.h"

/* Length of the valid UTF-8 sequence of a printable character at s[0..n), or 0. */
static size_t printable_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] >= 0x20 && s[0] < 0x7f)
		return s[0] == '\\' ? 0 : 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF, C1 controls, line/paragraph separators
	 * and the bidirectional overrides (they reorder what a terminal shows) */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (cp >= 0x80 && cp < 0xa0) ||
	    cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return len;
}

/* Writes the escape of s[0..n) into out (when non-NULL); returns its length. */
static size_t escape(const unsigned char *s, size_t n, char *out)
{
	size_t len = 0;

	for (size_t i = 0; i < n;) {
		size_t k = printable_len(s + i, n - i);

		if (k) {
			if (out)
				memcpy(out + len, s + i, k);
			len += k;
			i += k;
		} else if (s[i] == '\\') {
			if (out)
				memcpy(out + len, "\\\\", 2);
			len += 2;
			i++;
		} else {
			if (out)
				snprintf(out + len, 5, "\\x%02x", s[i]);
			len += 4;
			i++;
		}
	}
	return len;
}

char *esc_dup(const char *s, size_t n)
{
	size_t len = escape((const unsigned char *)s, n, NULL);
	char *d = malloc(len + 1);

	if (!d)
		return NULL;
	escape((const unsigned char *)s, n, d);
	d[len] = 0;
	return d;
}

char *esc_into(char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), len = 0;

	if (!cap)
		return dst;
	for (size_t i = 0; i < n;) {
		size_t k = printable_len(p + i, n - i), w = k ? k : p[i] == '\\' ? 2 : 4;
		char tmp[5];

		if (len + w >= cap)
			break;
		if (k)
			memcpy(dst + len, p + i, k);
		else if (p[i] == '\\')
			memcpy(dst + len, "\\\\", 2);
		else
			snprintf(tmp, sizeof(tmp), "\\x%02x", p[i]), memcpy(dst + len, tmp, 4);
		len += w;
		i += k ? k : 1;
	}
	dst[len] = 0;
	return dst;
}

bool esc_clean(const char *s)
{
	size_t n = strlen(s);

	return escape((const unsigned char *)s, n, NULL) == n && !strchr(s, '\\');
}

bool esc_valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 31)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}
