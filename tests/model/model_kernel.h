/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel, as far as bpf/combining.bpf.h needs one, in user space: the two map kinds its
 * queue uses (an array, the pool; a hash of u32 to u32, the names), bpf_loop, the clock,
 * the current thread, and a scheduler that preempts a thread at every shared access of the
 * BPF headers (model_point): a yield, a short spin, or a sleep as long as a descheduled
 * vCPU's.
 */
#ifndef INFLIGHT_MODEL_KERNEL_H
#define INFLIGHT_MODEL_KERNEL_H

#include <pthread.h>
#include <stddef.h>
#include <linux/types.h>

#define MODEL_HASH_SLOTS 16

enum model_map_kind { MODEL_ARRAY, MODEL_HASH_U32 };

struct model_map {
	enum model_map_kind kind;
	void *values; /* MODEL_ARRAY: max_entries values of value_size bytes */
	size_t value_size;
	__u32 max_entries;
	/* MODEL_HASH_U32: a key's value stays where it is until deleted, as a kernel hash
	 * map's element does under RCU */
	pthread_mutex_t mu;
	struct {
		int used;
		__u32 key, value;
	} slots[MODEL_HASH_SLOTS];
};

#define MODEL_ARRAY_OF(arr)                                                                    \
	{ .kind = MODEL_ARRAY, .values = (arr), .value_size = sizeof((arr)[0]),                \
	  .max_entries = sizeof(arr) / sizeof((arr)[0]), .mu = PTHREAD_MUTEX_INITIALIZER }
#define MODEL_HASH_INIT { .kind = MODEL_HASH_U32, .mu = PTHREAD_MUTEX_INITIALIZER }

/* How often a thread is preempted at a model_point: one in `yield_in` yields the CPU, one
 * in `spin_in` spins a few microseconds, one in `sleep_in` sleeps up to `sleep_us` (0: never) */
struct model_sched {
	unsigned yield_in, spin_in, sleep_in, sleep_us;
};

void model_sched_set(const struct model_sched *s);
/* a schedule written out: `fn` runs as if another thread ran there, at this thread's
 * `at`-th model_point from now (1: the next), once */
void model_hook_at(unsigned at, void (*fn)(void));
/* this thread's id as bpf_get_current_pid_tgid gives it (pid << 32 | tid), and its random
 * seed */
void model_thread_init(__u32 pid, __u32 tid);
/* 0 .. n-1, this thread's own sequence */
unsigned model_rand(unsigned n);
void model_sleep_us(unsigned us);

#endif /* INFLIGHT_MODEL_KERNEL_H */
