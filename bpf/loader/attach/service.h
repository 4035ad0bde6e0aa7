/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session's own background work, on a thread of its own so that it never waits for the
 * command's loop (a scrape, a tick): a loop over the descriptors that modules register,
 * calling each one's function when it is readable (the watch of attach/libs.h: a process
 * stopped for a new library waits for it; under -b, the binary's directory of
 * attach/redeploy.h). It knows none of them.
 */
#ifndef INFLIGHT_ATTACH_SERVICE_H
#define INFLIGHT_ATTACH_SERVICE_H

#define SERVICE_MAX_FDS 4

struct service;

typedef void (*service_fn)(void *ctx);

/* 0, or -ENOMEM. */
int service__new(struct service **out);

/* Before the start: `fn(ctx)` runs on the thread whenever `fd` is readable, in the order
 * they were added. 0, or -E2BIG (more than SERVICE_MAX_FDS). */
int service__add(struct service *svc, int fd, service_fn fn, void *ctx);

/* Starts the thread when something was added. 0 or -errno. */
int service__start(struct service *svc);

/* Stops and joins the thread (nothing runs once it returns) and frees. NULL is fine. */
void service__free(struct service *svc);

#endif /* INFLIGHT_ATTACH_SERVICE_H */
