/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Map idioms of the BPF side, each written once.
 */
#ifndef INFLIGHT_MAPS_BPF_H
#define INFLIGHT_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* The element at `key`, made from `init` when there is none. Two CPUs may both find none:
 * the first insert wins (BPF_NOEXIST) and both return its element. NULL when the map is
 * full. */
static __always_inline void *map_lookup_or_init(void *map, const void *key, const void *init)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST); /* EEXIST: another CPU's came first */
	return bpf_map_lookup_elem(map, key);
}

#endif /* INFLIGHT_MAPS_BPF_H */
