/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the watch programs (bpf/watch.bpf.c) tell the loader (attach/watch.c): a traced
 * process that may have mapped a new binary carrying the contract, stopped until the loader
 * has looked (and attached), when the session asks for it.
 */
#ifndef INFLIGHT_WATCH_EVENTS_H
#define INFLIGHT_WATCH_EVENTS_H

enum infl_watch_kind {
	INFL_WATCH_DLOPEN = 1, /* ld.so changed its list of loaded objects (_dl_debug_state) */
	INFL_WATCH_EXEC = 2,   /* exec of a binary not attached yet */
};

struct infl_watch_event {
	__u32 pid;     /* tgid */
	__u32 kind;    /* enum infl_watch_kind */
	__u32 stopped; /* 1: SIGSTOP was sent; the loader continues it */
	__u32 pad;
	__u64 ts_ns;   /* bpf_ktime_get_ns */
};

#endif /* INFLIGHT_WATCH_EVENTS_H */
