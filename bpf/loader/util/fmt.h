/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Formatting shared by every renderer (live timeline, summary, list, report, compare):
 * human sizes and durations, the log2 histogram, and a small streaming JSON writer.
 * Written once so that every output of the tool reads the same way.
 */
#ifndef INFLIGHT_FMT_H
#define INFLIGHT_FMT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define FMT_LEN 24 /* enough for every fmt_* result below */

/* "0 B", "1023 B", "1.00 KiB", "12.3 MiB", "367 GiB": three significant digits, 8 columns at
 * most (units up to EiB). Returns buf. */
const char *fmt_bytes(char buf[FMT_LEN], __u64 bytes);

/* Compact form for table cells, 5 columns at most: "0", "1023B", "1.00K", "12.4G", "367G". */
const char *fmt_bytes_short(char buf[FMT_LEN], __u64 bytes);

/* "0 ns", "850 ns", "12.3 us", "1.50 ms", "2.35 s", "59.9 s", "1m05s", "2h03m", "3d04h". */
const char *fmt_duration(char buf[FMT_LEN], __u64 ns);
/* "s" unless n is 1: "%llu owner%s" */
const char *fmt_plural(__u64 n);

/* Formats one value for a label (a histogram bound); returns buf. */
typedef const char *(*fmt_label_fn)(char buf[FMT_LEN], __u64 v);

/* A microsecond count as a duration ("1.02 ms"): labels of dwell histograms. */
const char *fmt_us(char buf[FMT_LEN], __u64 us);

/* A log2 histogram: slot 0 holds [0, 2), slot k >= 1 holds [2^k, 2^(k+1)), the last slot
 * everything above (the kernel's buckets). Prints the slots from the first to the last
 * non-empty one, each line `indent` + range (bounds through `label`, plain numbers when NULL)
 * + count + bar, within 80 columns for an indent up to 8; consecutive empty slots share one
 * line. Prints nothing when all are zero. */
void fmt_log2_hist(FILE *f, const __u64 *slots, int nslots, fmt_label_fn label,
		   const char *indent);

/* Writes `s` as a JSON string literal, quotes included; bytes that are not valid UTF-8
 * become U+FFFD so the output always parses; control characters and the code points that
 * act on a terminal or hide text (san_hidden_cp: C1, bidi overrides, zero-width, tags) are
 * \u escapes, so the JSON text itself is safe to print. The value stays the original (a
 * consumer that prints decoded values raw, such as jq -r, must escape them itself). */
void fmt_json_str(FILE *f, const char *s);

/*
 * Streaming JSON writer: keeps track of commas and nesting, so renderers only say what they
 * write. Compact output (no spaces): one document per line when the caller ends it with
 * json_end_line(). Nesting deeper than JSON_MAX_DEPTH is a programming error (asserted).
 */
#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH + 1];
	bool after_key;
};

void json_init(struct json *j, FILE *f);
void json_obj(struct json *j);	/* { */
void json_obj_end(struct json *j); /* } */
void json_arr(struct json *j);	/* [ */
void json_arr_end(struct json *j); /* ] */
void json_key(struct json *j, const char *key);
void json_u64(struct json *j, __u64 v);
void json_i64(struct json *j, long long v);
void json_f64(struct json *j, double v, int decimals);
void json_boolean(struct json *j, bool v);
void json_null(struct json *j);
void json_str(struct json *j, const char *s);
/* key + value in one call */
void json_kv_u64(struct json *j, const char *key, __u64 v);
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_f64(struct json *j, const char *key, double v, int decimals);
/* key + value, or null when the value is not known (`known` false; a NULL string) */
void json_kv_opt_u64(struct json *j, const char *key, bool known, __u64 v);
void json_kv_opt_str(struct json *j, const char *key, const char *s);
void json_kv_opt_f64(struct json *j, const char *key, bool known, double v, int decimals);
/* newline after a complete top-level value, and flush (one object per line) */
void json_end_line(struct json *j);

#endif /* INFLIGHT_FMT_H */
