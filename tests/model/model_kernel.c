// SPDX-License-Identifier: BSD-2-Clause
/*
 * The model's kernel (model_kernel.h): the helpers bpf/'s headers call, in user space.
 */
#include <sched.h>
#include <string.h>
#include <time.h>
#include "model_kernel.h"
#include "bpf/bpf_helpers.h"

static struct model_sched sched_now;
static __thread __u64 self_pid_tgid;
static __thread __u64 rng = 0x9e3779b97f4a7c15ull;
static __thread unsigned hook_in;
static __thread void (*hook_fn)(void);
static __thread __u64 slept_ns; /* the preemption this thread was given (model_sleep_us) */

void model_sched_set(const struct model_sched *s)
{
	sched_now = *s;
}

void model_hook_at(unsigned at, void (*fn)(void))
{
	hook_in = at;
	hook_fn = fn;
}

void model_thread_init(__u32 pid, __u32 tid)
{
	self_pid_tgid = (__u64)pid << 32 | tid;
	rng = 0x9e3779b97f4a7c15ull * (tid + 1) ^ (__u64)time(NULL);
}

unsigned model_rand(unsigned n)
{
	/* xorshift64: each thread its own sequence, no shared state to serialize them */
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned)(rng % n) : 0;
}

void model_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
	slept_ns += (__u64)us * 1000;
}

void model_point(void)
{
	const struct model_sched *s = &sched_now;

	if (hook_in && --hook_in == 0) {
		void (*fn)(void) = hook_fn;

		hook_fn = NULL;
		fn();
	}
	if (s->yield_in && model_rand(s->yield_in) == 0)
		sched_yield();
	if (s->spin_in && model_rand(s->spin_in) == 0) {
		for (volatile unsigned i = model_rand(4000); i; i--)
			;
	}
	if (s->sleep_in && s->sleep_us && model_rand(s->sleep_in) == 0)
		model_sleep_us(1 + model_rand(s->sleep_us));
}

void *bpf_map_lookup_elem(void *map, const void *key)
{
	struct model_map *m = map;
	__u32 k = *(const __u32 *)key;
	void *v = NULL;

	model_point();
	if (m->kind == MODEL_ARRAY)
		return k < m->max_entries ? (char *)m->values + (size_t)k * m->value_size : NULL;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MODEL_HASH_SLOTS; i++)
		if (m->slots[i].used && m->slots[i].key == k)
			v = &m->slots[i].value;
	pthread_mutex_unlock(&m->mu);
	return v;
}

long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags)
{
	struct model_map *m = map;
	__u32 k = *(const __u32 *)key;
	int found = -1, free_slot = -1;
	long rc = 0;

	model_point();
	if (m->kind == MODEL_ARRAY) {
		if (k >= m->max_entries)
			return -7; /* E2BIG */
		memcpy((char *)m->values + (size_t)k * m->value_size, value, m->value_size);
		return 0;
	}
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MODEL_HASH_SLOTS; i++) {
		if (m->slots[i].used && m->slots[i].key == k)
			found = i;
		else if (!m->slots[i].used && free_slot < 0)
			free_slot = i;
	}
	if (found >= 0 && flags == BPF_NOEXIST)
		rc = -17; /* EEXIST */
	else if (found < 0 && flags == BPF_EXIST)
		rc = -2; /* ENOENT */
	else if (found < 0 && free_slot < 0)
		rc = -7;
	else {
		int i = found >= 0 ? found : free_slot;

		m->slots[i].key = k;
		m->slots[i].value = *(const __u32 *)value;
		m->slots[i].used = 1;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

long bpf_map_delete_elem(void *map, const void *key)
{
	struct model_map *m = map;
	__u32 k = *(const __u32 *)key;
	long rc = -2;

	model_point();
	if (m->kind == MODEL_ARRAY)
		return -22; /* EINVAL, as the kernel says */
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MODEL_HASH_SLOTS; i++)
		if (m->slots[i].used && m->slots[i].key == k) {
			m->slots[i].used = 0;
			rc = 0;
		}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

long bpf_loop(__u32 nr_loops, long (*callback)(__u32 i, void *ctx), void *ctx, __u64 flags)
{
	(void)flags;
	for (__u32 i = 0; i < nr_loops; i++)
		if (callback(i, ctx))
			return i + 1;
	return nr_loops;
}

/*
 * Each model thread stands for a CPU, and its clock is that CPU's: the time the thread ran,
 * plus the preemption the model gave it (model_sleep_us). Not the host's wall clock: a
 * host that deschedules the model's threads (a loaded machine, two cores shared by a test
 * suite) is not a schedule of the modelled kernel, and on the wall clock it made waiters
 * give up behind a holder the host, not the model, had stopped. A holder the model stops
 * still costs its waiters their wait: they spin meanwhile, and their clocks run.
 */
__u64 bpf_ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec + slept_ns;
}

__u64 bpf_get_current_pid_tgid(void)
{
	return self_pid_tgid;
}
