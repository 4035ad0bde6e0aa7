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
 *   holders stall for milliseconds; a reader of the seqlock never accepts a torn copy.
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

/* --- the program side, as inflight.bpf.c's --- */

static struct infl_proc proc;
static struct infl_deferred queues[2]; /* a pool smaller than the kernel's: claims walk it */
static struct model_map pool = MODEL_ARRAY_OF(queues), names = MODEL_HASH_INIT;
static bool defer_every_hit;
static __u64 wait_ns, deferred_full, deferred_ops;

/* what the sections record */
static struct {
	atomic_int inside;	  /* threads in an apply: never more than one */
	__u64 not_exclusive;	  /* applies that found another inside, or the lock free */
	__u64 outside_section;	  /* applies outside a seqlock section */
	__u64 n;		  /* applied so far, the log's length */
	__u64 *log;		  /* tid << 32 | seq, in accounting order */
	__u64 word_a, word_b;	  /* equal outside a section */
	unsigned stall_in, stall_us; /* a holder stalls in one section in stall_in */
} acct;

static void account(struct infl_proc *p, const struct infl_op *op)
{
	if (atomic_fetch_add(&acct.inside, 1) != 0 || READ_ONCE(p->lock) != 1)
		acct.not_exclusive++;
	if (p->write_begin == p->write_end)
		acct.outside_section++;
	acct.log[acct.n++] = (__u64)op->tid << 32 | op->arg;
	acct.word_a++;
	model_point();
	if (acct.stall_in && model_rand(acct.stall_in) == 0)
		model_sleep_us(acct.stall_us); /* the holder off its CPU, the lock held */
	acct.word_b++;
	atomic_fetch_sub(&acct.inside, 1);
}

int apply_queued(struct infl_proc *p, struct infl_op *op)
{
	if (p && op)
		account(p, op);
	return 0;
}

int queue_op(struct infl_proc *p, const struct infl_op *op)
{
	struct infl_deferred *q;

	if (!p || !op)
		return 0;
	q = deferred_claim(&pool, &names, bpf_get_current_pid_tgid() >> 32, p->gen);
	if (!q || !deferred_push(q, p, op))
		return 0;
	__sync_fetch_and_add(&deferred_ops, 1);
	return 1;
}

int queue_op_waiting(struct infl_proc *p, const struct infl_op *op)
{
	if (!p || !op)
		return 0;
	__sync_fetch_and_add(&deferred_full, 1);
	return queue_wait(p, op, wait_ns);
}

static unsigned stale_in; /* one locked section in stale_in finds its records stale */

/* inflight.bpf.c's hit_account, LK_CAS */
static enum lock_outcome hit(struct infl_op *op)
{
	enum lock_outcome r = lock_or_defer_cas(&proc, MODEL_PID, op, defer_every_hit, wait_ns,
						&pool, &names, &deferred_full);

	if (r == LOCKED) {
		if (stale_in && model_rand(stale_in) == 0) {
			r = requeue_cas(&proc, MODEL_PID, op);
		} else {
			account(&proc, op);
			proc_unlock(NULL, &proc, MODEL_PID, LK_CAS);
		}
	}
	if (r == GAVE_UP)
		return r;
	combine_queued(&proc, MODEL_PID, &pool, &names);
	return r;
}

/* --- the scenarios --- */

struct scenario {
	const char *name;
	unsigned threads, hits;
	struct model_sched sched;
	unsigned stall_in, stall_us; /* holders stalled in sections */
	bool one_cpu, defer_all;
	unsigned stale_in;
	__u64 wait_ns;
	bool expect_given_up; /* the queue is meant to fill past the wait */
};

static atomic_ullong clock_now; /* the real-time order: one tick per start and per return */
static __u64 *started, *returned; /* [tid * hits + seq] */
static unsigned char *given_up;
static atomic_int running;
static const struct scenario *now;

static void *firing(void *arg)
{
	unsigned tid = (unsigned)(unsigned long)arg;

	model_thread_init(MODEL_PID, tid + 1);
	if (now->one_cpu) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(0, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	for (unsigned seq = 0; seq < now->hits; seq++) {
		struct infl_op op = { .arg = seq, .tid = tid, .probe = INFL_PROBE_FREE };
		size_t i = (size_t)tid * now->hits + seq;

		started[i] = atomic_fetch_add(&clock_now, 1);
		given_up[i] = hit(&op) == GAVE_UP;
		returned[i] = atomic_fetch_add(&clock_now, 1);
	}
	atomic_fetch_sub(&running, 1);
	return NULL;
}

/* a snapshot reader, as the loader copies a record: accepted when write_end, read first,
 * equals write_begin, read last */
static __u64 copies, torn_accepted;

static void *reading(void *arg)
{
	(void)arg;
	while (atomic_load(&running) > 0) {
		__u64 end = __atomic_load_n(&proc.write_end, __ATOMIC_ACQUIRE);
		__u64 a = __atomic_load_n(&acct.word_a, __ATOMIC_ACQUIRE);
		__u64 b = __atomic_load_n(&acct.word_b, __ATOMIC_ACQUIRE);
		__u64 begin = __atomic_load_n(&proc.write_begin, __ATOMIC_ACQUIRE);

		if (end == begin) {
			copies++;
			torn_accepted += a != b;
		}
		sched_yield();
	}
	return NULL;
}

static void run(const struct scenario *s, __u64 gen)
{
	size_t total = (size_t)s->threads * s->hits, logged_once = 0, absent = 0;
	__u64 gave_up = 0, twice = 0, own_order = 0, real_order = 0, lost = 0;
	pthread_t th[MAX_THREADS], reader;
	unsigned char *seen = calloc(total, 1);
	__u64 *next = calloc(s->threads, sizeof(*next));
	__u64 *min_ret_after;

	now = s;
	memset(&proc, 0, sizeof(proc));
	memset(&acct, 0, sizeof(acct));
	proc.gen = gen;
	acct.log = calloc(total, sizeof(*acct.log));
	acct.stall_in = s->stall_in;
	acct.stall_us = s->stall_us;
	started = calloc(total, sizeof(*started));
	returned = calloc(total, sizeof(*returned));
	given_up = calloc(total, 1);
	min_ret_after = calloc(total + 1, sizeof(*min_ret_after));
	if (!seen || !next || !acct.log || !started || !returned || !given_up || !min_ret_after) {
		CHECK(0, "%s: memory for the run", s->name);
		exit(1);
	}
	defer_every_hit = s->defer_all;
	stale_in = s->stale_in;
	wait_ns = s->wait_ns;
	deferred_full = deferred_ops = 0;
	copies = torn_accepted = 0;
	model_sched_set(&s->sched);
	atomic_store(&running, (int)s->threads);
	pthread_create(&reader, NULL, reading, NULL);
	for (unsigned t = 0; t < s->threads; t++)
		pthread_create(&th[t], NULL, firing, (void *)(unsigned long)t);
	for (unsigned t = 0; t < s->threads; t++)
		pthread_join(th[t], NULL);
	pthread_join(reader, NULL);
	model_sched_set(&(struct model_sched){ 0 });

	/* the image ends: what its queue still holds would be counted as lost */
	lost = proc.defer_tail - proc.defer_head;
	model_thread_init(MODEL_PID, 0);
	deferred_release(&pool, &names, MODEL_PID, gen);

	for (size_t i = 0; i < acct.n; i++) {
		__u64 tid = acct.log[i] >> 32, seq = (__u32)acct.log[i];
		size_t k = tid * s->hits + seq;

		if (tid >= s->threads || seq >= s->hits || seen[k]) {
			twice++;
			continue;
		}
		seen[k] = 1;
		logged_once++;
		own_order += seq < next[tid]; /* gaps: hits given up, checked below */
		next[tid] = seq + 1;
	}
	for (size_t k = 0; k < total; k++) {
		gave_up += given_up[k];
		absent += !seen[k];
		/* given up and applied, or neither */
		twice += given_up[k] && seen[k];
		lost += !given_up[k] && !seen[k];
	}
	/* real time: no hit applied after one that began after it returned */
	min_ret_after[acct.n] = ~0ull;
	for (size_t i = acct.n; i-- > 0;) {
		__u64 tid = acct.log[i] >> 32, seq = (__u32)acct.log[i];
		__u64 r = tid < s->threads && seq < s->hits ? returned[tid * s->hits + seq] : 0;

		min_ret_after[i] = r < min_ret_after[i + 1] ? r : min_ret_after[i + 1];
	}
	for (size_t i = 0; i + 1 < acct.n; i++) {
		__u64 tid = acct.log[i] >> 32, seq = (__u32)acct.log[i];

		if (tid < s->threads && seq < s->hits &&
		    min_ret_after[i + 1] < started[tid * s->hits + seq])
			real_order++;
	}

	CHECK_EQ_U64(acct.not_exclusive, 0, "%s: every apply alone, under the lock", s->name);
	CHECK_EQ_U64(acct.outside_section, 0, "%s: every apply inside a seqlock section", s->name);
	CHECK_EQ_U64(proc.write_begin, proc.write_end, "%s: every section ended", s->name);
	CHECK_EQ_U64(proc.lock, 0, "%s: the lock free at the end", s->name);
	CHECK_EQ_U64(twice, 0, "%s: no hit applied twice, or applied and given up", s->name);
	CHECK_EQ_U64(lost, 0, "%s: no hit left queued or lost", s->name);
	CHECK_EQ_U64(logged_once + gave_up, total, "%s: applied + given up = fired (%zu)",
		     s->name, total);
	CHECK_EQ_U64(proc.lock_timeouts, gave_up, "%s: every hit given up counted", s->name);
	CHECK_EQ_U64(own_order, 0, "%s: each thread's own order kept", s->name);
	CHECK_EQ_U64(real_order, 0, "%s: a hit that returned before another began came first",
		     s->name);
	CHECK_EQ_U64(torn_accepted, 0, "%s: no torn copy accepted by a reader (%llu copies)",
		     s->name, (unsigned long long)copies);
	CHECK(deferred_ops > 0, "%s: hits went through the queue (%llu of %zu)", s->name,
	      (unsigned long long)deferred_ops, total);
	if (s->expect_given_up)
		CHECK(gave_up > 0 && deferred_full > 0,
		      "%s: the queue filled and hits were given up (%llu), counted", s->name,
		      (unsigned long long)gave_up);
	else
		CHECK_EQ_U64(gave_up, 0, "%s: nothing given up (%llu waits for a slot)", s->name,
			     (unsigned long long)deferred_full);
	(void)absent;
	free(seen);
	free(next);
	free(acct.log);
	free(started);
	free(returned);
	free(given_up);
	free(min_ret_after);
}

/* --- schedules written out: the interleavings that once made a hit wait with room --- */

/* another thread's hit queued, and the holder applied it */
static void one_pushed_and_applied(void)
{
	proc.defer_tail++;
	proc.defer_head++;
}

/* another thread of the image claimed queue 0 and named it */
static void other_thread_claimed(void)
{
	__u32 pid = MODEL_PID, idx = 0;

	queues[0].owner = proc.gen;
	bpf_map_update_elem(&names, &pid, &idx, BPF_NOEXIST);
}

static void written_schedules(void)
{
	struct infl_op op = { .arg = 1, .tid = 1, .probe = INFL_PROBE_FREE };
	struct infl_deferred *q;

	model_thread_init(MODEL_PID, 1);
	model_sched_set(&(struct model_sched){ 0 });

	/* the room check's two reads, with a push and its application between them: the head
	 * then is past the tail read before it, and tail - head wraps */
	memset(&proc, 0, sizeof(proc));
	proc.gen = 100;
	proc.defer_tail = proc.defer_head = 1000;
	queues[0].owner = proc.gen;
	model_hook_at(2, one_pushed_and_applied);
	CHECK(deferred_push(&queues[0], &proc, &op) == 1,
	      "a push whose room check straddles another hit's push and application queues");
	CHECK_EQ_U64(proc.defer_tail, 1002, "it took the ticket after the other hit's");
	queues[0].owner = 0;

	/* the first look for the queue finds no name, another thread names one before the
	 * second: the claim must return that queue, not none */
	memset(&proc, 0, sizeof(proc));
	proc.gen = 101;
	model_hook_at(2, other_thread_claimed);
	q = deferred_claim(&pool, &names, MODEL_PID, proc.gen);
	CHECK(q == &queues[0], "a claim that races another thread's naming finds its queue");
	deferred_release(&pool, &names, MODEL_PID, proc.gen);
	CHECK(queues[0].owner == 0 && !bpf_map_lookup_elem(&names, &(__u32){ MODEL_PID }),
	      "the image's end gives the queue back");
	model_hook_at(0, NULL);
}

int main(int argc, char **argv)
{
	/* the kernel's wait for a slot: lock_wait_ns's default (inflight.bpf.c) */
	const __u64 kernel_wait = 10000000;
	const struct scenario scenarios[] = {
		{ .name = "2 threads", .threads = 2, .hits = 60000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .wait_ns = kernel_wait },
		{ .name = "8 threads", .threads = 8, .hits = 15000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .wait_ns = kernel_wait },
		{ .name = "8 threads, holders off their CPU up to 2 ms", .threads = 8,
		  .hits = 15000, .sched = { .yield_in = 8, .spin_in = 64 }, .stall_in = 2000,
		  .stall_us = 2000, .wait_ns = kernel_wait },
		{ .name = "8 threads, preempted anywhere up to 1 ms", .threads = 8, .hits = 10000,
		  .sched = { .yield_in = 8, .spin_in = 64, .sleep_in = 20000, .sleep_us = 1000 },
		  .wait_ns = kernel_wait },
		{ .name = "8 threads on one CPU", .threads = 8, .hits = 10000,
		  .sched = { .yield_in = 4 }, .one_cpu = true, .wait_ns = kernel_wait },
		{ .name = "4 threads, every hit queued", .threads = 4, .hits = 20000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .defer_all = true,
		  .wait_ns = kernel_wait },
		{ .name = "4 threads, stale records requeued", .threads = 4, .hits = 20000,
		  .sched = { .yield_in = 8, .spin_in = 64 }, .stale_in = 8,
		  .wait_ns = kernel_wait },
		{ .name = "8 threads, holders off their CPU 50 ms, a 1 ms wait", .threads = 8,
		  .hits = 30000, .stall_in = 3000, .stall_us = 50000, .wait_ns = 1000000,
		  .expect_given_up = true },
	};
	unsigned scale = argc > 1 ? (unsigned)atoi(argv[1]) : 1;

	written_schedules();

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		struct scenario s = scenarios[i];

		s.hits *= scale ? scale : 1;
		run(&s, i + 1);
	}
	return check_done();
}
