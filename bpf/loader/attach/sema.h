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

/*
 * Every breakpoint the kernel holds at a probe's site is counted in its semaphore once: it
 * raises it when it writes the breakpoint and lowers it when it takes the breakpoint out.
 * Not so in a process that starts while a tracer covers every process of its binary (-b,
 * --, bpftrace, perf): the kernel then raises the semaphore while exec maps the file, in
 * RELRO's copy of a page RELRO shares (LLD, mold) and once for two breakpoints where the
 * site's page is mapped twice (LLD, mold). Once that tracer ends, the kernel cannot lower
 * the copy the program reads (below 0) and leaves its breakpoints in place; the next tracer
 * finds them there, the kernel raises nothing for it, and its probes never fire.
 * After an attach to `pid`, raises each semaphore that reads fewer than the breakpoints at
 * its probe's sites to their number, through /proc/PID/mem, where the kernel counts it in the
 * copy the program reads (a process stopped at its exec has RELRO's copy counted instead,
 * and is left to sema__verify): the kernel's own books, balanced again when the last tracer
 * leaves. `out` says what each probe's was raised from and to (0 and 0: left). 0 (also
 * when its memory cannot be read: nothing is known, sema__check says what it can), or -errno
 * when a semaphore short of its breakpoints could not be written.
 */
struct sema_settled {
	unsigned short from[USDT_CONTRACT_PROBES], to[USDT_CONTRACT_PROBES];
};

int sema__settle(pid_t pid, const char *path, const struct usdt_binary *b,
		 struct sema_settled *out);

/* sema__settle, each raise said in one line (and a write that failed, but for a process
 * gone). */
void sema__settle_said(pid_t pid, const char *path, const char *shown,
		       const struct usdt_binary *b);

/* -b: the semaphores of a shared-page layout (LLD, mold) are raised in a copy the program
 * does not read in every process that starts after the attach. 0, or EXIT_SEMAPHORE
 * (printed; `shown` names the binary). */
int sema__check_layout(const struct usdt_binary *b, const char *shown);

/* After the attach to process `pid` (its binary `b`, at `path`): settled (sema__settle_said),
 * every semaphore the program reads reads non-zero there. 0 (also when it cannot be told: a
 * warning), or EXIT_SEMAPHORE (printed). */
int sema__verify(pid_t pid, const char *path, const char *shown, const struct usdt_binary *b);

#endif /* INFLIGHT_ATTACH_SEMA_H */
