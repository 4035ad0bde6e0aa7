// SPDX-License-Identifier: BSD-2-Clause
/* Human sizes and durations, the shared log2 histogram, JSON output. See fmt.h. */
#include <assert.h>
#include <math.h>
#include <string.h>
#include "util/fmt.h"
#include "util/sanitize.h"

/* Three significant digits of v (>= 1): "1.23", "12.3", "123". *carry is set instead when v
 * would round to `limit` or more, and the caller moves to the next unit. */
static void sig3(char *buf, size_t len, double v, double limit, bool *carry)
{
	int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
	double half = decimals == 2 ? 0.005 : decimals == 1 ? 0.05 : 0.5;

	*carry = v + half >= limit;
	if (!*carry)
		snprintf(buf, len, "%.*f", decimals, v);
}

const char *fmt_bytes(char buf[FMT_LEN], __u64 bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	char num[16];
	bool carry = true;
	int u;

	if (bytes < 1024) {
		snprintf(buf, FMT_LEN, "%u B", (unsigned)bytes);
		return buf;
	}
	for (u = 0; carry && u < 6; u++) {
		v /= 1024;
		sig3(num, sizeof(num), v, u == 5 ? 1e9 : 1024, &carry);
	}
	snprintf(buf, FMT_LEN, "%s %s", num, unit[u - 1]);
	return buf;
}

const char *fmt_plural(__u64 n)
{
	return n == 1 ? "" : "s";
}

const char *fmt_bytes_short(char buf[FMT_LEN], __u64 bytes)
{
	static const char unit[] = "KMGTPE";
	double v = (double)bytes;
	char num[16];
	bool carry = true;
	int u;

	if (bytes < 1024) {
		snprintf(buf, FMT_LEN, bytes ? "%uB" : "%u", (unsigned)bytes);
		return buf;
	}
	for (u = 0; carry && u < 6; u++) {
		v /= 1024;
		sig3(num, sizeof(num), v, u == 5 ? 1e9 : 1024, &carry);
	}
	snprintf(buf, FMT_LEN, "%s%c", num, unit[u - 1]);
	return buf;
}

const char *fmt_duration(char buf[FMT_LEN], __u64 ns)
{
	static const struct {
		double div;
		double limit; /* where the next unit takes over */
		const char *name;
	} unit[] = { { 1e3, 1000, "us" }, { 1e6, 1000, "ms" }, { 1e9, 60, "s" } };
	char num[16];
	bool carry = true;
	__u64 s;

	if (ns < 1000) {
		snprintf(buf, FMT_LEN, "%u ns", (unsigned)ns);
		return buf;
	}
	for (int i = 0; i < 3; i++) {
		sig3(num, sizeof(num), ns / unit[i].div, unit[i].limit, &carry);
		if (!carry) {
			snprintf(buf, FMT_LEN, "%s %s", num, unit[i].name);
			return buf;
		}
	}
	s = (ns + 500000000ull) / 1000000000ull; /* whole seconds, rounded */
	if (s < 3600)
		snprintf(buf, FMT_LEN, "%um%02us", (unsigned)(s / 60), (unsigned)(s % 60));
	else if (s < 86400)
		snprintf(buf, FMT_LEN, "%uh%02um", (unsigned)(s / 3600), (unsigned)(s / 60 % 60));
	else
		snprintf(buf, FMT_LEN, "%llud%02uh", (unsigned long long)(s / 86400),
			 (unsigned)(s / 3600 % 24));
	return buf;
}

const char *fmt_us(char buf[FMT_LEN], __u64 us)
{
	return fmt_duration(buf, us * 1000);
}

static const char *plain_label(char buf[FMT_LEN], __u64 v)
{
	snprintf(buf, FMT_LEN, "%llu", (unsigned long long)v);
	return buf;
}

void fmt_log2_hist(FILE *f, const __u64 *slots, int nslots, fmt_label_fn label,
		   const char *indent)
{
	const int bar_width = 30;
	int first = -1, last = -1;
	__u64 max = 0;

	if (!label)
		label = plain_label;
	if (nslots > 64)
		nslots = 64; /* bounds are 64-bit powers of two */
	for (int i = 0; i < nslots; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (first < 0)
		return;
	for (int i = first, j; i <= last; i = j + 1) {
		char lo[FMT_LEN], hi[FMT_LEN], range[2 * FMT_LEN + 16], bar[40];
		/* rounded up, so that a non-zero count always shows */
		int n = (int)(slots[i] / (double)max * bar_width + 0.999);

		/* a run of empty slots is one row: long gaps would hide the shape */
		j = i;
		while (!slots[i] && !slots[j + 1])
			j++;
		if (i)
			label(lo, 1ull << i);
		else
			snprintf(lo, sizeof(lo), "0");
		if (j == nslots - 1 || j == 63)
			snprintf(range, sizeof(range), ">= %s", lo);
		else
			snprintf(range, sizeof(range), "%s .. %s", lo, label(hi, 1ull << (j + 1)));
		memset(bar, '#', n);
		bar[n] = '\0';
		fprintf(f, "%s%-22s %10llu |%-*s|\n", indent, range, (unsigned long long)slots[i],
			bar_width, bar);
	}
}

/* \uXXXX, or a surrogate pair above U+FFFF (JSON has no longer escape) */
static void json_u_escape(FILE *f, unsigned cp)
{
	if (cp > 0xffff) {
		cp -= 0x10000;
		fprintf(f, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
		return;
	}
	fprintf(f, "\\u%04x", cp);
}

void fmt_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*p) {
		unsigned cp;
		int n;

		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
				break;
			}
			n = san_utf8_decode(p, &cp);
			if (!n) {
				fputs("\\ufffd", f);
				break;
			}
			/* lossless, but nothing that would act on a terminal when printed raw
			 * (jq -r) or hide text in a viewer */
			if (san_hidden_cp(cp))
				json_u_escape(f, cp);
			else
				fwrite(p, 1, n, f);
			p += n - 1;
			break;
		}
		p++;
	}
	fputc('"', f);
}

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

/* before any value: the comma that separates it from its predecessor */
static void json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void json_open(struct json *j, char c)
{
	json_sep(j);
	fputc(c, j->f);
	assert(j->depth < JSON_MAX_DEPTH);
	j->need_comma[++j->depth] = false;
}

static void json_close(struct json *j, char c)
{
	assert(j->depth > 0);
	j->depth--;
	fputc(c, j->f);
}

void json_obj(struct json *j)
{
	json_open(j, '{');
}

void json_obj_end(struct json *j)
{
	json_close(j, '}');
}

void json_arr(struct json *j)
{
	json_open(j, '[');
}

void json_arr_end(struct json *j)
{
	json_close(j, ']');
}

void json_key(struct json *j, const char *key)
{
	json_sep(j);
	fmt_json_str(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void json_u64(struct json *j, __u64 v)
{
	json_sep(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, long long v)
{
	json_sep(j);
	fprintf(j->f, "%lld", v);
}

void json_f64(struct json *j, double v, int decimals)
{
	json_sep(j);
	if (!isfinite(v)) /* JSON has no NaN or infinity */
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", decimals, v);
}

void json_boolean(struct json *j, bool v)
{
	json_sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	json_sep(j);
	fputs("null", j->f);
}

void json_str(struct json *j, const char *s)
{
	json_sep(j);
	fmt_json_str(j->f, s);
}

void json_kv_u64(struct json *j, const char *key, __u64 v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void json_kv_opt_u64(struct json *j, const char *key, bool known, __u64 v)
{
	json_key(j, key);
	if (known)
		json_u64(j, v);
	else
		json_null(j);
}

void json_kv_opt_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	if (s)
		json_str(j, s);
	else
		json_null(j);
}

void json_kv_opt_f64(struct json *j, const char *key, bool known, double v, int decimals)
{
	json_key(j, key);
	if (known)
		json_f64(j, v, decimals);
	else
		json_null(j);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_boolean(j, v);
}

void json_kv_f64(struct json *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	json_f64(j, v, decimals);
}

void json_end_line(struct json *j)
{
	assert(j->depth == 0);
	fputc('\n', j->f);
	fflush(j->f);
	j->need_comma[0] = false;
}
