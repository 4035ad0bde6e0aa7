/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The recording file format (docs/recording.md is the specification; this header is its
 * one implementation of the constants). Little-endian throughout, independent of the host's
 * struct layout: every multi-byte value is written byte by byte, mostly as LEB128 varints.
 *
 *   preamble: magic[8] "INFLREC\n", u16 major, u16 minor, u32 zero
 *   records:  u16 type, u16 zero, u32 payload length, payload, u32 CRC-32 of type..payload
 *
 * A reader refuses a major it does not know, skips record types it does not know, and
 * ignores payload bytes past the fields it knows (a minor version may append fields).
 */
#ifndef INFLIGHT_REC_FORMAT_H
#define INFLIGHT_REC_FORMAT_H

#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"

#define REC_MAGIC "INFLREC\n"
#define REC_MAGIC_LEN 8
#define REC_PREAMBLE_LEN 16
#define REC_FORMAT_MAJOR 1
/* 1.1: OOM records; 1.2: PROC's command line words; 1.3: START and DUMP records, carried
 * events (a flight recorder's dump begins mid-run), libcuda's classes (ids 16..18 in events
 * and per-class arrays), the cuda_failed tag; 1.4: NAMES records (names qualified by their
 * image, LABEL:NAME, when a process maps several images with names of their own); 1.5: the
 * slot_waits and pool_waits tags (probe hits that waited on another thread); 1.6: the
 * contention_lost, dwell_lost, peak_fuzz and owner_races tags, and a dup alloc's replaced
 * buffer as a free event of its own (INFL_EVF_DUP) right after the alloc */
#define REC_FORMAT_MINOR 6

#define REC_FRAME_HEAD 8      /* type, zero, length */
#define REC_FRAME_TAIL 4      /* CRC-32 */
#define REC_MAX_PAYLOAD (16u << 20) /* larger lengths are corruption, not data */
#define REC_MAX_STR 4096      /* longest string field */
#define REC_MAX_ARGS 256      /* command line words kept */

enum rec_type {
	REC_HEADER = 1,	  /* exactly once, first */
	REC_PROC = 2,	  /* a traced process first seen */
	REC_EVENTS = 3,	  /* a chunk of ring-buffer events */
	REC_SNAPSHOT = 4, /* one process's kernel counters at an instant */
	REC_RSS = 5,	  /* one RSS sample */
	REC_LOST = 6,	  /* events known lost */
	REC_END = 7,	  /* exactly once, last: final counters of every process */
	REC_OOM = 8,	  /* 1.1: the kernel's OOM killer chose a traced process */
	REC_START = 9,	  /* 1.3: a process's state at the recording's start follows */
	REC_DUMP = 10,	  /* 1.3: the recording is a flight recorder's dump: why and when */
	REC_NAMES = 11,	  /* 1.4: the class and stage names from here on; the last one holds */
};

/*
 * 1.3: on an alloc or stage event, "carried": not a probe hit of the recording's window but
 * part of the state its process was in when the window began (REC_START says how many
 * follow). A reader applies it like any event and counts it as no probe hit. The bit means
 * DOUBLE on a free, which is never carried.
 */
#define REC_EVF_CARRIED (1u << 6)

enum rec_rss_source {
	REC_RSS_STATM = 0,  /* /proc/PID/statm, read by the recorder at each snapshot */
	REC_RSS_KERNEL = 1, /* infl_proc.rss_total (kmem:rss_stat), copied at each snapshot */
};

enum rec_lost_kind {
	REC_LOST_KERNEL = 0, /* ring buffer full in the kernel (infl_proc.ring_drops grew) */
	REC_LOST_USER = 1,   /* lost in the loader's ring-buffer bookkeeping */
};

/*
 * The process-state encoding used by REC_SNAPSHOT and REC_END: a count, then that many
 * (tag, index, value) varint triplets for the non-zero fields of struct infl_proc; zero
 * fields are omitted. Arrays are flattened (cur[c][s].bytes is u64 number (c*SLOTS+s)*2+1
 * of tag REC_T_CUR). Unknown tags are skipped; a known tag with an index out of range is
 * corruption. New infl_proc fields get new tags (never reuse a number).
 */
enum rec_tag {
	REC_T_SEQ = 1,
	REC_T_FIRST_NS = 2,
	REC_T_LAST_NS = 3,
	REC_T_EXIT_NS = 4,
	REC_T_EXITED = 5,
	REC_T_TOTAL_BYTES = 6,
	REC_T_TOTAL_BUFS = 7,
	REC_T_PEAK_BYTES = 8,
	REC_T_PEAK_BUFS = 9,
	REC_T_PEAK_NS = 10,
	REC_T_PEAK_SEQ = 11,
	REC_T_CUR = 12,
	REC_T_PEAK = 13,
	REC_T_OWNERS = 14,
	REC_T_PEAK_OWNERS = 15,
	REC_T_OWNERS_STARTED = 16,
	REC_T_OWNERS_DONE = 17,
	REC_T_DWELL_HIST = 18,
	REC_T_DWELL_SUM_NS = 19,
	REC_T_DWELL_COUNT = 20,
	REC_T_EVENTS = 21,
	REC_T_UNMATCHED_FREE = 22,
	REC_T_UNMATCHED_STAGE = 23,
	REC_T_BAD_CLASS = 24,
	REC_T_BAD_STAGE = 25,
	REC_T_DUP_ALLOC = 26,
	REC_T_BUF_MAP_FULL = 27,
	REC_T_OWNER_MAP_FULL = 28,
	REC_T_RING_DROPS = 29,
	REC_T_LOCK_TIMEOUTS = 30,
	REC_T_RSS = 31,
	REC_T_RSS_TOTAL = 32,
	REC_T_RSS_PEAK = 33,
	REC_T_RSS_PEAK_NS = 34,
	REC_T_TRACKED_AT_RSS_PEAK = 35,
	REC_T_RSS_EMITTED = 36,
	REC_T_STAGE_OWNER0 = 37,
	REC_T_DOUBLE_FREE = 38,
	REC_T_UNTRACKED_FREE = 39,
	REC_T_ARG_ERRORS = 40,
	REC_T_MISSED_EVENTS = 41,
	REC_T_RSS_MM = 42,
	REC_T_GEN = 43,
	REC_T_START_NS = 44,
	REC_T_PPID = 45,
	REC_T_FLAGS = 46,
	REC_T_ALLOCATED = 47,
	REC_T_FREED = 48,
	REC_T_UNTRACKED_ALLOCS = 49,
	REC_T_CUDA_FAILED = 50, /* 1.3 */
	REC_T_BAD_CLASS_SEEN = 51, /* 1.4 */
	REC_T_BAD_STAGE_SEEN = 52, /* 1.4 */
	REC_T_SLOT_WAITS = 53,	   /* 1.5 */
	REC_T_POOL_WAITS = 54,	   /* 1.5 */
	REC_T_CONTENTION_LOST = 55, /* 1.6 */
	REC_T_DWELL_LOST = 56,	   /* 1.6 */
	REC_T_PEAK_FUZZ = 57,	   /* 1.6 */
	REC_T_OWNER_RACES = 58,	   /* 1.6 */
};

/* One row of the tag table: where the field lives and how many elements it has. */
struct rec_field {
	__u16 tag;
	__u16 elem_size; /* 4 or 8 */
	__u32 offset;	 /* in struct infl_proc */
	__u32 nelems;
};

extern const struct rec_field rec_fields[];
extern const size_t rec_nfields;

/* CRC-32 (IEEE 802.3, the one of zlib and gzip) */
__u32 rec_format__crc32(__u32 crc, const void *buf, size_t len);

#endif /* INFLIGHT_REC_FORMAT_H */
