/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who the OOM killer chose, from oom:mark_victim's arguments (its program and map:
 * inflight.bpf.c, "the OOM killer's victims").
 *
 * oom:mark_victim fires when the kernel's OOM killer has chosen a process, before it dies.
 * It is attached as a raw tracepoint: no tracefs needed, and its prototype changed from
 * (int pid) (4.13) to (struct task_struct *task, uid_t uid) when the event gained the
 * victim's comm, RSS and uid (between 6.1, which has the pid, and 6.12, which has the task).
 * The event's own record tells which prototype this kernel has: its `uid` field came with
 * the task argument, and CO-RE resolves at load whether the field exists.
 * With a pid the victim is named by the task that holds the mm: the thread-group leader,
 * but in the rare case where the leader already exited (then we miss it).
 */
#ifndef INFLIGHT_OOM_BPF_H
#define INFLIGHT_OOM_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/* the event's record since the task argument came (CO-RE's ___flavour: only `uid` asked) */
struct trace_event_raw_mark_victim___task {
	unsigned int uid;
} __attribute__((preserve_access_index));

/* The victim's process and thread from the tracepoint's first argument. */
static __always_inline void oom_victim_of(__u64 arg0, __u32 *tgid, __u32 *tid)
{
	if (bpf_core_field_exists(struct trace_event_raw_mark_victim___task, uid)) {
		struct task_struct *t = (struct task_struct *)arg0;

		*tgid = BPF_CORE_READ(t, tgid);
		*tid = BPF_CORE_READ(t, pid);
	} else {
		*tgid = *tid = (__u32)arg0;
	}
}

#endif /* INFLIGHT_OOM_BPF_H */
