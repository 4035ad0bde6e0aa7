/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The C1-like input: what a proof job starts from (cuzk parses a ~51 MB JSON C1 output per
 * proof). Ours is JSON too, parsed with json-c:
 *   { "format": "inflight-c1", "version": 1, "sector_num": 1, "partitions": 10,
 *     "prover_id": "<64 hex>", "ticket": "<64 hex>", "seed": "<64 hex>",
 *     "phase1_out": "<base64>" }
 * phase1_out decodes to the c1_data buffer; partition p synthesizes from its p-th slice.
 */
#ifndef PROVER_C1_H
#define PROVER_C1_H

#include <stddef.h>
#include <stdint.h>

#define C1_FORMAT "inflight-c1"
#define C1_VERSION 1
#define C1_MAX_PARTITIONS 256
#define C1_MIN_SLICE 32		   /* bytes of phase1_out per partition, at least */
#define C1_MAX_FILE (1ull << 30)   /* larger inputs are refused before reading */

enum c1_status { C1_OK = 0, C1_IO, C1_MALFORMED };

struct c1_input {
	uint64_t sector_num;
	unsigned partitions;
	uint8_t prover_id[32], ticket[32], seed[32];
	uint8_t *phase1; /* the c1_data buffer, tracked, owned by the job */
	size_t phase1_len;
};

/*
 * Reads `path` into a tracked c1_data buffer owned by `owner` (NUL-terminated); on C1_IO
 * `err` says why.
 */
enum c1_status c1_read_file(const char *path, uint64_t owner, char **text, size_t *len,
			    char *err, size_t errlen);

/* Copies in-memory text into a tracked c1_data buffer, as reading it from a file would. */
char *c1_copy_text(const char *text, size_t len, uint64_t owner);

void c1_free_text(char *text, size_t len);

/*
 * Parses and validates text[0..len), which must be followed by a NUL (as c1_read_file and
 * c1_copy_text leave it); on C1_MALFORMED `err` holds one line saying what is wrong (no
 * prefix). On success c1->phase1 is a tracked c1_data buffer owned by `owner`.
 */
enum c1_status c1_parse(const char *text, size_t len, uint64_t owner, struct c1_input *c1,
			char *err, size_t errlen);

void c1_release(struct c1_input *c1);

/* The seed partition p synthesizes from: its phase1 slice hashed with the job's identity. */
uint64_t c1_partition_seed(const struct c1_input *c1, unsigned p);

struct c1_gen_opts {
	unsigned partitions;
	size_t slice_bytes; /* phase1_out bytes per partition */
	uint64_t sector_num;
	uint64_t seed;	    /* everything else derives from it: same seed, same file */
};

/* A well-formed C1 text (malloc'd, NUL-terminated), or NULL when out of memory. */
char *c1_generate(const struct c1_gen_opts *o, size_t *len);

#endif /* PROVER_C1_H */
