/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What `serve` remembers of the processes it traces, in bounded memory however often a -b
 * target restarts:
 *  - their identities (executable, comm, start time) for inflight_process_info, read from
 *    /proc the first time a pid shows up and dropped when it leaves the maps: as many as the
 *    maps hold processes (--max-procs);
 *  - the final states of processes that left the maps (--keep-exited over), for the summary
 *    at the end: the last SERVE_RETIRED_KEEP in full, and for the earlier ones a count and
 *    their highest peak (one line in the summary), so that thousands of restarts cost a
 *    fixed amount of memory.
 */
#ifndef INFLIGHT_CMD_SERVE_PROCS_H
#define INFLIGHT_CMD_SERVE_PROCS_H

#include <linux/types.h>
#include "live/prom.h"
#include "model/snapshot.h"

#define SERVE_RETIRED_KEEP 64

struct serve_idents {
	struct prom_identity *id; /* sorted by pid; strings owned */
	int n;
};

/* The identities of exactly the processes of `snap` (sorted by pid, as snapshots are):
 * known ones kept, new ones read from /proc (fields left empty when the process is gone;
 * `binary`, the traced one, when its /proc/PID/exe may not be read), the others dropped.
 * 0, or -ENOMEM with the previous table kept. */
int serve_idents__sync(struct serve_idents *t, const struct snapshot *snap, const char *binary);
void serve_idents__free(struct serve_idents *t);

struct serve_retired {
	struct proc_snapshot *keep; /* SERVE_RETIRED_KEEP of them, a ring, oldest at `head` */
	int n, head;
	__u64 older;	      /* retired before the kept ones */
	__u64 older_peak;     /* the highest peak among them */
	__u32 older_peak_pid;
};

/* Remembers the final state of a process that leaves the maps (out of memory: only counted,
 * with its peak). */
void serve_retired__add(struct serve_retired *r, const struct proc_snapshot *ps);
void serve_retired__free(struct serve_retired *r);
/* The kept ones, in the order they retired, in front of the processes of `snap`. 0, or
 * -ENOMEM (snap unchanged). */
int serve_retired__prepend(const struct serve_retired *r, struct snapshot *snap);

#endif /* INFLIGHT_CMD_SERVE_PROCS_H */
