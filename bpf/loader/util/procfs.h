/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the loader reads of a process under /proc: its executable, its state, small text
 * files. One set of helpers for every command (tested in tests/loader/test_parse.c).
 */
#ifndef INFLIGHT_UTIL_PROCFS_H
#define INFLIGHT_UTIL_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "inflight.h"

/* /proc/PID/FILE into buf, NULs (cmdline) as spaces, trailing newlines cut; "" when it
 * cannot be read. */
void proc_read(pid_t pid, const char *file, char *buf, size_t len);
/* /proc/PID/cmdline as words: its bytes into buf (len bytes at most, the last word cut
 * there), words[i] pointing into it, at most max. The count of words, 0 when it cannot be
 * read (gone, a zombie, a kernel thread). */
int proc_cmdline_words(pid_t pid, char *buf, size_t len, char **words, int max);
/* The same for any small file (one read: /proc files hand out their text whole). */
void proc_read_file(const char *path, char *buf, size_t len);

/* A device number as the kernel encodes it inside (MKDEV: struct super_block's s_dev), as
 * the BPF side reads a file's device: the images map's key. */
__u64 proc_kernel_dev(dev_t d);

/*
 * A binary's one identity: the file held open and named as the kernel names it (the images
 * map's key, struct infl_image_key). `path` reaches that very file through our descriptor,
 * whatever its own path names later (a /proc/PID/root/... of a process that exits, a binary
 * replaced on disk): every attach to the image goes through it.
 */
struct proc_image {
	int fd;
	char path[64]; /* /proc/self/fd/FD */
	struct infl_image_key key;
};

/* Opens and identifies the file at `path`. 0, or -errno (nothing left open). */
int proc_image_open(const char *path, struct proc_image *im);
void proc_image_close(struct proc_image *im);
/* The key of the file `path` names now, without holding it. 0, or -errno. */
int proc_image_key(const char *path, struct infl_image_key *key);
/* Whether two keys name the same file. */
bool proc_image_same(const struct infl_image_key *a, const struct infl_image_key *b);

/* One line of /proc/PID/maps. */
struct proc_mapping {
	__u64 start, end, offset;
	unsigned int maj, min; /* the file's device */
	__u64 ino;	       /* 0: no file */
	char perms[8];	       /* "r-xp" */
	char path[4096];       /* "" when none; a file's ends in " (deleted)" once removed */
};

/* Whether a mapping maps the file of `key` (by its maj:min and inode). */
bool proc_mapping_of(const struct proc_mapping *m, const struct infl_image_key *key);

/* /proc/PID/maps of `pid`, for proc_maps_next; NULL with errno set. */
FILE *proc_maps_open(pid_t pid);

/* The next mapping of f (an open /proc/PID/maps): 1, or 0 at the end. Lines that do not
 * parse are skipped. */
int proc_maps_next(FILE *f, struct proc_mapping *m);

/* The executable's path as the process sees it (readlink of /proc/PID/exe), for display.
 * 0, or -errno. */
int proc_exe_name(pid_t pid, char *buf, size_t len);

/*
 * The executable as a path that works across mount namespaces: /proc/PID/root/<exe> (libbpf
 * recognises the form when it matches /proc/PID/maps), or /proc/PID/exe itself when that path
 * is not reachable (e.g. the file was deleted). 0, or -errno.
 */
int proc_exe_path(pid_t pid, char *buf, size_t len);

/* True when pid exited and nobody reaped it yet (a zombie). */
bool proc_is_zombie(pid_t pid);

/* True when pid no longer runs: no such process, or a zombie. */
bool proc_gone(pid_t pid);

/* True when pid is a kernel thread (PF_KTHREAD): no program, no user memory, no probes. */
bool proc_is_kthread(pid_t pid);

/* True for /proc/PID/root/... and /proc/self/root/...: a file seen through another
 * process's root, maybe in another mount namespace. Resolving such a path's links here
 * (realpath) would leave that namespace: keep it as given. */
bool proc_is_root_path(const char *path);

/* When the process started, in unix seconds (its starttime in /proc/PID/stat after the
 * boot time of /proc/stat). 0, or -ENOENT. */
int proc_start_time(pid_t pid, __u64 *unix_s);

/* The host's memory (MemTotal of /proc/meminfo) in bytes, 0 when unknown. */
__u64 proc_mem_total(void);

/* Resident set size from /proc/PID/statm in bytes, 0 when unknown. */
__u64 proc_statm_rss(pid_t pid);

#endif /* INFLIGHT_UTIL_PROCFS_H */
