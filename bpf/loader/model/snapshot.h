/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every traced process's kernel record at one instant, as attach/session.c copies it out of
 * the kernel maps: what the live views (live/: live.c, summary.c, prom.c) show.
 */
#ifndef INFLIGHT_MODEL_SNAPSHOT_H
#define INFLIGHT_MODEL_SNAPSHOT_H

#include <linux/types.h>
#include "inflight.h"
#include "oom.h"

/* One traced process at one instant: the kernel's record, copied out under its lock. */
struct proc_snapshot {
	__u32 pid;
	struct infl_proc st;
	struct infl_oom_kill oom; /* the OOM killer chose it (oom.ns != 0): bpf/oom.h */
};

struct snapshot {
	__u64 mono_ns; /* CLOCK_MONOTONIC when taken (same clock as the events) */
	int nprocs;
	struct proc_snapshot *procs; /* sorted by pid; owned by the snapshot */
	int torn;      /* processes copied while the kernel kept writing: may be inconsistent */
	__u64 procs_map_full; /* events of processes that found no slot (global, kernel) */
	const char *rss_off;  /* why RSS is not followed (--no-rss, the kernel), NULL when it is */
};

void snapshot__free(struct snapshot *snap);

#endif /* INFLIGHT_MODEL_SNAPSHOT_H */
