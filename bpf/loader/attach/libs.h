/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The binaries a traced process maps besides its executable: shared libraries carrying the
 * contract (linked, DT_NEEDED, or loaded with dlopen), attached like the executable, and its
 * dynamic loader, hooked so that later dlopen()s are seen (attach/watch.h). Read from
 * /proc/PID/maps: every file mapped executable.
 */
#ifndef INFLIGHT_ATTACH_LIBS_H
#define INFLIGHT_ATTACH_LIBS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct session;

/* Opens the target's maps and root while the session still has its privileges (they are
 * dropped once attached): its later mappings are read through them. 0 or -errno. */
int libs__open_target(struct session *s);

/* Attaches every not yet attached file of process `pid` that carries the contract, and hooks
 * its ld.so. Problems are warnings: the process is traced for what could be attached.
 * Returns the number of files attached now. */
int libs__scan(struct session *s, pid_t pid);

/* The first file `pid` maps executable, other than `skip`, that carries the contract, as a
 * path that reaches it from here (/proc/PID/root/...). 0, or -ENOENT when none does. */
int libs__first(pid_t pid, const char *skip, char *path, size_t len);

/* Whether `pid` maps the CUDA driver library (attach/cuda.h), contract or not. */
bool libs__maps_cuda(struct session *s, pid_t pid);

#endif /* INFLIGHT_ATTACH_LIBS_H */
