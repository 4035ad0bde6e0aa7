/* SPDX-License-Identifier: BSD-2-Clause */
/* The generated part of sites_target (bench/gen_sites.sh): N probe sites in one function. */
#ifndef BENCH_SITES_TARGET_H
#define BENCH_SITES_TARGET_H

#include <stdint.h>

extern const unsigned int sites_count;
/* sites of buf_alloc, stage and buf_free */
extern const unsigned int sites_per_probe[3];

/* fires every site once: buffers base + t, owners owner + t, for t < (sites_count + 2) / 3 */
void sites_fire(uint64_t base, uint64_t bytes, uint64_t owner);

#endif /* BENCH_SITES_TARGET_H */
