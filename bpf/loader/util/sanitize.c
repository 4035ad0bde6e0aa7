// SPDX-License-Identifier: BSD-2-Clause
/* Outside strings made safe for every output. util/sanitize.h has the rules. */
#include <stdlib.h>
#include <string.h>
#include "util/sanitize.h"

int san_utf8_decode(const unsigned char *s, unsigned *cp)
{
	unsigned v;
	int n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, v = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, v = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, v = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF are invalid */
	if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000) ||
	    (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return n;
}

bool san_hidden_cp(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) ||	 /* C1 controls: 0x9b is a CSI on some terminals */
	       cp == 0x61c ||			 /* Arabic letter mark (bidi) */
	       (cp >= 0x200b && cp <= 0x200f) || /* zero-width space .. right-to-left mark */
	       (cp >= 0x2028 && cp <= 0x202e) || /* line/paragraph separators, bidi embeddings */
	       (cp >= 0x2060 && cp <= 0x206f) || /* word joiner, invisible operators, isolates */
	       cp == 0xfeff ||			 /* BOM / zero-width no-break space */
	       (cp >= 0xfff9 && cp <= 0xfffb) || /* interlinear annotation controls */
	       (cp >= 0xe0000 && cp <= 0xe007f); /* tag characters (hidden text) */
}

static int hex_escape(char *out, unsigned byte)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[byte >> 4 & 0xf];
	out[3] = hex[byte & 0xf];
	return 4;
}

/* The escaped text of the character at s (not NUL) into out, at most SAN_ESC_MAX bytes, not
 * NUL-terminated. Returns its length; *used gets the input bytes it stands for (>= 1). */
static int visible(const unsigned char *s, char out[SAN_ESC_MAX], int *used)
{
	unsigned cp;
	int n;

	*used = 1;
	if (s[0] >= 0x20 && s[0] < 0x7f && s[0] != '\\') {
		out[0] = (char)s[0];
		return 1;
	}
	out[0] = '\\';
	switch (s[0]) {
	case '\\':
		out[1] = '\\';
		return 2;
	case '\n':
		out[1] = 'n';
		return 2;
	case '\r':
		out[1] = 'r';
		return 2;
	case '\t':
		out[1] = 't';
		return 2;
	}
	if (s[0] < 0x80)
		return hex_escape(out, s[0]); /* the other C0 controls, ESC, DEL */
	n = san_utf8_decode(s, &cp);
	if (!n)
		return hex_escape(out, s[0]); /* a byte of no valid sequence: alone */
	*used = n;
	if (san_hidden_cp(cp)) {
		char tmp[SAN_ESC_MAX + 1];
		int len = cp > 0xffff ? snprintf(tmp, sizeof(tmp), "\\U%08x", cp)
				      : snprintf(tmp, sizeof(tmp), "\\u%04x", cp);

		memcpy(out, tmp, len);
		return len;
	}
	memcpy(out, s, n);
	return n;
}

bool san_is_safe(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char piece[SAN_ESC_MAX];
	int used, len;

	while (*p) {
		len = visible(p, piece, &used);
		if (len != used || memcmp(piece, p, len))
			return false;
		p += used;
	}
	return true;
}

size_t san_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char piece[SAN_ESC_MAX];
	size_t total = 0;
	int used;

	while (*p) {
		total += visible(p, piece, &used);
		p += used;
	}
	return total;
}

char *san_str(char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char piece[SAN_ESC_MAX];
	size_t at = 0;
	int used, len;

	if (!cap)
		return dst;
	while (*p) {
		len = visible(p, piece, &used);
		if (at + len + 1 > cap)
			break;
		memcpy(dst + at, piece, len);
		at += len;
		p += used;
	}
	dst[at] = '\0';
	return dst;
}

char *san_dup(const char *s)
{
	size_t len = san_len(s);
	char *d = malloc(len + 1);

	return d ? san_str(d, len + 1, s) : NULL;
}

/* Writes the escaped text of s, each output byte through `map` (identity when NULL). */
static void put_mapped(FILE *f, const char *s, char (*map)(char))
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char piece[SAN_ESC_MAX];
	int used, len;

	while (*p) {
		len = visible(p, piece, &used);
		for (int i = 0; map && i < len; i++)
			piece[i] = map(piece[i]);
		fwrite(piece, 1, len, f);
		p += used;
	}
}

void san_fputs(FILE *f, const char *s)
{
	put_mapped(f, s, NULL);
}

void san_csv(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char piece[SAN_ESC_MAX];
	int used, len;

	fputc('"', f);
	if (*p == '=' || *p == '+' || *p == '-' || *p == '@')
		fputc('\'', f);
	while (*p) {
		len = visible(p, piece, &used);
		for (int i = 0; i < len; i++) {
			if (piece[i] == '"')
				fputc('"', f);
			fputc(piece[i], f);
		}
		p += used;
	}
	fputc('"', f);
}

static char folded_char(char c)
{
	return c == ';' || c == ' ' ? '_' : c;
}

void san_folded(FILE *f, const char *s)
{
	put_mapped(f, s, folded_char);
}

bool san_name_ok(const char *s)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++) {
		char c = s[n];

		if (n >= SAN_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-' || c == ':'))
			return false;
	}
	return n > 0;
}
