/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The model's stand-in for libbpf's bpf_helpers.h: the helpers bpf/combining.bpf.h and the
 * headers it includes call, as user-space functions (tests/model/model_kernel.c), and the
 * compiler's attributes. Every shared access of those headers is a point where the model
 * may preempt the thread (model_point): their READ_ONCE, WRITE_ONCE, atomics and compiler
 * barriers, defined here before once.bpf.h would define them.
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

/* a place where another thread may run before this one goes on */
void model_point(void);

#define barrier()                                                                              \
	do {                                                                                   \
		asm volatile("" ::: "memory");                                                 \
		model_point();                                                                 \
		asm volatile("" ::: "memory");                                                 \
	} while (0)
#define barrier_var(var) asm volatile("" : "+r"(var))

#define READ_ONCE(x)                                                                           \
	({                                                                                     \
		model_point();                                                                 \
		*(volatile __typeof__(x) *)&(x);                                               \
	})
#define WRITE_ONCE(x, v)                                                                       \
	do {                                                                                   \
		model_point();                                                                 \
		*(volatile __typeof__(x) *)&(x) = (v);                                         \
	} while (0)

/* a macro does not expand inside itself: these call the compiler's builtins */
#define __sync_val_compare_and_swap(p, o, n) (model_point(), __sync_val_compare_and_swap(p, o, n))
#define __sync_fetch_and_add(p, v) (model_point(), __sync_fetch_and_add(p, v))
#define __sync_lock_test_and_set(p, v) (model_point(), __sync_lock_test_and_set(p, v))

void *bpf_map_lookup_elem(void *map, const void *key);
long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags);
long bpf_map_delete_elem(void *map, const void *key);
long bpf_loop(__u32 nr_loops, long (*callback)(__u32 i, void *ctx), void *ctx, __u64 flags);
__u64 bpf_ktime_get_ns(void);
__u64 bpf_get_current_pid_tgid(void);

#endif /* INFLIGHT_MODEL_BPF_HELPERS_H */
