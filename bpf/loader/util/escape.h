/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Text that came from outside (a recording's comm, argv, host, binary and tool; a traced
 * process's /proc files; a command line) made safe for every output: a terminal, text, CSV,
 * folded stacks, JSON, SVG and error lines. Printable ASCII and valid UTF-8 of printable
 * characters stay as they are; control characters (C0, DEL, C1), invalid UTF-8 and the
 * backslash itself become visible escapes ("\x1b", "\\"), so an escape sequence or a newline
 * from a crafted file can never reach a terminal or break a line-based format.
 */
#ifndef INFLIGHT_ESCAPE_H
#define INFLIGHT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* A new NUL-terminated escaped copy of the n bytes at s (NUL bytes inside are escaped too),
 * or NULL when out of memory. */
char *esc_dup(const char *s, size_t n);

/* Escapes s into dst (cap bytes, always NUL-terminated, cut at a character boundary).
 * Returns dst. */
char *esc_into(char *dst, size_t cap, const char *s);

/* True when s needs no escaping (what esc_dup would return unchanged). */
bool esc_clean(const char *s);

/* True when s is a valid contract name: 1 to 31 characters of [A-Za-z0-9_.-]. */
bool esc_valid_name(const char *s);

#endif /* INFLIGHT_ESCAPE_H */
