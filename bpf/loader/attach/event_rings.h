/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Record mode's event rings: one BPF ring buffer per possible CPU (inflight.bpf.c, `events`),
 * created here and read as one stream. A ring holds its CPU's events in the order they were
 * reserved; one pass drains every ring and hands the events on merged by time, so that a
 * process whose threads run on many CPUs arrives almost in the kernel's seq order, as it did
 * from one shared ring (the replay's window, model/timeline_replay.h, puts the rest back).
 * One per session, which owns it; nothing here knows the session.
 */
#ifndef INFLIGHT_ATTACH_EVENT_RINGS_H
#define INFLIGHT_ATTACH_EVENT_RINGS_H

#include <linux/types.h>
#include <bpf/libbpf.h>
#include "inflight.h"

#define EVENT_RINGS_DEFAULT_BYTES (16u << 20) /* all the rings together, unless asked */
#define EVENT_RING_MIN_DEFAULT (1u << 20)     /* and each at least this, unless asked */

struct event_rings;

/*
 * Each ring's size: `asked` bytes (0: the default) shared by `cpus` rings, rounded down to a
 * power of two of at least `page` bytes. Unasked, a ring holds at least
 * EVENT_RING_MIN_DEFAULT, so that one busy thread on a host of many CPUs still has room
 * while the recorder sleeps.
 */
__u32 event_rings__ring_bytes(__u32 asked, int cpus, long page);

/* Before load: the rings, one per possible CPU, each of `ring_bytes`. 0, or -errno. */
int event_rings__new(__u32 ring_bytes, struct event_rings **out);

/* Before load: `outer` (the programs' array of rings) sized for them, the first its
 * template. 0, or -errno. */
int event_rings__template(const struct event_rings *r, struct bpf_map *outer);

/* After load: the rings put into `outer`, by CPU, and their reader opened. 0, or -errno. */
int event_rings__open(struct event_rings *r, struct bpf_map *outer);

/* The fd to poll: readable when any ring woke it. */
int event_rings__epoll_fd(const struct event_rings *r);

typedef int (*event_rings_fn)(void *ctx, const struct infl_event *ev);

/*
 * Drains every ring and hands their events to fn, merged by time. After fn fails, the rest of
 * the pass is drained but not handed on, and its error is returned; else how many events
 * were read, or -errno.
 */
int event_rings__consume(struct event_rings *r, event_rings_fn fn, void *ctx);

/* Records read but not handed on: too short to be an event, or no memory to hold them. */
__u64 event_rings__lost(const struct event_rings *r);

void event_rings__free(struct event_rings *r);

#endif /* INFLIGHT_ATTACH_EVENT_RINGS_H */
