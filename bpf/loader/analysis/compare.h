/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `inflight compare`: runs of a program side by side, A (e.g. before a fix) against B,
 * each side one or several recordings of the same configuration. The figures of each run's
 * traced process (the target, else the largest peak), averaged per side with their
 * run-to-run spread; the ratio B/A; and a verdict computed from the numbers: how the peak
 * changed and which stages and classes made the change, where memory x time moved between
 * stages, and whether throughput changed beyond the spread between runs. Owners are kept
 * apart by kind (the stage they entered first: proof jobs and partitions are different
 * work). Text (full command lines, wrapped, never cut), JSON (docs/json.md) or an SVG of
 * the first run of each side on one time and byte scale.
 */
#ifndef INFLIGHT_COMPARE_H
#define INFLIGHT_COMPARE_H

#include <stdio.h>
#include <linux/types.h>
#include "model/timeline.h"

struct cmp_run {
	const char *file;
	struct recording *rec;
	struct timeline *tl;
	const struct tl_proc *p;
};

struct cmp_side {
	struct cmp_run *runs;
	size_t n;
};

enum cmp_unit { U_BYTES, U_NS, U_BYTE_S, U_RATE, U_COUNT, U_SHARE };

struct cmp_metric {
	const char *group;
	char name[48];
	enum cmp_unit unit;
	double v[2];	     /* mean over the side's runs (NAN: missing) */
	double lo[2], hi[2]; /* its smallest and largest run */
};

/* A finding of the verdict: one line of text, and its figures for JSON. */
struct cmp_finding {
	const char *what;   /* "peak", "stage", "class", "moved_from", "moved_to", "throughput" */
	char name[48];	    /* the stage, class or owner kind */
	double a, b;
	double spread;	    /* throughput: the larger relative spread of the two sides; NAN */
	int beyond;	    /* throughput: 1 beyond the spread, 0 within, -1 unknown (one run) */
};

struct cmp {
	struct cmp_side side[2];
	const struct infl_names *names; /* the first recording's */
	struct cmp_metric *m;
	size_t nm, cap;
	struct cmp_finding *f;
	size_t nf, fcap;
	char verdict[4096]; /* the text lines of the verdict */
	int err;
};

/* Computes the metrics and the verdict of both sides. 0 or -ENOMEM. */
int cmp__build(struct cmp *c);
void cmp__free(struct cmp *c);

#endif /* INFLIGHT_COMPARE_H */
