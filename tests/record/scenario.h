/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One scripted run with hand-computed answers, shared by the record tests: two partitions
 * (0x101, 0x102) through wait_permit, synth, chan_send, gpu, finalize, done, and a proof job
 * (0x200) through parse, assemble, done; an SRS buffer held from 0 to 500 ms; a free of a
 * buffer allocated before the recording (unmatched). Sizes are small round numbers.
 *
 * Known answers (ms after the start; bytes):
 *   peak 2000 at 210 ms: (none)/srs 1000; gpu: abc 300, aux 100, pending 200;
 *                        chan_send: abc 300, aux 100; owners at peak: parse 1, chan_send 1, gpu 1
 *   at 155 ms: total 1800, owners parse 1, chan_send 2
 *   memory x time (byte-ms): (none);srs 500000, synth;abc 42000, synth;aux 14000,
 *     chan_send;abc 81000, chan_send;aux 27000, gpu;abc 24000, gpu;aux 10000,
 *     gpu;pending 16000, finalize;aux 8000, finalize;pending 16000
 *   slices: 0x101: 5, 0x102: 5, 0x200: 2;  mean dwell: wait_permit 10, synth 80,
 *     chan_send 135, gpu 50, finalize 50, parse 410, assemble 10
 *   completed: 3 (2 that started in wait_permit, 1 in parse); the process exits at 600 ms
 *   RSS (kernel events): 1500 at 1 ms, 2600 at 160 ms (its peak), 1200 at 510 ms
 */
#ifndef REC_SCENARIO_H
#define REC_SCENARIO_H

#include "rec_script.h"

#define SCENARIO_PID 4242
#define SCENARIO_END_MS 600.0
#define SCENARIO_PEAK 2000
#define SCENARIO_PEAK_MS 210.0

#define SCENARIO_DROP_ONE (1u << 0) /* the ring buffer "drops" one event (a stage event) */
#define SCENARIO_SLOW (1u << 1)	    /* every time doubled: the "before" of a comparison */
#define SCENARIO_HOSTILE (1u << 2)  /* escape sequences and newlines in host, argv, comm */
#define SCENARIO_LONG_CMD (1u << 3) /* a command line of 160 characters, the demo's kind */
#define SCENARIO_LOCK_TIMEOUTS (1u << 4) /* the kernel's final counters: 2 lock timeouts */
#define SCENARIO_WAITS (1u << 6) /* the kernel's final counters: 3 hits waited for room, 1
				  * for the lock (exact all the same) */
#define SCENARIO_FROM_START (1u << 5) /* traced from its first instruction: the early free of
				       * an unknown buffer is a double free, not a late attach */

/* Writes the scenario to w, header to end record. `s` is left with the final model. */
void scenario_write(struct script *s, struct rec_writer *w, unsigned opts);

/*
 * A double alloc: owner 0x301 through wait_permit (0 ms) and synth (5 ms) allocates abc 0x10
 * of 300 bytes (10 ms); aux 0x20 of 100 bytes, no owner (20 ms); 0x301 moves to done, its
 * terminal stage, still holding 0x10 (30 ms); 0x10 allocated again, pending of 500 bytes, no
 * owner (40 ms); 0x20 freed (45 ms); 0x10 freed (60 ms); the process exits at 100 ms.
 *
 * Known answers (format 1.6: the old 0x10 out at a place of its own right after the alloc):
 *   peak 900 at 40 ms (seq 6): done;abc 300, (none);pending 500, (none);aux 100; owners at
 *   peak: done 1; 0x301 done at 40 ms, by the free of the old 0x10 (seq 7); 9 places, 8
 *   probe hits (3 allocs, 2 frees, 3 stages), 1 double alloc; memory x time (byte-ms):
 *   synth;abc 6000, done;abc 3000, (none);aux 2500, (none);pending 10000
 * SCENARIO_DUP_DEFER: the old 0x10 goes at 50 ms (seq 8), after the free of 0x20 (seq 7):
 *   0x301 done at 50 ms, done;abc 6000, 800 bytes at 47 ms
 * SCENARIO_DUP_V15 (a file of format 1.5, whose kernel replaced the old 0x10 at the alloc
 * and left its owner as it was): peak 600 at 40 ms (seq 6): (none);pending 500, (none);aux
 *   100, owners at peak: done 1; 0x301 never done (in done, holding nothing, at the end);
 *   8 places; memory x time as in 1.6
 */
#define SCENARIO_DUP_PID 4343
#define SCENARIO_DUP_OWNER 0x301
#define SCENARIO_DUP_DEFER (1u << 0)
#define SCENARIO_DUP_V15 (1u << 1)

void scenario_dup_write(struct script *s, struct rec_writer *w, unsigned opts);

#endif /* REC_SCENARIO_H */
