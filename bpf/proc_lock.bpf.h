/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The per-process lock of inflight.bpf.c, in the two forms the kernels we run on allow.
 *
 * bpf_spin_lock is refused in tracing programs ("tracing progs cannot use bpf_spin_lock
 * yet", still so on 6.18; so is bpf_res_spin_lock), so the lock is built from what a kernel
 * offers, chosen before load by attach/features.c (bpf_program__set_autoload):
 *
 *   LK_CAS  a test-and-test-and-set word in infl_proc.lock: a plain read, one cmpxchg when
 *           it looks free. BPF atomic cmpxchg and xchg came in 5.12 (upstream 5ffa25502b5a,
 *           "bpf: Add instructions for atomic_[cmp]xchg"), bpf_loop in 5.17 (e6f2dd0f8067).
 *           Nobody spins on it: a probe hit that finds it held is queued for its holder
 *           (deferred.bpf.h), and waits (inflight.bpf.c: lock_or_defer) only while the
 *           queue is full.
 *   LK_MAP  for kernels before 5.17: 5.10 and 5.11 have no BPF cmpxchg at all, 5.12-5.16
 *           no bpf_loop, which the ring's drain needs. Inserting the pid into the `locks`
 *           hash map with BPF_NOEXIST is an atomic test-and-set (the insert checks and
 *           links under the bucket lock); deleting the key releases it. A hit that finds it
 *           held after a few looks is pushed into a BPF queue map for its holder
 *           (inflight.bpf.c: "the queue behind the lock before 5.17"); only while that is
 *           full does it wait, LOCK_WAIT_ROUNDS rounds of LOCK_MAP_SPINS looks in
 *           inflight.bpf.c's lock_wait_more, and then give up and count the event
 *           (lock_timeouts), which makes that process's totals inexact. Those kernels run
 *           uprobe handlers with preemption off (before 6.0), so a holder is never
 *           preempted there, only interrupted, or stalled with its vCPU.
 *
 * Since 6.0 uprobe programs run with migration, not preemption, disabled
 * (bpf_prog_run_array_uprobe), so the holder may be preempted on a preemptible or PREEMPT_RT
 * kernel, and a waiter spinning for it would only burn its own time slice: hence the queue.
 * Tracepoint handlers never wait: at most one try (proc_trylock, LK_MAP; with LK_CAS they
 * do not take the lock at all).
 */
#ifndef INFLIGHT_PROC_LOCK_BPF_H
#define INFLIGHT_PROC_LOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "inflight.h"
#include "once.bpf.h"

/* The seqlock words (section_begin, section_end) are ordered by compiler barriers alone:
 * enough on x86-64, whose stores are seen in program order (TSO), not on a weakly ordered
 * CPU, which needs release stores there (and the loader's reader acquire loads). */
#ifndef __TARGET_ARCH_x86
#error "proc_lock.bpf.h: the seqlock's memory order is x86-64's (TSO); add release stores for this architecture"
#endif

enum lock_kind { LK_CAS, LK_MAP };

/* LK_MAP: at most this many looks (a hash lookup and the clock each, 60-100 ns: ~15-25 us,
 * under lock_wait_ns natively). The verifier walks every iteration: 1024 made 5.10 take
 * 16-33 s (TCG) to load the three programs, 256 takes 9 s. */
#define LOCK_MAP_SPINS 256

/* LK_MAP: how many looks a hit gives a held lock before it queues (lock_map_look): each is a
 * map lookup, and 5.10's verifier walks every one of them */
#define LOCK_MAP_LOOKS 32

/* LK_MAP: the lock of process `pid`, a key in `locks` (a hash map, pid -> any byte) */
static __always_inline bool lock_map_try(void *locks, __u32 pid)
{
	/* the value is pid's first byte: any will do, and it needs no stack of its own */
	return bpf_map_update_elem(locks, &pid, &pid, BPF_NOEXIST) == 0;
}

static __always_inline bool cas_try(struct infl_proc *p)
{
	return READ_ONCE(p->lock) == 0 && __sync_val_compare_and_swap(&p->lock, 0, 1) == 0;
}

/* One attempt, no waiting: for tracepoint handlers. */
static __always_inline bool proc_trylock(void *locks, struct infl_proc *p, __u32 pid,
					const enum lock_kind lk)
{
	if (lk == LK_MAP)
		return lock_map_try(locks, pid);
	return cas_try(p);
}

/* LK_MAP: true when the lock is ours, within `wait_ns` (0: no limit) or LOCK_MAP_SPINS
 * looks. */
static __always_inline bool lock_map_wait(void *locks, __u32 pid, __u64 wait_ns)
{
	__u64 deadline;
	int i;

	if (lock_map_try(locks, pid))
		return true;
	deadline = wait_ns ? bpf_ktime_get_ns() + wait_ns : ~0ull;
	/* one way back to the loop's head: a loop entered by a jump into its middle and closed
	 * by a fall-through is refused by 5.10's check_cfg ("back-edge from insn N to N+1"), and
	 * clang builds that shape from a plain for loop here */
	for (i = 1;; i++) {
		if (!bpf_map_lookup_elem(locks, &pid) && lock_map_try(locks, pid))
			return true;
		if (i == LOCK_MAP_SPINS)
			return false;
		if (wait_ns && bpf_ktime_get_ns() > deadline)
			return false;
	}
}

/* LK_MAP: true when the lock is ours within `looks` looks: the holder of a short section is
 * let finish, one that is off its CPU is not waited for. */
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

static __always_inline void proc_lock_release(void *locks, struct infl_proc *p, __u32 pid,
					      const enum lock_kind lk)
{
	if (lk == LK_MAP)
		bpf_map_delete_elem(locks, &pid); /* the helper call orders the section's stores */
	else if (p)
		__sync_lock_test_and_set(&p->lock, 0); /* xchg: a full barrier on every JIT */
}

/* The seqlock words around a locked section (see struct infl_proc). */
static __always_inline void section_begin(struct infl_proc *p)
{
	p->write_begin++;
	barrier(); /* write_begin is stored before any field of the section */
}

static __always_inline void section_end(struct infl_proc *p)
{
	barrier();
	p->write_end = p->write_begin;
}

/* A section's end: its seqlock word, then the lock (`locks`: LK_MAP's map, NULL for LK_CAS) */
static __always_inline void proc_unlock(void *locks, struct infl_proc *p, __u32 pid,
					const enum lock_kind lk)
{
	section_end(p);
	proc_lock_release(locks, p, pid, lk);
}

#endif /* INFLIGHT_PROC_LOCK_BPF_H */
