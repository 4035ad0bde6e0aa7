/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal to the timeline: the replay engine and its tables (timeline_replay.c). */
#ifndef INFLIGHT_TIMELINE_REPLAY_H
#define INFLIGHT_TIMELINE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "model/timeline.h"

/* u64 key -> fixed-size value; values move on growth and deletion (do not keep pointers) */
struct u64map {
	unsigned char *slots; /* [used u8, pad, key u64 at +8, value at +16] */
	size_t cap, n, vsize;
};

void *u64map__get(const struct u64map *m, __u64 key);
void *u64map__put(struct u64map *m, __u64 key, bool *created); /* NULL on ENOMEM */
void u64map__del(struct u64map *m, __u64 key);
void u64map__free(struct u64map *m);

struct tl_buf {
	__u64 bytes;
	__u64 owner;
	__u32 cls;
	bool staged; /* counted with its owner (the kernel's !INFL_BUF_UNSTAGED) */
};

/*
 * A buffer a double alloc replaced, still counted until its own free (format 1.6: the kernel
 * counts the new buffer in at the alloc's place and the old one out at a later place, a free
 * with INFL_EVF_DUP). A value of the aside map, keyed by tl_aside__key() of the buffer's id,
 * class, bytes and owner: what that free carries, whatever came between the two places.
 */
struct tl_aside {
	__u64 buf;
	struct tl_buf b;
	__u32 n; /* identical ones waiting (threads that allocated the id at once) */
};

/* (the class tells the key spaces apart: libcuda's classes are past the contract's) */
__u64 tl_aside__key(__u64 buf, __u32 cls, __u64 bytes, __u64 owner);

/* A live owner of the replay (a value of the owners map: do not keep pointers to it). */
struct tl_owner {
	__u64 entered;	 /* when it entered its slot */
	__u64 born;	 /* when its life began */
	__u32 slot;
	__u32 life;	 /* lives numbered in order of first sight */
	__u32 lane;	 /* free for the renderer that drives the replay (chrome's lanes) */
	__u64 mark;	 /* ... and so is this */
	__u8 kind;	 /* the first stage it entered; INFL_SLOT_NONE before one */
	bool born_early; /* first seen at a non-entry stage: it predates the recording */
	struct infl_cell held[INFL_CLASSES];
};

/* What a caller learns while the replay runs (any member may be NULL). */
struct tl_hooks {
	void (*life_new)(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts);
	void (*stage_change)(void *ctx, __u64 owner, struct tl_owner *o, unsigned from,
			     unsigned to, __u64 entered, __u64 ts, bool created);
	void (*life_retire)(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts);
};

struct tl_replay {
	struct tl_state st;
	struct u64map bufs, owners;
	struct u64map cuda_bufs; /* libcuda's (classes past the contract's) */
	struct u64map aside;	 /* struct tl_aside, both key spaces (dup_free only) */
	bool dup_free;		 /* a double alloc's replaced buffer leaves by its own free */
	__u16 entry_mask, terminal_mask;
	bool oom;
	__u32 nlives;
	__u64 diverged;
	const struct tl_hooks *hooks;
	void *hook_ctx;
};

/*
 * `dup_free`: the events are of format 1.6 or later (a recording's recording__dup_free(), or
 * the running kernel's, live): a double alloc keeps the buffer it replaced counted until the
 * free with INFL_EVF_DUP that follows it. Else (1.5 and before) the alloc replaces it at once.
 */
struct tl_replay *tl_replay__new(__u16 entry_mask, __u16 terminal_mask, bool dup_free,
				 const struct tl_hooks *hooks, void *ctx);
void tl_replay__apply(struct tl_replay *rp, const struct infl_event *ev);
/* Calls fn for every owner still alive. */
void tl_replay__owners(struct tl_replay *rp, void (*fn)(void *ctx, __u64 owner,
							 struct tl_owner *o), void *ctx);
void tl_replay__free(struct tl_replay *rp);

/*
 * Events back in the kernel's accounting order. The ring buffer is filled in reservation
 * order, and a handler takes its place in seq only afterwards, under the process lock, so
 * the file holds a process's events almost but not quite in seq order. This min-heap on
 * (seq, accounting before RSS/exit, time, arrival) releases an event as soon as every event
 * before it in seq has been released, or, after a loss left a gap, once TL_ORDER_WINDOW
 * events wait behind it: memory stays bounded whatever was lost.
 */
#define TL_ORDER_WINDOW 65536

struct tl_order {
	struct tl_oitem {
		struct infl_event ev;
		__u64 arrival;
	} *v;
	size_t n, cap;
	__u64 arrivals;
	__u64 last_acct; /* seq of the last accounting event released */
	__u64 late;	 /* released after a later one: beyond the window (inexact) */
};

int tl_order__push(struct tl_order *o, const struct infl_event *ev); /* 0 or -ENOMEM */
/* Releases the next event when it is due (`flush`: at the end, every one in order). */
bool tl_order__pop(struct tl_order *o, bool flush, struct infl_event *out);
void tl_order__free(struct tl_order *o);

#endif /* INFLIGHT_TIMELINE_REPLAY_H */
