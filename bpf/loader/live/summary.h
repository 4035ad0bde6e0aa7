/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The final summary of a traced process, text or JSON (docs/json.md): the exact peak with its
 * time and full (class x stage) composition, what was still in flight at the end (leak
 * candidates: owners in a terminal stage that still hold buffers), stage dwell histograms,
 * events from before the attach, and every anomaly counter. Works on a snapshot only.
 */
#ifndef INFLIGHT_SUMMARY_H
#define INFLIGHT_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "contract/names.h"
#include "live/idents.h"
#include "model/snapshot.h"
#include "util/fmt.h"

struct summary_info {
	const char *binary;	/* as the user named it; NULL: not shown */
	char *const *argv;	/* the spawned command, NULL otherwise */
	const char *end;	/* why tracing ended: "target exited", "interrupted", ... */
	pid_t target_pid;	/* the spawned or -p process, 0 in binary mode */
	int target_status;	/* its wait status (waitpid), -1 when unknown */
	__u64 ring_lost;	/* ring buffer records the loader lost (record mode) */
	bool json;
	__u64 origin_ns;	/* the clock's origin (clock__origin()); 0: from `snap` */
	__u32 origin_pid;
	const struct proc_idents *idents; /* who the processes are (live/idents.h); NULL */
};

/* One summary per process in `snap` (text: separated by a blank line; JSON: one line). */
void summary__print(FILE *f, const struct snapshot *snap, const struct infl_names *n,
		    const struct summary_info *info);

/* "exited with status 3", "killed by SIGKILL", for a wait status. Returns buf. */
const char *summary__wait_status(char *buf, size_t len, int status);

#endif /* INFLIGHT_SUMMARY_H */
