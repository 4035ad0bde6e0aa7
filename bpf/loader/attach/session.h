/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A tracing session: load the BPF skeleton, attach to the contract's probes by pid, binary
 * or spawned command, hand out ring-buffer events (record mode) and map snapshots.
 * Every front end (live timeline, record, serve) drives one of these.
 *
 * Errors, here and in the attach/ files behind the session: a function either prints
 * nothing and returns 0 or a negative errno, or prints the one error line (util/errors.h)
 * and returns the exit code it named (enum infl_exit, > 0); its comment says which ("0 or
 * -errno", "0 or an exit code (printed)"). No caller tells one from the other by its sign:
 * a -errno becomes an exit code only where it is printed (infl_err, infl_bpf_err).
 * session__open, the commands' way in, returns an exit code; the other functions here a
 * -errno (or cannot fail).
 */
#ifndef INFLIGHT_SESSION_H
#define INFLIGHT_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "inflight.h"
#include "attach/caps.h"
#include "contract/names.h"
#include "model/snapshot.h"

enum session_mode {
	SESSION_PID,	/* -p PID: one running process */
	SESSION_BINARY, /* -b PATH: every process of that binary, including later ones */
	SESSION_SPAWN,	/* -- CMD ARGS: start the command, traced from its first instruction */
};

struct session_opts {
	enum session_mode mode;
	pid_t pid;	    /* SESSION_PID */
	const char *binary; /* SESSION_BINARY; resolved from pid/argv in the other modes */
	/* SESSION_BINARY: the other files given with -b (libraries its processes load), each
	 * attached binary-wide too */
#define SESSION_MAX_MORE_BINARIES 7
	const char *more_binaries[SESSION_MAX_MORE_BINARIES];
	int nmore;
	char **argv;	    /* SESSION_SPAWN: NULL-terminated */
	bool record_events; /* stream every event through the ring buffer */
	__u32 ringbuf_bytes; /* ring buffer size (power of two) when recording */
	__u32 max_bufs;	    /* live buffers tracked across all processes */
	__u32 max_owners;   /* live owners tracked across all processes */
	__u32 max_procs;    /* traced processes */
	bool no_rss;	    /* do not attach kmem:rss_stat */
	bool no_follow;	    /* PID, SPAWN: the named process alone, not the children it forks */
	const char *entry_stages;    /* stage names or ids (comma-separated) overriding the */
	const char *terminal_stages; /* names note's entry/terminal flags; NULL: the note's */
	bool defer_all;	    /* tests, the locked form: every probe hit through its process's
			     * queue, as if the lock were always held */
	bool locked_form;   /* tests: the locked form (bpf/proc_lock.bpf.h) where the kernel
			     * runs the atomic one, so that both run on this kernel */
	bool drop_caps;	    /* once attached, give up every capability (the CLI sets it) */
	struct caps_user user; /* once attached, become this user; a `--` command runs as it */
	bool allow_new_privs;  /* a `--` command may gain privileges (setuid) after its exec */
	bool detach_child;  /* session__free leaves the kernel's detach to a child that outlives
			     * this process (attach/detach.h; the CLI sets it) */
	bool verbose;	    /* libbpf's chatter */
	bool no_cuda;	    /* do not attach to libcuda's memory calls */
	const char *cuda_lib; /* the CUDA driver library by path (an unusual name; -b) */
};

struct session;

/* 0, or a -errno that ends session__poll, which returns it. */
typedef int (*session_event_fn)(void *ctx, const struct infl_event *ev);

/* Opens, loads and attaches. 0, or an exit code (printed), with *out NULL. In SPAWN mode
 * the command starts running on return. */
int session__open(const struct session_opts *opts, struct session **out);

/* Waits up to timeout_ms for ring-buffer events, calling fn for each (record mode).
 * Returns events consumed, or -EINTR when interrupted, or another -errno. */
int session__poll(struct session *s, int timeout_ms, session_event_fn fn, void *ctx);

/* Copies every traced process's state: the live ones from the kernel, and the final records
 * of those that ended (exit or exec) and were not forgotten yet, sorted by pid, then by when
 * each record began. Returns 0 or -errno. snapshot__free() releases it. */
int session__snapshot(struct session *s, struct snapshot *snap);

/* True once the target is gone (PID/SPAWN modes); *status gets the spawned command's
 * wait status when known (-1 otherwise). BINARY mode never ends by itself. */
bool session__target_gone(struct session *s, int *status);

/* Names read from the traced binary (numeric fallback). */
const struct infl_names *session__names(const struct session *s);
/* Counts the changes of session__names (an image attached with classes or stages of its
 * own): a recorder writes the names again when it moves. */
unsigned session__names_gen(const struct session *s);
/* The traced binary as a user would name it (the attach may go through /proc/PID/root). */
const char *session__binary(const struct session *s);
pid_t session__target_pid(const struct session *s); /* 0 in BINARY mode */
enum session_mode session__mode(const struct session *s);

/* Ring buffer records lost in user space bookkeeping (kernel drops are in infl_proc). */
__u64 session__ring_lost(const struct session *s);

/* Forgets the final records of `pid` that ended (after they were reported), so that memory
 * does not grow with every process ever seen. The kernel side removes an ended process's
 * entries itself (and the session what it left in the buffer and owner maps): this is only
 * about what the session keeps for the outputs. Returns 0, or -ENOENT when none was kept. */
int session__forget(struct session *s, __u32 pid);

/* The same for one image of `pid` (the record's gen). */
int session__forget_image(struct session *s, __u32 pid, __u64 gen);

/* Image (pid, gen)'s comm and command line as the kernel read them when it made the image's
 * record (inflight.h: infl_ident): for an image gone before /proc was read. 0 or -ENOENT
 * (the loader seeded the record, or it is forgotten). */
int session__ident(const struct session *s, __u32 pid, __u64 gen, struct infl_ident *out);

/* The same for the image `pid` ran at `ts` (CLOCK_MONOTONIC ns: an event's time), when the
 * gen is not known: the latest image of `pid` made at or before `ts`. 0 or -ENOENT. */
int session__ident_at(const struct session *s, __u32 pid, __u64 ts, struct infl_ident *out);

/* How many ended processes' final records the session keeps (cheap: no snapshot). */
int session__nended(const struct session *s);

/* Probe hits that found their process's lock held and were queued for its holder
 * (bpf/deferred.bpf.h, or the queue maps of inflight.bpf.c before 5.17), and how many found
 * their queue full and waited (for a slot or the lock). */
__u64 session__deferred_ops(const struct session *s, __u64 *full);
/* kernels without the queue: rounds hits waited past the first for a stalled holder */
__u64 session__lock_wait_rounds(const struct session *s);

/* Tracing ends: probe hits from now on are not accounted (a hit already in its handler
 * finishes), so that the final snapshot and the last recorded event agree. */
void session__stop(struct session *s);

/* Entries now in the kernel's process, buffer and owner maps (tests: nothing left behind). */
int session__map_usage(struct session *s, __u32 *procs, __u32 *bufs, __u32 *owners);

/* Why RSS is not followed ("--no-rss", or what this kernel lacks), NULL when it is. */
const char *session__rss_off(const struct session *s);

/* CLOCK_MONOTONIC now, in ns: the clock of infl_proc and infl_event timestamps. */
__u64 session__now_ns(void);

/* Detaches and frees everything; kills nothing (a spawned child keeps running untraced
 * unless the caller signalled it). With detach_child the links' last references go to a
 * child that drops them once this process is gone: call it just before exiting. */
void session__free(struct session *s);

#endif /* INFLIGHT_SESSION_H */
