/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live timeline: one compact table per traced process and interval (stages as rows:
 * owners, buffers, bytes, and bytes per class), tracked bytes beside RSS, the peak so far.
 * Text fits 80 columns (the classes that held the most so far get a column, the rest are
 * summed in "other"; --wide gives every class its column), or one JSON object per line
 * (docs/json.md). On a terminal (`tty`) each interval redraws one screen in place, like
 * top; elsewhere the tables follow each other as plain lines. Times are seconds since the
 * run's first probe event (clock__origin()), labelled once. Works on snapshots only: no
 * BPF here, so it renders recordings too.
 */
#ifndef INFLIGHT_LIVE_H
#define INFLIGHT_LIVE_H

#include <stdbool.h>
#include <stdio.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "model/snapshot.h"

struct live_opts {
	bool json;
	bool wide;	  /* a column for every class that has held something */
	bool tty;	  /* redraw in place (the output is a terminal) */
	__u64 interval_ns; /* for the in-place view's header */
};

struct live;

/* `names` must outlive the object. NULL on allocation failure. */
struct live *live__new(const struct live_opts *opts, const struct infl_names *names, FILE *out);
/* Renders one interval (every process in `snap`) and flushes. */
void live__print(struct live *l, const struct snapshot *snap);
/* The clock's origin so far (0: no event yet) and whose first event it was: the summary
 * uses the same one, whatever processes left the maps meanwhile. */
__u64 live__origin(const struct live *l, __u32 *pid);
void live__free(struct live *l);

#endif /* INFLIGHT_LIVE_H */
