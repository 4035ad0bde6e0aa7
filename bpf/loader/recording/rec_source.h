/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal to the reader: where a recording's bytes come from (a file read with pread, or
 * memory), and a buffered reader of its framed records. A pipe or a terminal cannot be read
 * twice, so stdin is first copied to an unlinked temporary file, after its first 16 bytes
 * proved to be a recording's preamble.
 */
#ifndef INFLIGHT_REC_SOURCE_H
#define INFLIGHT_REC_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct rec_src {
	int fd;			  /* -1 for memory */
	const unsigned char *mem;
	__u64 len;		  /* memory: its length; file: its size when opened */
};

/* Opens `path` ("-": stdin). The first 16 bytes are read into `pre` (fewer at a short
 * file: *npre says how many). Returns 0 or -errno; -EBADMSG when `check` refuses the
 * preamble of a stream that would have to be copied first. */
int rec_src__open(const char *path, struct rec_src *src, unsigned char pre[16], size_t *npre,
		 bool (*check)(const unsigned char *pre, size_t n));
void rec_src__mem(struct rec_src *src, const void *data, size_t len);
void rec_src__close(struct rec_src *src);

/* Buffered sequential access to [pos, pos + n). */
struct rec_rd {
	struct rec_src *src;
	unsigned char *buf;
	size_t cap;
	__u64 buf_off;	/* file offset of buf[0] */
	size_t buf_len; /* valid bytes in buf */
	int err;	/* a read error: -errno */
};

void rec_rd__init(struct rec_rd *rd, struct rec_src *src);
void rec_rd__free(struct rec_rd *rd);
/* Points *p at the bytes [pos, pos + n); returns how many of them exist (n, or fewer at
 * the end of the file), or -errno. */
long long rec_rd__get(struct rec_rd *rd, __u64 pos, size_t n, const unsigned char **p);

#endif /* INFLIGHT_REC_SOURCE_H */
