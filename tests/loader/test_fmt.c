// SPDX-License-Identifier: BSD-2-Clause
/* fmt.c: human sizes and durations at every unit boundary, the histogram, JSON output. */
#include <stdlib.h>
#include "check.h"
#include "util/fmt.h"

#define EQ_STR(got, want, ...)                                                                 \
	({                                                                                     \
		const char *g__ = (got), *w__ = (want);                                        \
		if (!CHECK(!strcmp(g__, w__), __VA_ARGS__))                                    \
			printf("#   got \"%s\"\n#  want \"%s\"\n", g__, w__);                    \
	})

static void test_bytes(void)
{
	static const struct {
		__u64 v;
		const char *full, *brief;
	} cases[] = {
		{ 0, "0 B", "0" },
		{ 1, "1 B", "1B" },
		{ 1023, "1023 B", "1023B" },
		{ 1024, "1.00 KiB", "1.00K" },
		{ 1536, "1.50 KiB", "1.50K" },
		{ 10234, "9.99 KiB", "9.99K" },   /* 9.994 */
		{ 10235, "10.0 KiB", "10.0K" },   /* 9.995 rounds up: one decimal less */
		{ 102348, "99.9 KiB", "99.9K" },  /* 99.949 */
		{ 102349, "100 KiB", "100K" },    /* 99.950 */
		{ 1048063, "1023 KiB", "1023K" }, /* 1023.499 KiB */
		{ 1048064, "1.00 MiB", "1.00M" }, /* 1023.5 KiB would round to 1024: next unit */
		{ 1048575, "1.00 MiB", "1.00M" },
		/* 14.25 MiB exactly: a tie, rounded to even as printf does (the HTML report's
		 * fmtBytes does the same: tests/t_record_sizes.sh) */
		{ 14942208, "14.2 MiB", "14.2M" },
		{ 14947328, "14.3 MiB", "14.3M" },
		{ 12ull << 30, "12.0 GiB", "12.0G" },
		{ 367ull << 30, "367 GiB", "367G" },
		{ 5ull << 40, "5.00 TiB", "5.00T" },
		{ ~0ull, "16.0 EiB", "16.0E" },
	};
	char b[FMT_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EQ_STR(fmt_bytes(b, cases[i].v), cases[i].full, "fmt_bytes(%llu)",
		       (unsigned long long)cases[i].v);
		EQ_STR(fmt_bytes_short(b, cases[i].v), cases[i].brief, "fmt_bytes_short(%llu)",
		       (unsigned long long)cases[i].v);
		CHECK(strlen(fmt_bytes(b, cases[i].v)) <= 8, "fmt_bytes(%llu) within 8 columns",
		      (unsigned long long)cases[i].v);
		CHECK(strlen(fmt_bytes_short(b, cases[i].v)) <= 5,
		      "fmt_bytes_short(%llu) within 5 columns", (unsigned long long)cases[i].v);
	}
}

static void test_duration(void)
{
	static const struct {
		__u64 ns;
		const char *want;
	} cases[] = {
		{ 0, "0 ns" },
		{ 999, "999 ns" },
		{ 1000, "1.00 us" },
		{ 12345, "12.3 us" },
		{ 999499, "999 us" },
		{ 999500, "1.00 ms" },
		{ 1500000, "1.50 ms" },
		{ 2350000000ull, "2.35 s" },
		{ 59940000000ull, "59.9 s" },
		{ 59950000000ull, "1m00s" },
		{ 65000000000ull, "1m05s" },
		{ 3599400000000ull, "59m59s" },
		{ 3600000000000ull, "1h00m" },
		{ 90000000000000ull, "1d01h" },
	};
	char b[FMT_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		EQ_STR(fmt_duration(b, cases[i].ns), cases[i].want, "fmt_duration(%llu)",
		       (unsigned long long)cases[i].ns);
	EQ_STR(fmt_us(b, 2048), "2.05 ms", "fmt_us(2048)");
}

/* Runs fn into a memory stream and returns what it wrote (caller frees). */
#define CAPTURE(f, code)                                                                       \
	({                                                                                     \
		char *buf__ = NULL;                                                            \
		size_t len__ = 0;                                                              \
		FILE *f = open_memstream(&buf__, &len__);                                      \
		code;                                                                          \
		fclose(f);                                                                     \
		buf__;                                                                         \
	})

static void test_hist(void)
{
	__u64 slots[32] = { 0 };
	char *out;

	out = CAPTURE(f, fmt_log2_hist(f, slots, 32, fmt_us, "  "));
	EQ_STR(out, "", "an empty histogram prints nothing");
	free(out);

	slots[0] = 2;
	slots[3] = 4;
	out = CAPTURE(f, fmt_log2_hist(f, slots, 32, NULL, ""));
	EQ_STR(out,
	       "0 .. 2                          2 |###############               |\n"
	       "2 .. 8                          0 |                              |\n"
	       "8 .. 16                         4 |##############################|\n",
	       "histogram: first to last non-empty slot, empty slots merged, bars scaled");
	free(out);

	memset(slots, 0, sizeof(slots));
	slots[10] = 1000;
	slots[11] = 1;
	out = CAPTURE(f, fmt_log2_hist(f, slots, 12, fmt_us, "    "));
	EQ_STR(out,
	       "    1.02 ms .. 2.05 ms           1000 |##############################|\n"
	       "    >= 2.05 ms                      1 |#                             |\n",
	       "histogram: duration labels, a tiny count still shows, last slot open-ended");
	free(out);
}

static void test_json(void)
{
	struct json j;
	char *out;

	out = CAPTURE(f, fmt_json_str(f, "a\"b\\c\n\t\x01\x7f/é€😀"));
	EQ_STR(out, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f/é€😀\"",
	       "JSON escaping: quotes, backslash, control bytes; UTF-8 kept");
	free(out);

	/* a lone continuation byte, a truncated sequence, an overlong '/', a surrogate */
	out = CAPTURE(f, fmt_json_str(f, "x\x80y\xe2\x82z\xc0\xafw\xed\xa0\x80"));
	EQ_STR(out, "\"x\\ufffdy\\ufffd\\ufffdz\\ufffd\\ufffdw\\ufffd\\ufffd\\ufffd\"",
	       "JSON escaping: invalid UTF-8 becomes U+FFFD, byte by byte");
	free(out);

	out = CAPTURE(f, {
		json_init(&j, f);
		json_obj(&j);
		json_kv_str(&j, "name", "x");
		json_key(&j, "list");
		json_arr(&j);
		json_u64(&j, 1);
		json_obj(&j);
		json_obj_end(&j);
		json_arr(&j);
		json_arr_end(&j);
		json_null(&j);
		json_i64(&j, -3);
		json_arr_end(&j);
		json_kv_bool(&j, "ok", true);
		json_kv_f64(&j, "t", 1.5, 3);
		json_kv_f64(&j, "nan", 0.0 / 0.0, 3);
		json_kv_u64(&j, "max", ~0ull);
		json_obj_end(&j);
		json_end_line(&j);
		json_obj(&j);
		json_obj_end(&j);
		json_end_line(&j);
	});
	EQ_STR(out,
	       "{\"name\":\"x\",\"list\":[1,{},[],null,-3],\"ok\":true,\"t\":1.500,\"nan\":null,"
	       "\"max\":18446744073709551615}\n{}\n",
	       "JSON writer: commas, nesting, one document per line");
	free(out);
}

int main(void)
{
	test_bytes();
	test_duration();
	test_hist();
	test_json();
	return check_done();
}
