/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The files a session has attached to, each once by its identity (util/procfs.h:
 * proc_image): the contract's images, their ids placed among the session's class and stage
 * slots (contract/images.h), their sites attached (attach/usdt_attach.h) and since when each
 * is traced (the kernel side's images map: processes that start from then on are traced
 * from their first instruction); and the CUDA driver libraries (attach/cuda.h). Attaches
 * come from the session's open and its service thread: one at a time.
 */
#ifndef INFLIGHT_ATTACH_IMAGE_TABLE_H
#define INFLIGHT_ATTACH_IMAGE_TABLE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "inflight.h"
#include "contract/names.h"
#include "contract/usdt_binary.h"

#define IMAGE_TABLE_MAX 16 /* binaries one session attaches to (the target, exec'd ones) */

struct bpf_map;
struct cuda_attach;
struct lifecycle;
struct usdt_attach;
struct image_table;

/* Told the names of the slots whenever an image is placed, before its probes go live. */
typedef void (*image_names_fn)(void *ctx, const struct infl_names *names);

struct image_table_cfg {
	struct usdt_attach *usdt;
	struct cuda_attach *cuda;
	struct lifecycle *life;	       /* the slots counted so far */
	struct bpf_map *images;	       /* the kernel side's images map */
	pid_t target;		       /* the traced pid (0: none): a failure says it exited */
	const struct usdt_binary *bin; /* the target's binary, read already... */
	struct infl_image_key bin_key; /* ... from this file */
	bool bin_deferred;	       /* ... carrying none of the contract (nothing to attach) */
	bool verbose;		       /* -v: a line per libcuda attached */
	image_names_fn names_fn;
	void *ctx;
};

/* 0, or -ENOMEM. */
int image_table__new(const struct image_table_cfg *cfg, struct image_table **out);

/*
 * Attaches the contract's probes in the binary at `path` (pid -1: every process; `shown`
 * names it in messages, its basename labels its classes and stages), and tells the kernel
 * side since when. 0 (*added: whether it is new), or an exit code (printed).
 */
int image_table__attach(struct image_table *t, const char *path, const char *shown, pid_t pid,
			bool *added);

/* The same for a CUDA driver library (attach/cuda.h); what fails is said there. */
void image_table__cuda(struct image_table *t, const char *path, const char *shown, pid_t pid);

/* -b without the contract: the binary's processes are told apart by its file (the images
 * map) as if its probes had been attached. 0, or EXIT_NO_BINARY (printed). */
int image_table__note(struct image_table *t, const char *path);

/* Sites attached so far, in every image. */
int image_table__sites(const struct image_table *t);

/* The files whose sites are attached, open read-only (at most `max`): what the detaching
 * child leases (attach/detach.h). Their count. */
int image_table__files(const struct image_table *t, int *fds, int max);

void image_table__free(struct image_table *t); /* NULL is fine; detaches nothing */

#endif /* INFLIGHT_ATTACH_IMAGE_TABLE_H */
