/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live timeline: one compact table per traced process and interval (stages as rows:
 * owners, buffers, bytes, and bytes per class), tracked bytes beside RSS, the peak so far.
 * Text fits 80 columns (the classes that held the most so far get a column, the rest are
 * summed in "other"; --wide gives every class its column), or one JSON object per line
 * (docs/json.md). Works on snapshots only: no BPF here, so it renders recordings too.
 */
#ifndef INFLIGHT_LIVE_H
#define INFLIGHT_LIVE_H

#include <stdbool.h>
#include <stdio.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "live/snapshot.h"

struct live_opts {
	bool json;
	bool wide;	 /* a column for every class that has held something */
	__u64 start_ns; /* CLOCK_MONOTONIC origin of the "+T" times; 0: the first snapshot's */
};

struct live;

/* `names` must outlive the object. NULL on allocation failure. */
struct live *live__new(const struct live_opts *opts, const struct infl_names *names, FILE *out);
/* Renders one interval (every process in `snap`) and flushes. */
void live__print(struct live *l, const struct snapshot *snap);
void live__free(struct live *l);

#endif /* INFLIGHT_LIVE_H */
