/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flight recorder of `record --ring`: the last DURATION of a recording kept in the
 * loader's memory, bounded by time and by size, written into a dump directory only when a
 * trigger fires (docs/recording.md, "Flight recorder"). record.c feeds it the ring buffer's
 * events and, every interval, the records of a snapshot (through the memory writer it lends)
 * and the snapshot itself, on which the triggers are tested.
 */
#ifndef INFLIGHT_CMD_FLIGHT_H
#define INFLIGHT_CMD_FLIGHT_H

#include <argp.h>
#include <signal.h>
#include <stdbool.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"
#include "live/prom.h"
#include "model/snapshot.h"
#include "recording/rec_writer.h"

enum flight_trigger {
	FLIGHT_OOM,	/* the OOM killer chose a traced process */
	FLIGHT_TRACKED, /* a process's tracked bytes above a size */
	FLIGHT_RSS,	/* a process's RSS above a size or a share of its memory limit */
	FLIGHT_OWNERS,	/* a stage's owners above a count */
	FLIGHT_EXIT,	/* a traced process exited non-zero or by a signal */
	FLIGHT_SIGNAL,	/* SIGUSR1 to inflight */
	FLIGHT__COUNT,
};
_Static_assert(FLIGHT__COUNT == PROM_DUMP_TRIGGERS, "one exporter sample per trigger");

struct flight_opts {
	__u64 ring_ns;	       /* --ring */
	__u64 ring_bytes;      /* --ring-size: the ring's memory at most */
	__u64 after_ns;	       /* --dump-after */
	__u64 min_gap_ns;      /* --dump-interval: the least time between two dumps' triggers */
	__u64 max_dumps;       /* --max-dumps */
	bool rotate;	       /* --rotate: past max_dumps remove the oldest, not refuse */
	const char *dir;       /* --dump-dir */
	unsigned on;	       /* 1 << enum flight_trigger */
	__u64 tracked_gt;      /* tracked>SIZE */
	__u64 rss_gt;	       /* rss>SIZE, or 0 */
	__u32 rss_pct;	       /* rss>PCT%, or 0 */
	__u32 owners_stage;    /* owners:STAGE>N */
	__u64 owners_gt;
	const char *owners_name; /* the stage as given (resolved against the names at start) */
	const char *ring_size;	 /* --ring-size as given (record reads it as the BPF ring's
				  * size without --ring) */
	bool verbose, quiet;
};

/* The options of the flight recorder, one argp child for record and serve; its input is a
 * struct flight_opts (zeroed: the defaults are set by flight_opts__end). */
extern const struct argp flight_argp;
/* With --ring: the defaults, --ring-size and the checks between options (one line and
 * EXIT_USAGE); without: refuses the recorder's other options. True when --ring is on. */
bool flight_opts__end(struct flight_opts *o, bool ring_size_allowed);

struct flight;

/* What the exporter says of the dumps (inflight_dumps_total{trigger}...). */
void flight__stats(const struct flight *f, struct prom_dumps *st);


/* Parses one --dump-on TRIGGER (or a comma-separated list) into `o`; one line and
 * EXIT_USAGE on bad input. Stage names are checked later (flight__new). */
void flight_opts__parse_trigger(struct flight_opts *o, const char *arg);

/* `h`: the header every dump starts with (its strings must outlive the recorder); its
 * start times are replaced by the window's. Returns 0 or the exit code of a line said. */
int flight__new(const struct flight_opts *o, const struct rec_header_info *h,
		struct flight **out);
/* The memory writer the snapshot's records go to (SNAPSHOT, RSS, LOST, OOM). */
struct rec_writer *flight__writer(struct flight *f);
/* Who a process is, kept for the PROC records of the dumps that hold it. */
void flight__proc(struct flight *f, __u32 pid, __u64 mono_ns, const char *comm,
		  const char *cmdline, int argc, char *const *argv);
/* One event of the ring buffer. 0 or -ENOMEM. */
int flight__event(struct flight *f, const struct infl_event *ev);
/* After each snapshot's records: seals what came since the last as one chunk, lets go of
 * what is older than the ring or over its size, tests the triggers on `snap` and writes a
 * dump whose time came. 0, or -errno when the ring itself fails (not a dump: those are
 * said and counted). */
int flight__tick(struct flight *f, const struct snapshot *snap, __u64 now);
/* The run ended (`status`: the command's wait status, -1 unknown): a pending dump is
 * written now, and `exit` fires for the command when it failed. */
void flight__finish(struct flight *f, const struct snapshot *snap, int status);
/* The closing line (stderr). */
void flight__say(const struct flight *f, __u64 ran_ns);
void flight__free(struct flight *f);

/* Set by SIGUSR1 (record.c installs the handler). */
extern volatile sig_atomic_t flight_sigusr1;

#endif /* INFLIGHT_CMD_FLIGHT_H */
