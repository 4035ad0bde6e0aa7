/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one clock of every output (docs/json.md): seconds since the run's first probe event,
 * the earliest first event of the traced processes, in whole microseconds. The live views
 * take its origin from a snapshot, the timeline from a recording's events.
 */
#ifndef INFLIGHT_MODEL_CLOCK_H
#define INFLIGHT_MODEL_CLOCK_H

#include <linux/types.h>

struct json;
struct snapshot;

/* The clock's origin in `snap`: its CLOCK_MONOTONIC time, with *pid set to whose first
 * event it was, or 0 when no process has an event yet. */
__u64 clock__origin(const struct snapshot *snap, __u32 *pid);
/* Seconds of `t` on the clock of `origin` (negative before it), in whole microseconds. */
double clock__rel_s(__u64 t, __u64 origin);
/* "clock": {"origin": "first probe event", "origin_pid": P, "origin_mono_ns": N} into the
 * current object (null and null before any event). */
void clock__json(struct json *j, __u64 origin, __u32 pid);

#endif /* INFLIGHT_MODEL_CLOCK_H */
