// SPDX-License-Identifier: BSD-2-Clause
/* Writes C1-like inputs (`prover gen-c1`, and the in-memory input of a plain run). */
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "base64.h"
#include "c1.h"
#include "rng.h"

static struct json_object *hex32(uint64_t *state)
{
	static const char digits[] = "0123456789abcdef";
	char hex[65];

	for (unsigned i = 0; i < 64; i += 16) {
		uint64_t v = rng_next(state);

		for (unsigned k = 0; k < 16; k++, v >>= 4)
			hex[i + k] = digits[v & 15];
	}
	hex[64] = '\0';
	return json_object_new_string(hex);
}

char *c1_generate(const struct c1_gen_opts *o, size_t *len)
{
	size_t payload_len = (size_t)o->partitions * o->slice_bytes;
	uint64_t state = rng_mix(o->seed);
	struct json_object *root = json_object_new_object();
	uint8_t *payload = malloc(payload_len ? payload_len : 1);
	char *b64 = malloc(base64_encoded_len(payload_len) + 1), *text = NULL;

	if (!root || !payload || !b64)
		goto out;
	for (size_t i = 0; i < payload_len; i++)
		payload[i] = (uint8_t)(rng_next(&state) >> 56);
	base64_encode(payload, payload_len, b64);

	json_object_object_add(root, "format", json_object_new_string(C1_FORMAT));
	json_object_object_add(root, "version", json_object_new_int(C1_VERSION));
	json_object_object_add(root, "sector_num", json_object_new_uint64(o->sector_num));
	json_object_object_add(root, "partitions", json_object_new_int((int)o->partitions));
	json_object_object_add(root, "prover_id", hex32(&state));
	json_object_object_add(root, "ticket", hex32(&state));
	json_object_object_add(root, "seed", hex32(&state));
	json_object_object_add(root, "phase1_out", json_object_new_string(b64));
	const char *json = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_SPACED |
								JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t json_len = json ? strlen(json) : 0;

	text = json ? malloc(json_len + 2) : NULL;
	if (text) {
		memcpy(text, json, json_len);
		text[json_len] = '\n'; /* a text file ends with a newline */
		text[json_len + 1] = '\0';
		*len = json_len + 1;
	}
out:
	json_object_put(root);
	free(payload);
	free(b64);
	return text;
}
