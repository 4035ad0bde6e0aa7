/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A process's timeline cut into columns of equal time, for the drawn views (svg, html, the
 * compare chart): each column shows the composition at the instant of its largest total, so
 * no peak falls between columns, the most owners each stage had within it, and the highest
 * RSS within it. One cursor pass; memory is the columns.
 */
#ifndef INFLIGHT_COLUMNS_H
#define INFLIGHT_COLUMNS_H

#include <linux/types.h>
#include "model/timeline.h"

struct column {
	__u64 t0, t1;			/* [t0, t1), CLOCK_MONOTONIC */
	__u64 at;			/* the instant of the largest total */
	__u64 total;			/* tracked bytes then */
	__u64 bufs;
	__u64 cls[INFL_CLASSES];	/* bytes by class then */
	__u64 slot[INFL_SLOTS];		/* bytes by stage then */
	__u64 owners_at[INFL_SLOTS];	/* owners per stage then */
	__u64 owners_max[INFL_SLOTS];	/* the most owners per stage within the column */
	__u64 rss;			/* the highest RSS within the column (0: none yet) */
};

/* Fills n columns over [t0, t1). Returns 0, -ENOMEM, or the cursor's read error. */
int columns__build(const struct tl_proc *p, __u64 t0, __u64 t1, int n, struct column *col);

#endif /* INFLIGHT_COLUMNS_H */
