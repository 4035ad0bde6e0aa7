/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Snapshots read from the kernel maps. They never stop the probes: a process's record is
 * copied seqlock style (struct infl_proc), the map walked bucket by bucket (map_walk.h), so
 * a process ending during a walk is seen once or not at all; its final record, which the
 * control ring brings (lifecycle.h), then wins.
 */
#ifndef INFLIGHT_ATTACH_SNAPSHOT_READ_H
#define INFLIGHT_ATTACH_SNAPSHOT_READ_H

#include <linux/types.h>
#include "inflight.skel.h"
#include "attach/lifecycle.h"
#include "model/snapshot.h"

/* Every traced process's state: the living from `skel`'s maps, then the final records
 * `life` keeps of those that ended, sorted by pid, then by when each record began. 0 or
 * -errno (nothing to free). The caller stamps it (mono_ns) and says why RSS is off. */
int snapshot_read__take(struct inflight_bpf *skel, struct lifecycle *life, struct snapshot *snap);

/* Entries now in the kernel's process, buffer and owner maps. 0. */
int snapshot_read__map_usage(struct inflight_bpf *skel, __u32 *procs, __u32 *bufs,
			     __u32 *owners);

#endif /* INFLIGHT_ATTACH_SNAPSHOT_READ_H */
