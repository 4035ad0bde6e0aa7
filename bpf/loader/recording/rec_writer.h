/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes a recording (format: rec_format.h, docs/recording.md). Events are batched into
 * chunks; every other record is written as it comes. Errors are sticky: after the first
 * failed write every call returns it, so a caller may check only at the end.
 */
#ifndef INFLIGHT_REC_WRITER_H
#define INFLIGHT_REC_WRITER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"

struct rec_writer;

/* What the header says about the run. Strings may be NULL (written empty). */
struct rec_header_info {
	const struct infl_names *names; /* NULL: numeric names, contract version 0 */
	const char *host;
	int argc;	    /* the traced command line (spawn mode) or the target's cmdline */
	char *const *argv;
	const char *binary; /* the traced binary's path */
	__u32 mode;	    /* enum session_mode */
	__u32 target_pid;   /* 0 in binary mode */
	__u64 start_wall_ns; /* CLOCK_REALTIME at the start */
	__u64 start_mono_ns; /* CLOCK_MONOTONIC at the same instant (the events' clock) */
	__u64 interval_ns;   /* snapshot period */
	const char *tool;    /* "inflight <version>" */
};

struct rec_end_info {
	__u64 mono_ns;
	__u64 wall_ns;
	int exit_status;     /* the spawned command's wait status, -1 when unknown */
	__u64 events;	     /* events written */
	__u64 user_lost;     /* events lost in user space */
	int nprocs;
	const __u32 *pids;
	const struct infl_proc *procs; /* final kernel state of each */
};

/* 1.3: what makes a recording a flight recorder's dump (REC_DUMP). */
struct rec_dump_info {
	const char *trigger; /* "oom", "tracked", "rss", "owners", "exit", "signal" */
	const char *detail;  /* what it saw, e.g. "pid 42 chosen by the OOM killer" */
	__u64 trigger_ns;    /* CLOCK_MONOTONIC when the recorder saw it */
	__u64 window_ns;     /* the ring's oldest instant kept: the window's start */
	__u64 ring_ns;	     /* --ring */
	__u64 after_ns;	     /* --dump-after */
	__u64 evicted_events; /* events the ring let go before the window, since it began */
	__u64 number;	     /* 1 for the recorder's first dump */
	__u64 refused;	     /* triggers refused so far (rate limits) */
};

#define REC_W_FORCE (1u << 0) /* replace an existing file (never following a symlink) */

/* Creates `path` (O_EXCL|O_NOFOLLOW, mode 0640 before the umask). Returns 0 or -errno
 * (-EEXIST: the file exists and REC_W_FORCE was not given). */
int rec_writer__create(const char *path, unsigned flags, struct rec_writer **out);
/* Writes to an open descriptor the writer does not own (tests, pipes). */
int rec_writer__from_fd(int fd, struct rec_writer **out);

int rec_writer__header(struct rec_writer *w, const struct rec_header_info *h);
/* A process first seen: its comm, its command line joined by spaces and (1.2) its words,
 * argc of them (0: unknown; at most REC_MAX_ARGS are kept). */
int rec_writer__proc(struct rec_writer *w, __u32 pid, __u64 mono_ns, const char *comm,
		     const char *cmdline, int argc, char *const *argv);
int rec_writer__event(struct rec_writer *w, const struct infl_event *ev);
int rec_writer__snapshot(struct rec_writer *w, __u64 mono_ns, __u32 pid,
			 const struct infl_proc *st);
int rec_writer__rss(struct rec_writer *w, __u64 mono_ns, __u32 pid, __u32 source, __u64 bytes);
int rec_writer__lost(struct rec_writer *w, __u64 mono_ns, __u32 pid, __u32 kind, __u64 count);
/* The OOM killer chose `pid` (bpf/oom.h's record of that instant). */
struct infl_oom_kill;
int rec_writer__oom(struct rec_writer *w, __u32 pid, const struct infl_oom_kill *k);
int rec_writer__end(struct rec_writer *w, const struct rec_end_info *e);
/* 1.3: the state of `pid` after its event `seq` follows, as `bufs` carried allocs then
 * `owners` carried stage events (REC_EVF_CARRIED). */
int rec_writer__start(struct rec_writer *w, __u64 mono_ns, __u32 pid, __u64 seq, __u64 bufs,
		      __u64 owners);
int rec_writer__dump(struct rec_writer *w, const struct rec_dump_info *d);
/* 1.4: the class and stage names from here on (an image with classes or stages of its own
 * attached): a reader shows the last ones it finds. rec_writer__header writes them too when
 * they are qualified. */
int rec_writer__names(struct rec_writer *w, const struct infl_names *n);

/* A writer into memory (no preamble, no file): the flight recorder's ring encodes its
 * records with it and takes them out with rec_writer__take(). */
int rec_writer__mem(struct rec_writer **out);
/* Closes the open event chunk and hands over every framed record so far (malloc'd; NULL
 * when none), leaving the writer empty. 0 or the writer's error. */
int rec_writer__take(struct rec_writer *w, void **data, size_t *len);
/* Appends framed records taken from a memory writer. */
int rec_writer__raw(struct rec_writer *w, const void *data, size_t len);

/* Pushes buffered records to the file (a crash then loses at most what came after). */
int rec_writer__flush(struct rec_writer *w);
/* Flushes and fsync()s: a dump renamed into place afterwards survives a crash whole. */
int rec_writer__sync(struct rec_writer *w);
/* Flushes, closes and frees; returns the first error of the writer's life (or 0). */
int rec_writer__close(struct rec_writer *w);

__u64 rec_writer__bytes(const struct rec_writer *w);  /* written so far, buffered included */
__u64 rec_writer__events(const struct rec_writer *w); /* events accepted */

#endif /* INFLIGHT_REC_WRITER_H */
