/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The binaries a traced process maps besides its executable: shared libraries carrying the
 * contract (linked, DT_NEEDED, or loaded with dlopen), attached like the executable, and its
 * dynamic loader, hooked so that later dlopen()s are seen (attach/watch.h). Read from
 * /proc/PID/maps: every file mapped executable. PID and SPAWN: the libraries the target maps
 * now, and those it (or its children) load or exec later. Such a process is stopped until
 * the loader has attached, except a -p target in the foreground of a terminal, whose shell
 * would take the stop for the user's: there the first microseconds of a new library are not
 * seen (docs/attach.md).
 */
#ifndef INFLIGHT_ATTACH_LIBS_H
#define INFLIGHT_ATTACH_LIBS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bpf_map;
struct cuda_attach;
struct image_table;
struct service;
struct libs;

struct libs_cfg {
	pid_t target;		   /* the traced process */
	bool child;		   /* ... which we started (always ours to stop) */
	bool follow;		   /* its children followed: files attached for every process */
	bool multi;		   /* the probes are uprobe_multi links (attach/usdt_attach.h) */
	struct bpf_map *procs;	   /* the kernel side's maps the watch shares */
	struct bpf_map *images_map;
	struct image_table *images; /* where the files are attached */
	struct cuda_attach *cuda;   /* which files are libcuda */
};

/* While the session still has its privileges: opens the target's maps and root (its later
 * mappings are read through them), the watch, and attaches what the target maps now. 0, or
 * an exit code (printed: the watch cannot be opened). */
int libs__open(const struct libs_cfg *cfg, struct libs **out);

/* The watch's events handled on the service's thread (attach/service.h). 0 or -errno. */
int libs__serve(struct libs *l, struct service *svc);

/* Closes the watch (its links) and the target's files. NULL is fine. */
void libs__free(struct libs *l);

/* The first file `pid` maps executable, other than `skip`, that carries the contract, as a
 * path that reaches it from here (/proc/PID/root/...). 0, or -ENOENT when none does. */
int libs__first(pid_t pid, const char *skip, char *path, size_t len);

/* Whether `pid` maps the CUDA driver library (attach/cuda.h), contract or not. */
bool libs__maps_cuda(const struct cuda_attach *cuda, pid_t pid);

#endif /* INFLIGHT_ATTACH_LIBS_H */
