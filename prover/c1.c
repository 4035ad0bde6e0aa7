// SPDX-License-Identifier: BSD-2-Clause
/* Reading and validating the C1-like input with json-c; one clear line per defect. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "base64.h"
#include "c1.h"
#include "rng.h"
#include "track.h"

static enum c1_status fail(enum c1_status st, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum c1_status fail(enum c1_status st, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return st;
}

enum c1_status c1_read_file(const char *path, uint64_t owner, char **text, size_t *len,
			    char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t got = 0;
	char *buf;

	if (fd < 0)
		return fail(C1_IO, err, errlen, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = errno;

		close(fd);
		return fail(C1_IO, err, errlen, "cannot read: %s",
			    S_ISREG(st.st_mode) ? strerror(e) : "not a regular file");
	}
	if ((unsigned long long)st.st_size > C1_MAX_FILE) {
		close(fd);
		return fail(C1_IO, err, errlen, "%lld bytes: larger than the %llu-byte limit",
			    (long long)st.st_size, C1_MAX_FILE);
	}
	buf = track_alloc(CLS_c1_data, (size_t)st.st_size + 1, owner);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			int e = n < 0 ? errno : 0;

			close(fd);
			track_free(buf, CLS_c1_data, (size_t)st.st_size + 1);
			return fail(C1_IO, err, errlen, "cannot read: %s",
				    e ? strerror(e) : "file shrank while being read");
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return C1_OK;
}

char *c1_copy_text(const char *text, size_t len, uint64_t owner)
{
	char *buf = track_alloc(CLS_c1_data, len + 1, owner);

	memcpy(buf, text, len);
	buf[len] = '\0';
	return buf;
}

void c1_free_text(char *text, size_t len)
{
	track_free(text, CLS_c1_data, len + 1);
}

static const char *type_word(json_type t)
{
	switch (t) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a fraction";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "of an unknown type";
}

/* the named member, of the wanted type; NULL with `err` filled otherwise */
static struct json_object *member(struct json_object *root, const char *name, json_type want,
				  char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(root, name, &v)) {
		fail(C1_MALFORMED, err, errlen, "missing field \"%s\"", name);
		return NULL;
	}
	if (!json_object_is_type(v, want)) {
		fail(C1_MALFORMED, err, errlen, "field \"%s\" must be %s, not %s", name,
		     type_word(want), type_word(json_object_get_type(v)));
		return NULL;
	}
	return v;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool hex32_member(struct json_object *root, const char *name, uint8_t out[32], char *err,
			 size_t errlen)
{
	struct json_object *v = member(root, name, json_type_string, err, errlen);
	const char *s;

	if (!v)
		return false;
	s = json_object_get_string(v);
	if (json_object_get_string_len(v) != 64) {
		fail(C1_MALFORMED, err, errlen, "field \"%s\" must be 64 hex digits, not %d characters",
		     name, json_object_get_string_len(v));
		return false;
	}
	for (unsigned i = 0; i < 32; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			fail(C1_MALFORMED, err, errlen,
			     "field \"%s\" must be 64 hex digits: '%c' at offset %u is not one", name,
			     hi < 0 ? s[2 * i] : s[2 * i + 1], hi < 0 ? 2 * i : 2 * i + 1);
			return false;
		}
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

static bool int_member(struct json_object *root, const char *name, int64_t min, int64_t max,
		       int64_t *out, char *err, size_t errlen)
{
	struct json_object *v = member(root, name, json_type_int, err, errlen);

	if (!v)
		return false;
	errno = 0;
	*out = json_object_get_int64(v);
	if (errno == ERANGE || *out < min || *out > max) {
		fail(C1_MALFORMED, err, errlen, "field \"%s\" must be from %lld to %lld, not %s",
		     name, (long long)min, (long long)max, json_object_to_json_string(v));
		return false;
	}
	return true;
}

static enum c1_status decode_phase1(struct json_object *root, uint64_t owner,
				    struct c1_input *c1, char *err, size_t errlen)
{
	struct json_object *v = member(root, "phase1_out", json_type_string, err, errlen);
	size_t len, out_len, bad_at;
	const char *s;

	if (!v)
		return C1_MALFORMED;
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (!base64_decoded_len(s, len, &out_len))
		return fail(C1_MALFORMED, err, errlen,
			    "field \"phase1_out\" is not base64: %zu characters, not a multiple of 4",
			    len);
	if (out_len < (size_t)c1->partitions * C1_MIN_SLICE || out_len % c1->partitions)
		return fail(C1_MALFORMED, err, errlen,
			    "field \"phase1_out\" holds %zu bytes: %u partitions need a multiple "
			    "of %u of at least %u bytes each",
			    out_len, c1->partitions, c1->partitions, C1_MIN_SLICE);
	c1->phase1 = track_alloc(CLS_c1_data, out_len, owner);
	c1->phase1_len = out_len;
	if (!base64_decode(s, len, c1->phase1, &bad_at)) {
		c1_release(c1);
		return fail(C1_MALFORMED, err, errlen,
			    "field \"phase1_out\" is not base64: bad character at offset %zu", bad_at);
	}
	return C1_OK;
}

static enum c1_status validate(struct json_object *root, uint64_t owner, struct c1_input *c1,
			       char *err, size_t errlen)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_is_type(root, json_type_object))
		return fail(C1_MALFORMED, err, errlen, "the top level must be an object, not %s",
			    type_word(json_object_get_type(root)));
	if (!(v = member(root, "format", json_type_string, err, errlen)))
		return C1_MALFORMED;
	if (strcmp(json_object_get_string(v), C1_FORMAT))
		return fail(C1_MALFORMED, err, errlen, "field \"format\" must be \"%s\", not %s",
			    C1_FORMAT, json_object_to_json_string(v));
	if (!int_member(root, "version", C1_VERSION, C1_VERSION, &n, err, errlen))
		return C1_MALFORMED;
	if (!int_member(root, "sector_num", 0, INT64_MAX, &n, err, errlen))
		return C1_MALFORMED;
	c1->sector_num = (uint64_t)n;
	if (!int_member(root, "partitions", 1, C1_MAX_PARTITIONS, &n, err, errlen))
		return C1_MALFORMED;
	c1->partitions = (unsigned)n;
	if (!hex32_member(root, "prover_id", c1->prover_id, err, errlen) ||
	    !hex32_member(root, "ticket", c1->ticket, err, errlen) ||
	    !hex32_member(root, "seed", c1->seed, err, errlen))
		return C1_MALFORMED;
	return decode_phase1(root, owner, c1, err, errlen);
}

/* whether text[0..end) alone is one complete JSON value */
static bool complete_prefix(const char *text, size_t end)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *v;
	bool ok;

	if (!tok)
		return false;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	v = json_tokener_parse_ex(tok, text, (int)end);
	ok = v && json_tokener_get_error(tok) == json_tokener_success;
	json_object_put(v);
	json_tokener_free(tok);
	return ok;
}

static enum c1_status json_error(const char *text, size_t len, enum json_tokener_error jerr,
				 size_t end, char *err, size_t errlen)
{
	if (!len)
		return fail(C1_MALFORMED, err, errlen, "empty file: no JSON value");
	if (end < len && !text[end])
		return fail(C1_MALFORMED, err, errlen, "a NUL byte at byte %zu", end);
	if (end < len && complete_prefix(text, end))
		return fail(C1_MALFORMED, err, errlen,
			    "trailing data after the JSON value at byte %zu", end);
	if (jerr == json_tokener_error_parse_eof)
		return fail(C1_MALFORMED, err, errlen,
			    "truncated JSON: the text ends inside a value (byte %zu)", end);
	return fail(C1_MALFORMED, err, errlen, "not valid JSON: %s at byte %zu",
		    json_tokener_error_desc(jerr), end);
}

enum c1_status c1_parse(const char *text, size_t len, uint64_t owner, struct c1_input *c1,
			char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	enum json_tokener_error jerr;
	enum c1_status st;
	size_t end;

	memset(c1, 0, sizeof(*c1));
	if (!tok)
		return fail(C1_MALFORMED, err, errlen, "out of memory for the JSON parser");
	/* strict JSON; the NUL at text[len] tells json-c where the input ends */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr != json_tokener_success) /* success with NULL is the JSON `null` */
		return json_error(text, len, jerr, end, err, errlen);
	st = validate(root, owner, c1, err, errlen);
	json_object_put(root);
	return st;
}

void c1_release(struct c1_input *c1)
{
	track_free(c1->phase1, CLS_c1_data, c1->phase1_len);
	c1->phase1 = NULL;
	c1->phase1_len = 0;
}

uint64_t c1_partition_seed(const struct c1_input *c1, unsigned p)
{
	size_t slice = c1->phase1_len / c1->partitions;
	uint64_t h = rng_hash(c1->sector_num, c1->prover_id, sizeof(c1->prover_id));

	h = rng_hash(h, c1->ticket, sizeof(c1->ticket));
	h = rng_hash(h, c1->seed, sizeof(c1->seed));
	return rng_hash(h ^ p, c1->phase1 + (size_t)p * slice, slice);
}
