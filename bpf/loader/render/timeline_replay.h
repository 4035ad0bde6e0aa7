/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal to the timeline: the replay engine and its tables (timeline_replay.c). */
#ifndef INFLIGHT_TIMELINE_REPLAY_H
#define INFLIGHT_TIMELINE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "render/timeline.h"

/* u64 key -> fixed-size value; values move on growth and deletion (do not keep pointers) */
struct u64map {
	unsigned char *slots; /* [used u8, pad, key u64 at +8, value at +16] */
	size_t cap, n, vsize;
};

void *u64map_get(const struct u64map *m, __u64 key);
void *u64map_put(struct u64map *m, __u64 key, bool *created); /* NULL on ENOMEM */
void u64map_del(struct u64map *m, __u64 key);
void u64map_free(struct u64map *m);

struct tl_buf {
	__u64 bytes;
	__u64 owner;
	__u32 cls;
	bool staged; /* counted with its owner (the kernel's !INFL_BUF_UNSTAGED) */
};

struct tl_owner {
	__u64 entered;
	__u32 slot;
	__u32 life;
	struct infl_cell held[INFL_MAX_CLASSES];
};

/* What timeline__build() collects while replaying. */
struct tl_hooks {
	__u32 (*life_new)(void *ctx, __u64 owner, __u64 ts);
	void (*stage_change)(void *ctx, __u32 life, unsigned from, unsigned to, __u64 entered,
			     __u64 ts, bool created);
	void (*life_retire)(void *ctx, __u32 life, __u64 ts);
};

struct tl_replay {
	struct tl_state st;
	struct u64map bufs, owners;
	__u16 terminal_mask;
	bool oom;
	__u64 diverged;
	const struct tl_hooks *hooks;
	void *hook_ctx;
};

struct tl_replay *tl_replay__new(__u16 terminal_mask,
				 const struct tl_hooks *hooks, void *ctx);
void tl_replay__apply(struct tl_replay *rp, const struct infl_event *ev);
void tl_replay__free(struct tl_replay *rp);

#endif /* INFLIGHT_TIMELINE_REPLAY_H */
