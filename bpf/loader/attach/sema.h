/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Semaphores that are really raised: once the probes are attached to a process, every
 * semaphore its live sites read is read back where the program reads it (its runtime
 * address, from /proc/PID/maps and /proc/PID/mem). A semaphore the kernel raised in another
 * copy of its page (LLD and mold: docs/programs.md, finding 1) reads 0 there, and the
 * program would never fire the probe: that is said, never left to "no traced process hit a
 * probe".
 */
#ifndef INFLIGHT_ATTACH_SEMA_H
#define INFLIGHT_ATTACH_SEMA_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "contract/usdt_binary.h"

struct sema_check {
	int checked;		/* semaphores read */
	int zero;		/* ... that read 0: not raised where the program reads them */
	int probe;		/* the first such probe (index in usdt_contract), -1 when none */
	__u64 addr;		/* ... and its runtime address */
};

/*
 * Reads the semaphores of `b`'s live sites in process `pid`, which maps the file `path`.
 * 0 with `out` filled, -ENOENT when the process maps no such file, or -errno (-EACCES,
 * -EPERM: its memory cannot be read).
 */
int sema__check(pid_t pid, const char *path, const struct usdt_binary *b, struct sema_check *out);

/* The semaphore of each contract probe of `b` in `pid` (0 where it has none) and its runtime
 * address (0: none). 0, or as sema__check. */
int sema__read(pid_t pid, const char *path, const struct usdt_binary *b,
	       unsigned short vals[USDT_CONTRACT_PROBES], __u64 addrs[USDT_CONTRACT_PROBES]);

/* Where the file is mapped in `pid`: the load bias (runtime minus link-time addresses).
 * 0, -ENOENT when not mapped, or -errno. */
int sema__load_bias(pid_t pid, const char *path, const struct usdt_binary *b, __u64 *bias);

/* -b: the semaphores of a shared-page layout (LLD, mold) are raised in a copy the program
 * does not read in every process that starts after the attach. 0, or EXIT_SEMAPHORE
 * (printed; `shown` names the binary). */
int sema__check_layout(const struct usdt_binary *b, const char *shown);

/* After the attach to process `pid` (its binary `b`, at `path`): every semaphore the
 * program reads reads non-zero there. 0 (also when it cannot be told: a warning), or
 * EXIT_SEMAPHORE (printed). */
int sema__verify(pid_t pid, const char *path, const char *shown, const struct usdt_binary *b);

#endif /* INFLIGHT_ATTACH_SEMA_H */
