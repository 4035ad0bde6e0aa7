/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every element of a kernel hash map, each once, while BPF programs insert and delete.
 */
#ifndef INFLIGHT_MAP_WALK_H
#define INFLIGHT_MAP_WALK_H

#include <stddef.h>
#include <linux/types.h>

/* Called once per element; a non-zero return ends the walk with that value. */
typedef int (*map_walk_fn)(const void *key, const void *value, void *ctx);

/*
 * Calls fn for every element of the hash map `fd` (keys of key_size bytes, values of
 * value_size, at most key_size 64; max_entries as created, which bounds the fallback's walk): an element present for the whole walk is seen exactly
 * once; one inserted or deleted meanwhile at most once. Batch lookups (Linux 5.6) walk the
 * map bucket by bucket; where the kernel has none, the keys are walked one by one and
 * deduplicated (a walk whose key was deleted restarts from the first), then looked up (a key
 * gone meanwhile is skipped). 0 or -errno.
 */
int map_walk__all(int fd, size_t key_size, size_t value_size, __u32 max_entries, map_walk_fn fn,
	     void *ctx);

/* The fallback alone, for kernels without batch lookups (and its test). */
int map_walk__by_keys(int fd, size_t key_size, size_t value_size, __u32 max_entries,
		     map_walk_fn fn, void *ctx);

#endif /* INFLIGHT_MAP_WALK_H */
