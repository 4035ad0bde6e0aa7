/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one run loop of the attaching commands (trace, record, serve): signals, the periodic
 * tick, housekeeping, the target's end, the grace given to a spawned command after Ctrl-C or
 * SIGTERM, and the exit status. Each command brings its own wait (a sleep, the ring buffer,
 * the HTTP server) and its own periodic work.
 */
#ifndef INFLIGHT_CMD_RUN_LOOP_H
#define INFLIGHT_CMD_RUN_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "attach/session.h"

#define RUN_POLL_MS 50 /* the longest wait: how soon the target's end and signals are seen */

struct run_ops {
	/* Waits up to timeout_ms for the command's work and does it; non-zero ends the loop. */
	int (*wait)(void *ctx, int timeout_ms);
	/* Every interval_ns (never when 0): the periodic work; non-zero ends the loop. */
	int (*tick)(void *ctx, __u64 now_ns);
	/* After every wait, in BINARY mode only: e.g. processes that exited leave the maps. */
	void (*housekeep)(void *ctx, __u64 now_ns);
	__u64 interval_ns;
};

struct run_end {
	bool gone;  /* the target ended */
	int status; /* the spawned command's wait status when known, -1 otherwise */
	int signal; /* SIGINT or SIGTERM when one ended the run, 0 otherwise */
	int err;    /* what wait or tick returned, when it ended the loop */
};

/* SIGINT and SIGTERM end the loop (no SA_RESTART: waits wake up). */
int run_loop__install_signals(void);
/* Runs until the target ends, a signal comes or wait or tick fails; after a signal, a spawned
 * command gets RUN_GRACE_NS to end (SIGTERM is passed on; the terminal sent Ctrl-C to it
 * already), the command's work still done meanwhile. */
void run_loop__run(struct session *s, const struct run_ops *ops, void *ctx, struct run_end *end);

/* "command exited", "target exited", "interrupted (SIGINT)", "terminated (SIGTERM)" */
const char *run_loop__end_text(const struct run_end *e, enum session_mode mode);

/* With -- CMD the command's status (128+N when signal N killed it), or 128+N when our own
 * signal N ended the run first; 0 in the other modes. */
int run_loop__exit_status(const struct run_end *e, enum session_mode mode);

#endif /* INFLIGHT_CMD_RUN_LOOP_H */
