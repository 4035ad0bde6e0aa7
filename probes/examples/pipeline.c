// SPDX-License-Identifier: BSD-2-Clause
/*
 * The example pipeline (see pipeline.h) and its probes, in C that is also C++ (the test
 * matrix builds it with g++ and clang++ too). By default it implements the contract with
 * probes/inflight_probes.h, no generator step. Two other builds exist for the matrix
 * (tests/programs/):
 *   -DEXAMPLE_SDT     the reference prover's way: systemtap's `dtrace -h` header and
 *                     `dtrace -G` semaphores (probes/prover.d), names from inflight_note.h;
 *   -DEXAMPLE_NOSEMA  <sys/sdt.h> probes with no semaphore: not the contract (every argument
 *                     is computed on every call), for the tracer to refuse.
 * With either, -DEXAMPLE_NOTE_PROVIDER='"name"' makes the names note declare another
 * provider than the probes': a contradiction, for the tracer to refuse.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "pipeline.h"

#ifndef EXAMPLE_NOTE_PROVIDER
#define EXAMPLE_NOTE_PROVIDER "prover"
#endif

#if defined(EXAMPLE_SDT)
#include "prover_probes.h" /* dtrace -h -s probes/prover.d */
#include "inflight_note.h"
#define EX_ALLOC(b, c, n, o)                                                                   \
	do {                                                                                   \
		if (PROVER_BUF_ALLOC_ENABLED())                                                \
			PROVER_BUF_ALLOC(b, c, n, o);                                          \
	} while (0)
#define EX_FREE(b, c, n)                                                                       \
	do {                                                                                   \
		if (PROVER_BUF_FREE_ENABLED())                                                 \
			PROVER_BUF_FREE(b, c, n);                                              \
	} while (0)
#define EX_STAGE(o, s)                                                                         \
	do {                                                                                   \
		if (PROVER_STAGE_ENABLED())                                                    \
			PROVER_STAGE(o, s);                                                    \
	} while (0)
INFLIGHT_NAMES_NOTE(example_names, EXAMPLE_NOTE_PROVIDER, EXAMPLE_CLASSES, EXAMPLE_STAGES);
#elif defined(EXAMPLE_NOSEMA)
#include <sys/sdt.h>
#include "inflight_note.h"
#define EX_ALLOC(b, c, n, o) STAP_PROBE4(prover, buf_alloc, b, c, n, o)
#define EX_FREE(b, c, n) STAP_PROBE3(prover, buf_free, b, c, n)
#define EX_STAGE(o, s) STAP_PROBE2(prover, stage, o, s)
INFLIGHT_NAMES_NOTE(example_names, EXAMPLE_NOTE_PROVIDER, EXAMPLE_CLASSES, EXAMPLE_STAGES);
#else
#include "inflight_probes.h"
#define EX_ALLOC inflight_buf_alloc
#define EX_STAGE inflight_stage
#ifdef __cplusplus
/* an inline function of external linkage, kept out of line: its code (and so its probe
 * site) lands in a COMDAT group, which the note and the keep reference must join */
inline __attribute__((noinline)) void example_free_probe(uint64_t buf, uint32_t cls, uint64_t bytes)
{
	inflight_buf_free(buf, cls, bytes);
}
#define EX_FREE example_free_probe
#else
#define EX_FREE inflight_buf_free
#endif
INFLIGHT_CONTRACT(EXAMPLE_CLASSES, EXAMPLE_STAGES);
#endif

#define MAX_THREADS 64

struct item {
	uint64_t id;
	unsigned char *input, *scratch, *result;
};

struct run {
	const struct example_opts *o;
	pthread_barrier_t barrier;
	pthread_mutex_t lock;
	uint64_t checksum; /* sum of the items' checksums: the same whatever the order */
	int failed;
};

/*
 * Every buffer is born in buffer_new and dies in buffer_drop, and every stage change goes
 * through enter: one probe site each, however many callers. Each site is one uprobe, and a
 * tracer's attach and detach cost grows with their number (docs/programs.md). Built with
 * -DEXAMPLE_INLINE_SITES, they are inlined into every caller instead (12 sites).
 */
#if defined(EXAMPLE_INLINE_SITES)
#define EX_SITE static inline
#elif defined(__clang__)
#define EX_SITE static __attribute__((noinline))
#else
#define EX_SITE static __attribute__((noinline, noclone)) /* no constprop copies either */
#endif

EX_SITE unsigned char *buffer_new(enum example_class cls, size_t bytes, uint64_t owner)
{
	unsigned char *p = (unsigned char *)malloc(bytes);

	if (p)
		EX_ALLOC((uint64_t)(uintptr_t)p, cls, bytes, owner);
	return p;
}

EX_SITE void buffer_drop(unsigned char *p, enum example_class cls, size_t bytes)
{
	EX_FREE((uint64_t)(uintptr_t)p, cls, bytes);
	free(p);
}

EX_SITE void enter(uint64_t owner, enum example_stage stage)
{
	EX_STAGE(owner, stage);
}

void *example_table_alloc(void)
{
	unsigned char *t = buffer_new(EX_CLS_table, EXAMPLE_TABLE_BYTES, 0);

	if (t)
		memset(t, 0x5a, EXAMPLE_TABLE_BYTES);
	return t;
}

void example_table_free(void *t)
{
	buffer_drop((unsigned char *)t, EX_CLS_table, EXAMPLE_TABLE_BYTES);
}

/* FNV-1a over the result: the item's checksum */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int phase_a(struct item *it)
{
	enter(it->id, EX_STAGE_read);
	it->input = buffer_new(EX_CLS_input, EXAMPLE_INPUT_BYTES, it->id);
	if (!it->input)
		return -1;
	for (unsigned i = 0; i < EXAMPLE_INPUT_BYTES; i++)
		it->input[i] = (unsigned char)(it->id * 131 + i * 7);
	return 0;
}

static int phase_b(struct item *it)
{
	enter(it->id, EX_STAGE_compute);
	it->scratch = buffer_new(EX_CLS_scratch, EXAMPLE_SCRATCH_BYTES, it->id);
	it->result = buffer_new(EX_CLS_result, EXAMPLE_RESULT_BYTES, it->id);
	if (!it->scratch || !it->result)
		return -1;
	for (unsigned j = 0; j < EXAMPLE_SCRATCH_BYTES; j++)
		it->scratch[j] = it->input[j % EXAMPLE_INPUT_BYTES] ^ (unsigned char)(j >> 12);
	for (unsigned k = 0; k < EXAMPLE_RESULT_BYTES; k++) {
		unsigned char s = 0;

		for (unsigned j = 16 * k; j < 16 * k + 16; j++)
			s = (unsigned char)(s + it->scratch[j]);
		it->result[k] = s;
	}
	return 0;
}

static void phase_c(struct item *it)
{
	buffer_drop(it->scratch, EX_CLS_scratch, EXAMPLE_SCRATCH_BYTES);
	buffer_drop(it->input, EX_CLS_input, EXAMPLE_INPUT_BYTES);
	enter(it->id, EX_STAGE_write);
}

static uint64_t phase_d(struct item *it)
{
	uint64_t sum = fnv1a(it->result, EXAMPLE_RESULT_BYTES);

	buffer_drop(it->result, EX_CLS_result, EXAMPLE_RESULT_BYTES);
	enter(it->id, EX_STAGE_done);
	return sum;
}

struct worker {
	struct run *run;
	int slot; /* 0..T-1; slot 0 runs on the calling thread and does the hold */
	pthread_t thread;
};

static void sync_all(struct run *r)
{
	pthread_barrier_wait(&r->barrier);
}

/* Round k takes items k*T+1 .. k*T+T; a slot past N only keeps the barriers company. */
static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct run *r = w->run;
	const struct example_opts *o = r->o;
	long rounds = (o->items + o->threads - 1) / o->threads;
	uint64_t sum = 0;
	int failed = 0;

	for (long k = 0; k < rounds; k++) {
		struct item it;
		int mine;

		memset(&it, 0, sizeof(it));
		it.id = (uint64_t)(k * o->threads + w->slot + 1);
		mine = (long)it.id <= o->items && !failed;

		if (mine && phase_a(&it))
			failed = 1, mine = 0;
		sync_all(r);
		if (mine && phase_b(&it))
			failed = 1, mine = 0;
		sync_all(r);
		if (k == o->hold_round) {
			if (w->slot == 0 && o->hold)
				o->hold();
			sync_all(r);
		}
		if (mine)
			phase_c(&it);
		sync_all(r);
		if (mine)
			sum += phase_d(&it);
		sync_all(r);
	}
	pthread_mutex_lock(&r->lock);
	r->checksum += sum;
	r->failed |= failed;
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int example_items(const struct example_opts *o, uint64_t *checksum)
{
	struct worker w[MAX_THREADS];
	struct run r;
	int started = 1;

	if (o->threads < 1 || o->threads > MAX_THREADS || o->items < 0)
		return -1;
	memset(&r, 0, sizeof(r));
	r.o = o;
	pthread_barrier_init(&r.barrier, NULL, (unsigned)o->threads);
	pthread_mutex_init(&r.lock, NULL);
	for (int t = 0; t < o->threads; t++) {
		w[t].run = &r;
		w[t].slot = t;
	}
	for (; started < o->threads; started++)
		if (pthread_create(&w[started].thread, NULL, worker_main, &w[started]))
			abort(); /* the others would wait at a barrier for it forever */
	worker_main(&w[0]);
	for (int t = 1; t < started; t++)
		pthread_join(w[t].thread, NULL);
	pthread_barrier_destroy(&r.barrier);
	pthread_mutex_destroy(&r.lock);
	*checksum = r.checksum;
	return r.failed ? -1 : 0;
}
