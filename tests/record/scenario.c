// SPDX-License-Identifier: BSD-2-Clause
/* The scripted run of scenario.h. */
#include "scenario.h"
#include "../../probes/prover_ids.h"

#define P1 0x101
#define P2 0x102
#define JOB 0x200

void scenario_write(struct script *s, struct rec_writer *w, unsigned opts)
{
	double k = opts & SCENARIO_SLOW ? 2 : 1;
	struct infl_names names;

	script_prover_names(&names);
	if (opts & SCENARIO_HOSTILE) {
		char *argv[] = { "prover", "--x\n\x1b]0;pwned\x07", "\x1b[2J", NULL };

		script_begin_as(s, w, SCENARIO_PID, &names, "evil\x1b[31mhost\r\n", argv,
				"pro\x1b[5mver", "prover\r\nfake line \x9b" "31m");
	} else if (opts & SCENARIO_LONG_CMD) {
		char *argv[] = { "/opt/provers/bin/prover", "--pw", "12", "--jobs", "4", "--proofs",
				 "4", "--log-n", "18", "--gpu-rounds", "3", "--permit-release",
				 "after-synth", "--chan-cap", "1", "--srs-cache=/var/cache/srs",
				 "--c1=/data/c1/sector-0042.json", NULL };

		script_begin_as(s, w, SCENARIO_PID, &names, "testhost", argv, "prover",
				"prover --long");
	} else {
		script_begin(s, w, SCENARIO_PID, &names);
	}
	if (opts & SCENARIO_FROM_START)
		s->st.flags |= INFL_PROC_FROM_START;
	script_alloc(s, 0 * k, 0x5000, CLS_srs, 1000, 0);
	script_rss(s, 1 * k, 1500);
	script_free(s, 5 * k, 0x9999, CLS_input, 50); /* allocated before we attached */
	script_stage(s, 10 * k, JOB, STAGE_parse);
	script_stage(s, 20 * k, P1, STAGE_wait_permit);
	script_stage(s, 30 * k, P1, STAGE_synth);
	script_alloc(s, 40 * k, 0xa1, CLS_abc, 300, P1);
	script_alloc(s, 40 * k, 0xb1, CLS_aux, 100, P1);
	script_stage(s, 50 * k, P2, STAGE_wait_permit);
	script_stage(s, 60 * k, P2, STAGE_synth);
	script_alloc(s, 70 * k, 0xa2, CLS_abc, 300, P2);
	script_alloc(s, 70 * k, 0xb2, CLS_aux, 100, P2);
	script_snapshot(s, 99 * k);
	script_stage(s, 100 * k, P1, STAGE_chan_send);
	if (opts & SCENARIO_DROP_ONE)
		s->drop_next = 1;
	script_stage(s, 150 * k, P2, STAGE_chan_send);
	script_rss(s, 160 * k, 2600);
	script_snapshot(s, 199 * k);
	script_stage(s, 200 * k, P1, STAGE_gpu);
	script_alloc(s, 210 * k, 0xc1, CLS_pending, 200, P1);
	script_free(s, 250 * k, 0xa1, CLS_abc, 300);
	script_stage(s, 260 * k, P1, STAGE_finalize);
	script_free(s, 300 * k, 0xb1, CLS_aux, 100);
	script_free(s, 300 * k, 0xc1, CLS_pending, 200);
	script_stage(s, 310 * k, P1, STAGE_done);
	script_stage(s, 320 * k, P2, STAGE_gpu);
	script_alloc(s, 330 * k, 0xc2, CLS_pending, 200, P2);
	script_free(s, 350 * k, 0xa2, CLS_abc, 300);
	script_stage(s, 360 * k, P2, STAGE_finalize);
	script_free(s, 400 * k, 0xb2, CLS_aux, 100);
	script_free(s, 400 * k, 0xc2, CLS_pending, 200);
	script_stage(s, 410 * k, P2, STAGE_done);
	script_stage(s, 420 * k, JOB, STAGE_assemble);
	script_stage(s, 430 * k, JOB, STAGE_done);
	script_free(s, 500 * k, 0x5000, CLS_srs, 1000);
	script_rss(s, 510 * k, 1200);
	if (opts & SCENARIO_LOCK_TIMEOUTS)
		s->st.lock_timeouts = 2; /* updates the kernel skipped: not in the stream either */
	if (opts & SCENARIO_WAITS) {
		s->st.slot_waits = 3; /* hits that waited, then were accounted */
		s->st.pool_waits = 1;
	}
	script_end(s, SCENARIO_END_MS * k, 1);
}

void scenario_dup_write(struct script *s, struct rec_writer *w, unsigned opts)
{
	struct infl_names names;

	script_prover_names(&names);
	script_begin(s, w, SCENARIO_DUP_PID, &names);
	s->st.flags |= INFL_PROC_FROM_START;
	s->dup_v15 = !!(opts & SCENARIO_DUP_V15);
	s->defer_dup = !!(opts & SCENARIO_DUP_DEFER);
	script_stage(s, 0, SCENARIO_DUP_OWNER, STAGE_wait_permit);
	script_stage(s, 5, SCENARIO_DUP_OWNER, STAGE_synth);
	script_alloc(s, 10, 0x10, CLS_abc, 300, SCENARIO_DUP_OWNER);
	script_alloc(s, 20, 0x20, CLS_aux, 100, 0);
	script_stage(s, 30, SCENARIO_DUP_OWNER, STAGE_done);
	script_alloc(s, 40, 0x10, CLS_pending, 500, 0);
	script_free(s, 45, 0x20, CLS_aux, 100);
	script_replaced(s, 50);
	script_free(s, 60, 0x10, CLS_pending, 500);
	script_end(s, 100, 1);
}
