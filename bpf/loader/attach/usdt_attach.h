/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inflight's own USDT attach: every usable site of the contract's probes in one binary,
 * with the arguments decoded by the loader (contract/usdt_binary.c) into its spec map
 * (bpf/usdt_spec.h), by the mechanism the kernel does best:
 *   uprobe_multi links (Linux 6.6+): one link per program for all its sites, attached in one
 *     call and detached with one grace period;
 *   perf-event uprobes otherwise: one per site (5.10, 6.1).
 * The mechanism is chosen before load (the programs' attach type depends on it), by probing
 * the kernel; INFLIGHT_ATTACH=perf|multi in the environment forces one (tests, benchmarks).
 */
#ifndef INFLIGHT_ATTACH_USDT_ATTACH_H
#define INFLIGHT_ATTACH_USDT_ATTACH_H

#include <stdbool.h>
#include <sys/types.h>
#include "inflight.h"
#include "contract/images.h"
#include "contract/usdt_binary.h"
#include "util/procfs.h"

struct bpf_program;
struct bpf_map;
struct usdt_attach;

enum usdt_mech {
	USDT_MECH_PERF = 0,  /* one perf-event uprobe per site */
	USDT_MECH_MULTI = 1, /* one uprobe_multi link per program */
};

struct usdt_attach_cfg {
	struct bpf_program *progs[INFL_PROBE__COUNT]; /* in enum infl_probe order */
	struct bpf_map *specs;	/* usdt_args.bpf.h's usdt_specs */
	struct bpf_map *ips;	/* ... and usdt_ips */
	struct bpf_map *ip_cache; /* ... and usdt_ip_cache */
	/* what those programs tail-call (the locked form's): a program array takes programs
	 * of one type and attach type, so these are prepared with them; NULL where unused */
	struct bpf_program *tail_progs[2];
	/* the locked form: its tail calls are shared with libcuda's uprobes (attach/cuda.c),
	 * which are perf-event ones, so the probes' programs must be too */
	bool perf_only;
	bool *have_cookie;	/* its rodata usdt_have_cookie, set here */
	bool verbose;		/* -v: one line per binary attached (mechanism, sites, time) */
};

/* Before load: probes the kernel, chooses the mechanism and prepares the programs and maps
 * for it. 0, or an exit code (printed). */
int usdt_attach__new(const struct usdt_attach_cfg *cfg, struct usdt_attach **out);

/* Reads the sites and verdict of the binary at `path` into `b`. 0, or, when it cannot be
 * traced, an exit code (printed: the same verdict, in the same words, as `inflight list`;
 * `shown` names it) with `b` empty. */
int usdt_attach__read(const char *path, const char *shown, struct usdt_binary *b);

/*
 * After load: attaches every live site of `b` (read from `file`) for process `pid` (-1:
 * every process of the file), warning once about each skipped site; every link goes to the
 * file held open, through its path. `shown` names the file in messages. 0 (also when the
 * file is attached already for `pid`), or an exit code (printed).
 */
int usdt_attach__image(struct usdt_attach *ua, const struct proc_image *file, const char *shown,
		       pid_t pid, const struct usdt_binary *b, unsigned tag,
		       const struct image_slots *tab);

/* The sites of image `tag` (contract/images.h) take its table `tab` from now on. 0, or
 * -errno. */
int usdt_attach__retable(struct usdt_attach *ua, unsigned tag, const struct image_slots *tab);

enum usdt_mech usdt_attach__mech(const struct usdt_attach *ua);
const char *usdt_attach__mech_name(const struct usdt_attach *ua); /* "uprobe_multi", ... */
int usdt_attach__sites(const struct usdt_attach *ua);		  /* sites attached so far */

/* Detaches every link (uprobe_multi links from one thread each: their grace periods
 * overlap); the sites stay counted. NULL is fine. */
void usdt_attach__detach(struct usdt_attach *ua);

/* Detaches what is left and frees `ua`. NULL is fine. */
void usdt_attach__free(struct usdt_attach *ua);

#endif /* INFLIGHT_ATTACH_USDT_ATTACH_H */
