/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who each traced process is (its comm and command line), read from /proc the first time the
 * loader sees it hold a slot, while it still runs: once it has exited /proc has nothing left
 * to say, and `-b` sees processes only through the kernel maps, so what /proc cannot say
 * comes from what the kernel read when it made the record. Keyed by pid and image (gen),
 * so that an exec or a reused pid is another entry. A pidfd opened then tells how a process
 * that is not inflight's child ended. For the summary's text and JSON.
 */
#ifndef INFLIGHT_LIVE_IDENTS_H
#define INFLIGHT_LIVE_IDENTS_H

#include <linux/types.h>
#include "inflight.h"
#include "model/snapshot.h"

struct proc_ident {
	__u32 pid;
	__u64 gen;
	char *comm;    /* NULL: unknown */
	char *command; /* the words joined by spaces; NULL: unknown */
	char **argv;   /* the words, NULL-terminated; NULL: unknown */
	int pidfd;     /* held until its exit status is known; -1: none */
	int wait_status; /* how it ended (waitpid's form), -1: unknown */
};

/* The kernel's view of an image (the attach code's session__ident): 0 and *out filled, or
 * an error. */
typedef int (*kernel_ident_fn)(void *ctx, __u32 pid, __u64 gen, struct infl_ident *out);

struct proc_idents {
	struct proc_ident *id;
	int n, cap;
	kernel_ident_fn kernel; /* NULL: /proc only */
	void *kernel_ctx;
};

/*
 * Reads the identity of every process of `snap` not known yet: of a running one from /proc,
 * what /proc does not say from the kernel's record of it (when `kernel` is set); of an ended
 * one from the kernel's alone (its pid may be another process's by now). 0 or -ENOMEM.
 */
int idents__sync(struct proc_idents *t, const struct snapshot *snap);
/* The exit status of every known process that ended and was reaped by its parent, asked of
 * the pidfd held since it was first seen (PIDFD_GET_INFO, Linux 6.15+; older kernels tell
 * none and it stays unknown). */
void idents__collect_exits(struct proc_idents *t);
/* The identity of image (pid, gen), or NULL. */
const struct proc_ident *idents__find(const struct proc_idents *t, __u32 pid, __u64 gen);
/* Forgets image (pid, gen): the command forgot it too. */
void idents__drop(struct proc_idents *t, __u32 pid, __u64 gen);
void idents__free(struct proc_idents *t);

#endif /* INFLIGHT_LIVE_IDENTS_H */
