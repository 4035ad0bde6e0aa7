/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The atomic form's buffer table on the loader's side (bpf/buf_table.bpf.h says its
 * protocol): its size from --max-bufs, its memory mapped, an ended image's records removed
 * through it, and how many records it holds. In the locked form it has one slot and nothing
 * in it.
 */
#ifndef INFLIGHT_ATTACH_BUF_TABLE_H
#define INFLIGHT_ATTACH_BUF_TABLE_H

#include <stdbool.h>
#include <linux/types.h>
#include "inflight.h"
#include "inflight.skel.h"

/* Slots for `max_bufs` buffers: a power of two, INFL_BUF_SLOTS_PER_BUF or more a buffer. */
__u32 buf_table__slots(__u32 max_bufs);

/* Before load: the table sized for max_bufs (the atomic form) or to one slot. 0 or -errno. */
int buf_table__configure(struct inflight_bpf *skel, __u32 max_bufs, bool atomic);

/* After load: maps the table's memory (the skeleton keeps the map). 0 or -errno. */
int buf_table__open(struct inflight_bpf *skel, void **mem);
void buf_table__close(struct inflight_bpf *skel, void *mem);

/* Removes the records of image (pid, gen), each by the kernel's own swap; how many. */
__u64 buf_table__forget(struct inflight_bpf *skel, void *mem, __u32 pid, __u64 gen);

/* Records the table holds, every process's (the kernel's count). */
__u64 buf_table__live(const struct inflight_bpf *skel);

#endif /* INFLIGHT_ATTACH_BUF_TABLE_H */
