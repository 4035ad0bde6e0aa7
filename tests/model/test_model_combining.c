// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel side's way past the lock (bpf/combining.bpf.h, with deferred.bpf.h's ring and
 * proc_lock.bpf.h's lock word), compiled for user space and run by real threads that are
 * preempted at every shared access (model_kernel.c: a yield, a spin, a sleep as long as a
 * descheduled vCPU's), against what the protocol promises:
 *
 * - every hit is applied exactly once, under the lock, by one thread at a time, inside a
 *   seqlock section; or it is given up and counted (lock_timeouts), never both, never
 *   neither;
 * - the accounting order keeps each thread's own order, and every real-time order: a hit
 *   that returned before another began is applied before it;
 * - nothing is left queued once the threads are done (every push is followed by a try at
 *   the lock, every release by a look at the queue);
 * - with the queue's real size and the kernel's real wait, nothing is given up, even when
 *   holders stall for milliseconds (on one of three runs: the host's own scheduler may keep
 *   a holder off longer than the model does, see run_scenario); a reader of the seqlock
 *   never accepts a torn copy;
 * - processes whose images end and start again share a pool of queue segments, smaller
 *   than what they would need all at once, or large enough for them all: no image ever
 *   applies a slot an earlier owner of a segment left, every segment goes back to the pool,
 *   and only a pool too small makes hits wait for the lock.
 *
 * The program side is what inflight.bpf.c's is for LK_CAS (hit_account, queue_op,
 * queue_op_waiting), with the sections reduced to what the protocol must keep: a log of
 * which hit was applied when, and two words a reader checks against each other.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "model_kernel.h"

#if defined(__x86_64__)
#define __TARGET_ARCH_x86 1 /* user space on x86-64 has the kernel's memory order (TSO) */
#endif
#include "combining.bpf.h"

#define MODEL_PID 4242
#define MAX_THREADS 8
#define MAX_PROCS 3

/* --- the program side, as inflight.bpf.c's --- */

struct scenario;

/* One process image: its record, and what its sections logged. */
struct image {
	struct infl_proc proc;
	__u32 pid;
	const struct scenario *s;
	atomic_int inside;	/* threads in an apply: never more than one */
	__u64 not_exclusive;	/* applies that found another inside, or the lock free */
	__u64 outside_section;	/* applies outside a seqlock section */
	__u64 foreign;		/* applies of another image's hit (a stale slot) */
	__u64 n;		/* applied so far, the log's length */
	__u64 *log;		/* tid << 32 | seq, in accounting order */
	__u64 word_a, word_b;	/* equal outside a section */
	__u64 *started, *returned; /* the real-time order, [tid * hits + seq] */
	unsigned char *given_up;
	atomic_int running;
	__u64 copies, torn_accepted;
};

static struct image images[MAX_PROCS];
/* the pool of queue segments: each scenario its own size, at most two processes' worth (the
 * default: more than one process needs, as the kernel's pool is) */
static struct infl_deferred segs[2 * INFL_DEFER_SEGS];
static struct model_map pool = MODEL_ARRAY_OF(segs);
static __u64 pool_next;
static struct defer_pool dpool = { .pool = &pool, .next = &pool_next };
static bool defer_every_hit;
static unsigned stale_in; /* one locked section in stale_in finds its records stale */
static __u64 wait_ns, deferred_full, deferred_ops;

struct scenario {
	const char *name;
	unsigned procs, images, threads, hits; /* procs at once, images each, one after another */
	struct model_sched sched;
	unsigned stall_in, stall_us; /* holders stalled in sections */
	bool one_cpu, defer_all;
	unsigned stale_in;
	unsigned pool_segs; /* 0: all of segs */
	bool pool_waits;    /* the pool is too small: hits wait for the lock */
	__u64 wait_ns;
	enum { NONE_GIVEN_UP, SOME_GIVEN_UP, COUNTED_GIVEN_UP } given_up;
};

static struct image *image_of(struct infl_proc *p)
{
	return (struct image *)((char *)p - offsetof(struct image, proc));
}

static void account(struct infl_proc *p, const struct infl_op *op)
{
	struct image *im = image_of(p);

	if (atomic_fetch_add(&im->inside, 1) != 0 || READ_ONCE(p->lock) != 1)
		im->not_exclusive++;
	if (p->write_begin == p->write_end)
		im->outside_section++;
	if (op->owner != p->gen)
		im->foreign++;
	else if (im->log)
		im->log[im->n++] = (__u64)op->tid << 32 | op->arg;
	im->word_a++;
	model_point();
	if (im->s && im->s->stall_in && model_rand(im->s->stall_in) == 0)
		model_sleep_us(im->s->stall_us); /* the holder off its CPU, the lock held */
	im->word_b++;
	atomic_fetch_sub(&im->inside, 1);
}

int apply_queued(struct infl_proc *p, struct infl_op *op)
{
	if (p && op)
		account(p, op);
	return 0;
}

int queue_op(struct infl_proc *p, const struct infl_op *op)
{
	if (!p || !op)
		return 0;
	return deferred_enqueue(&dpool, p, op, &deferred_ops);
}

int queue_op_waiting(struct infl_proc *p, const struct infl_op *op, int why)
{
	if (!p || !op)
		return 0;
	deferred_count_wait(p, why);
	__sync_fetch_and_add(&deferred_full, 1);
	return queue_wait(p, op, wait_ns);
}

/* inflight.bpf.c's hit_account, LK_CAS */
static enum lock_outcome hit(struct image *im, struct infl_op *op)
{
	struct infl_proc *p = &im->proc;
	enum lock_outcome r = lock_or_defer_cas(p, im->pid, op, defer_every_hit, wait_ns, &pool,
						&deferred_full);

	if (r == LOCKED) {
		if (stale_in && model_rand(stale_in) == 0) {
			r = requeue_cas(p, im->pid, op);
		} else {
			account(p, op);
			proc_unlock(NULL, p, im->pid, LK_CAS);
		}
	}
	if (r == GAVE_UP)
		return r;
	combine_queued(p, im->pid, &pool);
	return r;
}

/* --- the scenarios --- */

static atomic_ullong clock_now; /* the real-time order: one tick per start and per return */
static atomic_ullong gens;	/* each image its own gen */

struct firing {
	struct image *im;
	unsigned tid;
};

static void *firing(void *arg)
{
	const struct firing *f = arg;
	struct image *im = f->im;
	const struct scenario *s = im->s;

	model_thread_init(im->pid, f->tid + 1);
	if (s->one_cpu) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(0, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	for (unsigned seq = 0; seq < s->hits; seq++) {
		struct infl_op op = { .arg = seq, .tid = f->tid, .owner = im->proc.gen,
				      .probe = INFL_PROBE_FREE };
		size_t i = (size_t)f->tid * s->hits + seq;

		im->started[i] = atomic_fetch_add(&clock_now, 1);
		im->given_up[i] = hit(im, &op) == GAVE_UP;
		im->returned[i] = atomic_fetch_add(&clock_now, 1);
	}
	atomic_fetch_sub(&im->running, 1);
	return NULL;
}

/* a snapshot reader, as the loader copies a record: accepted when write_end, read first,
 * equals write_begin, read last */
static void *reading(void *arg)
{
	struct image *im = arg;

	while (atomic_load(&im->running) > 0) {
		__u64 end = __atomic_load_n(&im->proc.write_end, __ATOMIC_ACQUIRE);
		__u64 a = __atomic_load_n(&im->word_a, __ATOMIC_ACQUIRE);
		__u64 b = __atomic_load_n(&im->word_b, __ATOMIC_ACQUIRE);
		__u64 begin = __atomic_load_n(&im->proc.write_begin, __ATOMIC_ACQUIRE);

		if (end == begin) {
			im->copies++;
			im->torn_accepted += a != b;
		}
		sched_yield();
	}
	return NULL;
}

/* what the checks count, summed over a scenario's images */
struct outcome {
	__u64 fired, applied, gave_up, counted_gave_up, not_exclusive, outside_section,
		unended, lock_held, foreign, twice, lost, own_order, real_order, copies,
		torn_accepted, slot_waits, pool_waits, segs_held;
};

static _Noreturn void out_of_memory(void)
{
	CHECK(0, "memory for the model's run");
	exit(1);
}

/* One image of process `im->pid`: its threads fire s->hits each; then it ends. */
static void image_run(struct image *im, const struct scenario *s, struct outcome *o)
{
	size_t total = (size_t)s->threads * s->hits;
	pthread_t th[MAX_THREADS], reader;
	struct firing f[MAX_THREADS];
	unsigned char *seen = calloc(total, 1);
	__u64 *next = calloc(s->threads, sizeof(*next));
	__u64 *min_ret_after = calloc(total + 1, sizeof(*min_ret_after));
	__u32 pid = im->pid;
	__u64 gen = atomic_fetch_add(&gens, 1) + 1;

	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->s = s;
	im->proc.gen = gen;
	im->log = calloc(total, sizeof(*im->log));
	im->started = calloc(total, sizeof(*im->started));
	im->returned = calloc(total, sizeof(*im->returned));
	im->given_up = calloc(total, 1);
	if (!seen || !next || !min_ret_after || !im->log || !im->started || !im->returned ||
	    !im->given_up)
		out_of_memory();
	atomic_store(&im->running, (int)s->threads);
	pthread_create(&reader, NULL, reading, im);
	for (unsigned t = 0; t < s->threads; t++) {
		f[t] = (struct firing){ .im = im, .tid = t };
		pthread_create(&th[t], NULL, firing, &f[t]);
	}
	for (unsigned t = 0; t < s->threads; t++)
		pthread_join(th[t], NULL);
	pthread_join(reader, NULL);

	/* the image ends: what its queue still holds would be counted as lost */
	o->lost += im->proc.defer_tail - im->proc.defer_head;
	deferred_release(&pool, &im->proc);

	o->fired += total;
	o->not_exclusive += im->not_exclusive;
	o->outside_section += im->outside_section;
	o->unended += im->proc.write_begin != im->proc.write_end;
	o->lock_held += im->proc.lock != 0;
	o->foreign += im->foreign;
	o->counted_gave_up += im->proc.lock_timeouts;
	o->slot_waits += im->proc.slot_waits;
	o->pool_waits += im->proc.pool_waits;
	o->copies += im->copies;
	o->torn_accepted += im->torn_accepted;
	for (size_t i = 0; i < im->n; i++) {
		__u64 tid = im->log[i] >> 32, seq = (__u32)im->log[i];
		size_t k = tid * s->hits + seq;

		if (tid >= s->threads || seq >= s->hits || seen[k]) {
			o->twice++;
			continue;
		}
		seen[k] = 1;
		o->applied++;
		o->own_order += seq < next[tid]; /* gaps: hits given up, checked below */
		next[tid] = seq + 1;
	}
	for (size_t k = 0; k < total; k++) {
		o->gave_up += im->given_up[k];
		/* given up and applied, or neither */
		o->twice += im->given_up[k] && seen[k];
		o->lost += !im->given_up[k] && !seen[k];
	}
	/* real time: no hit applied after one that began after it returned */
	min_ret_after[im->n] = ~0ull;
	for (size_t i = im->n; i-- > 0;) {
		__u64 tid = im->log[i] >> 32, seq = (__u32)im->log[i];
		__u64 r = tid < s->threads && seq < s->hits ? im->returned[tid * s->hits + seq] : 0;

		min_ret_after[i] = r < min_ret_after[i + 1] ? r : min_ret_after[i + 1];
	}
	for (size_t i = 0; i + 1 < im->n; i++) {
		__u64 tid = im->log[i] >> 32, seq = (__u32)im->log[i];

		if (tid < s->threads && seq < s->hits &&
		    min_ret_after[i + 1] < im->started[tid * s->hits + seq])
			o->real_order++;
	}
	free(seen);
	free(next);
	free(min_ret_after);
	free(im->log);
	free(im->started);
	free(im->returned);
	free(im->given_up);
	im->log = NULL;
}

struct process_run {
	struct image *im;
	const struct scenario *s;
	struct outcome o;
};

/* one process: its images one after another, each with threads of its own */
static void *process_images(void *arg)
{
	struct process_run *r = arg;

	for (unsigned i = 0; i < r->s->images; i++)
		image_run(r->im, r->s, &r->o);
	return NULL;
}

/* One run of scenario s, checked: true when nothing was given up (for NONE_GIVEN_UP,
 * run_scenario checks that). */
static bool run(const struct scenario *s)
{
	struct process_run runs[MAX_PROCS] = {};
	pthread_t th[MAX_PROCS];
	struct outcome o = {};
	const char *n = s->name;

	defer_every_hit = s->defer_all;
	stale_in = s->stale_in;
	wait_ns = s->wait_ns;
	deferred_full = deferred_ops = 0;
	dpool.segs = s->pool_segs ? s->pool_segs : sizeof(segs) / sizeof(segs[0]);
	model_sched_set(&s->sched);
	for (unsigned i = 0; i < s->procs; i++) {
		images[i].pid = MODEL_PID + i;
		runs[i] = (struct process_run){ .im = &images[i], .s = s };
		pthread_create(&th[i], NULL, process_images, &runs[i]);
	}
	for (unsigned i = 0; i < s->procs; i++) {
		pthread_join(th[i], NULL);
		for (size_t k = 0; k < sizeof(o) / sizeof(__u64); k++)
			((__u64 *)&o)[k] += ((__u64 *)&runs[i].o)[k];
	}
	model_sched_set(&(struct model_sched){ 0 });
	for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); i++)
		o.segs_held += segs[i].owner != 0;

	CHECK_EQ_U64(o.not_exclusive, 0, "%s: every apply alone, under the lock", n);
	CHECK_EQ_U64(o.outside_section, 0, "%s: every apply inside a seqlock section", n);
	CHECK_EQ_U64(o.unended, 0, "%s: every section ended", n);
	CHECK_EQ_U64(o.lock_held, 0, "%s: the lock free at the end", n);
	CHECK_EQ_U64(o.foreign, 0, "%s: no image applied another's hit (a stale slot)", n);
	CHECK_EQ_U64(o.twice, 0, "%s: no hit applied twice, or applied and given up", n);
	CHECK_EQ_U64(o.lost, 0, "%s: no hit left queued or lost", n);
	CHECK_EQ_U64(o.applied + o.gave_up, o.fired, "%s: applied + given up = fired", n);
	CHECK_EQ_U64(o.counted_gave_up, o.gave_up, "%s: every hit given up counted", n);
	CHECK_EQ_U64(o.own_order, 0, "%s: each thread's own order kept", n);
	CHECK_EQ_U64(o.real_order, 0, "%s: a hit that returned before another began came first",
		     n);
	CHECK_EQ_U64(o.torn_accepted, 0, "%s: no torn copy accepted by a reader (%llu copies)", n,
		     (unsigned long long)o.copies);
	CHECK(deferred_ops > 0, "%s: hits went through the queue (%llu of %llu)", n,
	      (unsigned long long)deferred_ops, (unsigned long long)o.fired);
	/* every wait is in its process's record, by its reason (INFL_ANOMALIES) */
	CHECK_EQ_U64(o.slot_waits + o.pool_waits, deferred_full,
		     "%s: every wait counted in its process's record (%llu for room, %llu for the "
		     "lock)", n, (unsigned long long)o.slot_waits,
		     (unsigned long long)o.pool_waits);
	CHECK_EQ_U64(o.segs_held, 0, "%s: every segment back in the pool at the end", n);
	if (!s->pool_waits)
		CHECK_EQ_U64(o.pool_waits, 0, "%s: the pool always had a segment", n);
	else
		CHECK(o.pool_waits > 0, "%s: processes found the pool taken and waited (%llu), counted",
		      n, (unsigned long long)o.pool_waits);
	if (s->given_up == SOME_GIVEN_UP)
		CHECK(o.slot_waits > 0, "%s: hits waited for room (%llu), counted", n,
		      (unsigned long long)o.slot_waits);
	if (s->given_up == SOME_GIVEN_UP)
		CHECK(o.gave_up > 0 && deferred_full > 0,
		      "%s: the queue filled and hits were given up (%llu), counted", n,
		      (unsigned long long)o.gave_up);
	printf("# %s: %llu given up (counted), %llu waits for a slot or the lock\n", n,
	       (unsigned long long)o.gave_up, (unsigned long long)deferred_full);
	return o.gave_up == 0;
}

/*
 * A scenario whose hits must all be applied: the correctness checks hold on every run, and
 * nothing given up on one of RUNS_FOR_NONE_GIVEN_UP. That claim is conditional: a waiter gives
 * up when its holder stays off its CPU longer than the wait (the protocol's bound, the
 * 50 ms scenario), and the model's schedule bounds how long it keeps one there, the host's
 * does not (a test suite sharing two cores has held one thread off for tens of
 * milliseconds). A run the host spoiled is said, and run again; every run spoiled fails.
 */
#define RUNS_FOR_NONE_GIVEN_UP 3
static void run_scenario(const struct scenario *s)
{
	unsigned runs = s->given_up == NONE_GIVEN_UP ? RUNS_FOR_NONE_GIVEN_UP : 1;
	bool none_given_up = false;
	unsigned i;

	for (i = 0; i < runs && !none_given_up; i++)
		none_given_up = run(s);
	if (s->given_up == NONE_GIVEN_UP)
		CHECK(none_given_up, "%s: nothing given up, on one of %u runs (%u made)", s->name,
		      runs, i);
}

/* --- schedules written out: the interleavings that once made a hit wait with room --- */

static struct infl_proc schedules_proc; /* the written schedules' process */
static struct infl_proc *const sp = &schedules_proc;

/* another thread's hit queued, and the holder applied it */
static void one_pushed_and_applied(void)
{
	sp->defer_tail++;
	sp->defer_head++;
}

/* another thread of the image claimed segment 0 and named it for ring segment 0 */
static void other_thread_claimed(void)
{
	segs[0].owner = sp->gen;
	sp->defer_segs[0] = 1;
}

/* another thread took the last ticket of ring segment 0, and the holder applied it and gave
 * the segment back */
static void holder_left_segment(void)
{
	sp->defer_tail = INFL_DEFER_SEG_SLOTS;
	sp->defer_head = INFL_DEFER_SEG_SLOTS;
	sp->defer_segs[0] = 0;
	segs[0].owner = 0;
}

static unsigned segs_owned_by(__u64 gen)
{
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); i++)
		n += segs[i].owner == gen;
	return n;
}

static void written_schedules(void)
{
	struct infl_op op = { .arg = 1, .tid = 1, .probe = INFL_PROBE_FREE };
	struct infl_deferred *q;

	model_thread_init(MODEL_PID, 1);
	model_sched_set(&(struct model_sched){ 0 });
	dpool.segs = INFL_DEFER_SEGS;

	/* the room check's two reads, with a push and its application between them: the head
	 * then is past the tail read before it, and tail - head wraps */
	memset(sp, 0, sizeof(*sp));
	memset(segs, 0, sizeof(segs));
	sp->gen = 100;
	sp->defer_tail = sp->defer_head = 1000;
	model_hook_at(2, one_pushed_and_applied);
	CHECK(deferred_push(&dpool, sp, &op) == DEFER_QUEUED,
	      "a push whose room check straddles another hit's push and application queues");
	CHECK_EQ_U64(sp->defer_tail, 1002, "it took the ticket after the other hit's");
	deferred_release(&pool, sp);

	/* the first look for the segment finds no name, another thread names one before this
	 * one names its own: the claim must return that segment, and give its own back */
	memset(sp, 0, sizeof(*sp));
	sp->gen = 101;
	model_hook_at(2, other_thread_claimed);
	q = deferred_claim(&dpool, sp, 0);
	CHECK(q == &segs[0], "a claim that races another thread's naming finds its segment");
	CHECK_EQ_U64(segs_owned_by(sp->gen), 1, "and the segment it claimed went back");
	deferred_release(&pool, sp);
	CHECK(segs_owned_by(sp->gen) == 0 && !sp->defer_segs[0],
	      "the image's end gives the segment back");

	/* a push that read a tail whose segment the head left before it looked for the
	 * segment's name: it finds no name, and must not claim one for a ticket that is gone
	 * (that segment would be held until the ring came round again) */
	memset(sp, 0, sizeof(*sp));
	sp->gen = 102;
	sp->defer_head = 1000;
	sp->defer_tail = INFL_DEFER_SEG_SLOTS - 1;
	segs[0].owner = sp->gen;
	sp->defer_segs[0] = 1;
	model_hook_at(3, holder_left_segment);
	CHECK(deferred_push(&dpool, sp, &op) == DEFER_QUEUED,
	      "a push whose tail went stale before its look for the name queues");
	CHECK(sp->defer_tail == INFL_DEFER_SEG_SLOTS + 1 && !sp->defer_segs[0] &&
	      sp->defer_segs[1] && segs_owned_by(sp->gen) == 1,
	      "at the next ticket, in the next segment, and claimed no segment for the gone one");
	CHECK(segs[sp->defer_segs[1] - 1].ops[0].state == INFL_DEFER_SEG_SLOTS + 1,
	      "its slot committed for that ticket");
	deferred_release(&pool, sp);
	model_hook_at(0, NULL);
}

int main(int argc, char **argv)
{
	/* the kernel's wait for a slot: lock_wait_ns's default (inflight.bpf.c) */
	const __u64 kernel_wait = 10000000;
	const struct scenario scenarios[] = {
		{ .name = "2 threads", .procs = 1, .images = 1, .threads = 2, .hits = 60000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .wait_ns = kernel_wait },
		{ .name = "8 threads", .procs = 1, .images = 1, .threads = 8, .hits = 15000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .wait_ns = kernel_wait },
		{ .name = "8 threads, holders off their CPU up to 2 ms", .procs = 1, .images = 1, .threads = 8,
		  .hits = 15000, .sched = { .yield_in = 8, .spin_in = 64 }, .stall_in = 2000,
		  .stall_us = 2000, .wait_ns = kernel_wait },
		{ .name = "8 threads, preempted anywhere up to 1 ms", .procs = 1, .images = 1, .threads = 8, .hits = 10000,
		  .sched = { .yield_in = 8, .spin_in = 64, .sleep_in = 20000, .sleep_us = 1000 },
		  .wait_ns = kernel_wait },
		{ .name = "8 threads on one CPU", .procs = 1, .images = 1, .threads = 8, .hits = 10000,
		  .sched = { .yield_in = 4 }, .one_cpu = true, .wait_ns = kernel_wait },
		{ .name = "4 threads, every hit queued", .procs = 1, .images = 1, .threads = 4, .hits = 20000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .defer_all = true,
		  .wait_ns = kernel_wait },
		{ .name = "4 threads, stale records requeued", .procs = 1, .images = 1, .threads = 4, .hits = 20000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .stale_in = 8,
		  .wait_ns = kernel_wait },
		{ .name = "8 threads, holders off their CPU 50 ms, a 1 ms wait", .procs = 1, .images = 1, .threads = 8,
		  .hits = 30000, .stall_in = 3000, .stall_us = 50000, .wait_ns = 1000000,
		  .given_up = SOME_GIVEN_UP },
		{ .name = "3 processes, 12 images each, a pool of 2 segments", .procs = 3,
		  .images = 12, .threads = 3, .hits = 2000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .pool_segs = 2, .pool_waits = true,
		  .wait_ns = kernel_wait, .given_up = COUNTED_GIVEN_UP },
		{ .name = "3 processes, 12 images each, sharing two processes' worth of segments",
		  .procs = 3, .images = 12, .threads = 3, .hits = 4000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .defer_all = true,
		  .wait_ns = kernel_wait },
	};
	unsigned scale = argc > 1 ? (unsigned)atoi(argv[1]) : 1;

	written_schedules();

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		struct scenario s = scenarios[i];

		s.hits *= scale ? scale : 1;
		run_scenario(&s);
	}
	return check_done();
}
