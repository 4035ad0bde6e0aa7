/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The OOM killer's victims among the traced processes. Included at the end of
 * inflight.bpf.c (it reads the `procs` map defined there).
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

#include "oom.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_OOM_MAX);
	__type(key, __u32); /* the traced pid (tgid) */
	__type(value, struct infl_oom_kill);
} oom_kills SEC(".maps");

/* the event's record since the task argument came (CO-RE's ___flavour: only `uid` asked) */
struct trace_event_raw_mark_victim___task {
	unsigned int uid;
} __attribute__((preserve_access_index));

SEC("raw_tp/mark_victim")
int on_oom_victim(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a0 = ctx->args[0];
	struct infl_oom_kill k = { 0 };
	struct infl_proc *p;
	__u32 tgid, tid;

	if (bpf_core_field_exists(struct trace_event_raw_mark_victim___task, uid)) {
		struct task_struct *t = (struct task_struct *)a0;

		tgid = BPF_CORE_READ(t, tgid);
		tid = BPF_CORE_READ(t, pid);
	} else {
		tgid = tid = (__u32)a0;
	}
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0; /* not a process we trace */
	k.ns = bpf_ktime_get_ns();
	k.tid = tid;
	/* read without the process lock: a snapshot of the instant, not an update */
	k.seq = p->seq;
	k.tracked_bytes = p->total_bytes;
	k.tracked_bufs = p->total_bufs;
	k.rss_bytes = p->rss_total;
	bpf_map_update_elem(&oom_kills, &tgid, &k, BPF_ANY);
	return 0;
}

#endif /* INFLIGHT_OOM_BPF_H */
