// SPDX-License-Identifier: BSD-2-Clause
/* The test-only observer (see observer.h). Slow and simple: tables searched linearly. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "gpu_model.h"  /* the device hook's prototype */
#include "host_model.h" /* the host hook's prototype */
#include "observer.h"
#include "track.h" /* the hooks' prototypes */

#define MAX_OWNERS 4096
#define MAX_BUFS 8192
#define MAX_REGIONS 4096
#define OWNER_INDEX_MASK 0xffffu /* a partition's owner id has its index + 1 here */

struct owner_rec {
	uint64_t owner;
	int stage;
	unsigned abc, bufs;
};

struct buf_rec {
	const void *buf;
	enum prover_class cls;
	uint64_t bytes, owner;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct owner_rec owners[MAX_OWNERS];
static struct buf_rec bufs[MAX_BUFS];
static unsigned n_owners, n_bufs, holders, max_holders, violations;
static uint64_t allocs[CLS__COUNT];
static char first_violation[256];
static bool gate_closed;
static unsigned max_in[STAGE__COUNT];
static struct region { uint64_t owner, begin, deadline, locked, end, cpu; } regions[MAX_REGIONS];
static unsigned n_regions;
static struct observer_synthesis syntheses[MAX_REGIONS];
static unsigned n_syntheses;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void violation(const char *fmt, ...)
{
	va_list ap;

	if (!violations++) {
		va_start(ap, fmt);
		vsnprintf(first_violation, sizeof(first_violation), fmt, ap);
		va_end(ap);
	}
}

void observer_reset(void)
{
	pthread_mutex_lock(&lock);
	n_owners = n_bufs = holders = max_holders = violations = 0;
	memset(allocs, 0, sizeof(allocs));
	memset(max_in, 0, sizeof(max_in));
	n_regions = n_syntheses = 0;
	first_violation[0] = '\0';
	gate_closed = false;
	pthread_mutex_unlock(&lock);
}

static struct owner_rec *find_owner(uint64_t owner)
{
	for (unsigned i = 0; i < n_owners; i++)
		if (owners[i].owner == owner)
			return &owners[i];
	return NULL;
}

static bool is_partition(uint64_t owner)
{
	return owner & OWNER_INDEX_MASK;
}

/* the contract's story: each owner walks its kind's stages in this order */
static int next_stage(uint64_t owner, int stage)
{
	static const int partition_next[STAGE__COUNT] = {
		[STAGE_wait_permit] = STAGE_synth, [STAGE_synth] = STAGE_chan_send,
		[STAGE_chan_send] = STAGE_gpu_queue, [STAGE_gpu_queue] = STAGE_gpu,
		[STAGE_gpu] = STAGE_finalize, [STAGE_finalize] = STAGE_done,
	};
	static const int job_next[STAGE__COUNT] = {
		[STAGE_parse] = STAGE_assemble, [STAGE_assemble] = STAGE_done,
	};

	return is_partition(owner) ? partition_next[stage] : job_next[stage];
}

void observer_stage(uint64_t owner, enum prover_stage stage)
{
	struct owner_rec *o;

	pthread_mutex_lock(&lock);
	o = find_owner(owner);
	if (!o) {
		int entry = is_partition(owner) ? STAGE_wait_permit : STAGE_parse;

		if ((int)stage != entry)
			violation("owner %#llx began in stage %d", (unsigned long long)owner, stage);
		if (n_owners < MAX_OWNERS) {
			o = &owners[n_owners++];
			*o = (struct owner_rec){ .owner = owner, .stage = stage };
		}
	} else if (o->stage == STAGE_done) {
		violation("owner %#llx reused after done", (unsigned long long)owner);
	} else if (next_stage(owner, o->stage) != (int)stage) {
		violation("owner %#llx went from stage %d to %d", (unsigned long long)owner,
			  o->stage, stage);
	}
	if (o) {
		unsigned now_in = 0;

		o->stage = stage;
		for (unsigned i = 0; i < n_owners; i++)
			now_in += owners[i].stage == (int)stage;
		if (now_in > max_in[stage])
			max_in[stage] = now_in;
		if (stage == STAGE_done && o->bufs)
			violation("owner %#llx done holding %u buffers", (unsigned long long)owner,
				  o->bufs);
	}
	pthread_cond_broadcast(&changed);
	while (stage == STAGE_gpu && gate_closed)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

void observer_alloc(const void *buf, enum prover_class cls, uint64_t bytes, uint64_t owner)
{
	struct owner_rec *o;

	pthread_mutex_lock(&lock);
	allocs[cls]++;
	for (unsigned i = 0; i < n_bufs; i++)
		if (bufs[i].buf == buf)
			violation("buffer %p allocated twice", buf);
	if (n_bufs < MAX_BUFS)
		bufs[n_bufs++] = (struct buf_rec){ buf, cls, bytes, owner };
	o = owner ? find_owner(owner) : NULL;
	if (owner && (!o || o->stage == STAGE_done))
		violation("buffer for owner %#llx, which is not live", (unsigned long long)owner);
	if (o) {
		o->bufs++;
		if (cls == CLS_abc && o->abc++ == 0 && ++holders > max_holders)
			max_holders = holders;
	}
	pthread_mutex_unlock(&lock);
}

void observer_free(const void *buf, enum prover_class cls, uint64_t bytes)
{
	unsigned i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n_bufs && bufs[i].buf != buf; i++)
		;
	if (i == n_bufs) {
		violation("buffer %p freed but not live", buf);
	} else {
		struct owner_rec *o = bufs[i].owner ? find_owner(bufs[i].owner) : NULL;

		if (bufs[i].cls != cls || bufs[i].bytes != bytes)
			violation("buffer %p freed as class %d, %llu bytes", buf, cls,
				  (unsigned long long)bytes);
		if (o) {
			o->bufs--;
			if (cls == CLS_abc && --o->abc == 0)
				holders--;
		}
		bufs[i] = bufs[--n_bufs];
	}
	pthread_mutex_unlock(&lock);
}

void observer_device_region(uint64_t owner, uint64_t begin_ns, uint64_t deadline_ns,
			    uint64_t locked_ns, uint64_t end_ns, uint64_t thread_cpu_ns)
{
	struct owner_rec *o;

	pthread_mutex_lock(&lock);
	o = find_owner(owner);
	if (!o || o->stage != STAGE_gpu)
		violation("device region for owner %#llx, which is not in stage gpu",
			  (unsigned long long)owner);
	if (n_regions < MAX_REGIONS)
		regions[n_regions++] = (struct region){ owner, begin_ns, deadline_ns, locked_ns,
							end_ns, thread_cpu_ns };
	else
		violation("more than %d device regions", MAX_REGIONS);
	pthread_mutex_unlock(&lock);
}

void observer_host_synthesis(uint64_t owner, uint64_t begin_ns, uint64_t deadline_ns,
			     uint64_t worked_ns, uint64_t end_ns, uint64_t thread_cpu_ns)
{
	struct owner_rec *o;

	pthread_mutex_lock(&lock);
	o = find_owner(owner);
	if (!o || o->stage != STAGE_synth)
		violation("synthesis for owner %#llx, which is not in stage synth",
			  (unsigned long long)owner);
	if (n_syntheses < MAX_REGIONS)
		syntheses[n_syntheses++] = (struct observer_synthesis){
			owner, begin_ns, deadline_ns, worked_ns, end_ns, thread_cpu_ns
		};
	else
		violation("more than %d syntheses", MAX_REGIONS);
	pthread_mutex_unlock(&lock);
}

unsigned observer_host_syntheses(struct observer_synthesis *out, unsigned max)
{
	unsigned n;

	pthread_mutex_lock(&lock);
	n = n_syntheses < max ? n_syntheses : max;
	memcpy(out, syntheses, n * sizeof(*out));
	pthread_mutex_unlock(&lock);
	return n;
}

static int by_begin(const void *x, const void *y)
{
	const struct region *a = x, *b = y;

	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

void observer_device_regions(const struct gpu_model *m, struct observer_regions *out)
{
	pthread_mutex_lock(&lock);
	*out = (struct observer_regions){ .count = n_regions, .min_ns = UINT64_MAX };
	qsort(regions, n_regions, sizeof(regions[0]), by_begin);
	for (unsigned i = 0; i < n_regions; i++) {
		const struct region *r = &regions[i];

		if (r->end - r->locked < out->min_ns)
			out->min_ns = r->end - r->locked;
		if (r->cpu > out->max_cpu_ns)
			out->max_cpu_ns = r->cpu;
		out->early |= r->end < r->deadline;
		out->late_begin |= r->begin > r->locked;
		if (r->deadline > out->last_end)
			out->last_end = r->deadline;
		out->exact_kernel += m && r->deadline - r->begin == gpu_model_kernel_of(m, r->owner);
		if (!i)
			continue;
		out->overlap |= r->begin < regions[i - 1].deadline;
		out->real_overlap |= r->locked < regions[i - 1].end;
		out->back_to_back += r->begin == regions[i - 1].deadline;
	}
	if (!n_regions)
		out->min_ns = 0;
	pthread_mutex_unlock(&lock);
}

void observer_gate_close(void)
{
	pthread_mutex_lock(&lock);
	gate_closed = true;
	pthread_mutex_unlock(&lock);
}

void observer_gate_open(void)
{
	pthread_mutex_lock(&lock);
	gate_closed = false;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static unsigned count_in(enum prover_stage stage)
{
	unsigned n = 0;

	for (unsigned i = 0; i < n_owners; i++)
		n += owners[i].stage == (int)stage;
	return n;
}

bool observer_wait_stages(unsigned in_wait_permit, unsigned in_gpu, unsigned in_gpu_queue,
			  unsigned in_chan_send, unsigned timeout_s)
{
	struct timespec deadline;
	bool reached;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_s;
	pthread_mutex_lock(&lock);
	while (!(reached = count_in(STAGE_wait_permit) == in_wait_permit &&
			   count_in(STAGE_gpu) == in_gpu && count_in(STAGE_gpu_queue) == in_gpu_queue &&
			   count_in(STAGE_chan_send) == in_chan_send))
		if (pthread_cond_timedwait(&changed, &lock, &deadline))
			break;
	pthread_mutex_unlock(&lock);
	return reached;
}

#define LOCKED(expr)                                                                           \
	({                                                                                     \
		pthread_mutex_lock(&lock);                                                     \
		__typeof__(expr) v_ = (expr);                                                  \
		pthread_mutex_unlock(&lock);                                                   \
		v_;                                                                            \
	})

unsigned observer_owners_in(enum prover_stage stage)
{
	return LOCKED(count_in(stage));
}

unsigned observer_abc_holders(void)
{
	return LOCKED(holders);
}

unsigned observer_max_abc_holders(void)
{
	return LOCKED(max_holders);
}

unsigned observer_max_in(enum prover_stage stage)
{
	return LOCKED(max_in[stage]);
}

unsigned observer_live_buffers(void)
{
	return LOCKED(n_bufs);
}

uint64_t observer_allocs(enum prover_class cls)
{
	return LOCKED(allocs[cls]);
}

unsigned observer_violations(const char **first)
{
	*first = first_violation;
	return LOCKED(violations);
}
