/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session object, shared by the files of attach/ that build it (session.c: checks,
 * load, attach, polling; libs.c, redeploy.c, service.c). Nothing outside attach/ includes
 * it.
 */
#ifndef INFLIGHT_SESSION_INT_H
#define INFLIGHT_SESSION_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include "inflight.skel.h"
#include "attach/features.h"
#include "attach/session.h"
#include "attach/stage_roles.h"
#include "contract/images.h"
#include "contract/usdt_binary.h"

#define SESSION_MAX_IMAGES 16 /* binaries one session attaches to (the target, exec'd ones) */

struct session {
	struct inflight_bpf *skel;
	struct lifecycle *life;	 /* the control ring, ended images (attach/lifecycle.h) */
	struct ring_buffer *rb;	 /* the event ring, when recording */
	struct bpf_program *progs[INFL_PROBE__COUNT]; /* the variants this kernel loads */
	struct infl_image_key images[SESSION_MAX_IMAGES]; /* the files attached (util/procfs.h) */
	int nimages;
	struct usdt_attach *usdt; /* the probes' links (attach/usdt_attach.c) */
	struct cuda_attach *cuda; /* libcuda's memory calls (attach/cuda.c) */
	bool cuda_only;		  /* no contract anywhere: libcuda's memory alone */
	struct usdt_binary bin;	  /* the traced binary's sites and verdict */
	bool detach_child;	  /* session__free hands the links to a child (attach/detach.h) */
	struct watch *watch;	  /* libraries and execs after the attach (attach/watch.c) */
	bool deferred;		  /* the target has no contract yet: it may dlopen one */
	bool lib_main;		  /* s->path is a library the target maps, not its executable */
	struct infl_image_key bin_key; /* the file `bin` was read from */
	int target_maps, target_root; /* the target's /proc maps and root, opened early */
	struct service *svc;	  /* the background thread (attach/service.c) */
	pthread_mutex_t attach_lock; /* session__attach_image: the thread and the loop */
	/* -b: the binary's directory, watched for redeploys (attach/redeploy.c) */
	int inotify_fd;
	char given[PATH_MAX];	  /* PATH as given */
	char given_base[NAME_MAX + 1];
	dev_t cur_dev;		  /* the file PATH named when last looked at */
	ino_t cur_ino;
	bool cur_attached;	  /* ... and whether it is attached */
	struct infl_features feat;
	const char *rss_off;
	struct bpf_program *rss_prog; /* the rss_stat variant loaded, NULL when none */
	struct bpf_link *rss_link;
	/* the names every output shows: the slots' (contract/images.h), and the command
	 * line's entry and terminal stages over them; names_gen counts their changes */
	struct images slots;
	struct infl_names names;
	unsigned names_gen;
	struct stage_roles roles; /* attach/stage_roles.h */
	enum session_mode mode;
	const char *more[SESSION_MAX_MORE_BINARIES]; /* -b's other files */
	int nmore;
	bool follow;	    /* PID, SPAWN: children followed, probes attached binary-wide */
	pid_t target;	    /* traced pid (PID, SPAWN), 0 in BINARY mode */
	int pidfd;	    /* tells when the target exits; -1 in BINARY mode */
	bool child;	    /* target is our child (SPAWN): we reap it */
	bool gone;
	int status;	    /* child's wait status, -1 until known */
	char path[PATH_MAX]; /* the traced binary, as attached (may be /proc/PID/root/...) */
	char shown[PATH_MAX]; /* the same, as a user would name it */
	session_event_fn fn; /* valid during session__poll */
	void *fn_ctx;
	int fn_err;
	__u64 ring_lost;
};

/* session.c: attach the contract's probes in the binary at `path` (pid -1: every process;
 * `shown` names it in messages, its basename labels its classes and stages), and tell the
 * kernel side since when (images map). 0 or an exit code (printed). */
int session__attach_image(struct session *s, const char *path, const char *shown, pid_t pid);
/* the same for a CUDA driver library (attach/cuda.h) */
void session__attach_cuda(struct session *s, const char *path, const char *shown, pid_t pid);

#endif /* INFLIGHT_SESSION_INT_H */
