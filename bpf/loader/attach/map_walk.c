// SPDX-License-Identifier: BSD-2-Clause
/*
 * A walk of a kernel hash map that neither skips nor repeats an element while BPF programs
 * change the map. No call here needs a capability the loader gives up after its attach
 * (5.10 refuses a map's info to it, and its batch lookups). bpf_map_get_next_key() restarts from the first key when the key it is
 * given was deleted meanwhile, so a plain walk sees some elements twice (a process ending
 * during a snapshot was counted twice) and, under steady churn, may not end. A batch lookup
 * instead walks the buckets in order, each copied under its lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "attach/map_walk.h"

#define WALK_MAX_KEY 64
#define WALK_FIRST_CHUNK 64
/* the fallback's bound on keys seen, restarts included, per element the map can hold */
#define WALK_RESTARTS 4

struct walk_buf {
	char *keys, *values;
	__u32 cap;
};

static int walk_grow(struct walk_buf *b, __u32 cap, size_t ks, size_t vs)
{
	char *k = realloc(b->keys, (size_t)cap * ks), *v;

	if (!k)
		return -ENOMEM;
	b->keys = k;
	v = realloc(b->values, (size_t)cap * vs);
	if (!v)
		return -ENOMEM;
	b->values = v;
	b->cap = cap;
	return 0;
}

/* 0 when done, -EOPNOTSUPP when the kernel has no batch lookup for this map, or -errno */
static int walk_batch(int fd, size_t ks, size_t vs, map_walk_fn fn, void *ctx)
{
	struct walk_buf b = { 0 };
	char in[WALK_MAX_KEY] = { 0 }, out[WALK_MAX_KEY] = { 0 };
	bool first = true, done = false;
	int err = walk_grow(&b, WALK_FIRST_CHUNK, ks, vs);

	while (!err && !done) {
		__u32 count = b.cap;

		if (bpf_map_lookup_batch(fd, first ? NULL : in, out, b.keys, b.values, &count,
					 NULL)) {
			err = -errno;
			if (err == -ENOSPC && count == 0)
				count = 2 * b.cap; /* a bucket longer than the chunk */
			if (err == -ENOSPC) {
				err = walk_grow(&b, count > 2 * b.cap ? count : 2 * b.cap, ks, vs);
				continue;
			}
			/* no batch lookups for this map (EINVAL, and 524: the kernel's ENOTSUPP),
			 * or none without a capability the loader has given up: 5.10 refuses
			 * them (EPERM) where it allows a lookup of one element */
			if (first && (err == -EINVAL || err == -EOPNOTSUPP || err == -EPERM ||
				      err == -524)) {
				err = -EOPNOTSUPP;
				break;
			}
			if (err != -ENOENT)
				break;
			done = true; /* the last chunk, possibly with elements */
			err = 0;
		}
		for (__u32 i = 0; !err && i < count; i++)
			err = fn(b.keys + i * ks, b.values + i * vs, ctx);
		memcpy(in, out, sizeof(in));
		first = false;
	}
	free(b.keys);
	free(b.values);
	return err;
}

static int cmp_keys(const void *a, const void *b, void *key_size)
{
	return memcmp(a, b, *(size_t *)key_size);
}

/* Kernels without batch lookups: every key, deduplicated, then each one looked up. */
int map_walk__by_keys(int fd, size_t ks, size_t vs, __u32 max_entries, map_walk_fn fn, void *ctx)
{
	char cursor[WALK_MAX_KEY], *keys = NULL, *value = malloc(vs);
	size_t n = 0, cap = 0, bound = (size_t)max_entries * WALK_RESTARTS;
	int err = value ? 0 : -ENOMEM;

	while (!err && n < bound && bpf_map_get_next_key(fd, n ? cursor : NULL, cursor) == 0) {
		if (n == cap) {
			char *more = realloc(keys, (cap ? 2 * cap : 256) * ks);

			if (!more) {
				err = -ENOMEM;
				break;
			}
			keys = more;
			cap = cap ? 2 * cap : 256;
		}
		memcpy(keys + n++ * ks, cursor, ks);
	}
	if (n)
		qsort_r(keys, n, ks, cmp_keys, &ks);
	for (size_t i = 0; !err && i < n; i++) {
		if (i && !memcmp(keys + i * ks, keys + (i - 1) * ks, ks))
			continue;
		if (bpf_map_lookup_elem(fd, keys + i * ks, value))
			continue; /* deleted since */
		err = fn(keys + i * ks, value, ctx);
	}
	free(keys);
	free(value);
	return err;
}

int map_walk__all(int fd, size_t key_size, size_t value_size, __u32 max_entries, map_walk_fn fn,
	     void *ctx)
{
	int err;

	if (key_size > WALK_MAX_KEY || !key_size || !value_size)
		return -EINVAL;
	err = walk_batch(fd, key_size, value_size, fn, ctx);
	if (err == -EOPNOTSUPP)
		err = map_walk__by_keys(fd, key_size, value_size, max_entries, fn, ctx);
	return err;
}
