// SPDX-License-Identifier: BSD-2-Clause
/*
 * util/sanitize.c: every hostile byte a comm, a command line, a path or a crafted recording
 * can carry comes out visible and inert in each output form (terminal text, CSV, folded,
 * JSON), truncation never cuts an escape, the mapping is injective on a random sample, and
 * the contract's name check accepts exactly [A-Za-z0-9_.-]{1,31}.
 */
#include <stdlib.h>
#include "check.h"
#include "util/fmt.h"
#include "util/sanitize.h"

#define EQ_STR(got, want, ...)                                                                 \
	({                                                                                     \
		const char *g__ = (got), *w__ = (want);                                        \
		if (!CHECK(!strcmp(g__, w__), __VA_ARGS__))                                    \
			printf("#   got \"%s\"\n#  want \"%s\"\n", g__, w__);                    \
	})

/* What `code` writes to FILE *f, as a string (valid until the next CAPTURE). */
static char *captured;
#define CAPTURE(f, code)                                                                       \
	({                                                                                     \
		char *buf__ = NULL;                                                            \
		size_t len__ = 0;                                                              \
		FILE *f = open_memstream(&buf__, &len__);                                      \
		code;                                                                          \
		fclose(f);                                                                     \
		free(captured);                                                                \
		captured = buf__;                                                              \
	})

/* no byte below 0x20, no DEL, no 0x9b CSI outside a valid multi-byte sequence */
static bool inert(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned cp;

	while (*p) {
		int n = san_utf8_decode(p, &cp);

		if (!n || cp < 0x20 || cp == 0x7f || san_hidden_cp(cp))
			return false;
		p += n;
	}
	return true;
}

static void test_escapes(void)
{
	static const struct {
		const char *in, *out, *what;
	} cases[] = {
		{ "prover", "prover", "plain ASCII unchanged" },
		{ "", "", "empty" },
		{ "a b/c-d_e.f", "a b/c-d_e.f", "spaces and path characters unchanged" },
		{ "\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07", "ESC, OSC and BEL visible" },
		{ "line1\nline2\r\tx", "line1\\nline2\\r\\tx", "newline, CR, tab as two characters" },
		{ "a\\x1b", "a\\\\x1b", "a backslash doubles (an escape cannot be faked)" },
		{ "\x7f\x01", "\\x7f\\x01", "DEL and SOH" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		  "valid UTF-8 (2, 3, 4 bytes) unchanged" },
		{ "\x9b" "31m", "\\x9b31m", "a lone 0x9b (8-bit CSI) visible" },
		{ "\xc2\x9b" "31m", "\\u009b31m", "U+009B (C1 CSI, valid UTF-8) visible" },
		{ "\xc2\x85", "\\u0085", "U+0085 NEL" },
		{ "evil\xe2\x80\xaetxt.exe", "evil\\u202etxt.exe", "RIGHT-TO-LEFT OVERRIDE visible" },
		{ "a\xe2\x80\xa8" "b", "a\\u2028b", "LINE SEPARATOR visible" },
		{ "a\xe2\x80\x8b" "b", "a\\u200bb", "ZERO WIDTH SPACE visible" },
		{ "\xef\xbb\xbfx", "\\ufeffx", "BOM visible" },
		{ "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069", "bidi isolates visible" },
		{ "\xf3\xa0\x80\x81", "\\U000e0001", "tag character visible" },
		{ "\xc0\xaf", "\\xc0\\xaf", "overlong '/' byte by byte" },
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80", "UTF-16 surrogate byte by byte" },
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "past U+10FFFF byte by byte" },
		{ "x\xe2\x82", "x\\xe2\\x82", "a truncated sequence at the end" },
		{ "\xe2\x82y", "\\xe2\\x82y", "a truncated sequence before ASCII" },
		{ "\xff\xfe", "\\xff\\xfe", "bytes that start nothing" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256], *d;

		EQ_STR(san_str(buf, sizeof(buf), cases[i].in), cases[i].out, "san_str: %s",
		       cases[i].what);
		CHECK_EQ_U64(san_len(cases[i].in), strlen(cases[i].out), "san_len: %s",
			     cases[i].what);
		CHECK(san_is_safe(cases[i].in) == !strcmp(cases[i].in, cases[i].out),
		      "san_is_safe: %s", cases[i].what);
		CHECK(inert(buf), "escaped text is inert: %s", cases[i].what);
		d = san_dup(cases[i].in);
		EQ_STR(d ? d : "(null)", cases[i].out, "san_dup: %s", cases[i].what);
		free(d);
		EQ_STR(CAPTURE(f, san_fputs(f, cases[i].in)), cases[i].out, "san_fputs: %s",
		       cases[i].what);
	}
	EQ_STR(san_str((char[8]){ 0 }, 8, NULL), "", "san_str(NULL) is empty");
	CHECK(san_is_safe(NULL), "NULL is safe");
}

static void test_truncation(void)
{
	char buf[8];

	EQ_STR(san_str(buf, sizeof(buf), "abcdefghij"), "abcdefg", "cut at the buffer: 7 + NUL");
	EQ_STR(san_str(buf, sizeof(buf), "abcde\x1b"), "abcde",
	       "an escape that does not fit is left out whole");
	EQ_STR(san_str(buf, sizeof(buf), "abc\x1bxyz"), "abc\\x1b", "an escape that fits stays whole");
	EQ_STR(san_str(buf, sizeof(buf), "abcde\xe2\x82\xac"), "abcde", "a UTF-8 character is never cut");
	EQ_STR(san_str(buf, 1, "abc"), "", "cap 1: the NUL alone");
	CHECK(san_str(buf, 0, "abc") == buf, "cap 0: nothing written, dst returned");
}

static void test_csv_folded_json(void)
{
	EQ_STR(CAPTURE(f, san_csv(f, "plain")), "\"plain\"", "csv: quoted");
	EQ_STR(CAPTURE(f, san_csv(f, "a,\"b\"\nc")), "\"a,\"\"b\"\"\\nc\"",
	       "csv: quotes doubled, comma kept inside, newline escaped");
	EQ_STR(CAPTURE(f, san_csv(f, "=HYPERLINK(\"x\")")), "\"'=HYPERLINK(\"\"x\"\")\"",
	       "csv: a formula is neutralised with a leading quote");
	EQ_STR(CAPTURE(f, san_csv(f, "-1+2")), "\"'-1+2\"", "csv: leading - too");
	EQ_STR(CAPTURE(f, san_csv(f, "@cmd")), "\"'@cmd\"", "csv: leading @ too");
	EQ_STR(CAPTURE(f, san_folded(f, "a;b c\x1b\n")), "a_b_c\\x1b\\n",
	       "folded: separators as _, controls visible, one line");
	EQ_STR(CAPTURE(f, fmt_json_str(f, "\x1b[31m\xc2\x9b\xe2\x80\xae\xf3\xa0\x80\x81ok\xff")),
	       "\"\\u001b[31m\\u009b\\u202e\\udb40\\udc01ok\\ufffd\"",
	       "json: ESC, C1, bidi, tag (surrogate pair) as \\u, invalid UTF-8 as U+FFFD");
	EQ_STR(CAPTURE(f, fmt_json_str(f, "caf\xc3\xa9")), "\"caf\xc3\xa9\"", "json: UTF-8 kept");
}

/* Injective: two different random byte strings never share an escaped text. */
static void test_injective(void)
{
	unsigned seed = 12345, collisions = 0, unsafe = 0;
	char a[8], b[8], ea[8 * SAN_ESC_MAX + 1], eb[8 * SAN_ESC_MAX + 1];

	for (int i = 0; i < 200000; i++) {
		int la = 1 + rand_r(&seed) % 7, lb = 1 + rand_r(&seed) % 7;

		for (int k = 0; k < la; k++)
			a[k] = (char)(1 + rand_r(&seed) % 255);
		for (int k = 0; k < lb; k++)
			b[k] = (char)(1 + rand_r(&seed) % 255);
		a[la] = b[lb] = '\0';
		if (i % 2) /* a near miss: the same but for its last byte */
			memcpy(b, a, la + 1), b[la - 1] ^= 1 + rand_r(&seed) % 255, lb = la;
		if (!b[lb - 1])
			continue;
		san_str(ea, sizeof(ea), a);
		san_str(eb, sizeof(eb), b);
		collisions += strcmp(a, b) && !strcmp(ea, eb);
		unsafe += !inert(ea) || san_len(a) != strlen(ea);
	}
	CHECK_EQ_U64(collisions, 0, "200000 random pairs: different strings, different escapes");
	CHECK_EQ_U64(unsafe, 0, "... every escaped text inert, its length what san_len says");
}

static void test_names(void)
{
	static const char *const good[] = { "abc", "chan_send", "gpu.queue", "stage-2", "_x",
					     "9lives", "a", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcde" };
	static const char *const bad[] = { "", "a b", "a;b", "a\x1b", "(none)", "caf\xc3\xa9",
					   "a/b", "a\"b", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(san_name_ok(good[i]) && san_is_safe(good[i]), "name ok: '%s'", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char shown[64];

		CHECK(!san_name_ok(bad[i]), "name refused: '%s'",
		      san_str(shown, sizeof(shown), bad[i]));
	}
	CHECK(!san_name_ok(NULL), "name refused: NULL");
}

int main(void)
{
	test_escapes();
	test_truncation();
	test_csv_folded_json();
	test_injective();
	test_names();
	free(captured);
	return check_done();
}
