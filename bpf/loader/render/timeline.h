/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The model every renderer works from: a recording's events replayed per process with the
 * kernel's own accounting rules (bpf/inflight.bpf.c), giving the state per (class, stage) at
 * any instant, each owner's life and stage slices, the exact peak, memory x time per
 * (stage, class), dwell per stage, completions and RSS. Replaying is a second, independent
 * computation of what the kernel counted: timeline__check() compares the two.
 */
#ifndef INFLIGHT_TIMELINE_H
#define INFLIGHT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"
#include "recording/rec_reader.h"

/* The tracked state of one process at one instant. */
struct tl_state {
	__u64 ts; /* CLOCK_MONOTONIC of the last event applied */
	struct infl_cell cur[INFL_MAX_CLASSES][INFL_SLOTS];
	__u64 owners[INFL_SLOTS];
	__u64 total_bytes;
	__u64 total_bufs;
};

/* A work item's life: from first sight (stage or buffer) to retirement (terminal stage,
 * holding nothing) or the end of the recording. The same owner id may live several times. */
struct tl_life {
	__u64 owner;
	__u64 t0, t1;
	__u32 first_slice, nslices;
	__u8 kind;	/* first stage entered; INFL_SLOT_NONE if it never entered one */
	bool retired;	/* left the books: reached a terminal stage holding nothing */
	bool born_early; /* first seen at a non-entry stage: it predates the recording */
};

struct tl_slice {
	__u64 t0, t1;
	__u32 life;
	__u8 stage;
	bool open; /* still in this stage when the recording ended */
};

struct tl_rss {
	__u64 ts;
	__u64 bytes;
};

struct tl_proc {
	__u32 pid;
	const char *comm;	   /* from the PROC record, or "" */
	struct infl_event *ev;	   /* this process's events in accounting order */
	size_t nev;
	__u64 t_end;		   /* exit, or the end of the recording */
	__u64 first_ts, last_ts;   /* first and last event */
	/* owners */
	struct tl_life *lives;
	size_t nlives;
	struct tl_slice *slices; /* grouped by life, in time order within one */
	size_t nslices;
	/* peak of tracked bytes, exact: the first event that reached it */
	__u64 peak_bytes, peak_bufs, peak_ts, peak_seq;
	struct infl_cell peak[INFL_MAX_CLASSES][INFL_SLOTS];
	__u64 peak_owners[INFL_SLOTS];
	__u64 class_peak[INFL_MAX_CLASSES]; /* each class's own high-water mark */
	__u64 class_peak_ts[INFL_MAX_CLASSES];
	/* memory x time: the integral of bytes over [first event, t_end], in byte-nanoseconds */
	unsigned __int128 byte_ns[INFL_MAX_CLASSES][INFL_SLOTS];
	/* per stage: completed stays (from the slices) */
	__u64 dwell_sum_ns[INFL_MAX_STAGES];
	__u64 dwell_count[INFL_MAX_STAGES];
	__u64 started;		 /* owners first seen at an entry stage */
	__u64 retired;		 /* owners done (kernel: owners_done) */
	__u64 retired_by_kind[INFL_SLOTS];
	/* anomalies, as the events flag them */
	__u64 unmatched_free, unmatched_free_bytes, unmatched_stage;
	__u64 rejected, untracked, dups;
	__u64 diverged;		/* events whose slot disagreed with the kernel's: inexact */
	/* losses */
	__u64 seq_gaps;		/* accounting events missing from the stream */
	__u64 lost_kernel;	/* from LOST records */
	__u64 lost_user;
	struct tl_state final;	/* after the last event */
	/* RSS: kernel samples (rss_stat events and snapshots) or /proc statm ones */
	struct tl_rss *rss;
	size_t nrss;
	__u64 rss_peak, rss_peak_ts;
	const struct infl_proc *kernel_final; /* the END record's counters, or NULL */
	__u16 entry_mask, terminal_mask;      /* from the recording's names */
};

struct timeline {
	const struct recording *rec;
	struct tl_proc *procs; /* sorted by pid */
	size_t nprocs;
	__u64 t0;	       /* the recording's start: time 0 of every report */
	__u64 t_end;	       /* the recording's end */
	struct infl_event *events; /* all events sorted by (pid, seq): the procs' ev point here */
};

/* Replays `rec`. Returns 0 or -ENOMEM. The timeline points into rec: free it first. */
int timeline__build(const struct recording *rec, struct timeline **out);
void timeline__free(struct timeline *tl);

/* The process reports show first: the target pid when present, else the largest peak. */
const struct tl_proc *timeline__primary(const struct timeline *tl);
const struct tl_proc *timeline__proc(const struct timeline *tl, __u32 pid);

/* Compares the replay with the kernel's final counters (current cells, owners, peak,
 * totals). Returns the number of mismatches and describes the first in `what`. */
int timeline__check(const struct tl_proc *p, char *what, size_t len);

/* A process with no lost or diverged events: its timeline is exact. */
bool tl_proc__exact(const struct tl_proc *p);

/* Sum of bytes over every class in one slot / over every slot of one class. */
__u64 tl_state__slot_bytes(const struct tl_state *s, unsigned slot);
__u64 tl_state__class_bytes(const struct tl_state *s, unsigned cls);

/* RSS at time ts (the latest sample at or before it), 0 if none yet. */
__u64 tl_proc__rss_at(const struct tl_proc *p, __u64 ts);

/* A cursor replays one process forward in time; renderers sample with it. */
struct tl_replay;
struct tl_cursor {
	const struct tl_proc *p;
	size_t next;		   /* index of the next event to apply */
	const struct tl_state *st; /* the state after the events applied so far */
	struct tl_replay *rp;
};

int tl_cursor__init(struct tl_cursor *c, const struct tl_proc *p);
void tl_cursor__free(struct tl_cursor *c);
/* Applies the next event; false at the end. */
bool tl_cursor__step(struct tl_cursor *c);
/* Timestamp of the next event, UINT64_MAX at the end. */
__u64 tl_cursor__next_ts(const struct tl_cursor *c);
/* Applies every event with ts <= t. */
void tl_cursor__until(struct tl_cursor *c, __u64 t);

/* Convenience for tables: the state at the end of each step [t, t + step), and the largest
 * total within it. Call with increasing t. */
struct tl_sample {
	const struct tl_state *at_end; /* state after every event with ts < t + step */
	__u64 max_bytes;	       /* largest total_bytes during the step (or carried in) */
};
void tl_cursor__sample(struct tl_cursor *c, __u64 t, __u64 step, struct tl_sample *out);

#endif /* INFLIGHT_TIMELINE_H */
