/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Redeploys under -b PATH: a new build put in place (`mv new PATH`, `install`, a symlink
 * switched) is a new inode, which the probes attached to the old one do not see. The
 * directory of PATH is watched (inotify); when PATH names a new file carrying the contract,
 * it is attached too (attach/image_table.h), and processes started from it are traced from
 * their first instruction; processes of the old file stay traced. Each change is said on
 * stderr.
 */
#ifndef INFLIGHT_ATTACH_REDEPLOY_H
#define INFLIGHT_ATTACH_REDEPLOY_H

struct image_table;
struct service;
struct redeploy;

/* Starts watching `given` (the -b PATH as the user gave it; `path`: the file attached for
 * it), new files to be attached in `images`. 0 or -errno. */
int redeploy__open(const char *given, const char *path, struct image_table *images,
		  struct redeploy **out);

/* The directory's events handled on the service's thread (attach/service.h). 0 or -errno. */
int redeploy__serve(struct redeploy *r, struct service *svc);

void redeploy__free(struct redeploy *r); /* NULL is fine */

#endif /* INFLIGHT_ATTACH_REDEPLOY_H */
