/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A session's kernel object: what the running kernel offers (attach/features.h), the
 * programs it loads (one lock form, proc_lock.bpf.h; RSS if it can), the maps' sizes and
 * read-only settings, record mode's event rings (attach/event_rings.h), the USDT programs
 * prepared for the attach's mechanism (attach/usdt_attach.h), the load; then what the loaded
 * programs count. The session owns one and sets its inputs; nothing here knows the session.
 */
#ifndef INFLIGHT_ATTACH_PROGRAMS_H
#define INFLIGHT_ATTACH_PROGRAMS_H

#include <stdbool.h>
#include <linux/types.h>
#include "inflight.skel.h"
#include "attach/features.h"
#include "attach/session.h"
#include "contract/names.h"

struct cuda_attach;
struct event_rings;
struct usdt_attach;

struct programs {
	/* the load's inputs, besides the command line's options */
	enum session_mode mode;
	bool follow;		  /* PID, SPAWN: the target's children are traced too */
	struct infl_names names;  /* the entry and terminal stages the kernel starts with */
	struct cuda_attach *cuda; /* libcuda's memory calls (its programs), not owned */
	/* what it found and made */
	struct infl_features feat;
	struct inflight_bpf *skel;
	bool atomic;		  /* the atomic form (bpf/acct.bpf.h), else the locked one */
	struct bpf_program *exit_prog, *exec_prog; /* the form's process-end programs */
	struct bpf_program *progs[INFL_PROBE__COUNT]; /* the variants this kernel loads */
	const char *rss_off;	      /* why RSS is not followed, NULL when it is */
	struct bpf_program *rss_prog; /* the rss_stat variant loaded, NULL when none */
	struct usdt_attach *usdt;     /* the probes' attach */
	struct event_rings *events;   /* record mode: the event rings, a CPU's each */
};

/* libbpf's chatter on stderr (-v), or none: failures are said once, in our own words. */
void programs__verbose(bool verbose);

/* Fills `feat`: the kernel offers what inflight needs, or one line names what is missing.
 * 0, or an exit code (printed). */
int programs__check_kernel(struct programs *s);

/* Opens, configures and loads the skeleton; tried once more without libcuda's programs when
 * the kernel refuses them (a warning says so). 0, or an exit code (printed). */
int programs__load(struct programs *p, const struct session_opts *o);

/* As session__deferred_ops and session__lock_wait_rounds say. */
__u64 programs__deferred_ops(const struct programs *s, __u64 *full);
__u64 programs__lock_wait_rounds(const struct programs *s);

/* Frees the USDT attach (its links: detached) and the skeleton. */
void programs__free(struct programs *p);

#endif /* INFLIGHT_ATTACH_PROGRAMS_H */
