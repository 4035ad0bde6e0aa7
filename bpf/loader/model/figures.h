/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every view computes from a process's kernel record (struct infl_proc): totals of a
 * (class x stage) composition, its JSON shape, and the anomaly table with the one rule for
 * "these totals are inexact". The live views use it on snapshots, the timeline on the final
 * counters of a recording.
 */
#ifndef INFLIGHT_MODEL_FIGURES_H
#define INFLIGHT_MODEL_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"
#include "util/fmt.h"

/* Totals over the (class x stage) cells of a moment. */
struct composition_totals {
	struct infl_cell cls[INFL_CLASSES];
	struct infl_cell slot[INFL_SLOTS];
	struct infl_cell all;
	__u64 owners;
};
void figures__composition_totals(const struct infl_cell cells[INFL_CLASSES][INFL_SLOTS],
			const __u64 owners[INFL_SLOTS], struct composition_totals *t);
/* Rows shown: stages in id order, then the no-stage slot; only those holding or owning. */
bool figures__composition_row_shown(const struct composition_totals *t, const __u64 owners[INFL_SLOTS],
			   int s);

/* Writes "stages": [...] (rows that hold something or have owners) and "classes": {...}
 * (per-class totals of classes that hold something) of a moment into the current object:
 * the JSON shape shared by the timeline and the summary (docs/json.md). */
void figures__json_composition(struct json *j, const struct infl_cell cells[INFL_CLASSES][INFL_SLOTS],
		      const __u64 owners[INFL_SLOTS], const struct infl_names *n);

/* Leak candidates: what owners in terminal stages (n->terminal_mask) still hold. */
struct leak_candidates {
	__u64 owners;
	struct infl_cell all;
	struct infl_cell cls[INFL_CLASSES];
};
void figures__leak_candidates(const struct infl_proc *p, const struct infl_names *n,
		     struct leak_candidates *lk);

/* The anomalies of inflight.h's INFL_ANOMALIES table, for every output. */
enum infl_anomaly_kind { INFL_AN_DROPPED, INFL_AN_REJECTED, INFL_AN_VIOLATION, INFL_AN_WAITED };
struct infl_anomaly {
	const char *key;  /* the infl_proc field: JSON key, Prometheus `reason` label */
	const char *one, *many, *what; /* for text output: "1 event with ...", "2 events ..." */
	enum infl_anomaly_kind kind;
	bool inexact;	  /* a non-zero count makes the process's totals inexact */
	size_t off;	  /* of the __u64 field in struct infl_proc */
};
extern const struct infl_anomaly infl_anomalies[];
extern const size_t infl_nanomalies;
__u64 figures__anomaly_count(const struct infl_proc *p, size_t i);
/* The id the probe passed, of bad_class_seen or bad_stage_seen; `undeclared` when it is an
 * id its image does not declare whose slot another image holds (bpf/usdt_spec.h). */
__u64 figures__refused_id(__u64 seen, bool *undeclared);
/* Anomaly i of `p`, the count first, and for a refused id the latest one the kernel saw:
 * "2 events with a class id >= 16 (the latest: 20)". Returns buf. */
const char *figures__anomaly_phrase(char *buf, size_t len, size_t i, const struct infl_proc *p);
/* One warning line on stderr for each kind of anomaly the first time a process of `snap`
 * has it ("inflight: warning: pid 7: 2 events with a class id >= 16 (first seen)");
 * `warned` holds the kinds already said, one bit each. */
struct snapshot;
void figures__anomalies_warn_new(const struct snapshot *snap, __u32 *warned);

/* True when a counter that makes totals inexact is non-zero (see docs/cli.md). */
bool figures__proc_inexact(const struct infl_proc *p);

#endif /* INFLIGHT_MODEL_FIGURES_H */
