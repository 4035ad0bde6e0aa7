// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: the numbers and addresses a user types. Each input, as a C string, goes to
 * every parser of command-line values (parse_u64, parse_pid, parse_duration_ns,
 * prom__parse_listen) and the Accept-header reader; results are compared with independent
 * oracles written here the plain way. Its first 8 bytes, as a number, also go through the
 * size and duration formatters, whose widths are promised in fmt.h. A mismatch aborts.
 * Built for libFuzzer (`make fuzz`) and as a corpus replay in the suite.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cmd/attach_opts.h"
#include "util/fmt.h"
#include "live/prom.h"

#define PROMISE(cond)                                                                            \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_numbers: broken promise: %s (%s:%d)\n", #cond,     \
				__FILE__, __LINE__);                                             \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* Oracle for parse_u64: 0 / -EINVAL / -ERANGE and the value. */
static int oracle_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned __int128 v = 0;
	bool overflow = false;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	for (; *s; s++) {
		v = v * 10 + (*s - '0');
		if (v > UINT64_MAX) {
			overflow = true;
			v = (unsigned __int128)UINT64_MAX + 1; /* stays above the range */
		}
	}
	if (overflow || v < min || v > max)
		return -ERANGE;
	*out = (__u64)v;
	return 0;
}

static void check_u64(const char *s, __u64 min, __u64 max)
{
	__u64 got = 0xdeadbeef, want = 0;
	int err = parse_u64(s, min, max, &got), werr = oracle_u64(s, min, max, &want);

	PROMISE(err == werr);
	if (!err)
		PROMISE(got == want && got >= min && got <= max);
	else
		PROMISE(got == 0xdeadbeef); /* nothing written on failure */
}

/* Oracle for durations: DIGITS [. 1-9 DIGITS] UNIT, UNIT in "", s, ms, us, m, h. */
static int oracle_duration(const char *s, __u64 *out)
{
	static const struct {
		const char *name;
		__u64 ns;
	} units[] = { { "", 1000000000ull }, { "s", 1000000000ull }, { "ms", 1000000ull },
		      { "us", 1000ull },	 { "m", 60000000000ull },  { "h", 3600000000000ull } };
	size_t whole_len = strspn(s, "0123456789"), frac_len = 0;
	const char *unit = s + whole_len;
	unsigned __int128 whole = 0, frac = 0, scale = 1, ns;

	if (!whole_len)
		return -EINVAL;
	if (*unit == '.') {
		frac_len = strspn(unit + 1, "0123456789");
		if (frac_len == 0 || frac_len > 9)
			return -EINVAL;
		unit += 1 + frac_len;
	}
	for (size_t i = 0; i < whole_len; i++) {
		whole = whole * 10 + (s[i] - '0');
		if (whole > UINT64_MAX)
			return -ERANGE;
	}
	for (size_t i = 0; i < frac_len; i++) {
		frac = frac * 10 + (s[whole_len + 1 + i] - '0');
		scale *= 10;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].name))
			continue;
		ns = whole * units[i].ns + frac * units[i].ns / scale;
		if (ns > UINT64_MAX)
			return -ERANGE;
		*out = (__u64)ns;
		return 0;
	}
	return -EINVAL;
}

static void check_duration(const char *s, __u64 min, __u64 max)
{
	__u64 got = 0, want = 0;
	int err = parse_duration_ns(s, min, max, &got);
	int werr = oracle_duration(s, &want);

	if (!werr && (want < min || want > max))
		werr = -ERANGE;
	/* which of the two errors wins when both apply is the parser's business */
	PROMISE(!err == !werr);
	if (!err)
		PROMISE(got == want);
}

static void check_listen(const char *s)
{
	struct prom_listen l, again;
	char shown[80];

	if (prom__parse_listen(s, &l))
		return;
	PROMISE(strspn(s, "0123456789abcdefABCDEF.:[]") == strlen(s));
	PROMISE(l.len == (l.addr.ss_family == AF_INET ? sizeof(struct sockaddr_in)
						       : sizeof(struct sockaddr_in6)));
	/* what we print is what we bound: it parses back to the same address */
	prom__fmt_addr(shown, sizeof(shown), (struct sockaddr *)&l.addr);
	PROMISE(prom__parse_listen(shown, &again) == 0);
	PROMISE(again.len == l.len && !memcmp(&again.addr, &l.addr, l.len));
	PROMISE(again.loopback == l.loopback);
}

static void check_formatters(const uint8_t *data, size_t size)
{
	char buf[FMT_LEN];
	__u64 v = 0;

	memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));
	for (int shift = 0; shift < 64; shift += 7) {
		__u64 x = v >> shift;

		PROMISE(strlen(fmt_bytes(buf, x)) <= 8);
		PROMISE(strlen(fmt_bytes_short(buf, x)) <= 5);
		PROMISE(strlen(fmt_duration(buf, x)) < FMT_LEN);
		PROMISE(strlen(fmt_us(buf, x)) < FMT_LEN);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	pid_t pid = 0;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0'; /* the shell hands us C strings: a NUL inside ends the word */
	check_u64(s, 0, UINT64_MAX);
	check_u64(s, 1, ATTACH_LIMIT_MAX);
	check_u64(s, 1, 65536);
	PROMISE(parse_pid(s, &pid) != 0 || (pid >= 1 && pid <= (1 << 22)));
	check_duration(s, 0, UINT64_MAX);
	check_duration(s, 10000000ull, 3600000000000ull); /* -i's range */
	check_listen(s);
	prom__accepts_openmetrics(s);
	check_formatters(data, size);
	free(s);
	return 0;
}
