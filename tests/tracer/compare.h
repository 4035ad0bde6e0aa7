/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the tracer's tests share (one copy per test program: check.h's counters are per
 * program): feeding a script to the model, comparing a kernel record with the model's field
 * by field, finding a process in a snapshot.
 */
#ifndef INFLIGHT_TEST_COMPARE_H
#define INFLIGHT_TEST_COMPARE_H

#include <stdio.h>
#include <string.h>
#include "check.h"
#include "model.h"
#include "model/figures.h"
#include "model/snapshot.h"
#include <bpf/libbpf.h>

/* Attaching to every process of a position-independent binary (-b, and following forks)
 * once needed BPF cookies (Linux 5.15), libbpf finding a USDT site's spec by its address.
 * The loader's own attach finds it by the file and offset the probe's address maps to
 * (bpf/usdt_args.bpf.h) where cookies are missing: every mode runs on every kernel. */
static inline bool kernel_has_cookies(void)
{
	return true;
}

#define NO_COOKIES "this kernel has no BPF cookies (before 5.15): no attach to every process"

/* Feeds a script to the model; `from_gate`: only the lines after the gate. */
static inline void model_script(struct model *m, const char *path, bool from_gate)
{
	FILE *f = fopen(path, "r");
	char line[256];
	bool on = !from_gate;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "gate", 4)) {
			on = true;
			continue;
		}
		if (on)
			model_apply_line(m, line);
	}
	if (f)
		fclose(f);
}

/* --- comparing ------------------------------------------------------------------------ */

static inline int cells_differ(const struct infl_cell *a, const struct infl_cell *b, int n,
			char *where, size_t len)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		if (a[i].count == b[i].count && a[i].bytes == b[i].bytes)
			continue;
		if (!bad++)
			snprintf(where, len, "cell %d: got %llu/%llu want %llu/%llu", i,
				 (unsigned long long)a[i].count, (unsigned long long)a[i].bytes,
				 (unsigned long long)b[i].count, (unsigned long long)b[i].bytes);
	}
	return bad;
}

static inline int u64s_differ(const __u64 *a, const __u64 *b, int n, char *where, size_t len)
{
	int bad = 0;

	for (int i = 0; i < n; i++)
		if (a[i] != b[i] && !bad++)
			snprintf(where, len, "[%d]: got %llu want %llu", i, (unsigned long long)a[i],
				 (unsigned long long)b[i]);
	return bad;
}

#define CELLS_DIFFER(got, want, w)                                                             \
	cells_differ((const struct infl_cell *)(got), (const struct infl_cell *)(want),        \
		     (int)(sizeof(got) / sizeof(struct infl_cell)), w, sizeof(w))
#define U64S_DIFFER(got, want, w)                                                              \
	u64s_differ((const __u64 *)(got), (const __u64 *)(want),                               \
		    (int)(sizeof(got) / sizeof(__u64)), w, sizeof(w))

static inline void compare(const char *what, const struct infl_proc *got,
			   const struct infl_proc *want)
{
	char w[160] = "";
	__u64 hist_total = 0, count_total = 0;

	CHECK_EQ_U64(got->total_bytes, want->total_bytes, "%s: tracked bytes at the end", what);
	CHECK_EQ_U64(got->total_bufs, want->total_bufs, "%s: live buffers at the end", what);
	CHECK(!CELLS_DIFFER(got->cur, want->cur, w),
	      "%s: every (class, stage) count and bytes %s", what, w);
	CHECK_EQ_U64(got->peak_bytes, want->peak_bytes, "%s: peak bytes", what);
	CHECK_EQ_U64(got->peak_bufs, want->peak_bufs, "%s: buffers at the peak", what);
	CHECK_EQ_U64(got->peak_seq, want->peak_seq, "%s: the event that set the peak", what);
	w[0] = 0;
	CHECK(!CELLS_DIFFER(got->peak, want->peak, w),
	      "%s: peak composition by (class, stage) %s", what, w);
	w[0] = 0;
	CHECK(!U64S_DIFFER(got->owners, want->owners, w),
	      "%s: owners per stage %s", what, w);
	w[0] = 0;
	CHECK(!U64S_DIFFER(got->peak_owners, want->peak_owners, w),
	      "%s: owners per stage at the peak %s", what, w);
	CHECK_EQ_U64(got->owners_started, want->owners_started, "%s: owners started", what);
	CHECK_EQ_U64(got->owners_done, want->owners_done, "%s: owners done", what);
	w[0] = 0;
	CHECK(!U64S_DIFFER(got->events, want->events, w),
	      "%s: events per probe %s", what, w);
	CHECK_EQ_U64(got->seq, want->seq, "%s: events accounted", what);
	w[0] = 0;
	CHECK(!CELLS_DIFFER(got->unmatched_free, want->unmatched_free, w),
	      "%s: unmatched frees per class %s", what, w);
	w[0] = 0;
	CHECK(!U64S_DIFFER(got->unmatched_stage, want->unmatched_stage, w),
	      "%s: unmatched stage events %s", what, w);
	CHECK_EQ_U64(got->bad_class, want->bad_class, "%s: rejected class ids", what);
	CHECK_EQ_U64(got->bad_stage, want->bad_stage, "%s: rejected stage ids", what);
	CHECK_EQ_U64(got->dup_alloc, want->dup_alloc, "%s: duplicate allocs", what);
	CHECK_EQ_U64(got->double_free, want->double_free, "%s: frees of buffers not live", what);
	CHECK_EQ_U64(got->stage_owner0, want->stage_owner0, "%s: stage events of owner 0", what);
	w[0] = 0;
	CHECK(!CELLS_DIFFER(got->allocated, want->allocated, w),
	      "%s: allocations per class over the lifetime %s", what, w);
	w[0] = 0;
	CHECK(!CELLS_DIFFER(got->freed, want->freed, w), "%s: frees per class over the lifetime %s",
	      what, w);
	CHECK_EQ_U64(got->flags & INFL_PROC_FROM_START, want->flags & INFL_PROC_FROM_START,
		     "%s: traced from its start, or not", what);
	w[0] = 0;
	CHECK(!U64S_DIFFER(got->dwell_count, want->dwell_count, w),
	      "%s: dwell samples per stage %s", what, w);
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		count_total += got->dwell_count[s];
		for (int b = 0; b < INFL_HIST_SLOTS; b++)
			hist_total += got->dwell_hist[s][b];
	}
	CHECK_EQ_U64(hist_total, count_total, "%s: dwell histograms hold every sample", what);
	CHECK(!figures__proc_inexact(got) && !got->ring_drops, "%s: nothing dropped or inexact", what);
}

static inline const struct proc_snapshot *find_pid(const struct snapshot *snap, __u32 pid)
{
	for (int i = 0; i < snap->nprocs; i++)
		if (snap->procs[i].pid == pid)
			return &snap->procs[i];
	return NULL;
}

#endif /* INFLIGHT_TEST_COMPARE_H */
