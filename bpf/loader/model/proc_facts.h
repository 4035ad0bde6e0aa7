/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every output says of one traced process, live or from a recording: the JSON shape of
 * a process (docs/json.md) that the live summary and every report write, the OOM kill's line
 * and the unmatched frees' lines of the text outputs.
 */
#ifndef INFLIGHT_MODEL_PROC_FACTS_H
#define INFLIGHT_MODEL_PROC_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "contract/names.h"
#include "inflight.h"
#include "util/fmt.h"

/* The version of the JSON shapes of docs/json.md: every top-level object says it ("schema"). */
#define INFL_JSON_SCHEMA 2

/* What is known of a traced process beyond its kernel record. */
struct proc_facts {
	__u32 pid;
	const char *comm;	/* NULL: unknown */
	const char *binary;	/* NULL: unknown */
	const char *command;	/* the command line, joined; NULL: unknown */
	char *const *argv;	/* its words, when known */
	int wait_status;	/* -1: unknown */
	__u64 origin;		/* the clock's origin */
	__u64 now;		/* the end of tracing (duration of a process still running) */
	__u64 rss_at_peak;	/* RSS at the tracked peak; UINT64_MAX: unknown */
	__u64 ring_lost;
	const struct infl_proc *st;
	const struct infl_names *names;
	bool approximate;	/* figures from a replay that lost events: "exact" is false */
	const struct infl_oom_kill *oom; /* chosen by the OOM killer; NULL or ns 0: not */
};

/* The figures of one process (pid, command, exit, duration, events, owners, peak, rss,
 * at_end, dwell, unmatched, anomalies, exact) into the current JSON object: the one shape
 * of a process in the live summary and in every report (docs/json.md). */
void proc_facts__json(struct json *j, const struct proc_facts *pf);

/* "the kernel's OOM killer chose it at +T s, holding X tracked in N buffers, RSS Y" for an OOM
 * kill (bpf/oom.h) on the clock of `origin`. Returns buf. */
struct infl_oom_kill;
const char *proc_facts__oom_text(char *buf, size_t len, const struct infl_oom_kill *k,
				 __u64 origin);
/* "oom_kill": null | {"time_s", "tid", "seq", "tracked_bytes", "tracked_bufs", "rss_bytes"} */
void proc_facts__oom_json(struct json *j, const struct infl_oom_kill *k, __u64 origin);

/* Frees that match no live buffer for another reason than a late attach (double frees,
 * frees whose alloc was dropped): the summary's lines, for a report's text too. */
void proc_facts__unmatched_text(FILE *f, const struct infl_proc *p);

#endif /* INFLIGHT_MODEL_PROC_FACTS_H */
