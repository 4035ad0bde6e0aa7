/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a session traces, resolved from the command line: a running process (-p PID), a
 * binary and every process of it (-b PATH), or a command started here (-- CMD), stopped at
 * its entry point until the probes are attached; the binary to attach (the executable, or
 * the first library it maps that carries the contract) with its sites and verdict; and,
 * for a target with none of the contract, what is traced instead (what it loads or runs
 * later, libcuda's memory calls). target.c fills it in and ends it; the session reads it.
 */
#ifndef INFLIGHT_ATTACH_TARGET_H
#define INFLIGHT_ATTACH_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "attach/session.h"
#include "contract/usdt_binary.h"

struct cuda_attach;

struct target {
	pid_t pid;	      /* traced pid (PID, SPAWN), 0 in BINARY mode */
	bool child;	      /* our child (SPAWN): we reap it */
	bool gone;
	int status;	      /* the child's wait status, -1 until known */
	int pidfd;	      /* tells when it exits; -1 in BINARY mode */
	char path[PATH_MAX];  /* the traced binary, as attached (may be /proc/PID/root/...) */
	char shown[PATH_MAX]; /* the same, as a user would name it */
	struct usdt_binary bin; /* its sites and verdict */
	bool lib_main;	      /* `path` is a library the target maps, not its executable */
	bool deferred;	      /* no contract in `bin`: what it loads (dlopen, exec) may carry it */
	bool cuda_only;	      /* no contract anywhere: libcuda's memory alone */
};

void target__init(struct target *t);

/* Resolves the target and its binary (`cuda`: where libcuda's memory calls would be
 * attached); SPAWN starts the command and runs it to its entry point, stopped there. 0, or
 * an exit code (printed). */
int target__resolve(struct target *t, const struct session_opts *o, const struct cuda_attach *cuda);

/* Once attached: the target's exit is watched, and a spawned command goes on (`cmd` names
 * it). 0, or EXIT_GENERIC (printed). */
int target__go(struct target *t, const char *cmd);

/* True once the target is gone (PID, SPAWN); *status: as session__target_gone. */
bool target__gone(struct target *t, int *status);

/* A session that failed to open: the command it started is killed and reaped. */
void target__kill(struct target *t);

void target__free(struct target *t);

#endif /* INFLIGHT_ATTACH_TARGET_H */
