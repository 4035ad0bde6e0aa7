/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Redeploys under -b PATH: a new build put in place (`mv new PATH`, `install`, a symlink
 * switched) is a new inode, which the probes attached to the old one do not see. The
 * directory of PATH is watched (inotify); when PATH names a new file carrying the contract,
 * it is attached too, and processes started from it are traced from their first
 * instruction; processes of the old file stay traced. Each change is said on stderr.
 */
#ifndef INFLIGHT_ATTACH_REDEPLOY_H
#define INFLIGHT_ATTACH_REDEPLOY_H

struct session;

/* Starts watching `given` (the -b PATH as the user gave it) for the session. 0 or -errno. */
int redeploy__open(struct session *s, const char *given);

/* Reads what the directory says and attaches what PATH names now. */
void redeploy__handle(struct session *s);

#endif /* INFLIGHT_ATTACH_REDEPLOY_H */
