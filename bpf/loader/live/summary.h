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

/* The version of the JSON shapes of docs/json.md: every top-level object says it ("schema"). */
#define INFL_JSON_SCHEMA 2

struct summary_info {
	const char *binary;	/* as the user named it; NULL: not shown */
	char *const *argv;	/* the spawned command, NULL otherwise */
	const char *end;	/* why tracing ended: "target exited", "interrupted", ... */
	pid_t target_pid;	/* the spawned or -p process, 0 in binary mode */
	int target_status;	/* its wait status (waitpid), -1 when unknown */
	__u64 ring_lost;	/* ring buffer records the loader lost (record mode) */
	bool json;
	__u64 origin_ns;	/* the clock's origin (summary_origin()); 0: from `snap` */
	__u32 origin_pid;
	const struct proc_idents *idents; /* who the processes are (live/idents.h); NULL */
};

/* One summary per process in `snap` (text: separated by a blank line; JSON: one line). */
void summary__print(FILE *f, const struct snapshot *snap, const struct infl_names *n,
		    const struct summary_info *info);

/*
 * The one clock of every output (docs/json.md): seconds since the run's first probe event,
 * the earliest first event of the traced processes. Returns its CLOCK_MONOTONIC time and
 * sets *pid, or 0 when no process has an event yet.
 */
__u64 summary_origin(const struct snapshot *snap, __u32 *pid);
/* Seconds of `t` on the clock of `origin` (negative before it), in whole microseconds. */
double summary_rel_s(__u64 t, __u64 origin);
/* Frees that match no live buffer for another reason than a late attach (double frees,
 * frees whose alloc was dropped): the summary's lines, for a report's text too. */
void summary_text_unmatched_others(FILE *f, const struct infl_proc *p);
/* "clock": {"origin": "first probe event", "origin_pid": P, "origin_mono_ns": N} into the
 * current object (null and null before any event). */
void summary_json_clock(struct json *j, __u64 origin, __u32 pid);

/* "the kernel's OOM killer chose it at +T s, holding X tracked in N buffers, RSS Y" for an OOM
 * kill (bpf/oom.h) on the clock of `origin`. Returns buf. */
struct infl_oom_kill;
const char *summary_oom_text(char *buf, size_t len, const struct infl_oom_kill *k, __u64 origin);
/* "oom_kill": null | {"time_s", "tid", "seq", "tracked_bytes", "tracked_bufs", "rss_bytes"} */
void summary_json_oom(struct json *j, const struct infl_oom_kill *k, __u64 origin);

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
void summary__json_proc(struct json *j, const struct proc_facts *pf);

/* "exited with status 3", "killed by SIGKILL", for a wait status. Returns buf. */
const char *summary_wait_status(char *buf, size_t len, int status);

#endif /* INFLIGHT_SUMMARY_H */
