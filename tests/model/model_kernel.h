/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel, as far as bpf/acct.bpf.h, hit.bpf.h and owners.bpf.h need one, in user space:
 * hash maps with the kernel's element reuse, per-CPU arrays, the clock, the current thread
 * and its CPU, and a scheduler that preempts a thread at every shared access of the BPF
 * headers (model_at): a yield, a short spin, or a sleep as long as a descheduled vCPU's.
 */
#ifndef INFLIGHT_MODEL_KERNEL_H
#define INFLIGHT_MODEL_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define MODEL_MAX_CPUS 16

enum model_map_kind { MODEL_HASH, MODEL_PERCPU_ARRAY };

/*
 * A map. MODEL_HASH is a preallocated hash map as the kernel's BPF_MAP_TYPE_HASH: a lookup
 * returns a pointer into the element, which stays valid memory for good; a delete puts the
 * element on a free list, last in first out, and the next insert takes it and copies its
 * key and value over it, whoever still holds a pointer to it (the kernel's preallocated hash
 * maps do the same: RCU keeps an element's memory, not what is in it, so a reader must check
 * what it found), the value's last word first: a reader may see the new record's state while
 * the words before it are still the old one's. An insert of a present key (BPF_NOEXIST)
 * fails with -17 (EEXIST), one into a full map with -7 (E2BIG); a delete of an absent key
 * with -2 (ENOENT). MODEL_PERCPU_ARRAY: max_entries values for each CPU, the calling
 * thread's CPU's (model_thread_cpu).
 */
struct model_map {
	enum model_map_kind kind;
	size_t key_size, value_size, stride; /* stride: a value's room, 8-byte aligned */
	__u32 max_entries;
	pthread_mutex_t mu; /* the kernel's bucket locks: updates and deletes, never a reader */
	char *keys, *values;
	int *next;	 /* an element's successor in its bucket, or on the free list */
	int *buckets;	 /* the first element of each bucket, -1: none */
	__u32 nbuckets;
	int free_top;	 /* the free list's first element, -1: full */
	__u32 used;
	char *last_key;	 /* the key an element last held (counts reuse for another key) */
	bool *ever_used;
	/* what the map went through */
	__u64 inserts, deletes, reused, reused_other_key, full;
};

/* a map ready for use; model_map_free gives its memory back */
void model_map_init(struct model_map *m, enum model_map_kind kind, size_t key_size,
		    size_t value_size, __u32 max_entries);
void model_map_free(struct model_map *m);
/* empties it: every element free again, in index order (the first insert takes element 0) */
void model_map_clear(struct model_map *m);
/* the i-th element (0 .. max_entries - 1): its key and value when in use, else false */
bool model_map_element(struct model_map *m, __u32 i, void **key, void **value);

/* How often a thread is preempted at a model_at: one in `yield_in` yields the CPU, one in
 * `spin_in` spins a few microseconds, one in `sleep_in` sleeps up to `sleep_us` (0: never);
 * and right after a hash map's lookup, one in `lookup_sleep_in` sleeps up to `lookup_us`: the
 * window in which what the lookup found may be removed and reused under the thread */
struct model_sched {
	unsigned yield_in, spin_in, sleep_in, sleep_us, lookup_sleep_in, lookup_us;
};

/* every thread's schedule, and one thread's own (NULL: every thread's) */
void model_sched_set(const struct model_sched *s);
void model_sched_thread(const struct model_sched *s);

/* a schedule written out: `fn(arg)` runs as if another thread ran there, right before this
 * thread's `nth` access (1: the next) of one of `kinds` (MA_*) to `addr`; once, disarmed
 * before it runs (it may arm the next). addr NULL with kinds 0: `nth` points from now,
 * whatever they touch. */
void model_watch(const void *addr, unsigned kinds, unsigned nth, void (*fn)(void *), void *arg);

/* counts this thread's accesses of `kinds` (MA_*) to `addr` from now on: model_tallied says
 * how many (what a hit did that the headers do not say, such as a reference given back) */
void model_tally(const void *addr, unsigned kinds);
__u64 model_tallied(void);

/* this thread's identity as bpf_get_current_pid_tgid gives it (pid << 32 | tid), its random
 * seed, and its CPU (the per-CPU arrays': 0 .. MODEL_MAX_CPUS - 1) */
void model_thread_init(__u32 pid, __u32 tid, unsigned seed);
void model_thread_cpu(unsigned cpu);
/* 0 .. n-1, this thread's own sequence */
unsigned model_rand(unsigned n);
void model_sleep_us(unsigned us);

/*
 * The clock (bpf_ktime_get_ns): one for all CPUs, that advances `tick_ns` at every read, so
 * that a run's time is the work done in it, not the host's: OWNER_REAP_GRACE_NS passes after
 * a known number of reads whatever the host's load, and a thread the model stalls lets the
 * others' time pass. model_clock_advance: time passing with no read (a written schedule).
 */
void model_clock_set(__u64 now, __u64 tick_ns);
void model_clock_advance(__u64 ns);

#endif /* INFLIGHT_MODEL_KERNEL_H */
