// SPDX-License-Identifier: BSD-2-Clause
/*
 * Writes crafted recordings for the hostile-output tests (tests/t_prod_hostile.sh), with the
 * real writer, so that only what a file can say is crafted:
 *
 *   hostile_rec OUT strings   valid names; host, argv, binary, comm and cmdline full of ESC
 *                             sequences, newlines, C1 controls, a bidi override, bad UTF-8
 *   hostile_rec OUT names     a class name with an ESC sequence in it
 *
 * One process (pid 4242), one owner through stage 0 with a 4096-byte buffer of class 0,
 * allocated and freed, a snapshot and the end record.
 */
#include <stdio.h>
#include <string.h>
#include "recording/rec_writer.h"

/* the same as EVIL in tests/t_prod_hostile.sh */
#define EVIL "\x1b]0;owned\x07\x1b[2J\ninflight: fake\r\xc2\x9b" "31m\xe2\x80\xae\xff"
#define T0 1000000000ull

static void events(struct rec_writer *w, struct infl_proc *st)
{
	struct infl_event ev = { .pid = 4242, .tid = 4242 };

	ev.ts_ns = T0 + 1000, ev.seq = 1, ev.type = INFL_EV_STAGE, ev.id = 0;
	ev.from_slot = INFL_SLOT_NONE, ev.arg0 = 1;
	rec_writer__event(w, &ev);
	ev.ts_ns = T0 + 2000, ev.seq = 2, ev.type = INFL_EV_ALLOC, ev.from_slot = 0;
	ev.arg0 = 0x1000, ev.arg1 = 4096, ev.arg2 = 1, ev.flags = INFL_EVF_NEW_PEAK;
	rec_writer__event(w, &ev);
	ev.ts_ns = T0 + 3000, ev.seq = 3, ev.type = INFL_EV_FREE, ev.flags = 0;
	rec_writer__event(w, &ev);
	st->seq = 3;
	st->first_ns = T0 + 1000;
	st->last_ns = T0 + 3000;
	st->events[INFL_PROBE_ALLOC] = st->events[INFL_PROBE_FREE] = st->events[INFL_PROBE_STAGE] = 1;
	st->peak_bytes = 4096;
	st->peak_bufs = 1;
	st->peak_ns = T0 + 2000;
	st->peak_seq = 2;
	st->peak[0][0] = (struct infl_cell){ 1, 4096 };
	st->owners[0] = 1;
	st->peak_owners[0] = 1;
	st->owners_started = 1;
}

int main(int argc, char **argv)
{
	static struct infl_proc st;
	char *args[] = { "prover", EVIL, NULL };
	struct infl_names n;
	struct rec_writer *w;
	bool evil_names;
	__u32 pid = 4242;

	if (argc != 3 || (strcmp(argv[2], "strings") && strcmp(argv[2], "names"))) {
		fprintf(stderr, "usage: hostile_rec OUT strings|names\n");
		return 2;
	}
	evil_names = !strcmp(argv[2], "names");
	names__init(&n);
	n.contract_version = 1;
	strcpy(n.provider, "prover");
	strcpy(n.cls[0], evil_names ? "a\x1b[31mb" : "big");
	strcpy(n.stage[0], "born");
	n.cls_declared = 1;
	n.stage_declared = 1;
	n.entry_mask = 1;
	if (rec_writer__create(argv[1], REC_W_FORCE, &w))
		return 1;
	rec_writer__header(w, &(struct rec_header_info){
				      .names = &n, .host = "host" EVIL, .argc = 2, .argv = args,
				      .binary = "/opt/" EVIL, .mode = 2, .target_pid = pid,
				      .start_wall_ns = 1700000000000000000ull, .start_mono_ns = T0,
				      .interval_ns = 100000000, .tool = "inflight " EVIL });
	rec_writer__proc(w, pid, T0, "c" EVIL, "prover " EVIL, 2, (char *const[]){ "prover", EVIL });
	events(w, &st);
	rec_writer__snapshot(w, T0 + 3000, pid, &st);
	rec_writer__end(w, &(struct rec_end_info){ .mono_ns = T0 + 4000, .exit_status = 0,
						  .events = 3, .nprocs = 1, .pids = &pid,
						  .procs = &st });
	return rec_writer__close(w) ? 1 : 0;
}
