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

/* Totals over the (class x stage) cells of a moment. */
struct composition_totals {
	struct infl_cell cls[INFL_MAX_CLASSES];
	struct infl_cell slot[INFL_SLOTS];
	struct infl_cell all;
	__u64 owners;
};
void composition_totals(const struct infl_cell cells[INFL_MAX_CLASSES][INFL_SLOTS],
			const __u64 owners[INFL_SLOTS], struct composition_totals *t);

/* Writes "stages": [...] (rows that hold something or have owners) and "classes": {...}
 * (per-class totals of classes that hold something) of a moment into the current object:
 * the JSON shape shared by the timeline and the summary (docs/json.md). */
void json_composition(struct json *j, const struct infl_cell cells[INFL_MAX_CLASSES][INFL_SLOTS],
		      const __u64 owners[INFL_SLOTS], const struct infl_names *n);

/* The counters that make totals inexact when non-zero (see docs/cli.md). */
bool proc_inexact(const struct infl_proc *p);

#endif /* INFLIGHT_LIVE_H */
