/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The per-process lock of the locked form (inflight.bpf.c, the `_nocas` programs): kernels
 * before 5.17, where BPF has no atomic that returns a value (5.10, 5.11) or no bpf_loop
 * (5.12-5.16), so acct.bpf.h's steps run as plain loads and stores, one hit of a process at
 * a time. Kernels with both run them without any lock (ACCT_ATOMIC).
 *
 * bpf_spin_lock is refused in tracing programs ("tracing progs cannot use bpf_spin_lock
 * yet", still so on 6.18), so the lock is a key: inserting the pid into the `locks` hash map
 * with BPF_NOEXIST is an atomic test-and-set (the insert checks and links under the bucket's
 * lock); deleting the key releases it, both full barriers. A hit that finds it held after a
 * few looks is pushed into a BPF queue map for its holder (inflight.bpf.c); only while that
 * is full does it wait, LOCK_WAIT_ROUNDS rounds of LOCK_MAP_SPINS looks in lock_wait_more,
 * and then give up and count the event (lock_timeouts), which makes that process's totals
 * inexact. Those kernels run uprobe handlers with preemption off (before 6.0), so a holder is
 * never preempted there, only interrupted, or stalled with its vCPU.
 * Tracepoint handlers never wait: at most one try (lock_map_try).
 */
#ifndef INFLIGHT_PROC_LOCK_BPF_H
#define INFLIGHT_PROC_LOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"

/* A round of looks in lock_wait_more (a hash lookup each, ~60 ns natively). The verifier
 * walks every iteration: 1024 made 5.10 take 16-33 s (TCG) to load the three programs. */
#define LOCK_MAP_SPINS 256

/* How many looks a hit gives a held lock before it queues (lock_map_look): each is a map
 * lookup, and 5.10's verifier walks every one of them */
#define LOCK_MAP_LOOKS 32

/* the lock of process `pid`, a key in `locks` (a hash map, pid -> any byte) */
static __always_inline bool lock_map_try(void *locks, __u32 pid)
{
	/* the value is pid's first byte: any will do, and it needs no stack of its own */
	return bpf_map_update_elem(locks, &pid, &pid, BPF_NOEXIST) == 0;
}

/* True when the lock is ours within LOCK_MAP_SPINS looks. */
static __always_inline bool lock_map_wait(void *locks, __u32 pid)
{
	int i;

	if (lock_map_try(locks, pid))
		return true;
	/* one way back to the loop's head: a loop entered by a jump into its middle and closed
	 * by a fall-through is refused by 5.10's check_cfg ("back-edge from insn N to N+1"), and
	 * clang builds that shape from a plain for loop here */
	for (i = 1;; i++) {
		if (!bpf_map_lookup_elem(locks, &pid) && lock_map_try(locks, pid))
			return true;
		if (i == LOCK_MAP_SPINS)
			return false;
	}
}

/* True when the lock is ours within `looks` looks: the holder of a short section is let
 * finish, one that is off its CPU is not waited for. */
static __always_inline bool lock_map_look(void *locks, __u32 pid, int looks)
{
	int i;

	if (lock_map_try(locks, pid))
		return true;
	for (i = 1;; i++) { /* the loop's shape: lock_map_wait */
		if (!bpf_map_lookup_elem(locks, &pid) && lock_map_try(locks, pid))
			return true;
		if (i >= looks)
			return false;
	}
}

/* The release: the helper call orders the section's stores before it. */
static __always_inline void lock_map_release(void *locks, __u32 pid)
{
	bpf_map_delete_elem(locks, &pid);
}

#endif /* INFLIGHT_PROC_LOCK_BPF_H */
