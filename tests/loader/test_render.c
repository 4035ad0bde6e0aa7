// SPDX-License-Identifier: BSD-2-Clause
/*
 * live.c and summary.c on a synthetic snapshot with known contents: the exact text of the
 * timeline and the summary, every line within 80 columns, and the JSON forms parsed back
 * (json-c) with their numbers checked.
 */
#include <json-c/json.h>
#include "check.h"
#include "inflight_note.h"
#include "live/live.h"
#include "prover_ids.h"
#include "live/summary.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)
#define KiB (1ull << 10)
#define S 1000000000ull

static const char prover_text[] = INFLIGHT__NOTE_TEXT("prover", PROVER_CLASSES, PROVER_STAGES);

static void cell(struct infl_cell c[INFL_MAX_CLASSES][INFL_SLOTS], int cls, int slot,
		 __u64 count, __u64 bytes)
{
	c[cls][slot].count = count;
	c[cls][slot].bytes = bytes;
}

/* The pile-up of the story, in small: partitions waiting in chan_send hold abc + aux. */
static void fill(struct infl_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->first_ns = 10 * S;
	p->last_ns = 14 * S;
	cell(p->cur, CLS_srs, INFL_SLOT_NONE, 1, 44 * GiB);
	cell(p->cur, CLS_abc, STAGE_synth, 6, 6 * GiB);
	cell(p->cur, CLS_aux, STAGE_synth, 2, 2 * GiB);
	cell(p->cur, CLS_input, STAGE_synth, 2, 2 * KiB);
	cell(p->cur, CLS_density, STAGE_synth, 2, 20 * MiB);
	cell(p->cur, CLS_abc, STAGE_chan_send, 12, 12 * GiB);
	cell(p->cur, CLS_aux, STAGE_chan_send, 4, 4 * GiB);
	cell(p->cur, CLS_input, STAGE_chan_send, 4, 4 * KiB);
	cell(p->cur, CLS_density, STAGE_chan_send, 4, 40 * MiB);
	cell(p->cur, CLS_aux, STAGE_done, 1, 1 * GiB);
	p->owners[STAGE_wait_permit] = 3;
	p->owners[STAGE_synth] = 2;
	p->owners[STAGE_chan_send] = 4;
	p->owners[STAGE_done] = 1;
	/* 44 + 6 + 2 + 12 + 4 + 1 GiB, 60 MiB, 6 KiB in 38 buffers */
	p->total_bytes = 69 * GiB + 60 * MiB + 6 * KiB;
	p->total_bufs = 38;

	memcpy(p->peak, p->cur, sizeof(p->peak));
	memcpy(p->peak_owners, p->owners, sizeof(p->peak_owners));
	cell(p->peak, CLS_abc, STAGE_gpu_queue, 3, 3 * GiB);
	cell(p->peak, CLS_aux, STAGE_gpu_queue, 1, 1 * GiB);
	p->peak_owners[STAGE_gpu_queue] = 1;
	p->peak_bytes = p->total_bytes + 4 * GiB;
	p->peak_bufs = 42;
	p->peak_ns = 12500000000ull;
	p->peak_seq = 321;

	p->rss_total = 100 * GiB;
	p->rss_peak = 110 * GiB;
	p->rss_peak_ns = 13 * S;
	p->tracked_at_rss_peak = 70 * GiB;

	p->events[INFL_PROBE_ALLOC] = 100;
	p->events[INFL_PROBE_FREE] = 62;
	p->events[INFL_PROBE_STAGE] = 200;
	p->owners_started = 14;
	p->owners_done = 4;

	p->dwell_count[STAGE_synth] = 3;
	p->dwell_sum_ns[STAGE_synth] = 90000000;
	p->dwell_hist[STAGE_synth][14] = 3; /* 16.4 .. 32.8 ms */
	p->dwell_count[STAGE_chan_send] = 2;
	p->dwell_sum_ns[STAGE_chan_send] = 2000000;
	p->dwell_hist[STAGE_chan_send][9] = 1;
	p->dwell_hist[STAGE_chan_send][10] = 1;

	p->unmatched_free[CLS_aux].count = 1;
	p->unmatched_free[CLS_aux].bytes = 1 * GiB;
	p->unmatched_stage[STAGE_synth] = 2;
	p->dup_alloc = 1;
	p->lock_timeouts = 2;
}

static char *render(void (*fn)(FILE *f, void *ctx), void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, ctx);
	fclose(f);
	return buf;
}

static void expect_text(const char *got, const char *want, const char *what)
{
	int max = 0, col = 0;

	if (!CHECK(!strcmp(got, want), "%s: exact text", what)) {
		printf("# --- got:\n%s# --- want:\n%s# ---\n", got, want);
		return;
	}
	for (const char *c = got; *c; c++) {
		col = *c == '\n' ? 0 : col + 1;
		if (col > max)
			max = col;
	}
	CHECK(max <= 79, "%s: every line within 79 columns (widest %d)", what, max);
}

struct ctx {
	struct snapshot snap;
	struct infl_names names;
	bool json, wide, tty;
	int prints;
	struct summary_info info;
};

static void live_fn(FILE *f, void *p)
{
	struct ctx *c = p;
	struct live_opts lo = { .json = c->json, .wide = c->wide, .tty = c->tty,
				.interval_ns = S };
	struct live *l = live__new(&lo, &c->names, f);

	for (int i = 0; i < (c->prints ? c->prints : 1); i++)
		live__print(l, &c->snap);
	live__free(l);
}

static void summary_fn(FILE *f, void *p)
{
	struct ctx *c = p;

	c->info.json = c->json;
	summary__print(f, &c->snap, &c->names, &c->info);
}

static const char live_text[] =
	"inflight: times are seconds since the first probe event (pid 4242)\n"
	"pid 4242  +3.00s  tracked 69.1 GiB  rss 100 GiB  untracked 30.9 GiB\n"
	"stage       owners   bufs     bytes        srs        abc        aux      other\n"
	"wait_permit      3      0         0          -          -          -          -\n"
	"synth            2     12  8.02 GiB          -    6/6.00G    2/2.00G    4/20.0M\n"
	"chan_send        4     24  16.0 GiB          -   12/12.0G    4/4.00G    8/40.0M\n"
	"done             1      1  1.00 GiB          -          -    1/1.00G          -\n"
	"(none)           0      1  44.0 GiB    1/44.0G          -          -          -\n"
	"total           10     38  69.1 GiB    1/44.0G   18/18.0G    7/7.00G   12/60.0M\n"
	"peak 73.1 GiB at +2.50s  probe events 362  INEXACT (see summary)\n"
	"\n";

static void test_live(struct ctx *c)
{
	char *out;
	struct json_object *root, *proc, *stages, *x;

	c->json = false;
	out = render(live_fn, c);
	expect_text(out, live_text, "live text");
	free(out);

	c->wide = true;
	out = render(live_fn, c);
	if (!CHECK(strstr(out, "      input    density\n") && strstr(out, " 2/20.0M\n") &&
			   !strstr(out, "other"),
		   "--wide: a column for each of the 5 classes, no \"other\""))
		printf("# --- got:\n%s", out);
	free(out);
	c->wide = false;

	/* on a terminal: one screen redrawn in place, each line erased to its end */
	c->tty = true;
	c->prints = 2;
	out = render(live_fn, c);
	{
		const char *second = strstr(out + 7, "\033[H");
		int frames = 0;

		for (const char *x = out; (x = strstr(x, "inflight  every 1.00 s")); x++)
			frames++;
		CHECK(!strncmp(out, "\033[2J\033[H", 7) && second && strncmp(second - 4, "\033[2J", 4) &&
		      strstr(out, "peak 73.1 GiB at +2.50s  probe events 362  INEXACT (see summary)\033[K\n") &&
		      strstr(second, "\033[J") && frames == 2 &&
		      strstr(out, "times: seconds since the first probe event (pid 4242)"),
		      "in place: cleared once, then homed; lines erased to their end, the screen "
		      "below the frame erased");
	}
	free(out);
	c->tty = false;
	c->prints = 0;

	c->json = true;
	out = render(live_fn, c);
	CHECK(strchr(out, '\n') == out + strlen(out) - 1, "live JSON: one line");
	root = json_tokener_parse(out);
	CHECK(root != NULL, "live JSON parses");
	if (!root) {
		printf("# %s", out);
		free(out);
		return;
	}
	CHECK(!strcmp(json_object_get_string(json_object_object_get(root, "type")), "interval"),
	      "type interval");
	CHECK(json_object_get_double(json_object_object_get(root, "time_s")) == 3.0,
	      "time_s 3: since the first probe event");
	CHECK_EQ_U64(json_object_get_int(json_object_object_get(root, "schema")), 2, "schema 2");
	x = json_object_object_get(root, "clock");
	CHECK(json_object_get_uint64(json_object_object_get(x, "origin_mono_ns")) == 10 * S &&
	      json_object_get_int(json_object_object_get(x, "origin_pid")) == 4242,
	      "clock: the first probe event of pid 4242");
	proc = json_object_array_get_idx(json_object_object_get(root, "processes"), 0);
	x = json_object_object_get(proc, "peak");
	CHECK(json_object_get_double(json_object_object_get(x, "time_s")) == 2.5 &&
	      json_object_get_uint64(json_object_object_get(x, "bytes")) ==
		      73 * GiB + 60 * MiB + 6 * KiB,
	      "the peak under the summary's keys: peak.bytes, peak.time_s 2.5");
	CHECK_EQ_U64(json_object_get_uint64(json_object_object_get(proc, "pid")), 4242, "pid");
	CHECK_EQ_U64(json_object_get_uint64(json_object_object_get(proc, "tracked_bytes")),
		     69 * GiB + 60 * MiB + 6 * KiB, "tracked_bytes");
	CHECK_EQ_U64(json_object_get_uint64(json_object_object_get(proc, "untracked_bytes")),
		     100 * GiB - (69 * GiB + 60 * MiB + 6 * KiB), "untracked_bytes");
	CHECK(!json_object_get_boolean(json_object_object_get(proc, "exact")),
	      "exact false (lock timeouts)");
	stages = json_object_object_get(proc, "stages");
	CHECK_EQ_U64(json_object_array_length(stages), 5, "5 stage rows (those holding or owning)");
	x = json_object_array_get_idx(stages, 2);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(x, "stage")), "chan_send") &&
		      json_object_get_int(json_object_object_get(x, "id")) == 3 &&
		      json_object_get_int(json_object_object_get(x, "owners")) == 4,
	      "row 3: chan_send, id 3, 4 owners");
	x = json_object_object_get(json_object_object_get(x, "classes"), "abc");
	CHECK_EQ_U64(json_object_get_uint64(json_object_object_get(x, "bytes")), 12 * GiB,
		     "chan_send abc bytes");
	x = json_object_array_get_idx(stages, 4);
	CHECK(json_object_get_type(json_object_object_get(x, "id")) == json_type_null &&
		      !strcmp(json_object_get_string(json_object_object_get(x, "stage")), "(none)"),
	      "the no-stage row: id null");
	x = json_object_object_get(json_object_object_get(proc, "classes"), "density");
	CHECK_EQ_U64(json_object_get_uint64(json_object_object_get(x, "bufs")), 6,
		     "class totals: density 6 bufs");
	json_object_put(root);
	free(out);
}

static const char summary_text[] =
	"inflight summary: pid 4242: ./prover --pw 12\n"
	"  killed by SIGKILL; tracing ended: command exited\n"
	"  4.00 s from the first event to the exit\n"
	"  events: buf_alloc 100, buf_free 62, stage 200\n"
	"  owners: 14 started, 4 done\n"
	"  times: seconds since the first probe event (pid 4242)\n"
	"\n"
	"peak: 73.1 GiB in 42 buffers at +2.500 s (event 321)\n"
	"  stage       owners   bufs     bytes  by class (bufs/bytes)\n"
	"  wait_permit      3      0         0  -\n"
	"  synth            2     12  8.02 GiB  abc 6/6.00G, aux 2/2.00G, input 2/2.00K,\n"
	"                                       density 2/20.0M\n"
	"  chan_send        4     24  16.0 GiB  abc 12/12.0G, aux 4/4.00G,\n"
	"                                       input 4/4.00K, density 4/40.0M\n"
	"  gpu_queue        1      4  4.00 GiB  abc 3/3.00G, aux 1/1.00G\n"
	"  done             1      1  1.00 GiB  aux 1/1.00G\n"
	"  (none)           0      1  44.0 GiB  srs 1/44.0G\n"
	"  total           11     42  73.1 GiB  srs 1/44.0G, abc 21/21.0G, aux 8/8.00G,\n"
	"                                       input 6/6.00K, density 6/60.0M\n"
	"  rss peak 110 GiB at +3.000 s, with 70.0 GiB tracked then\n"
	"\n"
	"in flight at exit: 69.1 GiB in 38 buffers, 10 owners\n"
	"  stage       owners   bufs     bytes  by class (bufs/bytes)\n"
	"  wait_permit      3      0         0  -\n"
	"  synth            2     12  8.02 GiB  abc 6/6.00G, aux 2/2.00G, input 2/2.00K,\n"
	"                                       density 2/20.0M\n"
	"  chan_send        4     24  16.0 GiB  abc 12/12.0G, aux 4/4.00G,\n"
	"                                       input 4/4.00K, density 4/40.0M\n"
	"  done             1      1  1.00 GiB  aux 1/1.00G\n"
	"  (none)           0      1  44.0 GiB  srs 1/44.0G\n"
	"  total           10     38  69.1 GiB  srs 1/44.0G, abc 18/18.0G, aux 7/7.00G,\n"
	"                                       input 6/6.00K, density 6/60.0M\n"
	"  rss 100 GiB, untracked 30.9 GiB\n"
	"leak candidates: 1 owner in a terminal stage holds 1 buffer, 1.00 GiB\n"
	"  aux 1/1.00G\n"
	"\n"
	"dwell per stage (owners that left it):\n"
	"  synth: 3 left, mean 30.0 ms, total 90.0 ms\n"
	"    16.4 ms .. 32.8 ms              3 |##############################|\n"
	"  chan_send: 2 left, mean 1.00 ms, total 2.00 ms\n"
	"    512 us .. 1.02 ms               1 |##############################|\n"
	"    1.02 ms .. 2.05 ms              1 |##############################|\n"
	"\n"
	"unmatched events (buffers and owners from before the attach):\n"
	"  frees of unknown buffers: aux 1/1.00G\n"
	"  unknown owners first seen in: synth 2\n"
	"\n"
	"anomalies: 1 alloc of a live buffer,\n"
	"  2 updates skipped: the lock stayed held (lock timeouts)\n"
	"  the totals above are INEXACT: some updates were not accounted\n"
	"  (a map was full or a lock timed out); see docs/cli.md\n";

static void test_summary(struct ctx *c)
{
	struct json_object *root, *proc, *x;
	char *out;

	c->json = false;
	c->snap.procs[0].st.exited = 1;
	c->snap.procs[0].st.exit_ns = 14 * S;
	out = render(summary_fn, c);
	expect_text(out, summary_text, "summary text");
	free(out);

	c->json = true;
	out = render(summary_fn, c);
	root = json_tokener_parse(out);
	CHECK(root != NULL, "summary JSON parses");
	if (!root) {
		printf("# %s", out);
		free(out);
		return;
	}
	CHECK(!strcmp(json_object_get_string(json_object_object_get(root, "type")), "summary"),
	      "type summary");
	proc = json_object_array_get_idx(json_object_object_get(root, "processes"), 0);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(proc, "command")),
		      "./prover --pw 12") &&
	      json_object_array_length(json_object_object_get(proc, "argv")) == 3,
	      "command joined, argv as words");
	CHECK(json_object_get_type(json_object_object_get(proc, "exit_status")) == json_type_null &&
		      json_object_get_int(json_object_object_get(proc, "exit_signal")) == 9,
	      "exit_signal 9, exit_status null");
	x = json_object_object_get(proc, "peak");
	CHECK_EQ_U64(json_object_get_uint64(json_object_object_get(x, "bytes")),
		     73 * GiB + 60 * MiB + 6 * KiB, "peak bytes");
	CHECK(json_object_get_double(json_object_object_get(x, "time_s")) == 2.5,
	      "peak time 2.5 s after the first event");
	CHECK_EQ_U64(json_object_array_length(json_object_object_get(x, "stages")), 6,
		     "peak: 6 stage rows");
	x = json_object_object_get(json_object_object_get(proc, "at_end"), "leak_candidates");
	CHECK(json_object_get_int(json_object_object_get(x, "owners")) == 1 &&
		      json_object_get_uint64(json_object_object_get(x, "bytes")) == GiB,
	      "leak candidates: 1 owner, 1 GiB");
	x = json_object_array_get_idx(json_object_object_get(proc, "dwell"), 0);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(x, "stage")), "synth") &&
		      json_object_get_uint64(json_object_object_get(x, "mean_ns")) == 30000000 &&
		      json_object_array_length(json_object_object_get(x, "hist_log2_us")) == 32 &&
		      json_object_get_int(json_object_array_get_idx(
			      json_object_object_get(x, "hist_log2_us"), 14)) == 3,
	      "dwell synth: mean 30 ms, 32 slots, slot 14 = 3");
	x = json_object_object_get(proc, "anomalies");
	CHECK(json_object_get_int(json_object_object_get(x, "lock_timeouts")) == 2 &&
		      json_object_get_int(json_object_object_get(x, "dup_alloc")) == 1 &&
		      json_object_get_int(json_object_object_get(x, "bad_class")) == 0,
	      "anomalies: every counter, zeros included");
	CHECK(!json_object_get_boolean(json_object_object_get(proc, "exact")), "exact false");
	x = json_object_object_get(json_object_object_get(proc, "unmatched"), "stage");
	CHECK_EQ_U64(json_object_get_int(json_object_object_get(x, "synth")), 2,
		     "unmatched stage events: synth 2");
	json_object_put(root);
	free(out);
}

/* Probe hits that waited on another thread: said in every output, never inexact. */
static void test_waited(struct ctx *c)
{
	struct infl_proc *p = &c->snap.procs[0].st;
	struct json_object *root, *proc, *x;
	char *out;

	p->lock_timeouts = 0;
	p->slot_waits = 3;
	p->pool_waits = 1;
	c->json = false;
	out = render(summary_fn, c);
	CHECK(strstr(out, "3 probe hits waited for room: the queue behind the lock was full") &&
		      strstr(out, "1 probe hit waited for the lock: the pool had no queue memory free"),
	      "waits: the summary text says both, by their reason");
	CHECK(!strstr(out, "INEXACT"), "waits: the totals stay exact");
	free(out);
	c->json = true;
	out = render(summary_fn, c);
	root = json_tokener_parse(out);
	proc = json_object_array_get_idx(json_object_object_get(root, "processes"), 0);
	x = json_object_object_get(proc, "anomalies");
	CHECK(json_object_get_int(json_object_object_get(x, "slot_waits")) == 3 &&
		      json_object_get_int(json_object_object_get(x, "pool_waits")) == 1 &&
		      json_object_get_boolean(json_object_object_get(proc, "exact")),
	      "waits: JSON's anomalies count them, exact true");
	json_object_put(root);
	free(out);
	p->slot_waits = p->pool_waits = 0;
}

static void test_empty(struct ctx *c)
{
	char *out;

	c->snap.nprocs = 0;
	c->json = false;
	c->info.target_status = 3 << 8;
	out = render(summary_fn, c);
	expect_text(out,
		    "inflight summary: no traced process hit a probe; tracing ended: command "
		    "exited\n  pid 4242 exited with status 3\n",
		    "summary without processes");
	free(out);
}

int main(void)
{
	static struct proc_snapshot ps;
	static struct ctx c;
	char *argv[] = { "./prover", "--pw", "12", NULL };

	CHECK_EQ_U64(names__parse(prover_text, sizeof(prover_text), &c.names), 0,
		     "the prover's names");
	fill(&ps.st);
	ps.pid = 4242;
	c.snap.mono_ns = 13 * S;
	c.snap.nprocs = 1;
	c.snap.procs = &ps;
	c.info = (struct summary_info){ .binary = "/x/prover", .argv = argv, .end = "command exited",
					.target_pid = 4242, .target_status = 9 };
	test_live(&c);
	test_summary(&c);
	test_waited(&c);
	test_empty(&c);
	return check_done();
}
