/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The model's stand-in for libbpf's bpf_helpers.h: the helpers bpf/acct.bpf.h, hit.bpf.h and
 * owners.bpf.h call, as user-space functions (tests/model/model_kernel.c), and the compiler's
 * attributes. Every shared access of those headers is a point where the model may preempt
 * the thread (model_at): their READ_ONCE, WRITE_ONCE, atomics and compiler barriers, defined
 * here before once.bpf.h would define them. Each names the word it is about to touch and how,
 * so that a written schedule can stop a thread right before one access (model_watch).
 */
#ifndef INFLIGHT_MODEL_BPF_HELPERS_H
#define INFLIGHT_MODEL_BPF_HELPERS_H

#include <linux/types.h>

#define SEC(name)
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define __noinline __attribute__((noinline))

#define BPF_ANY 0
#define BPF_NOEXIST 1
#define BPF_EXIST 2

/* what a thread is about to do at a point (model_at): a mask, so that a watch can take several */
#define MA_READ (1u << 0)    /* READ_ONCE */
#define MA_WRITE (1u << 1)   /* WRITE_ONCE */
#define MA_RMW (1u << 2)     /* fetch-and-add, fetch-and-or, exchange */
#define MA_CAS (1u << 3)     /* compare-and-swap */
#define MA_BARRIER (1u << 4) /* a compiler barrier: no word */
#define MA_LOOKUP (1u << 5)  /* a map's lookup: the word is the map */
#define MA_UPDATE (1u << 6)
#define MA_DELETE (1u << 7)

/* a place where another thread may run before this one goes on to touch `addr` */
void model_at(const void *addr, unsigned kind);

#define barrier()                                                                              \
	do {                                                                                   \
		asm volatile("" ::: "memory");                                                 \
		model_at((const void *)0, MA_BARRIER);                                         \
		asm volatile("" ::: "memory");                                                 \
	} while (0)
#define barrier_var(var) asm volatile("" : "+r"(var))

#define READ_ONCE(x)                                                                           \
	({                                                                                     \
		model_at(&(x), MA_READ);                                                       \
		*(volatile __typeof__(x) *)&(x);                                               \
	})
#define WRITE_ONCE(x, v)                                                                       \
	do {                                                                                   \
		model_at(&(x), MA_WRITE);                                                      \
		*(volatile __typeof__(x) *)&(x) = (v);                                         \
	} while (0)

/* a macro does not expand inside itself: these call the compiler's builtins */
#define __sync_val_compare_and_swap(p, o, n)                                                   \
	(model_at((p), MA_CAS), __sync_val_compare_and_swap(p, o, n))
#define __sync_fetch_and_add(p, v) (model_at((p), MA_RMW), __sync_fetch_and_add(p, v))
#define __sync_fetch_and_or(p, v) (model_at((p), MA_RMW), __sync_fetch_and_or(p, v))
#define __sync_lock_test_and_set(p, v) (model_at((p), MA_RMW), __sync_lock_test_and_set(p, v))

void *bpf_map_lookup_elem(void *map, const void *key);
long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags);
long bpf_map_delete_elem(void *map, const void *key);
__u64 bpf_ktime_get_ns(void);
__u64 bpf_get_current_pid_tgid(void);
/* the kernel's: calls fn(i, ctx) for i = 0.. up to n times, until it returns nonzero */
long bpf_loop(__u32 n, void *fn, void *ctx, __u64 flags);

#endif /* INFLIGHT_MODEL_BPF_HELPERS_H */
