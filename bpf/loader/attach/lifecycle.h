/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The traced processes' lives, on the loader's side: the target's first record, the control
 * ring that brings the final records of ended images (exit, exec), those records kept for
 * the outputs until the command forgets them, what an ended image left in the kernel's
 * buffer and owner maps removed, and the images' names (inflight.h: infl_ident). One per
 * session, which owns it; nothing here knows the session.
 */
#ifndef INFLIGHT_ATTACH_LIFECYCLE_H
#define INFLIGHT_ATTACH_LIFECYCLE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "inflight.skel.h"
#include "contract/images.h"
#include "model/snapshot.h"

#define CTL_RING_BYTES (1u << 20) /* final records of ended images on their way (~70) */

struct lifecycle;

/* After load: opens the control ring of `skel`. 0, or -errno. */
int lifecycle__new(struct inflight_bpf *skel, struct lifecycle **out);

/* The control ring's fd to poll, and its records taken: how many, or -errno. */
int lifecycle__epoll_fd(const struct lifecycle *l);
int lifecycle__consume(struct lifecycle *l);

/* Ended records the control ring could not take (left in `procs`, marked exited). */
void lifecycle__sweep(struct lifecycle *l);

/* Control ring records too short to read (NULL: 0). */
__u64 lifecycle__lost(const struct lifecycle *l);

/* The final records kept, in the order the images ended; valid until the next call here. */
const struct proc_snapshot *lifecycle__ended(const struct lifecycle *l, int *n);

/* Whether the OOM killer chose `pid` (bpf/oom.bpf.h): its record into *oom, zeroed when not
 * (for a living process: the kernel's copy stays). */
void lifecycle__oom(const struct lifecycle *l, __u32 pid, struct infl_oom_kill *oom);

/* The class and stage slots any traced image has counted in so far (the kernel's records and
 * the ended ones kept): a new image's claims take none of them (contract/images.h). */
void lifecycle__counted_slots(struct lifecycle *l, struct image_slots_used *u);

/* Forgets the kept records of `pid` (of its image `gen` unless `any_gen`), with their
 * names. 0, or -ENOENT when none was kept. */
int lifecycle__forget(struct lifecycle *l, __u32 pid, __u64 gen, bool any_gen);

/* Image (pid, gen)'s name as the kernel read it, or that of the latest image of `pid` made
 * at or before `ts`. 0, or -ENOENT (or another -errno). */
int lifecycle__ident(const struct lifecycle *l, __u32 pid, __u64 gen, struct infl_ident *out);
int lifecycle__ident_at(const struct lifecycle *l, __u32 pid, __u64 ts, struct infl_ident *out);

/* PID and SPAWN: the target's record, made before the probes go live (the kernel side makes
 * none of its own for a traced set: inflight.bpf.c traced_set), `from_start` when it is
 * stopped at its first instruction (nothing of it can be missed). 0, or an exit code
 * (printed). */
int lifecycle__seed(struct lifecycle *l, pid_t pid, bool from_start);

/* Closes the ring and frees the records. NULL is fine. */
void lifecycle__free(struct lifecycle *l);

#endif /* INFLIGHT_ATTACH_LIFECYCLE_H */
