/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reads recordings without holding them in memory. rec_open_*() reads the preamble (the
 * magic first: a foreign file is refused after 16 bytes) and the header; recording__scan() then
 * walks every record once, checking every length, CRC, id and count, and hands events,
 * RSS samples and snapshots to a visitor; afterwards rec_stream reads one process's events
 * again, from the part of the file that holds them. Memory stays proportional to the
 * processes, never to the events: a file of any size reads in a few MiB.
 *
 * A file that fails any check is refused with one line that says where and why; nothing in
 * it is trusted before it is checked (tests/fuzz/fuzz_recfile.c holds the reader to it).
 * Strings from the file (comm, argv, host, binary, tool) are kept as they are: every output
 * escapes them (util/sanitize.h), JSON losslessly. Names must be of the contract's
 * [A-Za-z0-9_.-], and a colon in a name qualified by its image.
 */
#ifndef INFLIGHT_REC_READER_H
#define INFLIGHT_REC_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"
#include "oom.h"

#define REC_ERR_LEN 256

struct rec_proc_info {
	__u32 pid;
	__u64 mono_ns;
	char *comm;    /* as recorded: escape it for output (util/sanitize.h) */
	char *cmdline; /* the words joined by spaces, as recorded */
	int argc;      /* 1.2: the words; 0 (argv NULL) in older recordings or when unknown */
	char **argv;   /* NULL-terminated */
};

struct rec_rss {
	__u64 mono_ns;
	__u32 pid;
	__u32 source; /* enum rec_rss_source */
	__u64 bytes;
};

/* Losses of one process and kind, summed over the recording's LOST records. */
struct rec_lost {
	__u64 mono_ns; /* the first */
	__u32 pid;
	__u32 kind; /* enum rec_lost_kind */
	__u64 count;
};

struct rec_final {
	__u32 pid;
	struct infl_proc st;
};

/* An OOM record (format 1.1): the OOM killer chose `pid`; see bpf/oom.h. */
struct rec_oom {
	__u32 pid;
	struct infl_oom_kill k;
};

/* A START record (1.3): the recording begins after event `seq` of `pid`, with its state
 * then carried as the `bufs` + `owners` events that follow. */
struct rec_start {
	__u32 pid;
	__u64 mono_ns, seq, bufs, owners;
};

/* A DUMP record (1.3): a flight recorder wrote this recording on a trigger. */
struct rec_dump {
	char *trigger, *detail; /* as recorded: escape them for output */
	__u64 trigger_ns, window_ns, ring_ns, after_ns, evicted_events, number, refused;
};

/* Where a process's events and RSS records lie: from the first record that names it to the
 * end of the last one. Streams read only that part of the file. */
struct rec_range {
	__u32 pid;
	__u64 first, end;
	__u64 events;
};

struct rec_src;

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
	/* body facts, once recording__scan() has run */
	bool scanned;
	struct rec_proc_info *procs; /* PROC records, in file order */
	size_t nprocs;
	struct rec_range *ranges;    /* per pid with events or RSS records, by first sight */
	size_t nranges;
	struct rec_lost *lost;
	size_t nlost;
	struct rec_oom *ooms;
	size_t nooms;
	struct rec_start *starts; /* 1.3 */
	size_t nstarts;
	bool has_dump;		  /* 1.3: a flight recorder's dump */
	struct rec_dump dump;
	__u64 nevents, nsnaps, nrss;
	__u64 max_ts; /* latest time of an event or snapshot */
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
	__u64 file_bytes;  /* the file's size */
	__u64 data_end;	   /* end of the last complete record read: streams stop there */
	bool cut;	   /* REC_READ_PARTIAL: bytes after data_end were set aside */
	char cut_why[REC_ERR_LEN];
	__u64 header_end;  /* offset of the first record after the header */
	unsigned flags;
	struct rec_src *src;
};

#define REC_READ_PARTIAL (1u << 0) /* keep the complete records of a file cut short */
#define REC_READ_NO_CRC (1u << 1)  /* skip CRC checks: lets the fuzzer reach the parsers */

/* What recording__scan() hands over, in file order; any member may be NULL. */
struct rec_visitor {
	void (*event)(void *ctx, const struct infl_event *ev);
	void (*rss)(void *ctx, const struct rec_rss *rss);
	/* the state is parsed only for a visitor that asks */
	void (*snapshot)(void *ctx, __u64 mono_ns, __u32 pid, const struct infl_proc *st);
};

/* Opens `path` ("-" is stdin, spooled to an unlinked temporary file) and reads its header.
 * Returns 0, or -EBADMSG (not a recording, corrupt), -EPROTO (a format major this reader
 * does not know), -ENOMEM or -errno of open/read, with `err` saying what and where. */
int recording__open_file(const char *path, unsigned flags, struct recording **out,
		  char err[REC_ERR_LEN]);
/* The same over `len` bytes in memory; `data` must outlive the recording. */
int recording__open_mem(const void *data, size_t len, unsigned flags, struct recording **out,
		 char err[REC_ERR_LEN]);
/* Walks every record after the header once (see above). Errors as rec_open_*(). With
 * REC_READ_PARTIAL a record that is cut short or fails its check ends the walk there: the
 * records before it are kept and r->cut says why. May run again (a second pass). */
int recording__scan(struct recording *r, const struct rec_visitor *v, void *ctx,
	     char err[REC_ERR_LEN]);

/* Open + scan, for callers that want the whole file checked first. */
int recording__read_file(const char *path, unsigned flags, struct recording **out,
		  char err[REC_ERR_LEN]);
int recording__read_mem(const void *data, size_t len, unsigned flags, struct recording **out,
		 char err[REC_ERR_LEN]);

/* One line "inflight: PATH: WHY; HINT" for an error of the functions above; returns
 * EXIT_BAD_FILE (enum infl_exit). */
int recording__complain(const char *path, int ret, const char *err);
/* recording__open_file() or recording__complain(). */
int recording__open_or_complain(const char *path, unsigned flags, struct recording **out);

void recording__free(struct recording *r);

/* The final kernel state of `pid`, or NULL. */
const struct infl_proc *recording__final(const struct recording *r, __u32 pid);
/* The OOM record of `pid`, or NULL. */
const struct rec_oom *recording__oom(const struct recording *r, __u32 pid);
/* The START record of `pid` (1.3), or NULL: the recording saw it from its start. */
const struct rec_start *recording__start(const struct recording *r, __u32 pid);
/* Format 1.6 on: a double alloc takes two places in its process's order, the alloc, then a
 * free with INFL_EVF_DUP of the buffer it replaced (before: the alloc replaced it at once). */
bool recording__dup_free(const struct recording *r);
/* The PROC record of `pid`, or NULL. */
const struct rec_proc_info *recording__proc(const struct recording *r, __u32 pid);
const struct rec_range *recording__range(const struct recording *r, __u32 pid);

/* A second pass over one process: its events and its RSS records, in file order. */
struct rec_stream;
struct rec_item {
	bool is_rss; /* else an event */
	struct infl_event ev;
	struct rec_rss rss;
};
/* pid 0: every process. Returns 0 or -ENOMEM. */
int rec_stream__open(const struct recording *r, __u32 pid, struct rec_stream **out);
/* 1 and the next item, 0 at the end, -EIO/-EBADMSG when the file changed under us. */
int rec_stream__next(struct rec_stream *s, struct rec_item *it);
void rec_stream__free(struct rec_stream *s);

#endif /* INFLIGHT_REC_READER_H */
