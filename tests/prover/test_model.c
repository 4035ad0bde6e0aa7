// SPDX-License-Identifier: BSD-2-Clause
/*
 * The modelled GPU: its kernel time is the work at the rate (exact figures), a region lasts
 * at least that long and costs its thread next to no CPU (it sleeps, the cores stay with
 * synthesis), a starved fold is counted as an overrun, and in a whole pipeline the regions
 * follow one another behind the device lock (never two at once) while both GPU workers of
 * the device hold a partition. The deferred H check passes on what the device saw and
 * fails when the proof and the witness disagree. Bounds here are structural (a sleep on an
 * absolute deadline never ends early); no test asserts a speed.
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
#include "hpoly.h"
#include "observer.h"
#include "pipeline.h"
#include "rng.h"

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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* one region outside any pipeline: its length, its CPU, its account */
static void test_region(void)
{
	enum { N = 1 << 12 };
	static uint64_t a[N], b[N], c[N], out[N / 2];
	struct observer_regions r;
	struct gpu_model m;
	uint64_t t0, t1;

	for (size_t i = 0; i < N; i++)
		a[i] = b[i] = c[i] = i;
	gpu_model_init(&m, 12, 0, 1);
	CHECK_EQ_U64(m.kernel_ns, gpu_model_ops(12, 0) * 1000, "2^12 at 1 Mop/s: %llu ns",
		     (unsigned long long)m.kernel_ns);
	m.kernel_ns = 30000000; /* 30 ms, to see it against the thread's CPU time */
	observer_reset();
	t0 = mono_ns();
	gpu_model_region(&m, 0, a, b, c, N, out);
	t1 = mono_ns();
	observer_device_regions(&r);
	CHECK(t1 - t0 >= m.kernel_ns, "the region lasts at least its kernel time (%llu ns)",
	      (unsigned long long)(t1 - t0));
	CHECK_EQ_U64(r.count, 1, "the observer saw one region");
	CHECK(r.min_ns >= m.kernel_ns, "... at least kernel_ns long, by its own clock");
	CHECK(r.max_cpu_ns < m.kernel_ns / 10, "... using under a tenth of it in CPU time (%llu "
	      "ns): the device's time is not the cores'", (unsigned long long)r.max_cpu_ns);
	CHECK_EQ_U64(m.regions, 1, "the account: one region");
	CHECK(m.busy_ns >= m.kernel_ns, "the account: busy at least kernel_ns");
	CHECK_EQ_U64(m.overruns, 0, "no overrun: the fold fits in 30 ms");
	CHECK_EQ_U64(out[1], 2 + 3 + 2 + 3, "the stand-in output is the fold");

	m.kernel_ns = 0; /* any fold outlasts a zero kernel time */
	gpu_model_region(&m, 0, a, b, c, N, out);
	CHECK_EQ_U64(m.overruns, 1, "a fold longer than the kernel time is an overrun");
	CHECK(m.overrun_ns > 0, "... with its length counted");
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
		.h_check_every = every,
		.gen = { .partitions = 6, .slice_bytes = 64, .sector_num = 1, .seed = 1 },
		.stop = &never,
	} };
	observer_reset();
	r->rc = pipeline_run(&r->cfg, &r->res);
}

static void test_pipeline(void)
{
	uint64_t kernel = gpu_model_kernel_ns(gpu_model_ops(10, 0), 2);
	struct observer_regions reg;
	struct run r, r2;
	const char *first;

	run_model(&r, RELEASE_AFTER_SYNTH, 5);
	observer_device_regions(&reg);
	CHECK_EQ_U64(r.rc, PROVER_EXIT_OK, "a modelled run succeeds");
	CHECK(r.res.modelled, "... and says it was modelled");
	CHECK_EQ_U64(r.res.model.kernel_ns, kernel, "... with the kernel time of its work");
	CHECK_EQ_U64(reg.count, 12, "one device region per partition");
	CHECK(!reg.overlap, "no two regions at once: the device serialises behind its lock");
	CHECK(reg.min_ns >= kernel, "every region lasts its kernel time at least");
	CHECK(reg.max_cpu_ns < kernel / 2, "no region used half its time in CPU (%llu ns)",
	      (unsigned long long)reg.max_cpu_ns);
	CHECK(r.res.wall_s * 1e9 >= 12.0 * kernel, "the run lasts at least 12 kernel times "
	      "(%.3f s): one device, one region at a time", r.res.wall_s);
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
	test_fold();
	test_region();
	test_pipeline();
	test_deferred();
	return check_done();
}
