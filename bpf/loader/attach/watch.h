/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Binaries that arrive after the attach (bpf/watch.bpf.c): a library a traced process loads
 * with dlopen(), an exec of a binary not attached yet. The watch programs tell the loader and,
 * when the session asks for it, stop the process until the loader has attached to what it
 * found (attach/libs.c) and continued it: its first events are then counted too.
 */
#ifndef INFLIGHT_ATTACH_WATCH_H
#define INFLIGHT_ATTACH_WATCH_H

#include <stdbool.h>
#include <linux/types.h>
#include "watch_events.h"

struct bpf_map;
struct watch;

typedef void (*watch_fn)(void *ctx, const struct infl_watch_event *ev);

/* After the main object is loaded: its traced set (`procs`) and images map shared, the exec
 * watch attached. `multi`: attach the ld.so hook as a uprobe_multi link (else a perf-event
 * uprobe). `stop`: stop the watched processes until the loader continues them. 0, or an
 * exit code (printed). */
int watch__open(struct bpf_map *procs, struct bpf_map *images, bool multi, bool stop,
		watch_fn fn, void *ctx, struct watch **out);

/* Hooks the ld.so at `path` (once per file): its processes' dlopen()s are watched. 0 or
 * -errno. */
int watch__ldso(struct watch *w, const char *path);

int watch__epoll_fd(const struct watch *w);

/* Hands every event waiting to fn. Events consumed, or -errno. */
int watch__consume(struct watch *w);

/* Events lost because the watch ring was full (those processes were not stopped). */
__u64 watch__drops(const struct watch *w);

void watch__free(struct watch *w);

#endif /* INFLIGHT_ATTACH_WATCH_H */
