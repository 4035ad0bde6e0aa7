// SPDX-License-Identifier: BSD-2-Clause
/* The recording format's tables: which infl_proc field each tag names, and the CRC. */
#include <stddef.h>
#include <zlib.h>
#include "recording/rec_format.h"

#define FIELD(tag, member)                                                                     \
	{ tag, sizeof(((struct infl_proc *)0)->member) == 4 ? 4 : 8,                           \
	  offsetof(struct infl_proc, member),                                                  \
	  sizeof(((struct infl_proc *)0)->member) /                                            \
		  (sizeof(((struct infl_proc *)0)->member) == 4 ? 4 : 8) }

/* Arrays of struct infl_cell are flattened to u64s (count, bytes, count, bytes, ...). The
 * record test proves that these rows cover every byte of struct infl_proc but the kernel's
 * machinery: the order's words (acct, peak_acct, peak_cap_acct, hits_done), the copy's flag
 * peak_cap and the ends of the queue behind the locked form's lock; the fields derived from
 * the order (seq, total_bytes, peak_bytes) are stored as derived. */
const struct rec_field rec_fields[] = {
	FIELD(REC_T_EXITED, exited),
	FIELD(REC_T_SEQ, seq),
	FIELD(REC_T_FIRST_NS, first_ns),
	FIELD(REC_T_LAST_NS, last_ns),
	FIELD(REC_T_EXIT_NS, exit_ns),
	FIELD(REC_T_TOTAL_BYTES, total_bytes),
	FIELD(REC_T_TOTAL_BUFS, total_bufs),
	FIELD(REC_T_PEAK_BYTES, peak_bytes),
	FIELD(REC_T_PEAK_BUFS, peak_bufs),
	FIELD(REC_T_PEAK_NS, peak_ns),
	FIELD(REC_T_PEAK_SEQ, peak_seq),
	FIELD(REC_T_CUR, cur),
	FIELD(REC_T_PEAK, peak),
	FIELD(REC_T_OWNERS, owners),
	FIELD(REC_T_PEAK_OWNERS, peak_owners),
	FIELD(REC_T_OWNERS_STARTED, owners_started),
	FIELD(REC_T_OWNERS_DONE, owners_done),
	FIELD(REC_T_DWELL_HIST, dwell_hist),
	FIELD(REC_T_DWELL_SUM_NS, dwell_sum_ns),
	FIELD(REC_T_DWELL_COUNT, dwell_count),
	FIELD(REC_T_EVENTS, events),
	FIELD(REC_T_UNMATCHED_FREE, unmatched_free),
	FIELD(REC_T_UNMATCHED_STAGE, unmatched_stage),
	FIELD(REC_T_BAD_CLASS, bad_class),
	FIELD(REC_T_BAD_STAGE, bad_stage),
	FIELD(REC_T_DUP_ALLOC, dup_alloc),
	FIELD(REC_T_BUF_MAP_FULL, buf_map_full),
	FIELD(REC_T_OWNER_MAP_FULL, owner_map_full),
	FIELD(REC_T_RING_DROPS, ring_drops),
	FIELD(REC_T_LOCK_TIMEOUTS, lock_timeouts),
	FIELD(REC_T_RSS, rss),
	FIELD(REC_T_RSS_TOTAL, rss_total),
	FIELD(REC_T_RSS_PEAK, rss_peak),
	FIELD(REC_T_RSS_PEAK_NS, rss_peak_ns),
	FIELD(REC_T_TRACKED_AT_RSS_PEAK, tracked_at_rss_peak),
	FIELD(REC_T_RSS_EMITTED, rss_emitted),
	FIELD(REC_T_STAGE_OWNER0, stage_owner0),
	FIELD(REC_T_DOUBLE_FREE, double_free),
	FIELD(REC_T_UNTRACKED_FREE, untracked_free),
	FIELD(REC_T_ARG_ERRORS, arg_errors),
	FIELD(REC_T_MISSED_EVENTS, missed_events),
	FIELD(REC_T_RSS_MM, rss_mm),
	FIELD(REC_T_GEN, gen),
	FIELD(REC_T_START_NS, start_ns),
	FIELD(REC_T_PPID, ppid),
	FIELD(REC_T_FLAGS, flags),
	FIELD(REC_T_ALLOCATED, allocated),
	FIELD(REC_T_FREED, freed),
	FIELD(REC_T_UNTRACKED_ALLOCS, untracked_allocs),
	FIELD(REC_T_CUDA_FAILED, cuda_failed),
	FIELD(REC_T_BAD_CLASS_SEEN, bad_class_seen),
	FIELD(REC_T_BAD_STAGE_SEEN, bad_stage_seen),
	FIELD(REC_T_SLOT_WAITS, slot_waits),
	FIELD(REC_T_POOL_WAITS, pool_waits),
	FIELD(REC_T_CONTENTION_LOST, contention_lost),
	FIELD(REC_T_DWELL_LOST, dwell_lost),
	FIELD(REC_T_PEAK_FUZZ, peak_fuzz),
	FIELD(REC_T_OWNER_RACES, owner_races),
};
const size_t rec_nfields = sizeof(rec_fields) / sizeof(rec_fields[0]);

/* zlib's CRC-32 (the binary links zlib anyway): several times faster than a byte table,
 * which matters when a multi-GiB recording is checked */
__u32 rec_format__crc32(__u32 crc, const void *buf, size_t len)
{
	while (len) {
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;

		crc = crc32(crc, buf, n);
		buf = (const char *)buf + n;
		len -= n;
	}
	return crc;
}
