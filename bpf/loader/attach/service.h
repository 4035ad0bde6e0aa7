/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session's own background work, on a thread of its own so that it never waits for the
 * command's loop (a scrape, a tick): the watch ring (attach/watch.h: a process stopped for a
 * new library waits for it) and, under -b, the binary's directory (attach/redeploy.h).
 */
#ifndef INFLIGHT_ATTACH_SERVICE_H
#define INFLIGHT_ATTACH_SERVICE_H

struct session;

/* Starts the thread when the session has something for it. 0 or -errno. */
int service__start(struct session *s);

/* Stops and joins the thread (nothing is attached once it returns). */
void service__stop(struct session *s);

#endif /* INFLIGHT_ATTACH_SERVICE_H */
