// SPDX-License-Identifier: BSD-2-Clause
/*
 * The model's kernel (model_kernel.h): the helpers bpf/'s headers call, in user space.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model_kernel.h"
#include "bpf/bpf_helpers.h"

static struct model_sched sched_all;
static __thread const struct model_sched *sched_own;
static __thread __u64 self_pid_tgid;
static __thread unsigned self_cpu;
static __thread bool looked_up; /* the last access was a hash map's lookup */
static __thread __u64 rng = 0x9e3779b97f4a7c15ull;
static __thread struct {
	const void *addr;
	unsigned kinds, nth;
	void (*fn)(void *);
	void *arg;
} watch;
static __thread struct {
	const void *addr;
	unsigned kinds;
	__u64 n;
} tally;

void model_sched_set(const struct model_sched *s)
{
	sched_all = *s;
}

void model_sched_thread(const struct model_sched *s)
{
	sched_own = s;
}

void model_watch(const void *addr, unsigned kinds, unsigned nth, void (*fn)(void *), void *arg)
{
	watch.addr = addr;
	watch.kinds = kinds;
	watch.nth = nth;
	watch.arg = arg;
	watch.fn = nth ? fn : NULL;
}

void model_tally(const void *addr, unsigned kinds)
{
	tally.addr = addr;
	tally.kinds = kinds;
	tally.n = 0;
}

__u64 model_tallied(void)
{
	return tally.n;
}

void model_thread_init(__u32 pid, __u32 tid, unsigned seed)
{
	self_pid_tgid = (__u64)pid << 32 | tid;
	rng = 0x9e3779b97f4a7c15ull * (tid + 1) ^ ((__u64)seed << 32 | seed);
	if (!rng)
		rng = 1;
}

void model_thread_cpu(unsigned cpu)
{
	self_cpu = cpu < MODEL_MAX_CPUS ? cpu : MODEL_MAX_CPUS - 1;
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
}

/* the tally and the written schedule's watch at an access (no preemption: see model_at) */
static void watch_point(const void *addr, unsigned kind)
{
	bool any = !watch.addr && !watch.kinds; /* a watch of every point */

	if (addr && addr == tally.addr && (kind & tally.kinds))
		tally.n++;
	if (watch.fn && (any || (addr == watch.addr && (kind & watch.kinds))) && --watch.nth == 0) {
		void (*fn)(void *) = watch.fn;

		watch.fn = NULL;
		fn(watch.arg);
	}
}

void model_at(const void *addr, unsigned kind)
{
	const struct model_sched *s = sched_own ? sched_own : &sched_all;

	watch_point(addr, kind);
	if (s->yield_in && model_rand(s->yield_in) == 0)
		sched_yield();
	if (s->spin_in && model_rand(s->spin_in) == 0) {
		for (volatile unsigned i = model_rand(4000); i; i--)
			;
	}
	if (s->sleep_in && s->sleep_us && model_rand(s->sleep_in) == 0)
		model_sleep_us(1 + model_rand(s->sleep_us));
	if (looked_up) {
		looked_up = false;
		if (s->lookup_sleep_in && s->lookup_us && model_rand(s->lookup_sleep_in) == 0)
			model_sleep_us(1 + model_rand(s->lookup_us));
	}
}

/* --- maps ---------------------------------------------------------------------------------- */

static _Noreturn void no_memory(void)
{
	abort();
}

void model_map_init(struct model_map *m, enum model_map_kind kind, size_t key_size,
		    size_t value_size, __u32 max_entries)
{
	size_t n = kind == MODEL_PERCPU_ARRAY ? (size_t)max_entries * MODEL_MAX_CPUS : max_entries;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->key_size = key_size;
	m->value_size = value_size;
	m->stride = (value_size + 7) & ~(size_t)7;
	m->max_entries = max_entries;
	pthread_mutex_init(&m->mu, NULL);
	m->values = calloc(n, m->stride);
	if (!m->values)
		no_memory();
	if (kind != MODEL_HASH)
		return;
	m->nbuckets = 1;
	while (m->nbuckets < max_entries)
		m->nbuckets <<= 1;
	m->keys = calloc(max_entries, key_size);
	m->last_key = calloc(max_entries, key_size);
	m->ever_used = calloc(max_entries, sizeof(*m->ever_used));
	m->next = calloc(max_entries, sizeof(*m->next));
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->keys || !m->last_key || !m->ever_used || !m->next || !m->buckets)
		no_memory();
	model_map_clear(m);
}

void model_map_free(struct model_map *m)
{
	free(m->values);
	free(m->keys);
	free(m->last_key);
	free(m->ever_used);
	free(m->next);
	free(m->buckets);
	pthread_mutex_destroy(&m->mu);
	memset(m, 0, sizeof(*m));
}

void model_map_clear(struct model_map *m)
{
	size_t n = m->kind == MODEL_PERCPU_ARRAY ? (size_t)m->max_entries * MODEL_MAX_CPUS :
						   m->max_entries;

	memset(m->values, 0, n * m->stride);
	m->inserts = m->deletes = m->reused = m->reused_other_key = m->full = 0;
	if (m->kind != MODEL_HASH)
		return;
	for (__u32 b = 0; b < m->nbuckets; b++)
		m->buckets[b] = -1;
	for (__u32 i = 0; i < m->max_entries; i++)
		m->next[i] = i + 1 < m->max_entries ? (int)i + 1 : -1;
	memset(m->ever_used, 0, m->max_entries * sizeof(*m->ever_used));
	m->free_top = m->max_entries ? 0 : -1;
	m->used = 0;
}

static __u32 key_hash(const struct model_map *m, const void *key)
{
	const unsigned char *k = key;
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < m->key_size; i++)
		h = (h ^ k[i]) * 0x100000001b3ull;
	return (__u32)(h ^ h >> 32) & (m->nbuckets - 1);
}

static char *key_of(const struct model_map *m, int e)
{
	return m->keys + (size_t)e * m->key_size;
}

static char *value_of(const struct model_map *m, int e)
{
	return m->values + (size_t)e * m->stride;
}

/* the element holding `key` and the link that leads to it; under m->mu */
static int find(struct model_map *m, const void *key, int **link)
{
	int *l = &m->buckets[key_hash(m, key)];

	for (; *l >= 0; l = &m->next[*l])
		if (!memcmp(key_of(m, *l), key, m->key_size))
			break;
	if (link)
		*link = l;
	return *l;
}

bool model_map_element(struct model_map *m, __u32 i, void **key, void **value)
{
	bool in_use = false;

	if (m->kind != MODEL_HASH || i >= m->max_entries)
		return false;
	pthread_mutex_lock(&m->mu);
	if (find(m, key_of(m, (int)i), NULL) == (int)i) {
		*key = key_of(m, (int)i);
		*value = value_of(m, (int)i);
		in_use = true;
	}
	pthread_mutex_unlock(&m->mu);
	return in_use;
}

void *bpf_map_lookup_elem(void *map, const void *key)
{
	struct model_map *m = map;
	void *v = NULL;
	int e;

	model_at(map, MA_LOOKUP);
	if (m->kind == MODEL_PERCPU_ARRAY) {
		__u32 k = *(const __u32 *)key;

		if (k >= m->max_entries)
			return NULL;
		return value_of(m, (int)((size_t)self_cpu * m->max_entries + k));
	}
	pthread_mutex_lock(&m->mu);
	e = find(m, key, NULL);
	if (e >= 0)
		v = value_of(m, e);
	pthread_mutex_unlock(&m->mu);
	looked_up = true;
	return v;
}

/* A value copied over an element that readers holding a pointer to it may be looking at: the
 * kernel's copy promises no order, so here the last word goes first (a reader may see a new
 * state beside an old key), one word at a time, each a point a written schedule may stop at.
 * Never preempted otherwise: the kernel copies under a bucket lock with interrupts off. */
static void copy_value(char *dst, const char *src, size_t size)
{
	size_t words = size / 8;

	memcpy(dst + words * 8, src + words * 8, size % 8);
	for (size_t i = words; i-- > 0;) {
		__u64 w;

		memcpy(&w, src + i * 8, sizeof(w));
		watch_point(dst + i * 8, MA_WRITE);
		__atomic_store_n((__u64 *)(void *)(dst + i * 8), w, __ATOMIC_RELAXED);
	}
}

/* an element off the free list, key and value copied over whatever it held; under m->mu */
static int take_element(struct model_map *m, const void *key, const void *value)
{
	int e = m->free_top;

	if (e < 0)
		return -1;
	m->free_top = m->next[e];
	if (m->ever_used[e]) {
		m->reused++;
		if (memcmp(m->last_key + (size_t)e * m->key_size, key, m->key_size))
			m->reused_other_key++;
	}
	m->ever_used[e] = true;
	memcpy(key_of(m, e), key, m->key_size);
	memcpy(m->last_key + (size_t)e * m->key_size, key, m->key_size);
	copy_value(value_of(m, e), value, m->value_size);
	m->used++;
	m->inserts++;
	return e;
}

static void put_element(struct model_map *m, int e)
{
	m->next[e] = m->free_top;
	m->free_top = e;
	m->used--;
	m->deletes++;
}

long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags)
{
	struct model_map *m = map;
	int *link, old, e;
	long rc = 0;

	model_at(map, MA_UPDATE);
	if (m->kind == MODEL_PERCPU_ARRAY) {
		__u32 k = *(const __u32 *)key;

		if (k >= m->max_entries)
			return -7; /* E2BIG */
		memcpy(value_of(m, (int)((size_t)self_cpu * m->max_entries + k)), value,
		       m->value_size);
		return 0;
	}
	pthread_mutex_lock(&m->mu);
	old = find(m, key, &link);
	if (old >= 0 && flags == BPF_NOEXIST) {
		rc = -17; /* EEXIST */
	} else if (old < 0 && flags == BPF_EXIST) {
		rc = -2; /* ENOENT */
	} else if ((e = take_element(m, key, value)) < 0) {
		if (old >= 0) { /* the kernel's spare element for a replace: in place here */
			memcpy(value_of(m, old), value, m->value_size);
		} else {
			rc = -7; /* E2BIG */
			m->full++;
		}
	} else if (old >= 0) {
		/* a replace: the new element in the old one's place, the old one freed */
		m->next[e] = m->next[old];
		*link = e;
		put_element(m, old);
	} else {
		m->next[e] = -1;
		*link = e;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

long bpf_map_delete_elem(void *map, const void *key)
{
	struct model_map *m = map;
	int *link, e;

	model_at(map, MA_DELETE);
	if (m->kind == MODEL_PERCPU_ARRAY)
		return -22; /* EINVAL, as the kernel says */
	pthread_mutex_lock(&m->mu);
	e = find(m, key, &link);
	if (e >= 0) {
		*link = m->next[e];
		put_element(m, e);
	}
	pthread_mutex_unlock(&m->mu);
	return e >= 0 ? 0 : -2;
}

/* --- the clock and the current thread ------------------------------------------------------- */

static __u64 clock_now, clock_tick;

void model_clock_set(__u64 now, __u64 tick_ns)
{
	__atomic_store_n(&clock_now, now, __ATOMIC_SEQ_CST);
	__atomic_store_n(&clock_tick, tick_ns, __ATOMIC_SEQ_CST);
}

void model_clock_advance(__u64 ns)
{
	__atomic_fetch_add(&clock_now, ns, __ATOMIC_SEQ_CST);
}

__u64 bpf_ktime_get_ns(void)
{
	__u64 tick = __atomic_load_n(&clock_tick, __ATOMIC_RELAXED);

	return __atomic_add_fetch(&clock_now, tick, __ATOMIC_SEQ_CST);
}

long bpf_loop(__u32 n, void *fn, void *ctx, __u64 flags)
{
	long (*cb)(__u32, void *) = (long (*)(__u32, void *))fn;
	__u32 i;

	if (flags)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (cb(i, ctx))
			return i + 1;
	return n;
}

__u64 bpf_get_current_pid_tgid(void)
{
	return self_pid_tgid;
}
