/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flight recorder driven from a session (record.c): the ring buffer's events and a
 * snapshot every interval go into the recorder of cmd/flight.h. `record --ring` runs it
 * alone; `serve --ring` beside the exporter, one daemon per host.
 */
#ifndef INFLIGHT_CMD_RECORD_RING_H
#define INFLIGHT_CMD_RECORD_RING_H

#include <linux/types.h>
#include "attach/session.h"
#include "cmd/flight.h"

struct ring_rec;

/* Before the session opens: the dump directory must take files (exit 9 otherwise), and
 * SIGUSR1 asks for a dump. Returns 0 or the exit code of a line said. */
int ring_rec__prepare(const struct flight_opts *o);
/* The session must record events (session_opts.record_events). 0 or an exit code. */
int ring_rec__new(struct session *s, const struct session_opts *so, const struct flight_opts *o,
		  __u64 interval_ns, struct ring_rec **out);
/* Drains the ring buffer, waiting up to timeout_ms. 0, or -errno when the ring fails. */
int ring_rec__poll(struct ring_rec *rr, int timeout_ms);
/* Every interval: a snapshot into the ring, the triggers, a dump whose time came. */
int ring_rec__tick(struct ring_rec *rr, __u64 now);
/* The end: stops the session's accounting, drains, and writes a pending dump (`status`:
 * the command's wait status, -1 unknown). */
int ring_rec__finish(struct ring_rec *rr, int status);
const struct flight *ring_rec__flight(const struct ring_rec *rr);
void ring_rec__free(struct ring_rec *rr);

#endif /* INFLIGHT_CMD_RECORD_RING_H */
