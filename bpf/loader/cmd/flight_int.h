/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal to the flight recorder (cmd/flight.h): its state, shared by flight.c (the ring and
 * the dumps) and flight_trig.c (the triggers). */
#ifndef INFLIGHT_CMD_FLIGHT_INT_H
#define INFLIGHT_CMD_FLIGHT_INT_H

#include "util/grow.h"
#include "cmd/flight.h"
#include "live/idents.h"
#include "model/timeline_replay.h"

extern const char *const flight_trigger_names[FLIGHT__COUNT];

struct chunk {
	__u64 t0, t1; /* the interval it covers */
	struct infl_event *ev;
	size_t nev, cap;
	void *recs; /* framed records of the interval's snapshot */
	size_t recs_len;
};

/* The state a process was in when the ring's oldest chunk began. */
struct tail {
	__u32 pid;
	struct tl_replay *rp;
	struct tl_order ord;
};

struct ident {
	__u32 pid;
	__u64 mono_ns;
	char *comm, *cmdline;
	int argc;
	char **argv;
};

struct trig {
	enum flight_trigger kind;
	__u32 pid;
	__u64 mono_ns, wall_ns;
	char detail[160];
};

struct flight {
	struct flight_opts o;
	struct rec_header_info h;
	struct rec_writer *mem;
	__s64 wall_minus_mono;
	struct chunk *ch; /* ch[0] oldest; the last is open */
	size_t nch, capch;
	struct tail *tails;
	size_t ntails, captails;
	struct ident *ids;
	size_t nids, capids;
	__u64 bytes, bytes_peak; /* the ring's memory: chunks and tails */
	__u64 kept_events, evicted_events;
	/* triggers */
	bool armed[FLIGHT__COUNT];
	__u32 *oomed;  /* pids whose OOM kill fired once */
	size_t noomed, capoomed;
	struct proc_idents idents; /* exit statuses (pidfd) of the processes seen */
	__u64 *judged; /* (pid << 32 | gen low bits) whose exit was judged */
	size_t njudged, capjudged;
	bool pending;
	struct trig next;
	__u64 due_ns, last_trigger_ns;
	__u64 fired[FLIGHT__COUNT];
	__u64 written, merged, refused_gap, refused_max, rotated, truncated, failed;
	__u64 written_by[FLIGHT__COUNT], last_wall_ns;
	char **names; /* dumps written, oldest first (rotation) */
	size_t nnames;
};

/* Grows `arr` (of `elem`-byte items, `n` used, `*cap` allocated) to hold one more; NULL when
 * memory runs out (`arr` is left as it was). */
/* Tests every trigger on `snap`; one that fires makes a dump pending. */
void flight__check_triggers(struct flight *f, const struct snapshot *snap, __u64 now);
void flight__fire(struct flight *f, enum flight_trigger kind, __u32 pid, __u64 now,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Whether some image of `pid` had its exit judged already. */
bool flight__judged_pid(const struct flight *f, __u32 pid);

#endif /* INFLIGHT_CMD_FLIGHT_INT_H */
