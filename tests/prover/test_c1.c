// SPDX-License-Identifier: BSD-2-Clause
/* The C1 input: base64, generation, parsing, and every kind of malformed file rejected. */
#include <json-c/json.h>
#include "base64.h"
#include "c1.h"
#include "check.h"
#include "observer.h"

static const struct c1_gen_opts small = { .partitions = 3, .slice_bytes = 40, .sector_num = 9,
					  .seed = 5 };

/* parse `text`; expect malformed with `want` in the message */
static void expect_malformed(const char *what, const char *text, const char *want)
{
	struct c1_input c1;
	char err[300] = "";
	enum c1_status st = c1_parse(text, strlen(text), 0, &c1, err, sizeof(err));

	CHECK(st == C1_MALFORMED && strstr(err, want) && !strchr(err, '\n'),
	      "%s: rejected with one line naming it (got '%s')", what, err);
	if (st == C1_OK)
		c1_release(&c1);
}

/* the valid generated file with one member replaced (value NULL: removed) */
static void expect_mutation(const char *what, const char *key, struct json_object *value,
			    const char *want)
{
	size_t len;
	char *text = c1_generate(&small, &len);
	struct json_object *root = json_tokener_parse(text);

	if (value)
		json_object_object_add(root, key, value);
	else
		json_object_object_del(root, key);
	expect_malformed(what, json_object_to_json_string(root), want);
	json_object_put(root);
	free(text);
}

static void test_base64(void)
{
	static const uint8_t bytes[] = "any carnal pleasure.";
	unsigned bad = 0;

	for (size_t n = 0; n <= 20; n++) {
		char enc[64];
		uint8_t dec[32];
		size_t dlen, at;

		base64_encode(bytes, n, enc);
		bad += strlen(enc) != base64_encoded_len(n);
		bad += !base64_decoded_len(enc, strlen(enc), &dlen) || dlen != n;
		bad += !base64_decode(enc, strlen(enc), dec, &at) || memcmp(dec, bytes, n);
	}
	CHECK_EQ_U64(bad, 0, "base64 round trips for 0..20 bytes");

	char enc[8];
	size_t at = 0, dlen;
	uint8_t dec[8];

	base64_encode((const uint8_t *)"Ma", 2, enc);
	CHECK(!strcmp(enc, "TWE="), "base64 of 'Ma' is TWE= (RFC 4648)");
	CHECK(!base64_decode("TW!=", 4, dec, &at) && at == 2, "a bad character is found at its "
	      "offset");
	CHECK(!base64_decoded_len("TWE", 3, &dlen), "a length not a multiple of 4 is refused");
	CHECK(!base64_decode("T=E=", 4, dec, &at) && at == 1, "'=' inside the text is refused");
}

int main(void)
{
	struct c1_input c1;
	char err[300];
	size_t len, len2;
	char *text, *again;

	observer_reset();
	test_base64();

	text = c1_generate(&small, &len);
	again = c1_generate(&small, &len2);
	CHECK(len == len2 && !memcmp(text, again, len), "the same options generate the same file");
	CHECK(text[len - 1] == '\n', "the generated file ends with a newline");
	CHECK(c1_parse(text, len, 0, &c1, err, sizeof(err)) == C1_OK, "the generated file parses");
	CHECK_EQ_U64(c1.partitions, 3, "partitions read back");
	CHECK_EQ_U64(c1.sector_num, 9, "sector_num read back");
	CHECK_EQ_U64(c1.phase1_len, 3 * 40, "phase1_out decodes to partitions * slice bytes");
	CHECK(c1_partition_seed(&c1, 0) != c1_partition_seed(&c1, 1) &&
		      c1_partition_seed(&c1, 1) != c1_partition_seed(&c1, 2),
	      "each partition gets its own seed");
	CHECK_EQ_U64(observer_allocs(CLS_c1_data), 1, "the decoded payload is one c1_data buffer");
	CHECK_EQ_U64(observer_live_buffers(), 1, "... and it is live while the job holds it");
	c1_release(&c1);
	CHECK_EQ_U64(observer_live_buffers(), 0, "c1_release frees it");
	free(again);

	/* text that is not a complete JSON object */
	expect_malformed("an empty file", "", "empty file");
	expect_malformed("truncated JSON", "{\"format\": \"inflight-c1\", \"vers",
			 "truncated JSON: the text ends inside a value (byte 32)");
	expect_malformed("not JSON at all", "format=inflight-c1\n", "not valid JSON");
	expect_malformed("a JSON array", "[1, 2]", "top level must be an object, not an array");
	expect_malformed("trailing garbage", "{\"format\": 1} x",
			 "trailing data after the JSON value at byte 14");
	expect_malformed("a second value", "{}\n{}", "trailing data after the JSON value at byte 3");
	expect_malformed("a trailing comma (strict JSON)", "{\"format\": 1,}",
			 "not valid JSON: unexpected character at byte 13");
	expect_malformed("a bare number", "42", "the top level must be an object, not an integer");
	expect_malformed("null", "null", "the top level must be an object, not null");

	/* fields */
	expect_mutation("missing format", "format", NULL, "missing field \"format\"");
	expect_mutation("another format", "format", json_object_new_string("c2"),
			"field \"format\" must be \"inflight-c1\"");
	expect_mutation("version 2", "version", json_object_new_int(2),
			"field \"version\" must be from 1 to 1, not 2");
	expect_mutation("version as a string", "version", json_object_new_string("1"),
			"field \"version\" must be an integer, not a string");
	expect_mutation("version as a fraction", "version", json_object_new_double(1.5),
			"must be an integer, not a fraction");
	expect_mutation("negative sector", "sector_num", json_object_new_int(-1),
			"field \"sector_num\" must be from 0");
	expect_mutation("no partitions", "partitions", json_object_new_int(0),
			"field \"partitions\" must be from 1 to 256, not 0");
	expect_mutation("too many partitions", "partitions", json_object_new_int(300),
			"not 300");
	expect_mutation("missing ticket", "ticket", NULL, "missing field \"ticket\"");
	expect_mutation("short prover_id", "prover_id", json_object_new_string("abcd"),
			"field \"prover_id\" must be 64 hex digits, not 4 characters");
	expect_mutation("non-hex seed", "seed",
			json_object_new_string("zz00000000000000000000000000000000000000000000000000000000000000"),
			"'z' at offset 0");
	expect_mutation("missing payload", "phase1_out", NULL, "missing field \"phase1_out\"");
	expect_mutation("payload as an array", "phase1_out", json_object_new_array(),
			"must be a string, not an array");
	{
		char b64[129];

		memset(b64, 'A', 128);
		b64[128] = '\0';
		b64[50] = '*';
		expect_mutation("payload with a bad character", "phase1_out",
				json_object_new_string(b64), "bad character at offset 50");
	}
	expect_mutation("payload of a bad length", "phase1_out", json_object_new_string("AAAAA"),
			"not a multiple of 4");
	expect_mutation("payload too short for 3 partitions", "phase1_out",
			json_object_new_string("AAAA"), "holds 3 bytes");
	/* 3 partitions, 100 bytes: at least 32 each but not divisible */
	{
		uint8_t raw[100] = { 0 };
		char b64[200];

		base64_encode(raw, sizeof(raw), b64);
		expect_mutation("payload not divisible among partitions", "phase1_out",
				json_object_new_string(b64), "holds 100 bytes");
	}
	CHECK_EQ_U64(observer_live_buffers(), 0, "no buffer outlives a rejected input");
	const char *first;

	CHECK_EQ_U64(observer_violations(&first), 0, "no contract violation (%s)", first);
	free(text);
	return check_done();
}
