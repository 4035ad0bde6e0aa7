// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: outside strings on their way out. Each input is cut at its NUL bytes into up
 * to five strings standing for a comm, a command line, a path, a host and a name, and each
 * goes through every output path the loader has for such strings: util/sanitize.h's escaped
 * text (checked against a plain oracle of the documented rules and for injectivity against
 * the next string), its CSV and folded forms, the JSON string writer, a Prometheus exposition
 * with the strings as a process's identity, the text summary's header with them as the
 * command line, and the error line. Every output must be inert: no control byte but the
 * newlines the format puts there itself, valid UTF-8, none of the hidden code points. A
 * broken promise aborts. Built for libFuzzer (`make fuzz`) and as a corpus replay in the suite.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "live/prom.h"
#include "live/summary.h"
#include "util/errors.h"
#include "util/fmt.h"
#include "util/sanitize.h"

#define PROMISE(cond)                                                                            \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_output: broken promise: %s (%s:%d)\n", #cond,      \
				__FILE__, __LINE__);                                             \
			abort();                                                                 \
		}                                                                                \
	} while (0)

#define NSTR 5
#define STR_MAX 4096

/* No byte below 0x20 but \n (and \t when `tabs`), no DEL, valid UTF-8, no hidden code point. */
static bool inert(const char *s, size_t len, bool newlines)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	unsigned cp;

	while (p < end) {
		int n = san_utf8_decode(p, &cp);

		if (!n || (cp < 0x20 && !(newlines && cp == '\n')) || cp == 0x7f || san_hidden_cp(cp))
			return false;
		p += n;
	}
	return true;
}

/* The documented rules, the plain way: the escaped text of one input byte string. */
static size_t oracle(const char *s, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	unsigned cp;

	while (*p) {
		int n = san_utf8_decode(p, &cp);

		if (*p == '\\')
			o += sprintf(out + o, "\\\\");
		else if (*p == '\n')
			o += sprintf(out + o, "\\n");
		else if (*p == '\r')
			o += sprintf(out + o, "\\r");
		else if (*p == '\t')
			o += sprintf(out + o, "\\t");
		else if (*p < 0x20 || *p == 0x7f || !n)
			o += sprintf(out + o, "\\x%02x", *p), n = 1;
		else if (san_hidden_cp(cp))
			o += sprintf(out + o, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		else
			memcpy(out + o, p, n), o += n;
		p += n ? n : 1;
	}
	out[o] = '\0';
	return o;
}

static char *capture(void (*fn)(FILE *, void *), void *arg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	PROMISE(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void do_csv(FILE *f, void *s)
{
	san_csv(f, s);
}

static void do_folded(FILE *f, void *s)
{
	san_folded(f, s);
}

static void do_json(FILE *f, void *s)
{
	fmt_json_str(f, s);
}

static void check_sanitize(const char *s, const char *next)
{
	static char want[STR_MAX * SAN_ESC_MAX + 1], got[STR_MAX * SAN_ESC_MAX + 1];
	static char other[STR_MAX * SAN_ESC_MAX + 1];
	size_t n = oracle(s, want), len;
	char *out;

	PROMISE(san_len(s) == n);
	PROMISE(!strcmp(san_str(got, sizeof(got), s), want));
	PROMISE(inert(got, n, false));
	PROMISE(san_is_safe(s) == !strcmp(s, want));
	/* a short buffer: a prefix of the whole, cut between escapes */
	san_str(other, 1 + n / 2, s);
	PROMISE(!strncmp(other, want, strlen(other)) && strlen(other) <= n / 2);
	/* injective: another string, another text */
	oracle(next, other);
	PROMISE(!strcmp(s, next) == !strcmp(want, other));
	out = capture(do_csv, (void *)s, &len);
	PROMISE(len >= 2 && out[0] == '"' && out[len - 1] == '"' && inert(out, len, false));
	for (size_t i = 1; i + 1 < len; i++) /* quotes inside come in pairs */
		PROMISE(out[i] != '"' || out[++i] == '"');
	free(out);
	out = capture(do_folded, (void *)s, &len);
	PROMISE(inert(out, len, false) && !memchr(out, ';', len) && !memchr(out, ' ', len));
	free(out);
	out = capture(do_json, (void *)s, &len);
	PROMISE(len >= 2 && out[0] == '"' && out[len - 1] == '"' && inert(out, len, false));
	free(out);
}

/* A whole exposition with the strings as identity: one line per sample, all inert. */
static void check_prom(char *const str[NSTR])
{
	struct proc_snapshot ps = { .pid = 7 };
	struct snapshot snap = { .nprocs = 1, .procs = &ps };
	struct prom_identity id = { 7, str[2], str[0], str[1], 1700000000 };
	struct prom_opts o = { .ident = &id, .nident = 1, .build_version = str[3] };
	struct infl_names n;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	names__init(&n);
	PROMISE(f && prom__render(f, &snap, &n, &o) == 0);
	fclose(f);
	PROMISE(inert(buf, len, true));
	/* the identity is one sample line, escaped text inside quotes */
	PROMISE(strstr(buf, "\ninflight_process_info{pid=\"7\",binary=\""));
	free(buf);
}

/* The summary's header with the strings as the spawned command and the binary. */
static void check_summary(char *const str[NSTR])
{
	struct proc_snapshot ps = { .pid = 9 };
	struct snapshot snap = { .nprocs = 1, .procs = &ps };
	char *argv[NSTR + 1];
	struct summary_info info = { .binary = str[2], .argv = argv, .target_pid = 9,
				     .target_status = 0 };
	struct infl_names n;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	names__init(&n);
	for (int i = 0; i < NSTR; i++)
		argv[i] = str[i];
	argv[NSTR] = NULL;
	for (int json = 0; json < 2; json++) {
		info.json = json;
		f = open_memstream(&buf, &len);
		PROMISE(f);
		summary__print(f, &snap, &n, &info);
		fclose(f);
		PROMISE(inert(buf, len, true));
		free(buf);
		buf = NULL;
	}
}

/* The error line: one line, inert. */
static void check_error(char *const str[NSTR])
{
	char path[] = "/tmp/fuzz-output-XXXXXX", line[4096];
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	PROMISE(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	infl_err(EXIT_NO_BINARY, str[3], "%s: cannot run %s: %s", str[0], str[1], str[2]);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, line, sizeof(line) - 1, 0);
	close(fd);
	unlink(path);
	PROMISE(n > 0 && line[n - 1] == '\n' && memchr(line, '\n', n) == line + n - 1);
	PROMISE(inert(line, n - 1, false));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *str[NSTR];
	size_t at = 0;

	for (int i = 0; i < NSTR; i++) {
		size_t len = 0;

		while (at + len < size && data[at + len] && len < STR_MAX)
			len++;
		str[i] = malloc(len + 1);
		PROMISE(str[i]);
		memcpy(str[i], data + at, len);
		str[i][len] = '\0';
		at += len + (at + len < size);
	}
	for (int i = 0; i < NSTR; i++)
		check_sanitize(str[i], str[(i + 1) % NSTR]);
	check_prom(str);
	check_summary(str);
	check_error(str);
	for (int i = 0; i < NSTR; i++)
		free(str[i]);
	return 0;
}
