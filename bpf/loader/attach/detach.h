/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An exit that does not wait for the kernel. Unregistering uprobes waits for RCU grace
 * periods: one per uprobe_multi link, one or more per perf-event uprobe, one site after the
 * other (docs/attach.md: 400 sites took 48 s to 197 s here). The process that holds the last
 * reference to a link pays for it, in its close() or in its exit. So before the session is
 * torn down, a child takes a reference to everything: it has its own session and no
 * terminal, holds no file but the BPF objects and the attached files (read leases, so that
 * a rewrite in place waits for the links to go), waits until this process has dropped its
 * own references and exits, which closes the links. This process then tears down
 * and exits at once; the kernel's work happens where nobody waits for it.
 *
 * The child is made a child of our parent (CLONE_PARENT), which reaps it as a shell reaps
 * any child: an orphan would be left to init, and not every init reaps (this project's
 * machines' does not). Where that cannot be (we are a namespace's init) it is a plain child.
 */
#ifndef INFLIGHT_ATTACH_DETACH_H
#define INFLIGHT_ATTACH_DETACH_H

#include <sys/types.h>

#define DETACH_FILES_MAX 16 /* attached files the child leases (attach/image_table.h) */

/* Starts the detaching child, which waits for the go-ahead. `files`: the attached files,
 * open read-only, which the child holds read leases on until its links are closed (a
 * write in place waits for them). The go-ahead's fd (>= 0), or -errno: then nothing was
 * handed over and the caller detaches inline. Flushes stdio first (the child never
 * writes). */
int detach__hand_off(const int *files, int nfiles);

/* Once the caller has closed its own references (its links, programs, maps): the child goes
 * on, and its exit pays for the links. Also what the caller's exit does. */
void detach__go(int fd);

#endif /* INFLIGHT_ATTACH_DETACH_H */
