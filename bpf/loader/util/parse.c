// SPDX-License-Identifier: BSD-2-Clause
/* Parsers of numbers and durations given on the command line (fuzzed). util/parse.h */
#include <errno.h>
#include <string.h>
#include "util/errors.h"
#include "util/parse.h"

int parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	__u64 v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (~0ull - (*s - '0')) / 10) {
			/* still reject trailing junk before calling it a range problem */
			while (*s >= '0' && *s <= '9')
				s++;
			return *s ? -EINVAL : -ERANGE;
		}
		v = v * 10 + (*s - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_pid(const char *s, pid_t *out)
{
	__u64 v;
	int err = parse_u64(s, 1, PID_LIMIT, &v);

	if (!err)
		*out = (pid_t)v;
	return err;
}

/*
 * A decimal number at *pp: its whole part, and its fraction as frac / scale (9 digits at
 * most: below a nanosecond, or a byte, for every unit); *pp left at what follows (the unit).
 * 0, -EINVAL (no number) or -ERANGE (past 64 bits).
 */
static int scan_decimal(const char **pp, unsigned __int128 *whole, unsigned __int128 *frac,
			unsigned __int128 *scale)
{
	const char *p = *pp;

	if (!p || !(*p >= '0' && *p <= '9'))
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		*whole = *whole * 10 + (*p - '0');
		if (*whole > ~0ull)
			return -ERANGE;
	}
	if (*p == '.') {
		if (!(*++p >= '0' && *p <= '9'))
			return -EINVAL;
		for (int digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits == 9)
				return -EINVAL;
			*frac = *frac * 10 + (*p - '0');
			*scale *= 10;
		}
	}
	*pp = p;
	return 0;
}

struct unit {
	const char *name;
	__u64 mult;
};

/* A decimal with one of `units` after it (the first whose name matches the rest exactly),
 * scaled by it: fractions of a unit are kept to the last whole one. */
static int parse_scaled(const char *s, const struct unit *units, size_t n, __u64 min, __u64 max,
			__u64 *out)
{
	unsigned __int128 whole = 0, frac = 0, scale = 1, v;
	const char *p = s;
	size_t i;
	int err;

	err = scan_decimal(&p, &whole, &frac, &scale);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (!strcmp(p, units[i].name))
			break;
	if (i == n)
		return -EINVAL;
	v = whole * units[i].mult + frac * units[i].mult / scale;
	if (v > ~0ull || v < min || v > max)
		return -ERANGE;
	*out = (__u64)v;
	return 0;
}

int parse_duration_ns(const char *s, __u64 min_ns, __u64 max_ns, __u64 *out_ns)
{
	static const struct unit units[] = {
		{ "", 1000000000ull }, { "s", 1000000000ull }, { "ms", 1000000ull },
		{ "us", 1000ull },     { "m", 60000000000ull }, { "h", 3600000000000ull },
	};

	return parse_scaled(s, units, sizeof(units) / sizeof(units[0]), min_ns, max_ns, out_ns);
}

int parse_size(const char *s, __u64 min, __u64 max, __u64 *out)
{
	static const struct unit units[] = {
		{ "", 1 },	    { "B", 1 },		{ "K", 1ull << 10 }, { "KiB", 1ull << 10 },
		{ "M", 1ull << 20 }, { "MiB", 1ull << 20 }, { "G", 1ull << 30 }, { "GiB", 1ull << 30 },
		{ "T", 1ull << 40 }, { "TiB", 1ull << 40 },
	};

	return parse_scaled(s, units, sizeof(units) / sizeof(units[0]), min, max, out);
}

__u64 parse_interval_or_die(const char *arg)
{
	__u64 ns;
	int err = parse_duration_ns(arg, SAMPLE_INTERVAL_MIN_NS, SAMPLE_INTERVAL_MAX_NS, &ns);

	if (err == -ERANGE)
		infl_die(EXIT_USAGE, NULL, "-i '%s': out of range: give 10ms to 1h", arg);
	if (err)
		infl_die(EXIT_USAGE, "e.g. -i 500ms, -i 2s, -i 1m", "-i '%s': not a duration", arg);
	return ns;
}
