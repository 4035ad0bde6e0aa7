/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reads a whole recording into memory and checks it: every length, CRC, id and count.
 * A file that fails any check is refused with one line that says where and why; nothing
 * in it is trusted before it is checked (tests/fuzz/fuzz_recfile.c holds the reader to it).
 */
#ifndef INFLIGHT_REC_READER_H
#define INFLIGHT_REC_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"

#define REC_ERR_LEN 256

struct rec_proc_info {
	__u32 pid;
	__u64 mono_ns;
	char *comm;
	char *cmdline;
};

/* A periodic snapshot, reduced to what timelines use; `st` of the final state is whole. */
struct rec_snap {
	__u64 mono_ns;
	__u32 pid;
	__u64 seq;
	__u64 total_bytes;
	__u64 total_bufs;
	__u64 peak_bytes;
	__u64 ring_drops;
	__u64 rss_total;
	__u64 owners[INFL_SLOTS];
	__u64 class_bytes[INFL_MAX_CLASSES];
};

struct rec_rss {
	__u64 mono_ns;
	__u32 pid;
	__u32 source; /* enum rec_rss_source; kernel RSS events become REC_RSS_KERNEL */
	__u64 bytes;
};

struct rec_lost {
	__u64 mono_ns;
	__u32 pid;
	__u32 kind; /* enum rec_lost_kind */
	__u64 count;
};

struct rec_final {
	__u32 pid;
	struct infl_proc st;
};

struct recording {
	/* header */
	__u32 format_major, format_minor;
	struct infl_names names;
	char *host;
	int argc;
	char **argv;
	char *cmdline; /* argv joined by spaces, for display */
	char *binary;
	__u32 mode;
	__u32 target_pid;
	__u64 start_wall_ns;
	__u64 start_mono_ns;
	__u64 interval_ns;
	char *tool;
	/* body, in file order */
	struct rec_proc_info *procs;
	size_t nprocs;
	struct infl_event *events;
	size_t nevents;
	struct rec_snap *snaps;
	size_t nsnaps;
	struct rec_rss *rss;
	size_t nrss;
	struct rec_lost *lost;
	size_t nlost;
	/* end record; has_end false only when read with REC_READ_PARTIAL and it was missing */
	bool has_end;
	__u64 end_mono_ns;
	__u64 end_wall_ns;
	int exit_status;
	__u64 end_events;
	__u64 end_user_lost;
	struct rec_final *finals;
	size_t nfinals;
	/* file facts */
	size_t nrecords;
	size_t file_bytes;
};

#define REC_READ_PARTIAL (1u << 0) /* accept a file cut short at a record boundary */
#define REC_READ_NO_CRC (1u << 1)  /* skip CRC checks: lets the fuzzer reach the parsers */

/* Parses `len` bytes. Returns 0 and a recording, or -EBADMSG (corrupt), -EPROTO (a format
 * major this reader does not know) or -ENOMEM, with `err` saying what and where. */
int rec_read_mem(const void *data, size_t len, unsigned flags, struct recording **out,
		 char err[REC_ERR_LEN]);

/* Reads the file at `path` ("-" is stdin). Errors as above, plus -errno of open/read. */
int rec_read_file(const char *path, unsigned flags, struct recording **out,
		  char err[REC_ERR_LEN]);

/* Reads `path` or prints one error line and returns EXIT_BAD_FILE (enum infl_exit). */
int rec_open_or_complain(const char *path, unsigned flags, struct recording **out);

void recording__free(struct recording *r);

/* The final kernel state of `pid`, or NULL. */
const struct infl_proc *recording__final(const struct recording *r, __u32 pid);

#endif /* INFLIGHT_REC_READER_H */
