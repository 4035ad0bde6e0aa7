/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by bpf/oom.bpf.h and the loader: the record the kernel side keeps of a traced
 * process that the kernel's OOM killer chose, taken at the instant it was chosen
 * (oom:mark_victim), with what the process held then.
 */
#ifndef INFLIGHT_OOM_H
#define INFLIGHT_OOM_H

/* no includes: the BPF side has vmlinux.h, the loader linux/types.h, before this */

#define INFL_OOM_MAX 256 /* victims remembered; a fleet that loses more is in other trouble */

struct infl_oom_kill {
	__u64 ns;	     /* bpf_ktime_get_ns when the victim was chosen (the events' clock) */
	__u32 tid;	     /* the task the tracepoint named */
	__u32 pad;
	__u64 seq;	     /* the process's accounting order then: events before it */
	__u64 tracked_bytes; /* what it held, tracked, then */
	__u64 tracked_bufs;
	__u64 rss_bytes;     /* its RSS then (rss_stat), 0 if never seen */
};

#endif /* INFLIGHT_OOM_H */
