/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scripted recordings with known answers: a tiny model of the kernel's accounting (linear
 * tables, no hashing: a third, deliberately naive implementation) emits the events the
 * kernel would emit for a sequence of probe calls, and the final counters it would report.
 * Times are milliseconds after the recording's start.
 */
#ifndef REC_SCRIPT_H
#define REC_SCRIPT_H

#include <stddef.h>
#include <linux/types.h>
#include "../../bpf/inflight.h"
#include "contract/names.h"
#include "recording/rec_writer.h"

#define SCRIPT_T0 1000000000ull /* CLOCK_MONOTONIC of the recording's start */
#define SCRIPT_MAX 512

struct script_buf {
	__u64 buf, bytes, owner;
	__u32 cls;
	int staged;
};

struct script_owner {
	__u64 owner, entered;
	__u32 slot;
	struct infl_cell held[INFL_MAX_CLASSES];
};

struct script {
	struct rec_writer *w;
	__u32 pid;
	struct infl_names names;
	struct infl_proc st;
	struct script_buf bufs[SCRIPT_MAX];
	int nbufs;
	struct script_owner owners[SCRIPT_MAX];
	int nowners;
	int drop_next; /* the next n events are counted but not written (ring buffer full) */
	/* a double alloc (an alloc of a live id): 1.6 takes two places, the new buffer in with
	 * the old one still counted, then the old one out by a free with INFL_EVF_DUP, at once
	 * or (defer_dup) when script_replaced() says; dup_v15: one place, as a kernel before
	 * format 1.6 did (the old one replaced at the alloc) */
	int dup_v15, defer_dup;
	struct script_buf replaced[8]; /* deferred, oldest first */
	int nreplaced;
};

/* The reference prover's names (probes/prover_ids.h). */
void script_prover_names(struct infl_names *n);

/* Writes the header; `s` models process `pid`. */
void script_begin(struct script *s, struct rec_writer *w, __u32 pid,
		  const struct infl_names *names);
/* The same with the header's host, command and the process's comm given (crafted files). */
void script_begin_as(struct script *s, struct rec_writer *w, __u32 pid,
		     const struct infl_names *names, const char *host, char *const *argv,
		     const char *comm, const char *cmdline);
void script_alloc(struct script *s, double ms, __u64 buf, __u32 cls, __u64 bytes, __u64 owner);
/* The oldest deferred buffer a double alloc replaced counted out (its free with INFL_EVF_DUP):
 * other hits took places between the two. */
void script_replaced(struct script *s, double ms);
void script_free(struct script *s, double ms, __u64 buf, __u32 cls, __u64 bytes);
void script_stage(struct script *s, double ms, __u64 owner, __u32 stage);
void script_rss(struct script *s, double ms, __u64 bytes); /* a kernel RSS event */
void script_snapshot(struct script *s, double ms);
/* Writes the END record (and the exit event when `exited`). */
void script_end(struct script *s, double ms, int exited);

__u64 script_ns(double ms);

/* Writes `minor` into the preamble of the recording open at `fd`: a file as an older writer
 * wrote it (what it holds must be what that version says). 0 or -errno. */
int script_set_minor(int fd, unsigned minor);

#endif /* REC_SCRIPT_H */
