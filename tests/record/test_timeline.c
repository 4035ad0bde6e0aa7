// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timeline model against the hand-computed answers of tests/record/scenario.h: peak and
 * its composition, state at known instants, owners' slices, memory x time, dwell, completions,
 * RSS, and the replay agreeing with the (modelled) kernel's final counters; then a lost event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "render/render.h"
#include "recording/rec_format.h"
#include "recording/rec_reader.h"
#include "model/timeline.h"
#include "model/timeline_replay.h"
#include <unistd.h>
#include "scenario.h"
#include "../../probes/prover_ids.h"

static struct recording *scenario_recording(unsigned opts)
{
	static struct script s;
	char path[] = "/tmp/test_timeline.XXXXXX";
	int fd = mkstemp(path);
	struct rec_writer *w;
	struct recording *r = NULL;
	char err[REC_ERR_LEN];

	if (fd < 0)
		return NULL;
	rec_writer__from_fd(fd, &w);
	scenario_write(&s, w, opts);
	rec_writer__close(w);
	close(fd);
	if (recording__open_file(path, 0, &r, err))
		printf("# read: %s\n", err);
	unlink(path); /* the reader keeps it open */
	return r;
}

/* owners' stays, collected by a cursor's hooks */
struct stay {
	__u64 owner, t0, t1;
	unsigned stage;
};

struct stays {
	struct stay v[64];
	int n;
	__u64 retired_at[4];
	unsigned kinds[4];
};

static int owner_index(__u64 owner)
{
	return owner == 0x200 ? 0 : owner == 0x101 ? 1 : owner == 0x102 ? 2 : 3;
}

static void on_stage(void *ctx, __u64 owner, struct tl_owner *o, unsigned from, unsigned to,
		     __u64 entered, __u64 ts, bool created)
{
	struct stays *st = ctx;

	(void)o;
	(void)to;
	(void)created;
	if (from < INFL_MAX_STAGES && st->n < 64)
		st->v[st->n++] = (struct stay){ owner, entered, ts, from };
}

static void on_retire(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts)
{
	struct stays *st = ctx;

	st->retired_at[owner_index(owner)] = ts;
	st->kinds[owner_index(owner)] = o->kind;
}

static const struct tl_hooks stay_hooks = { .stage_change = on_stage, .life_retire = on_retire };

static __u64 ms_of(__u64 ns)
{
	return (ns - SCRIPT_T0) / 1000000;
}

static __u64 byte_ms(const struct tl_proc *p, unsigned cls, unsigned slot)
{
	return (__u64)(p->byte_ns[cls][slot] / 1000000);
}

static void test_scenario(void)
{
	struct recording *r = scenario_recording(0);
	const struct tl_proc *p;
	struct timeline *tl;
	struct tl_cursor c;
	struct tl_sample smp;
	char what[256];

	CHECK(r != NULL, "scenario recorded");
	if (!r)
		return;
	CHECK(timeline__build(r, &tl, what) == 0, "timeline built (%s)", what);
	CHECK_EQ_U64(tl->nprocs, 1, "one process");
	p = timeline__primary(tl);
	CHECK_EQ_U64(p->pid, SCENARIO_PID, "primary process is the target");
	CHECK(!strcmp(p->comm, "prover"), "its name from the PROC record");
	CHECK_EQ_U64(timeline__check(p, what, sizeof(what)), 0,
		     "replay equals the kernel's final counters (%s)", what);
	CHECK(tl_proc__exact(p), "nothing lost: exact");
	/* the peak */
	CHECK_EQ_U64(p->peak_bytes, SCENARIO_PEAK, "peak bytes");
	CHECK_EQ_U64(ms_of(p->peak_ts), 210, "peak at 210 ms");
	CHECK_EQ_U64(p->peak[CLS_srs][INFL_SLOT_NONE].bytes, 1000, "peak: srs in no stage");
	CHECK_EQ_U64(p->peak[CLS_abc][STAGE_gpu].bytes, 300, "peak: abc in gpu");
	CHECK_EQ_U64(p->peak[CLS_pending][STAGE_gpu].bytes, 200, "peak: pending in gpu");
	CHECK_EQ_U64(p->peak[CLS_abc][STAGE_chan_send].bytes, 300, "peak: abc in chan_send");
	CHECK_EQ_U64(p->peak[CLS_aux][STAGE_chan_send].count, 1, "peak: one aux in chan_send");
	CHECK(p->peak_owners[STAGE_parse] == 1 && p->peak_owners[STAGE_chan_send] == 1 &&
	      p->peak_owners[STAGE_gpu] == 1, "peak: owners parse 1, chan_send 1, gpu 1");
	CHECK_EQ_U64(p->class_peak[CLS_abc], 600, "abc's own peak");
	CHECK_EQ_U64(ms_of(p->class_peak_ts[CLS_abc]), 70, "abc's own peak at 70 ms");
	/* state at an instant */
	tl_cursor__init(&c, p);
	tl_cursor__until(&c, script_ns(155));
	CHECK_EQ_U64(c.st->total_bytes, 1800, "at 155 ms: 1800 bytes");
	CHECK(c.st->owners[STAGE_parse] == 1 && c.st->owners[STAGE_chan_send] == 2 &&
	      c.st->owners[STAGE_synth] == 0, "at 155 ms: parse 1, chan_send 2, synth 0");
	CHECK_EQ_U64(tl_state__slot_bytes(c.st, STAGE_chan_send), 800, "at 155 ms: chan_send "
		     "holds 800 bytes");
	tl_cursor__sample(&c, script_ns(200), 100000000, &smp);
	CHECK_EQ_U64(smp.max_bytes, 2000, "step [200, 300) ms: max 2000");
	CHECK_EQ_U64(smp.at_end->total_bytes, 1700, "step [200, 300) ms: 1700 before the frees at 300");
	tl_cursor__until(&c, script_ns(1000));
	CHECK_EQ_U64(c.st->total_bytes, 0, "everything freed at the end");
	tl_cursor__free(&c);
	/* memory x time, byte-ms */
	CHECK_EQ_U64(byte_ms(p, CLS_srs, INFL_SLOT_NONE), 500000, "(none);srs");
	CHECK_EQ_U64(byte_ms(p, CLS_abc, STAGE_synth), 42000, "synth;abc");
	CHECK_EQ_U64(byte_ms(p, CLS_aux, STAGE_synth), 14000, "synth;aux");
	CHECK_EQ_U64(byte_ms(p, CLS_abc, STAGE_chan_send), 81000, "chan_send;abc");
	CHECK_EQ_U64(byte_ms(p, CLS_aux, STAGE_chan_send), 27000, "chan_send;aux");
	CHECK_EQ_U64(byte_ms(p, CLS_abc, STAGE_gpu), 24000, "gpu;abc");
	CHECK_EQ_U64(byte_ms(p, CLS_aux, STAGE_gpu), 10000, "gpu;aux");
	CHECK_EQ_U64(byte_ms(p, CLS_pending, STAGE_gpu), 16000, "gpu;pending");
	CHECK_EQ_U64(byte_ms(p, CLS_aux, STAGE_finalize), 8000, "finalize;aux");
	CHECK_EQ_U64(byte_ms(p, CLS_pending, STAGE_finalize), 16000, "finalize;pending");
	/* owners */
	CHECK_EQ_U64(p->nlives, 3, "three owner lives");
	{
		static struct stays st;
		static const unsigned stg[] = { STAGE_wait_permit, STAGE_synth, STAGE_chan_send,
						STAGE_gpu, STAGE_finalize };
		static const unsigned t0[] = { 20, 30, 100, 200, 260 }, t1[] = { 30, 100, 200,
										   260, 310 };
		int good = 0, n101 = 0, n200 = 0;

		tl_cursor__init_hooks(&c, p, &stay_hooks, NULL, &st);
		tl_cursor__until(&c, script_ns(10000));
		tl_cursor__free(&c);
		for (int i = 0; i < st.n; i++) {
			n101 += st.v[i].owner == 0x101;
			n200 += st.v[i].owner == 0x200;
		}
		for (int i = 0, k = 0; i < st.n && k < 5; i++) {
			if (st.v[i].owner != 0x101)
				continue;
			good += st.v[i].stage == stg[k] && ms_of(st.v[i].t0) == t0[k] &&
				ms_of(st.v[i].t1) == t1[k];
			k++;
		}
		/* the stay in `done` ends with the retirement: no stay is reported for it */
		CHECK(n101 == 5 && n200 == 2, "stays per owner: 0x101 5, 0x200 2 (%d, %d)", n101,
		      n200);
		CHECK_EQ_U64(good, 5, "owner 0x101's stays: stages and times");
		CHECK(ms_of(st.retired_at[1]) == 310, "0x101 retired at 310 ms");
		CHECK_EQ_U64(st.kinds[1], STAGE_wait_permit, "0x101 is a wait_permit-kind owner");
	}
	CHECK_EQ_U64(p->dwell_sum_ns[STAGE_chan_send] / p->dwell_count[STAGE_chan_send] / 1000000,
		     135, "mean dwell in chan_send");
	CHECK_EQ_U64(p->dwell_sum_ns[STAGE_synth] / p->dwell_count[STAGE_synth] / 1000000, 80,
		     "mean dwell in synth");
	CHECK_EQ_U64(p->dwell_sum_ns[STAGE_parse] / 1000000, 410, "dwell in parse");
	CHECK_EQ_U64(p->retired, 3, "three owners done");
	CHECK_EQ_U64(p->retired_by_kind[STAGE_wait_permit], 2, "two of kind wait_permit");
	CHECK_EQ_U64(p->retired_by_kind[STAGE_parse], 1, "one of kind parse");
	CHECK_EQ_U64(p->started, 3, "three started at an entry stage");
	CHECK_EQ_U64(p->unmatched_free, 1, "one unmatched free");
	CHECK_EQ_U64(p->unmatched_free_bytes, 50, "of 50 bytes");
	/* time and RSS */
	CHECK_EQ_U64(ms_of(p->t_end), 600, "the process ended at 600 ms");
	CHECK_EQ_U64(p->nrss, 3, "three kernel RSS samples (statm ones set aside)");
	CHECK(p->rss_kernel, "the kernel's RSS series is the one used");
	CHECK_EQ_U64(p->rss_peak, 2600, "RSS peak");
	CHECK_EQ_U64(ms_of(p->rss_peak_ts), 160, "RSS peak at 160 ms");
	CHECK_EQ_U64(p->rss_at_peak, 2600, "RSS at the tracked peak (210 ms)");
	tl_cursor__init(&c, p);
	tl_cursor__until(&c, script_ns(100));
	CHECK_EQ_U64(tl_cursor__rss_at(&c, script_ns(100)), 1500, "RSS at 100 ms");
	tl_cursor__until(&c, script_ns(200));
	CHECK_EQ_U64(tl_cursor__rss_at(&c, script_ns(200)), 2600, "RSS at 200 ms");
	tl_cursor__free(&c);
	/* the summary's figures, as the replay counts them, equal the kernel's */
	{
		const struct infl_proc *k = p->kernel_final, *f = &p->fig;

		CHECK(k && f->peak_bytes == k->peak_bytes && f->peak_ns == k->peak_ns &&
		      f->owners_started == k->owners_started && f->owners_done == k->owners_done &&
		      !memcmp(f->events, k->events, sizeof(f->events)) &&
		      !memcmp(f->dwell_count, k->dwell_count, sizeof(f->dwell_count)) &&
		      !memcmp(f->dwell_sum_ns, k->dwell_sum_ns, sizeof(f->dwell_sum_ns)) &&
		      !memcmp(f->dwell_hist, k->dwell_hist, sizeof(f->dwell_hist)) &&
		      !memcmp(f->unmatched_free, k->unmatched_free, sizeof(f->unmatched_free)) &&
		      f->first_ns == k->first_ns && f->exit_ns == k->exit_ns,
		      "replayed figures (events, dwell and its histogram, peak, owners, unmatched) "
		      "equal the kernel's");
		CHECK_EQ_U64(f->rss_peak, k->rss_peak, "replayed RSS peak");
	}
	timeline__free(tl);
	recording__free(r);
}

static void test_lost_event(void)
{
	struct recording *r = scenario_recording(SCENARIO_DROP_ONE);
	char err[REC_ERR_LEN];
	const struct tl_proc *p;
	struct timeline *tl;

	if (!r || timeline__build(r, &tl, err)) {
		CHECK(0, "scenario with a drop built");
		return;
	}
	p = timeline__primary(tl);
	CHECK_EQ_U64(p->seq_gaps, 1, "the dropped event shows as a gap in seq");
	CHECK_EQ_U64(p->lost_kernel, 1, "and as a LOST record");
	CHECK(!tl_proc__exact(p), "the timeline says it is inexact");
	/* 0x102's move to chan_send was lost: its later events disagree with our slot */
	CHECK(p->diverged > 0, "the divergence is seen (%llu events)",
	      (unsigned long long)p->diverged);
	timeline__free(tl);
	recording__free(r);
}

/* A scenario's text and JSON reports; 0 when it built. */
static int scenario_reports(unsigned opts, char **text, char **json)
{
	struct recording *r = scenario_recording(opts);
	struct render_opts o = { 0 };
	char err[REC_ERR_LEN];
	size_t tlen = 0, jlen = 0;
	struct timeline *tl;
	FILE *f;

	*text = *json = NULL;
	if (!r || timeline__build(r, &tl, err)) {
		if (r)
			recording__free(r);
		return -1;
	}
	f = open_memstream(text, &tlen);
	render__text(f, tl, &o);
	fclose(f);
	f = open_memstream(json, &jlen);
	render__json(f, tl, &o);
	fclose(f);
	timeline__free(tl);
	recording__free(r);
	return 0;
}

/* What only the kernel counts (its final counters) reaches every output of a report, as it
 * does the live summary: lock timeouts make the text say INEXACT and the JSON's "exact"
 * false; hits that waited on another thread leave both exact and are noted, each reason
 * with its count; the JSON has the counts either way. */
static void test_kernel_counters(void)
{
	static const struct {
		const char *name;
		unsigned opts;
		bool exact;
		const char *text[2], *json[3];
	} cases[] = {
		{ "no anomalies", 0, true, { NULL }, { "\"lock_timeouts\":0", "\"slot_waits\":0" } },
		{ "lock timeouts", SCENARIO_LOCK_TIMEOUTS, false,
		  { "  INEXACT  the kernel skipped updates (docs/cli.md); the figures above are "
		    "approximate:\n           2 updates skipped: the lock stayed held (lock "
		    "timeouts)\n" },
		  { "\"lock_timeouts\":2" } },
		{ "waits", SCENARIO_WAITS, true,
		  { "  noted    3 probe hits waited for room: the queue behind the lock was full\n",
		    "  noted    1 probe hit waited for the lock: the pool had no queue memory "
		    "free\n" },
		  { "\"slot_waits\":3", "\"pool_waits\":1", "\"lock_timeouts\":0" } },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *n = cases[c].name;
		char *text, *json;

		if (scenario_reports(cases[c].opts, &text, &json)) {
			CHECK(0, "%s: the scenario built", n);
			continue;
		}
		CHECK((strstr(text, "INEXACT") == NULL) == cases[c].exact,
		      "%s: the text report %s INEXACT", n, cases[c].exact ? "never says" : "says");
		CHECK(strstr(json, cases[c].exact ? "\"exact\":true" : "\"exact\":false") != NULL,
		      "%s: the JSON's exact is %s", n, cases[c].exact ? "true" : "false");
		if (!cases[c].text[0])
			CHECK(strstr(text, "noted") == NULL, "%s: nothing noted", n);
		for (size_t i = 0; i < 2 && cases[c].text[i]; i++)
			CHECK(strstr(text, cases[c].text[i]) != NULL, "%s: the text says \"%.60s\"", n,
			      cases[c].text[i]);
		for (size_t i = 0; i < 3 && cases[c].json[i]; i++)
			CHECK(strstr(json, cases[c].json[i]) != NULL, "%s: the JSON has %s", n,
			      cases[c].json[i]);
		free(text);
		free(json);
	}
}

/* Frees of unknown buffers are told apart as the kernel counted them (its flags): in a process
 * traced from its start, a double free, never "from before the recording". */
static void test_double_free(void)
{
	struct recording *r = scenario_recording(SCENARIO_FROM_START);
	struct render_opts o = { 0 };
	char err[REC_ERR_LEN], *text = NULL, *json = NULL;
	size_t tlen = 0, jlen = 0;
	const struct tl_proc *p;
	struct timeline *tl;
	FILE *f;

	if (!r || timeline__build(r, &tl, err)) {
		CHECK(0, "scenario from its start built");
		if (r)
			recording__free(r);
		return;
	}
	p = timeline__primary(tl);
	CHECK_EQ_U64(p->double_free, 1, "from its start: the early free is a double free");
	CHECK_EQ_U64(p->unmatched_free, 0, "... not a free from before the recording");
	CHECK_EQ_U64(p->fig.double_free, 1, "... in the figures every output shares");
	CHECK(p->fig.flags & INFL_PROC_FROM_START, "... which know it was traced from its start");
	f = open_memstream(&text, &tlen);
	render__text(f, tl, &o);
	fclose(f);
	f = open_memstream(&json, &jlen);
	render__json(f, tl, &o);
	fclose(f);
	CHECK(strstr(text, "  not from before the attach: 1 free of buffers not live (double frees)\n") != NULL,
	      "the text says a double free");
	CHECK(strstr(text, "late attach") == NULL, "... and no late attach");
	CHECK(strstr(json, "\"double_free\":1") != NULL && strstr(json, "\"from_start\":true") != NULL,
	      "the JSON: double_free 1, from_start true");
	free(text);
	free(json);
	timeline__free(tl);
	recording__free(r);
}


/* ---- a double alloc (scenario.h's second run) ---- */

static struct recording *dup_recording(unsigned opts)
{
	static struct script s;
	char path[] = "/tmp/test_timeline.XXXXXX";
	int fd = mkstemp(path);
	struct rec_writer *w;
	struct recording *r = NULL;
	char err[REC_ERR_LEN];

	if (fd < 0)
		return NULL;
	rec_writer__from_fd(fd, &w);
	scenario_dup_write(&s, w, opts);
	rec_writer__close(w);
	if (opts & SCENARIO_DUP_V15)
		script_set_minor(fd, 5);
	close(fd);
	if (recording__open_file(path, 0, &r, err))
		printf("# read: %s\n", err);
	unlink(path);
	return r;
}

struct retired_at {
	__u64 owner, ts;
	int n;
};

static void on_dup_retire(void *ctx, __u64 owner, struct tl_owner *o, __u64 ts)
{
	struct retired_at *ra = ctx;

	(void)o;
	ra->owner = owner;
	ra->ts = ts;
	ra->n++;
}

static const struct tl_hooks dup_hooks = { .life_retire = on_dup_retire };

/* The state after the first n events of the process, in accounting order. */
static void state_after(const struct tl_proc *p, int n, struct tl_state *out)
{
	struct tl_cursor c;

	memset(out, 0, sizeof(*out));
	if (tl_cursor__init(&c, p))
		return;
	for (int i = 0; i < n && tl_cursor__step(&c); i++)
		;
	*out = *c.st;
	tl_cursor__free(&c);
}

static void test_double_alloc(void)
{
	static const struct {
		const char *name;
		unsigned opts;
		__u64 peak, retired_ms, done_abc, after7, places;
	} cases[] = {
		{ "1.6", 0, 900, 40, 3000, 600, 9 },
		{ "1.6, the old buffer out after another hit", SCENARIO_DUP_DEFER, 900, 50, 6000,
		  800, 9 },
		{ "1.5", SCENARIO_DUP_V15, 600, 0, 3000, 500, 8 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const char *n = cases[k].name;
		bool v15 = cases[k].opts & SCENARIO_DUP_V15;
		struct recording *r = dup_recording(cases[k].opts);
		static struct retired_at ra;
		const struct tl_proc *p;
		struct timeline *tl;
		struct tl_cursor c;
		struct tl_state st;
		char what[256];

		if (!CHECK(r != NULL, "%s: recorded", n))
			continue;
		CHECK(recording__dup_free(r) == !v15, "%s: the reader knows its version (1.%u)", n,
		      r->format_minor);
		if (!CHECK(timeline__build(r, &tl, what) == 0, "%s: timeline built (%s)", n, what)) {
			recording__free(r);
			continue;
		}
		p = timeline__proc(tl, SCENARIO_DUP_PID);
		CHECK_EQ_U64(timeline__check(p, what, sizeof(what)), 0,
			     "%s: the replay equals the kernel's final counters (%s)", n, what);
		CHECK(tl_proc__exact(p) && !p->diverged, "%s: exact, nothing diverged", n);
		CHECK_EQ_U64(p->fig.seq, cases[k].places, "%s: places in the order", n);
		CHECK_EQ_U64(p->peak_bytes, cases[k].peak, "%s: the peak", n);
		CHECK(ms_of(p->peak_ts) == 40 && p->peak_seq == 6, "%s: the peak at 40 ms, the "
		      "alloc's place", n);
		CHECK(p->peak[CLS_pending][INFL_SLOT_NONE].bytes == 500 &&
		      p->peak[CLS_aux][INFL_SLOT_NONE].bytes == 100 &&
		      p->peak[CLS_abc][STAGE_done].bytes == (v15 ? 0 : 300) &&
		      p->peak_owners[STAGE_done] == 1, "%s: the peak's composition", n);
		CHECK(!memcmp(p->fig.events, p->kernel_final->events, sizeof(p->fig.events)) &&
		      p->fig.events[INFL_PROBE_FREE] == 2, "%s: probe hits as the kernel counts "
		      "them (2 frees)", n);
		CHECK(p->dups == 1 && p->fig.dup_alloc == p->kernel_final->dup_alloc,
		      "%s: one double alloc", n);
		CHECK_EQ_U64(p->retired, !v15, "%s: owners done", n);
		CHECK(p->final.total_bytes == 0 && p->final.owners[STAGE_done] == v15 &&
		      p->live_at_end == v15, "%s: at the end, nothing in flight; %s", n,
		      v15 ? "the owner left in done" : "no owner left");
		CHECK(byte_ms(p, CLS_abc, STAGE_synth) == 6000 &&
		      byte_ms(p, CLS_abc, STAGE_done) == cases[k].done_abc &&
		      byte_ms(p, CLS_aux, INFL_SLOT_NONE) == 2500 &&
		      byte_ms(p, CLS_pending, INFL_SLOT_NONE) == 10000, "%s: memory x time", n);
		state_after(p, 6, &st);
		CHECK(st.total_bytes == cases[k].peak && st.total_bufs == (v15 ? 2 : 3),
		      "%s: after the alloc: %llu bytes in %llu buffers", n,
		      (unsigned long long)st.total_bytes, (unsigned long long)st.total_bufs);
		state_after(p, 7, &st);
		CHECK_EQ_U64(st.total_bytes, cases[k].after7, "%s: after the next place", n);
		memset(&ra, 0, sizeof(ra));
		if (!tl_cursor__init_hooks(&c, p, &dup_hooks, NULL, &ra)) {
			tl_cursor__until(&c, script_ns(47));
			CHECK(!(cases[k].opts & SCENARIO_DUP_DEFER) || c.st->total_bytes == 800,
			      "%s: at 47 ms", n);
			tl_cursor__until(&c, script_ns(1000));
			tl_cursor__free(&c);
		}
		CHECK(ra.n == !v15 && (v15 || (ra.owner == SCENARIO_DUP_OWNER &&
					      ms_of(ra.ts) == cases[k].retired_ms)),
		      "%s: the owner retired %s", n,
		      v15 ? "never" : "by the free of the replaced buffer");
		timeline__free(tl);
		recording__free(r);
	}
}

/* The replay alone (1.6): events as the kernel sends them when threads race on one id. */
static void test_double_alloc_races(void)
{
	struct ev_spec {
		__u8 type, flags;
		__u64 bytes, total;
	};
	static const struct {
		const char *name;
		struct ev_spec ev[5];
		int n;
	} cases[] = {
		{ "two threads allocate the id at once: each replaced one goes by its own free",
		  { { INFL_EV_ALLOC, 0, 100, 100 }, { INFL_EV_ALLOC, INFL_EVF_DUP, 200, 300 },
		    { INFL_EV_ALLOC, INFL_EVF_DUP, 400, 700 }, { INFL_EV_FREE, INFL_EVF_DUP, 200, 500 },
		    { INFL_EV_FREE, INFL_EVF_DUP, 100, 400 } }, 5 },
		{ "... of the same size",
		  { { INFL_EV_ALLOC, 0, 100, 100 }, { INFL_EV_ALLOC, INFL_EVF_DUP, 100, 200 },
		    { INFL_EV_ALLOC, INFL_EVF_DUP, 100, 300 }, { INFL_EV_FREE, INFL_EVF_DUP, 100, 200 },
		    { INFL_EV_FREE, INFL_EVF_DUP, 100, 100 } }, 5 },
		{ "the new buffer freed before the old one goes",
		  { { INFL_EV_ALLOC, 0, 100, 100 }, { INFL_EV_ALLOC, INFL_EVF_DUP, 200, 300 },
		    { INFL_EV_FREE, 0, 200, 100 }, { INFL_EV_FREE, INFL_EVF_DUP, 100, 0 } }, 4 },
		{ "an alloc that replaced one, then was not tracked after all",
		  { { INFL_EV_ALLOC, 0, 100, 100 }, { INFL_EV_ALLOC, INFL_EVF_UNTRACKED, 200, 100 },
		    { INFL_EV_FREE, INFL_EVF_DUP, 100, 0 } }, 3 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct tl_replay *rp = tl_replay__new(0, 0, true, NULL, NULL);
		int good = 0;

		if (!CHECK(rp != NULL, "replay made"))
			return;
		for (int i = 0; i < cases[k].n; i++) {
			const struct ev_spec *e = &cases[k].ev[i];
			struct infl_event ev = { .ts_ns = 1000 + i, .seq = i + 1, .pid = 9,
						 .type = e->type, .id = CLS_abc, .flags = e->flags,
						 .from_slot = INFL_SLOT_NONE, .arg0 = 0x10,
						 .arg1 = e->bytes };

			tl_replay__apply(rp, &ev);
			good += rp->st.total_bytes == e->total &&
				rp->st.cur[CLS_abc][INFL_SLOT_NONE].bytes == e->total;
		}
		CHECK(good == cases[k].n && !rp->diverged && rp->bufs.n == rp->st.total_bufs &&
		      rp->aside.n == 0, "%s: the total after every event, nothing diverged",
		      cases[k].name);
		tl_replay__free(rp);
	}
}

/* A dump whose window began between a double alloc and the free of the buffer it replaced:
 * both are carried, the later one flagged a double alloc, and the window's free finds its own. */
static void test_double_alloc_carried(void)
{
	struct infl_names n;
	struct rec_header_info h = { .host = "h", .binary = "/bin/prover", .mode = 1,
				     .tool = "t", .start_mono_ns = 1000 };
	struct rec_dump_info d = { .trigger = "signal", .detail = "", .trigger_ns = 1500,
				   .window_ns = 1000, .ring_ns = 60, .number = 1 };
	struct infl_event ev[] = {
		{ .ts_ns = 1000, .seq = 39, .pid = 7, .type = INFL_EV_ALLOC, .id = CLS_abc,
		  .flags = REC_EVF_CARRIED, .from_slot = INFL_SLOT_NONE, .arg0 = 0x10,
		  .arg1 = 300 },
		{ .ts_ns = 1000, .seq = 40, .pid = 7, .type = INFL_EV_ALLOC, .id = CLS_aux,
		  .flags = REC_EVF_CARRIED | INFL_EVF_DUP, .from_slot = INFL_SLOT_NONE,
		  .arg0 = 0x10, .arg1 = 700 },
		{ .ts_ns = 1100, .seq = 41, .pid = 7, .type = INFL_EV_FREE, .id = CLS_abc,
		  .flags = INFL_EVF_DUP, .from_slot = INFL_SLOT_NONE, .arg0 = 0x10, .arg1 = 300 },
	};
	static struct infl_proc st;
	__u32 pid = 7;
	struct rec_end_info e = { .mono_ns = 2000, .exit_status = -1, .nprocs = 1, .pids = &pid,
				  .procs = &st };
	char path[] = "/tmp/test_timeline.XXXXXX", err[REC_ERR_LEN];
	int fd = mkstemp(path);
	struct recording *r = NULL;
	struct timeline *tl = NULL;
	const struct tl_proc *p;
	struct rec_writer *w;

	if (!CHECK(fd >= 0, "a temporary file"))
		return;
	script_prover_names(&n);
	h.names = &n;
	memset(&st, 0, sizeof(st));
	st.seq = 41;
	st.cur[CLS_aux][INFL_SLOT_NONE] = (struct infl_cell){ 1, 700 };
	st.total_bytes = 700;
	st.total_bufs = 1;
	st.peak_bytes = 1000; /* before the window */
	st.peak_seq = 40;
	st.dup_alloc = 1;
	rec_writer__from_fd(fd, &w);
	rec_writer__header(w, &h);
	rec_writer__dump(w, &d);
	rec_writer__proc(w, 7, 1000, "prover", "prover", 0, NULL);
	rec_writer__start(w, 1000, 7, 40, 2, 0);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		rec_writer__event(w, &ev[i]);
	rec_writer__end(w, &e);
	rec_writer__close(w);
	close(fd);
	if (recording__open_file(path, 0, &r, err) || timeline__build(r, &tl, err)) {
		CHECK(0, "the dump reads (%s)", err);
		recording__free(r);
		unlink(path);
		return;
	}
	unlink(path);
	p = timeline__proc(tl, 7);
	CHECK(p && p->carried_bufs == 2 && !p->diverged && !p->seq_gaps, "both carried, nothing "
	      "diverged");
	CHECK(p && p->final.total_bytes == 700 && p->final.cur[CLS_aux][INFL_SLOT_NONE].count == 1 &&
	      !timeline__check(p, err, sizeof(err)),
	      "the free took the carried buffer it names, not the live one (%s)", err);
	CHECK(p && p->events[INFL_EV_FREE] == 0 && p->dups == 1,
	      "no probe hit; one double alloc, its free");
	timeline__free(tl);
	recording__free(r);
}

int main(void)
{
	test_scenario();
	test_lost_event();
	test_kernel_counters();
	test_double_free();
	test_double_alloc();
	test_double_alloc_races();
	test_double_alloc_carried();
	return check_done();
}
