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
#include "recording/rec_reader.h"
#include "render/timeline.h"
#include "scenario.h"
#include "../../probes/prover_ids.h"

static struct recording *scenario_recording(unsigned opts)
{
	static struct script s;
	FILE *tmp = tmpfile();
	struct rec_writer *w;
	struct recording *r = NULL;
	char err[REC_ERR_LEN];

	rec_writer__from_fd(fileno(tmp), &w);
	scenario_write(&s, w, opts);
	rec_writer__close(w);
	rewind(tmp);
	{
		size_t len = ftell(tmp);
		unsigned char *d;

		fseek(tmp, 0, SEEK_END);
		len = ftell(tmp);
		d = malloc(len);
		rewind(tmp);
		fread(d, 1, len, tmp);
		if (rec_read_mem(d, len, 0, &r, err))
			printf("# read: %s\n", err);
		free(d);
	}
	fclose(tmp);
	return r;
}

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
	CHECK(timeline__build(r, &tl) == 0, "timeline built");
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
	CHECK(p->lives[0].owner == 0x200 && p->lives[1].owner == 0x101 &&
	      p->lives[2].owner == 0x102, "lives in order of first sight");
	CHECK(p->lives[0].nslices == 2 && p->lives[1].nslices == 5 && p->lives[2].nslices == 5,
	      "slices per owner: 2, 5, 5");
	{
		const struct tl_slice *s = &p->slices[p->lives[1].first_slice];
		static const unsigned st[] = { STAGE_wait_permit, STAGE_synth, STAGE_chan_send,
					       STAGE_gpu, STAGE_finalize };
		static const unsigned t0[] = { 20, 30, 100, 200, 260 }, t1[] = { 30, 100, 200,
										   260, 310 };
		int good = 0;

		for (int i = 0; i < 5; i++)
			good += s[i].stage == st[i] && ms_of(s[i].t0) == t0[i] &&
				ms_of(s[i].t1) == t1[i] && !s[i].open && s[i].life == 1;
		CHECK_EQ_U64(good, 5, "owner 0x101's slices: stages and times");
	}
	CHECK(p->lives[1].retired && ms_of(p->lives[1].t1) == 310, "0x101 retired at 310 ms");
	CHECK_EQ_U64(p->lives[1].kind, STAGE_wait_permit, "0x101 is a wait_permit-kind owner");
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
	CHECK_EQ_U64(p->rss_peak, 2600, "RSS peak");
	CHECK_EQ_U64(ms_of(p->rss_peak_ts), 160, "RSS peak at 160 ms");
	CHECK_EQ_U64(tl_proc__rss_at(p, script_ns(100)), 1500, "RSS at 100 ms");
	timeline__free(tl);
	recording__free(r);
}

static void test_lost_event(void)
{
	struct recording *r = scenario_recording(SCENARIO_DROP_ONE);
	const struct tl_proc *p;
	struct timeline *tl;

	if (!r || timeline__build(r, &tl)) {
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

int main(void)
{
	test_scenario();
	test_lost_event();
	return check_done();
}
