/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The model every renderer works from: a recording's events replayed per process with the
 * kernel's own accounting rules (bpf/inflight.bpf.c), giving the state per (class, stage) at
 * any instant, the exact peak, memory x time per (stage, class), dwell per stage,
 * completions and RSS. Replaying is a second, independent computation of what the kernel
 * counted: timeline__check() compares the two.
 *
 * Nothing here holds the events: timeline__build() replays them once while the file is
 * walked and keeps per-process figures; a cursor replays one process again from the file
 * for the renderers that draw it over time. Memory follows the processes, their live
 * buffers and owners, never the length of the recording.
 *
 * The clock: every time a renderer shows is seconds since `t0`, the first probe event of
 * the traced run (the earliest first event of its processes), the one instant that every
 * view of the same run sees: a live trace, a parallel recording, a report of it.
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
	struct infl_cell cur[INFL_CLASSES][INFL_SLOTS];
	__u64 owners[INFL_SLOTS];
	__u64 total_bytes;
	__u64 total_bufs;
};

struct tl_proc {
	__u32 pid;
	const char *comm;	   /* from the PROC record, or "" */
	const char *cmdline;	   /* from the PROC record, or "" */
	char *const *argv;	   /* its words (format 1.2), or NULL */
	const struct recording *rec;
	__u64 nev;		   /* its events in the recording */
	__u64 t_end;		   /* exit, or the end of the recording */
	__u64 first_ts, last_ts;   /* first and last accounting event */
	bool exited;
	__u64 exit_ts;		   /* 0 when it did not exit within the recording */
	/* owners */
	__u64 nlives;		 /* owner lives (the same id may live several times) */
	__u64 live_at_end;	 /* lives not retired at the end */
	__u64 born_early;	 /* lives first seen at a non-entry stage */
	/* peak of tracked bytes, exact: the first event that reached it */
	__u64 peak_bytes, peak_bufs, peak_ts, peak_seq;
	/* the clock of the event that set the peak, as the kernel read it: times in seq order
	 * may step back (docs/recording.md), and peak_ts is the never-backwards one */
	__u64 peak_ev_ts;
	struct infl_cell peak[INFL_CLASSES][INFL_SLOTS];
	__u64 peak_owners[INFL_SLOTS];
	__u64 class_peak[INFL_CLASSES]; /* each class's own high-water mark */
	__u64 class_peak_ts[INFL_CLASSES];
	__u64 slot_peak[INFL_SLOTS];	     /* each stage's own high-water mark (bytes) */
	__u64 slot_peak_ts[INFL_SLOTS];
	__u64 owners_peak[INFL_SLOTS];	     /* most owners each stage had at once */
	/* memory x time: the integral of bytes over [first event, t_end], in byte-nanoseconds */
	unsigned __int128 byte_ns[INFL_CLASSES][INFL_SLOTS];
	/* per stage: completed stays */
	__u64 dwell_sum_ns[INFL_MAX_STAGES];
	__u64 dwell_count[INFL_MAX_STAGES];
	__u64 dwell_hist[INFL_MAX_STAGES][INFL_HIST_SLOTS];
	__u64 started;		 /* owners first seen at an entry stage */
	__u64 retired;		 /* owners done (kernel: owners_done) */
	__u64 retired_by_kind[INFL_SLOTS];
	__u64 started_by_kind[INFL_SLOTS];
	/* probe hits seen, and anomalies as the events flag them */
	__u64 events[INFL_PROBE__COUNT];
	struct infl_cell unmatched_free_cls[INFL_CLASSES];
	__u64 unmatched_free, unmatched_free_bytes, unmatched_stage;
	/* frees of unknown buffers that are not from before the recording, told apart by the
	 * kernel's flags as it counted them: double frees, frees whose alloc it dropped */
	__u64 double_free, untracked_free;
	__u64 unmatched_stage_by[INFL_MAX_STAGES];
	__u64 rejected_class, rejected_stage, untracked, unstaged, dups;
	/* diverged: events the replay could not follow as the kernel did (a slot that disagreed
	 * with the kernel's, one too late for its order, a dump's starting state cut short) */
	__u64 rejected, diverged;
	/* losses */
	__u64 seq_gaps;		/* accounting events missing from the stream */
	__u64 lost_kernel;	/* from LOST records */
	__u64 lost_user;
	struct tl_state final;	/* after the last event */
	/* RSS: kernel samples (rss_stat events and snapshots) when any, else /proc statm */
	bool rss_kernel;
	__u64 nrss;
	__u64 rss_peak, rss_peak_ts, rss_last;
	__u64 rss_at_peak;	   /* at the tracked peak */
	__u64 tracked_at_rss_peak; /* tracked bytes when RSS peaked */
	const struct infl_proc *kernel_final; /* the END record's counters, or NULL */
	struct infl_oom_kill oom;	      /* the OOM killer chose it (oom.ns), else zero */
	__u16 entry_mask, terminal_mask;      /* from the recording's names */
	/* the process's record as the replay counts it: the summary's figures (docs/json.md) */
	struct infl_proc fig;
	/* a flight recorder's dump (format 1.3): the window began after event window_seq, in
	 * the state of carried_bufs buffers and carried_owners owners; 0 when it saw the start */
	__u64 window_seq, carried_bufs, carried_owners;
	bool carrying; /* while the replay applies a carried event */
};

struct timeline {
	const struct recording *rec;
	struct tl_proc *procs; /* sorted by pid */
	size_t nprocs;
	__u64 t0;	       /* the clock's origin: the run's first probe event */
	__u32 t0_pid;	       /* whose event it was (0: no event at all) */
	__u64 t_end;	       /* the recording's end */
};

/* Replays `rec` (walking its records once: recording__scan). Returns 0, -ENOMEM, or an error of
 * recording__scan() with `err` saying what and where. The timeline points into rec: free it first. */
int timeline__build(struct recording *rec, struct timeline **out, char err[REC_ERR_LEN]);
void timeline__free(struct timeline *tl);

/* The process reports show first: the target pid when present, else the largest peak. */
const struct tl_proc *timeline__primary(const struct timeline *tl);
const struct tl_proc *timeline__proc(const struct timeline *tl, __u32 pid);

/* Compares the replay with the kernel's final counters (current cells, owners, peak,
 * totals). Returns the number of mismatches and describes the first in `what`. */
int timeline__check(const struct tl_proc *p, char *what, size_t len);

/* A process with no lost or diverged events: its timeline is exact. */
bool tl_proc__exact(const struct tl_proc *p);

/* Classes with any bytes ever / stage slots with any owner or bytes ever (bit per id;
 * bit INFL_SLOT_NONE for buffers in no stage). */
__u32 tl_proc__used_classes(const struct tl_proc *p);
__u32 tl_proc__used_slots(const struct tl_proc *p);

/* The command line of a traced process: the recorded command for the target, else the
 * process's own (its PROC record), else the binary; "" when none is known. */
const char *timeline__command(const struct timeline *tl, const struct tl_proc *p);

/* Byte-nanoseconds in one stage slot, all classes; the mean stay in a stage (-1: none);
 * the active span (first to last event) and a count per minute of it (0 when empty). */
unsigned __int128 tl_proc__slot_byte_ns(const struct tl_proc *p, unsigned slot);
double tl_proc__mean_dwell_ms(const struct tl_proc *p, unsigned stage);
__u64 tl_proc__active_ns(const struct tl_proc *p);
double tl_proc__per_minute(const struct tl_proc *p, __u64 count);

/* Sum of bytes over every class in one slot / over every slot of one class. */
__u64 tl_state__slot_bytes(const struct tl_state *s, unsigned slot);
__u64 tl_state__class_bytes(const struct tl_state *s, unsigned cls);

/* A cursor replays one process forward in time from the file; renderers sample with it.
 * Optional hooks (timeline_replay.h's struct tl_hooks) see owners live and retire, and
 * `rss` every RSS sample as it is reached. */
struct tl_replay;
struct tl_hooks;
struct tl_cursor_priv;
struct tl_cursor {
	const struct tl_proc *p;
	const struct tl_state *st; /* the state after the events applied so far */
	struct tl_replay *rp;
	struct tl_cursor_priv *priv;
	int err;		   /* a read error met on the way (the file changed) */
};

int tl_cursor__init(struct tl_cursor *c, const struct tl_proc *p);
int tl_cursor__init_hooks(struct tl_cursor *c, const struct tl_proc *p,
			  const struct tl_hooks *hooks, void (*rss)(void *ctx, __u64 ts,
								    __u64 bytes),
			  void *ctx);
void tl_cursor__free(struct tl_cursor *c);
/* Applies the next event; false at the end. */
bool tl_cursor__step(struct tl_cursor *c);
/* Timestamp of the next event, UINT64_MAX at the end. */
__u64 tl_cursor__next_ts(struct tl_cursor *c);
/* Applies every event with ts <= t. */
void tl_cursor__until(struct tl_cursor *c, __u64 t);
/* RSS at time t (the latest sample at or before it; 0 before the first). t must not go
 * back, and the cursor must have applied every event before t. */
__u64 tl_cursor__rss_at(struct tl_cursor *c, __u64 t);
/* Every RSS sample not reached yet, to the hook (at the end of a pass). */
void tl_cursor__rss_drain(struct tl_cursor *c);

/* Convenience for tables: the state at the end of each step [t, t + step), and the largest
 * total within it. Call with increasing t. */
struct tl_sample {
	const struct tl_state *at_end; /* state after every event with ts < t + step */
	__u64 max_bytes;	       /* largest total_bytes during the step (or carried in) */
};
void tl_cursor__sample(struct tl_cursor *c, __u64 t, __u64 step, struct tl_sample *out);

#endif /* INFLIGHT_TIMELINE_H */
