// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Watching traced processes for binaries that arrive after the attach: a library they load
 * with dlopen() (ld.so calls _dl_debug_state, the debuggers' hook, when its list of loaded
 * objects changes: before and after mapping one) and an exec of a binary not attached yet.
 * The loader (attach/watch.c) is told and, where it carries the contract, attaches to it.
 * To count its first events too, the process is stopped meanwhile (SIGSTOP, delivered before
 * it returns to user space) and continued by the loader: a window of zero instead of the
 * milliseconds the loader takes.
 *
 * The traced set and the attached images are the main object's maps (bpf/inflight.bpf.c),
 * shared by fd: only a traced process that really has something new is stopped.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "inflight.h"
#include "watch_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SIGSTOP_ 19

const volatile bool stop_process = false; /* set by the loader: stop until it has looked */

__u64 watch_drops = 0; /* events the ring had no room for (the process was not stopped) */

/* the main object's maps (bpf_map__reuse_fd): these definitions are placeholders */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct infl_proc);
} procs SEC(".maps");

struct image_key {
	__u64 dev;
	__u64 ino;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct image_key);
	__type(value, __u64);
} images SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} watch_events SEC(".maps");

static __always_inline int notify(__u32 pid, __u32 kind)
{
	struct infl_watch_event *ev;

	if (!bpf_map_lookup_elem(&procs, &pid))
		return 0;
	ev = bpf_ringbuf_reserve(&watch_events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&watch_drops, 1);
		return 0;
	}
	ev->pid = pid;
	ev->kind = kind;
	ev->stopped = stop_process && bpf_send_signal(SIGSTOP_) == 0;
	ev->pad = 0;
	ev->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

/* ld.so's _dl_debug_state: a perf-event uprobe or, where the kernel has them, uprobe_multi
 * (which needs no CAP_SYS_ADMIN on Linux 6.16+): the loader loads the one it uses */
SEC("uprobe")
int on_dl_debug_state(struct pt_regs *ctx)
{
	return notify(bpf_get_current_pid_tgid() >> 32, INFL_WATCH_DLOPEN);
}

SEC("uprobe.multi")
int on_dl_debug_state_multi(struct pt_regs *ctx)
{
	return notify(bpf_get_current_pid_tgid() >> 32, INFL_WATCH_DLOPEN);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_watch_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	struct image_key k = {
		.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
	};

	if (bpf_map_lookup_elem(&images, &k))
		return 0; /* attached already: traced from its first instruction */
	return notify(BPF_CORE_READ(task, tgid), INFL_WATCH_EXEC);
}
