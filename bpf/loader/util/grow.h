/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Arrays that grow by doubling: the one way every part of the loader makes room for one
 * more element.
 */
#ifndef INFLIGHT_GROW_H
#define INFLIGHT_GROW_H

#include <stdlib.h>

/*
 * Room for element `n` of `arr`, which holds *cap elements of `elem` bytes: `arr` itself
 * while n < *cap, else `arr` moved by realloc to twice its size (16 at first) and *cap set.
 * NULL when memory runs out: `arr` and *cap are then as they were.
 */
static inline void *grow_array(void *arr, size_t *cap, size_t n, size_t elem)
{
	size_t more = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return arr;
	p = realloc(arr, more * elem);
	if (p)
		*cap = more;
	return p;
}

#endif /* INFLIGHT_GROW_H */
