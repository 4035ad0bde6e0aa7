// SPDX-License-Identifier: BSD-2-Clause
/*
 * The modelled GPU and the modelled host, through the test-only observer. The device: its
 * kernel time is the work at the rate, varied per partition by a seeded draw (exact,
 * reproducible, within the spread); a region lasts, by the model's clock, exactly its
 * partition's kernel time, never ends early in real time, costs its thread next to no CPU,
 * begins when the partition arrived or the device was free (so a late thread does not
 * delay it), and a starved fold is an overrun; in a pipeline the regions follow one
 * another behind the device lock while both workers hold a partition. The host: a
 * synthesis lasts, by the model's clock, exactly its seeded duration from its constraints
 * at the rate, whatever else runs (1 or 6 at once), begins when its permit came back, and
 * real work that does not fit is an overrun. The deferred H check passes on what the
 * device saw and fails when the proof and the witness disagree. Bounds here are
 * structural (a sleep on an absolute deadline never ends early) or the model's own
 * arithmetic; no test asserts a speed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "check.h"
#include "circuit.h"
#include "exit_codes.h"
#include "field.h"
#include "gpu_model.h"
#include "hcheck.h"
#include "host_model.h"
#include "hpoly.h"
#include "model_time.h"
#include "observer.h"
#include "pipeline.h"
#include "rng.h"
#include "track.h" /* the observer's hooks */

static volatile sig_atomic_t never;

static void test_formula(void)
{
	/* log_n 10: 7 NTTs of 512 * 10 butterflies, 5n element-wise, n MSM terms */
	CHECK_EQ_U64(gpu_model_ops(10, 0), 7 * 5120 + 6 * 1024, "ops at 2^10, no extra round");
	CHECK_EQ_U64(gpu_model_ops(10, 2), 11 * 5120 + 6 * 1024, "two round trips add 4 NTTs");
	CHECK_EQ_U64(gpu_model_ops(27, 0), 7ull * (1ull << 26) * 27 + 6ull * (1ull << 27),
		     "a real partition's domain, 2^27, does not overflow");
	CHECK_EQ_U64(gpu_model_kernel_ns(41984, 100), 419840, "41984 ops at 100 Mop/s: 419.84 us");
	CHECK_EQ_U64(gpu_model_kernel_ns(1, 3), 334, "rounded up: never shorter than the work");
	CHECK_EQ_U64(gpu_model_kernel_ns(1000, 1000000), 1, "1000 ops at 1 Top/s: 1 ns");
	CHECK_EQ_U64(gpu_model_kernel_ns(gpu_model_ops(17, 0), GPU_MODEL_BALANCED_MOPS), 55388491,
		     "the story's partition, 2^17, at the balanced default: 55.39 ms (2.775 s / 50)");
	CHECK_EQ_U64(host_model_synth_ns(126976, 1, 174), 729747127,
		     "126,976 constraints at 174k/s: 729.75 ms (36.5 s / 50), rounded up");
	CHECK_EQ_U64(host_model_synth_ns(126976, 3, 174), 2189241380,
		     "--synth-rounds 3 counts the constraints three times");
	CHECK_EQ_U64(host_model_synth_ns(130300000ull, 1000, 1), 130300000000000000ull,
		     "a real partition, 1000 rounds at 1k/s, does not overflow");
}

/* the seeded draws: exact at spread 0, within the spread, reproducible, seed-dependent */
static void test_vary(void)
{
	const uint64_t mean = 1000000000;
	uint64_t lo = UINT64_MAX, hi = 0, again = 0, other_seed = 0, other_salt = 0, out = 0;
	double sum = 0;
	const unsigned n = 10000;

	CHECK_EQ_U64(model_vary_ns(mean, 0, 7, MODEL_SALT_HOST, 0x10001), mean,
		     "spread 0: the mean itself");
	for (unsigned i = 0; i < n; i++) {
		uint64_t owner = (uint64_t)(i / 10 + 1) << 16 | (i % 10 + 1);
		uint64_t v = model_vary_ns(mean, 20, 1, MODEL_SALT_HOST, owner);

		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		sum += v;
		out += v < mean / 10 * 8 || v > mean / 10 * 12;
		again += v == model_vary_ns(mean, 20, 1, MODEL_SALT_HOST, owner);
		other_seed += v != model_vary_ns(mean, 20, 2, MODEL_SALT_HOST, owner);
		other_salt += v != model_vary_ns(mean, 20, 1, MODEL_SALT_DEVICE, owner);
	}
	CHECK_EQ_U64(out, 0, "+-20%%: every one of %u draws within 0.8..1.2 of the mean", n);
	CHECK(lo < mean / 1000 * 801 && hi > mean / 1000 * 1199, "... and they reach both ends "
	      "(%.4f..%.4f)", lo / 1e9, hi / 1e9);
	CHECK(sum / n > mean * 0.995 && sum / n < mean * 1.005, "... centred on the mean "
	      "(%.4f)", sum / n / 1e9);
	CHECK_EQ_U64(again, n, "the same seed and owner give the same duration");
	CHECK(other_seed > n - 10, "another seed gives other durations (%llu of %u differ)",
	      (unsigned long long)other_seed, n);
	CHECK(other_salt > n - 10, "the device and the host draw apart (%llu of %u differ)",
	      (unsigned long long)other_salt, n);
	CHECK_EQ_U64(model_vary_ns(mean, MODEL_MAX_SPREAD_PCT, 3, MODEL_SALT_HOST, 5) >= mean / 10,
		     1, "the widest spread never goes below a tenth of the mean");
}

static void test_fold(void)
{
	uint64_t a[4] = { 1, 2, 3, 4 }, b[4] = { 10, 20, 30, 40 }, c[4] = { 5, 6, 7, 8 }, out[2];
	uint64_t p = GL_P;

	gpu_model_fold(a, b, c, 4, out);
	CHECK_EQ_U64(out[0], 1 + 20 + 5 + 6, "fold[0] = a[0] + b[1] + c[0] + c[1]");
	CHECK_EQ_U64(out[1], 3 + 40 + 7 + 8, "fold[1] = a[2] + b[3] + c[2] + c[3]");
	a[0] = p - 1;
	b[1] = 2;
	c[0] = c[1] = 0;
	gpu_model_fold(a, b, c, 2, out);
	CHECK_EQ_U64(out[0], 1, "the fold is modulo p");
}

/* the observer knows an owner once it entered a stage: a partition's way to `stage` */
static void enter(uint64_t owner, enum prover_stage stage)
{
	static const enum prover_stage way[] = { STAGE_wait_permit, STAGE_synth, STAGE_chan_send,
						 STAGE_gpu_queue, STAGE_gpu };

	for (unsigned i = 0; i < sizeof(way) / sizeof(way[0]); i++) {
		observer_stage(owner, way[i]);
		if (way[i] == stage)
			break;
	}
}

/* regions outside any pipeline: their length, CPU, model clock and account */
static void test_region(void)
{
	enum { N = 1 << 12 };
	static uint64_t a[N], b[N], c[N], out[N / 2];
	const struct gpu_model_params mp = { .mops = 1, .spread_pct = 0, .seed = 1 };
	struct observer_regions r;
	struct gpu_model m;
	uint64_t t0, t1, end;

	for (size_t i = 0; i < N; i++)
		a[i] = b[i] = c[i] = i;
	gpu_model_init(&m, 12, 0, &mp);
	CHECK_EQ_U64(m.kernel_ns, gpu_model_ops(12, 0) * 1000, "2^12 at 1 Mop/s: %llu ns",
		     (unsigned long long)m.kernel_ns);
	CHECK_EQ_U64(gpu_model_kernel_of(&m, 0x10001), m.kernel_ns, "spread 0: every partition "
		     "takes the mean");
	m.kernel_ns = 30000000; /* 30 ms, to see it against the thread's CPU time */
	observer_reset();
	enter(0x10001, STAGE_gpu);
	t0 = model_now_ns();
	end = gpu_model_region(&m, 0x10001, t0, a, b, c, N, out);
	t1 = model_now_ns();
	observer_device_regions(&m, &r);
	CHECK_EQ_U64(end, t0 + m.kernel_ns, "the region ends, by the model's clock, kernel_ns "
		     "after the partition arrived at the free device");
	CHECK(t1 >= end, "... and not before, really");
	CHECK_EQ_U64(r.count, 1, "the observer saw one region");
	CHECK(r.max_cpu_ns < m.kernel_ns / 10, "... using under a tenth of it in CPU time (%llu "
	      "ns): the device's time is not the cores'", (unsigned long long)r.max_cpu_ns);
	CHECK_EQ_U64(m.regions, 1, "the account: one region");
	CHECK_EQ_U64(m.busy_ns, m.kernel_ns, "the account: busy exactly kernel_ns");
	CHECK_EQ_U64(m.overruns, 0, "no overrun: the fold fits in 30 ms");
	CHECK_EQ_U64(out[1], 2 + 3 + 2 + 3, "the stand-in output is the fold");

	/* arrived while the device was busy: it begins at the previous end, not when it ran */
	enter(0x10002, STAGE_gpu);
	end = gpu_model_region(&m, 0x10002, t0 + 1000, a, b, c, N, out);
	CHECK_EQ_U64(end, t0 + 2 * m.kernel_ns, "a partition that waited begins when the "
		     "device was free by the model's clock: back to back");
	/* arrived a while ago at a free device (a late thread): the model's time is kept */
	model_sleep_until(end + m.kernel_ns);
	t0 = model_now_ns();
	enter(0x10003, STAGE_gpu);
	end = gpu_model_region(&m, 0x10003, t0 - m.kernel_ns / 2, a, b, c, N, out);
	CHECK_EQ_U64(end, t0 + m.kernel_ns / 2, "a late thread does not delay the device: the "
		     "region ends kernel_ns after the partition arrived");
	observer_device_regions(&m, &r);
	CHECK(!r.overlap && !r.real_overlap && !r.early && !r.late_begin,
	      "three regions: none overlapping (model or real), none ending early, none "
	      "beginning after its lock");
	CHECK_EQ_U64(r.exact_kernel, 3, "each lasted exactly its kernel time by the model's clock");
	CHECK(m.max_real_permille >= 500 && m.max_real_permille < 1000, "the real share counts "
	      "the late thread: half a kernel time late, under a whole one (%llu permille)",
	      (unsigned long long)m.max_real_permille);

	/* arrived two kernel times ago at a free device: the fold cannot be done in time */
	model_sleep_until(end + 3 * m.kernel_ns);
	enter(0x10004, STAGE_gpu);
	t0 = model_now_ns();
	end = gpu_model_region(&m, 0x10004, t0 - 2 * m.kernel_ns, a, b, c, N, out);
	CHECK_EQ_U64(m.overruns, 1, "a fold ending past the region's deadline is an overrun");
	CHECK(m.overrun_ns >= m.kernel_ns, "... with how late it was (%llu ns)",
	      (unsigned long long)m.overrun_ns);
	CHECK_EQ_U64(end, t0 - m.kernel_ns, "... and the region still ends at its deadline by "
		     "the model's clock: the modelled GPU does not wait for our cores");
	CHECK_EQ_U64(m.free_at, end, "... which is when the device is free again");
}

/* one synthesis outside any pipeline: the deadline, the account, an overrun */
static void test_host(void)
{
	struct observer_synthesis s[4];
	struct host_model h;
	uint64_t d, t0, end, owner = 0x10001;
	unsigned n;

	host_model_init(&h, 3968, 1, 100, 20, 5); /* 2^12's constraints at 100k/s: 39.68 ms */
	CHECK_EQ_U64(h.synth_ns, 39680000, "2^12 (3,968 constraints) at 100k/s: 39.68 ms");
	d = host_model_duration_ns(&h, owner);
	CHECK_EQ_U64(d, model_vary_ns(h.synth_ns, 20, 5, MODEL_SALT_HOST, owner),
		     "a partition's duration is the seeded draw for its owner");
	CHECK(d >= h.synth_ns / 10 * 8 && d <= h.synth_ns / 10 * 12, "... within +-20%% (%llu ns)",
	      (unsigned long long)d);
	observer_reset();
	enter(owner, STAGE_synth);
	t0 = model_now_ns();
	end = host_model_finish(&h, owner, t0);
	n = observer_host_syntheses(s, 4);
	CHECK_EQ_U64(end, t0 + d, "it ends its duration after it began, by the model's clock");
	CHECK(n == 1 && s[0].end >= s[0].deadline, "... and not before, really");
	CHECK(n == 1 && s[0].deadline - s[0].begin == d && s[0].worked < s[0].deadline,
	      "the observer saw it: its duration, its work done before the deadline");
	CHECK_EQ_U64(h.syntheses, 1, "the account: one synthesis");
	CHECK_EQ_U64(h.modelled_ns, d, "the account: its modelled time");
	CHECK_EQ_U64(h.overruns, 0, "no overrun");

	/* began, by the model's clock, two durations ago: the work cannot have fitted */
	owner = 0x10002;
	d = host_model_duration_ns(&h, owner);
	enter(owner, STAGE_synth);
	t0 = model_now_ns() - 2 * d;
	end = host_model_finish(&h, owner, t0);
	n = observer_host_syntheses(s, 4);
	CHECK_EQ_U64(h.overruns, 1, "work ending past its deadline is an overrun");
	CHECK(h.overrun_ns >= d, "... as late as it was (%llu ns)",
	      (unsigned long long)h.overrun_ns);
	CHECK(n == 2 && end == t0 + d && s[1].worked > end && s[1].end >= s[1].worked,
	      "... and it still ends at its deadline by the model's clock, the real thread "
	      "returning at once");
	CHECK(h.max_real_permille >= 2000, "... the real share at least 200%% (%llu permille)",
	      (unsigned long long)h.max_real_permille);
}

struct run {
	struct pipeline_config cfg;
	struct pipeline_result res;
	int rc;
};

static void run_model(struct run *r, enum permit_release release, unsigned every)
{
	*r = (struct run){ .cfg = {
		.proofs = 2, .jobs = 2, .pw = 3, .gw = 2, .chan_cap = 1, .log_n = 10,
		.gpu_rounds = 1, .synth_rounds = 1, .release = release, .gpu = GPU_MODEL,
		.gpu_mops = 2, /* 21 ms per region: the device is the slow stage */
		.gpu_spread = 35, .model_seed = 1, .h_check_every = every,
		.gen = { .partitions = 6, .slice_bytes = 64, .sector_num = 1, .seed = 1 },
		.stop = &never,
	} };
	observer_reset();
	r->rc = pipeline_run(&r->cfg, &r->res);
}

/* the modelled device in a pipeline, synthesis real */
static void test_pipeline(void)
{
	uint64_t kernel = gpu_model_kernel_ns(gpu_model_ops(10, 0), 2);
	struct observer_regions reg;
	struct run r, r2;
	const char *first;

	run_model(&r, RELEASE_AFTER_SYNTH, 5);
	observer_device_regions(&r.res.model, &reg);
	CHECK_EQ_U64(r.rc, PROVER_EXIT_OK, "a modelled run succeeds");
	CHECK(r.res.modelled && !r.res.host_modelled, "... says the device was modelled, the "
	      "host not");
	CHECK_EQ_U64(r.res.model.kernel_ns, kernel, "... with the mean kernel time of its work");
	CHECK_EQ_U64(reg.count, 12, "one device region per partition");
	CHECK_EQ_U64(reg.exact_kernel, 12, "each lasted exactly its partition's kernel time, by "
		     "the model's clock");
	CHECK(!reg.overlap && !reg.real_overlap, "no two regions at once, by the model's clock "
	      "or really: the device serialises behind its lock");
	CHECK(!reg.early && !reg.late_begin, "none ended before its time, none began after its "
	      "lock");
	CHECK(reg.max_cpu_ns < kernel / 2, "no region used half the mean kernel time in CPU "
	      "(%llu ns)", (unsigned long long)reg.max_cpu_ns);
	CHECK(r.res.model_makespan_s * 1e9 >= 12.0 * kernel * 0.65, "the modelled run lasts at "
	      "least 12 of the shortest kernel times (%.3f s): one device, one region at a time",
	      r.res.model_makespan_s);
	CHECK_EQ_U64(observer_max_in(STAGE_gpu), 2, "both GPU workers of the device held a "
		     "partition at once (one in the region, one at the lock), never more");
	CHECK_EQ_U64(r.res.h_every, 5, "1 partition in 5 checked ...");
	CHECK(r.res.h_deferred, "... after the run");
	CHECK_EQ_U64(r.res.h_checked, 3, "... ceil(12 / 5) = 3 of them");
	CHECK_EQ_U64(r.res.h_passed, 3, "... and they passed");
	CHECK_EQ_U64(observer_violations(&first), 0, "no contract violation (%s)", first);

	run_model(&r2, RELEASE_AFTER_SEND, 1);
	CHECK_EQ_U64(r2.rc, PROVER_EXIT_OK, "after-send, every partition checked: succeeds");
	CHECK_EQ_U64(r2.res.h_passed, 12, "... 12 of 12 H checks passed");
	CHECK_EQ_U64(r2.res.digest, r.res.digest, "the same proofs whatever the schedule");
}

#define HOST_PARTS 6

/* one job of 6 partitions on the modelled host and device, pw permits, one GPU worker */
static void run_host(struct run *r, unsigned pw, uint64_t seed)
{
	*r = (struct run){ .cfg = {
		.proofs = 1, .jobs = 1, .pw = pw, .gw = 1, .chan_cap = 1, .log_n = 12,
		.gpu_rounds = 1, .synth_rounds = 1, .release = RELEASE_AFTER_SEND,
		.gpu = GPU_MODEL, .gpu_mops = 100, .gpu_spread = 35, /* about 2 ms a region */
		.host = HOST_MODEL, .synth_kcps = 100, .synth_spread = 20, /* about 40 ms */
		.model_seed = seed, .h_check_every = 3,
		.gen = { .partitions = HOST_PARTS, .slice_bytes = 64, .sector_num = 1, .seed = 1 },
		.stop = &never,
	} };
	observer_reset();
	r->rc = pipeline_run(&r->cfg, &r->res);
}

static int by_begin_then_owner(const void *x, const void *y)
{
	const struct observer_synthesis *a = x, *b = y;

	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	return a->owner < b->owner ? -1 : a->owner > b->owner;
}

/* durations by owner index, sorted by begin; returns how many syntheses */
static unsigned syntheses_of(struct observer_synthesis *s, uint64_t *dur)
{
	unsigned n = observer_host_syntheses(s, HOST_PARTS);

	qsort(s, n, sizeof(*s), by_begin_then_owner);
	for (unsigned i = 0; i < n; i++)
		dur[(s[i].owner & 0xffff) - 1] = s[i].deadline - s[i].begin;
	return n;
}

/* the modelled host in a pipeline: the same durations whatever the concurrency */
static void test_host_pipeline(void)
{
	struct observer_synthesis one[HOST_PARTS], six[HOST_PARTS];
	uint64_t d1[HOST_PARTS] = { 0 }, d6[HOST_PARTS] = { 0 }, d7[HOST_PARTS] = { 0 }, sum = 0;
	unsigned n1, n6, n7, same = 0, own = 0, chained = 0, at_once = 0, reseeded = 0, idle = 0;
	struct observer_regions reg;
	struct run r;
	const char *first;
	uint64_t last;

	run_host(&r, 1, 11);
	n1 = syntheses_of(one, d1);
	observer_device_regions(&r.res.model, &reg);
	CHECK(r.rc == PROVER_EXIT_OK && r.res.host_modelled, "one permit, the modelled host: "
	      "the run succeeds and says the host was modelled");
	CHECK_EQ_U64(observer_max_in(STAGE_synth), 1, "... one synthesis at a time");
	CHECK_EQ_U64(n1, HOST_PARTS, "... each partition's synthesis reported once");
	CHECK_EQ_U64(r.res.host.syntheses, HOST_PARTS, "... and counted in the host's account");
	for (unsigned i = 0; i < n1; i++) {
		own += one[i].deadline - one[i].begin ==
		       host_model_duration_ns(&r.res.host, one[i].owner);
		sum += one[i].deadline - one[i].begin;
		chained += i && one[i].begin == one[i - 1].deadline;
		idle += one[i].cpu < one[i].deadline - one[i].begin;
	}
	CHECK_EQ_U64(own, HOST_PARTS, "each lasted exactly its own seeded duration, by the "
		     "model's clock");
	CHECK_EQ_U64(r.res.host.modelled_ns, sum, "the account adds them up");
	CHECK_EQ_U64(idle, HOST_PARTS, "each thread used less CPU than its modelled time: it "
		     "waits out the rest, it does not spin");
	CHECK_EQ_U64(chained, HOST_PARTS - 1, "the permit passes on by the model's clock: each "
		     "synthesis begins exactly when the one before it ended (%llu overruns)",
		     (unsigned long long)r.res.host.overruns);
	last = one[0].begin + sum + gpu_model_kernel_of(&r.res.model, one[n1 - 1].owner);
	CHECK_EQ_U64(reg.last_end, last, "the last region ends, by the model's clock, exactly "
		     "the syntheses end to end plus its own kernel time after the job was admitted");
	CHECK_EQ_U64(r.res.model_makespan_s * 1e9 + 0.5, last - one[0].begin, "the modelled "
		     "makespan is that, from the admission (%.6f s)", r.res.model_makespan_s);
	CHECK_EQ_U64(reg.exact_kernel, HOST_PARTS, "every region lasted exactly its kernel time");
	CHECK_EQ_U64(observer_violations(&first), 0, "no contract violation (%s)", first);

	run_host(&r, HOST_PARTS, 11);
	n6 = syntheses_of(six, d6);
	CHECK(r.rc == PROVER_EXIT_OK, "six permits: the run succeeds");
	CHECK_EQ_U64(observer_max_in(STAGE_synth), HOST_PARTS, "... six syntheses at once");
	for (unsigned i = 0; i < n6; i++)
		at_once += six[i].begin == six[0].begin;
	CHECK_EQ_U64(at_once, HOST_PARTS, "... all beginning together, when the job was admitted");
	for (unsigned i = 0; i < HOST_PARTS; i++)
		same += d1[i] && d1[i] == d6[i];
	CHECK_EQ_U64(same, HOST_PARTS, "every partition's synthesis lasts what it lasted alone: "
		     "the modelled duration does not depend on how many run at once");
	run_host(&r, HOST_PARTS, 12);
	n7 = syntheses_of(six, d7);
	for (unsigned i = 0; i < n7; i++)
		reseeded += d7[i] != d6[i];
	CHECK_EQ_U64(reseeded, HOST_PARTS, "another --model-seed draws other durations");
}

/* the deferred check on its own: a sample passes only with the h_acc its witness gives */
static void test_deferred(void)
{
	const unsigned log_n = 10;
	struct circuit_shape sh;
	struct ntt_domain d;
	uint64_t *tables = malloc(ntt_table_bytes(log_n)), *fold, seed = 0x1234, sum = 0;
	struct witness w;
	struct hcheck_list l = { 0 };
	struct hcheck_sample s;
	struct hcheck_ctx ctx = { .shape = &sh, .dom = &d, .synth_rounds = 3, .extra_rounds = 1,
				  .x_seed = 99 };

	circuit_shape(log_n, &sh);
	ntt_domain_init(&d, log_n, tables);
	w.a = malloc(sh.n * 8), w.b = malloc(sh.n * 8), w.c = malloc(sh.n * 8);
	w.aux = malloc(sh.n_aux * 8), w.input = malloc(sh.n_input * 8);
	w.density = malloc(sh.density_bytes);
	fold = malloc(sh.n / 2 * 8);
	circuit_synthesize(&sh, seed, 3, &w);
	gpu_model_fold(w.a, w.b, w.c, sh.n, fold);
	for (size_t i = 0; i < sh.n / 2; i++)
		sum = gl_add(sum, fold[i]);

	s = (struct hcheck_sample){ .owner = 0x10001, .seed = seed, .h_acc = sum };
	CHECK(hcheck_add(&l, &s), "a sample is added");
	CHECK_EQ_U64(hcheck_run_deferred(&ctx, &l), 1, "the witness's own h_acc: H checked, "
		     "passed");
	l.v[0].h_acc = gl_add(sum, 1);
	CHECK_EQ_U64(hcheck_run_deferred(&ctx, &l), 0, "an h_acc the witness does not give: "
		     "failed (the device saw something else)");
	l.v[0].h_acc = sum;
	l.v[0].seed = seed + 1;
	CHECK_EQ_U64(hcheck_run_deferred(&ctx, &l), 0, "another witness than the proof's: failed");
	bool added = true;
	for (unsigned i = 0; i < 40; i++)
		added = hcheck_add(&l, &s) && added;
	CHECK(added && l.n == 41, "the list grows past its first allocation: 41 samples kept");
	hcheck_list_free(&l);
	CHECK_EQ_U64(hcheck_run_deferred(&ctx, &l), 0, "an empty list checks nothing");

	/* which partitions: ceil(total / every), the same set whatever the order */
	unsigned n = 0;
	for (unsigned seq = 1; seq <= 3; seq++)
		for (unsigned i = 0; i < 10; i++)
			n += hcheck_sampled(7, seq, 10, i);
	CHECK_EQ_U64(n, 5, "30 partitions, 1 in 7: partitions 0, 7, 14, 21, 28");
	CHECK(hcheck_sampled(7, 3, 10, 1) && !hcheck_sampled(7, 3, 10, 0),
	      "job 3's checked index is 1 (partition 21)");
	free(fold), free(w.density), free(w.input), free(w.aux);
	free(w.c), free(w.b), free(w.a), free(tables);
}

int main(void)
{
	test_formula();
	test_vary();
	test_fold();
	test_region();
	test_host();
	test_pipeline();
	test_host_pipeline();
	test_deferred();
	return check_done();
}
