/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Strings that come from outside - a process's comm (anyone may write /proc/self/comm), its
 * command line and executable path, a recording's names and host, a file name a user typed -
 * made safe for every output: a terminal, text, CSV, folded stacks, Prometheus labels and the
 * one-line error voice. JSON has its own, lossless escaping (fmt_json_str, which shares the
 * decoder below).
 *
 * The visible form ("escaped text"): printable ASCII as is, except `\`, which doubles; `\n`,
 * `\r`, `\t` as those two characters; every other control byte (ESC included) and DEL as
 * `\xNN`; every byte that does not start a valid UTF-8 sequence (overlong, surrogate, past
 * U+10FFFF, truncated) as `\xNN`; valid UTF-8 as is, except the characters that act on a
 * terminal or hide or reorder text - C1 controls U+0080..U+009F, bidirectional overrides and
 * isolates, zero-width and line/paragraph separators, the BOM, tag characters - as `\uXXXX`
 * (`\UXXXXXXXX` above U+FFFF). The escaped text never holds a control byte or a newline, so a
 * line stays one line; the mapping is injective (the original can be told from it).
 */
#ifndef INFLIGHT_UTIL_SANITIZE_H
#define INFLIGHT_UTIL_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SAN_NAME_MAX 31 /* the contract's longest class or stage name (probes/README.md) */
#define SAN_ESC_MAX 10	/* the longest escape of one character: "\UXXXXXXXX" */

/* The code point of the valid UTF-8 sequence at s into *cp; its length 1-4, or 0 when the
 * bytes there are not valid UTF-8 (a NUL ends any sequence). */
int san_utf8_decode(const unsigned char *s, unsigned *cp);

/* True for the code points escaped even when validly encoded (see above). */
bool san_hidden_cp(unsigned cp);

/* True when s needs no escaping at all (its escaped text is itself). NULL is safe. */
bool san_is_safe(const char *s);

/* Length of the escaped text of s, without the NUL. */
size_t san_len(const char *s);

/*
 * The escaped text of s into dst (cap bytes, cap >= 1), always NUL-terminated; cut before
 * the first character that does not fit whole (never inside an escape or a UTF-8 sequence).
 * Returns dst. NULL reads as "".
 */
char *san_str(char *dst, size_t cap, const char *s);

/* The escaped text as a new string (free() it); NULL when out of memory. */
char *san_dup(const char *s);

/* Writes the escaped text of s to f. */
void san_fputs(FILE *f, const char *s);

/*
 * One CSV field (RFC 4180): the escaped text of s between double quotes, quotes doubled; a
 * field that would start with `=`, `+`, `-` or `@` gets a leading `'` so that a spreadsheet
 * does not run it as a formula (OWASP "CSV injection").
 */
void san_csv(FILE *f, const char *s);

/* One frame of a folded stack (flamegraph.pl, speedscope): the escaped text with the
 * format's separators, `;` and ` `, written as `_`. */
void san_folded(FILE *f, const char *s);

/* True when s is a name the contract allows: 1 to SAN_NAME_MAX characters of
 * [A-Za-z0-9_.:-] (a qualified name, LABEL:NAME, has the colon). Such a name needs no
 * escaping anywhere. */
bool san_name_ok(const char *s);

#endif /* INFLIGHT_UTIL_SANITIZE_H */
