/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Renderers of a recording's timeline (docs/rendering.md): text, csv, json, chrome, folded,
 * svg. Each writes one document to `f` and returns 0, or -EIO when writing failed. They
 * work offline from the timeline alone: no BPF, no privileges.
 */
#ifndef INFLIGHT_RENDER_H
#define INFLIGHT_RENDER_H

#include <stdio.h>
#include <linux/types.h>
#include "model/timeline.h"

struct render_opts {
	__u64 step_ns;	   /* text/csv/json rows; 0: chosen from the recording's length */
	__u32 pid;	   /* 0: every process (svg, folded: the primary one) */
	const char *source; /* the recording's path, for titles */
	int columns;	    /* html: columns embedded (0: HTML_COLS); tests use fewer */
};

int render__text(FILE *f, const struct timeline *tl, const struct render_opts *o);
int render__csv(FILE *f, const struct timeline *tl, const struct render_opts *o);
int render__json(FILE *f, const struct timeline *tl, const struct render_opts *o);
int render__chrome(FILE *f, const struct timeline *tl, const struct render_opts *o);
int render__folded(FILE *f, const struct timeline *tl, const struct render_opts *o);
int render__svg(FILE *f, const struct timeline *tl, const struct render_opts *o);
int render__html(FILE *f, const struct timeline *tl, const struct render_opts *o);

/* ---- shared by the renderers ---- */

/* The processes a renderer covers: one (o->pid) or all; NULL-terminated count in *n. */
const struct tl_proc **render__procs(const struct timeline *tl, const struct render_opts *o,
				    size_t *n);
/* The one process a single-process renderer shows (o->pid, else the primary). */
const struct tl_proc *render__proc(const struct timeline *tl, const struct render_opts *o);

/* A step of 1, 2 or 5 x 10^k ms giving at most `rows` rows over the process's span. */
__u64 render__auto_step(const struct timeline *tl, unsigned rows);

/* t + step, or UINT64_MAX where that would wrap: ends a loop over steps at the clock's end. */
__u64 render__next_t(__u64 t, __u64 step);

/* Seconds on the report's clock: since tl->t0, the run's first probe event (negative for
 * an instant before it). */
double render__t(const struct timeline *tl, __u64 ns);

/* The live summary's figures of one process (model/proc_facts.h), from its replay, into the
 * current JSON object: report and compare write processes under the same keys. */
struct json;
void render__json_proc_figures(struct json *j, const struct timeline *tl,
			      const struct tl_proc *p);

/* A comparison of two sets of recordings (analysis/compare.h), as `inflight compare`
 * prints it: text, JSON, or SVG (the first run of each side, bytes by stage, on one time
 * and byte scale); 0, or -EIO. */
struct cmp;
int render__compare_text(FILE *f, const struct cmp *c);
int render__compare_json(FILE *f, const struct cmp *c);
int render__compare_svg(FILE *f, const struct cmp *c);

/* Returns 0, or -EIO when the stream has an error (flushes first). */
int render__finish(FILE *f);

/* Output files of report and compare: `path` NULL or "-" is stdout; a file is created or
 * truncated, never through a symlink, mode 0644 before the umask. Both print one line
 * (error: and exit code returned; success: "inflight: wrote WHAT to PATH (SIZE)"). */
int render__output_open(const char *path, FILE **out);
/* The same, refusing (EXIT_USAGE) an output that is one of the `n` input files (the same
 * inode): a report never writes over its recording. */
int render__output_open_guarded(const char *path, const char *const *inputs, size_t n,
			       FILE **out);
int render__output_close(FILE *f, const char *path, const char *what, int render_err);
/* Why a write to an output of render__output_open (or stdout) failed: an errno, 0 if none. */
int render__output_errno(FILE *f);
/* Closes an output of render__output_open (not stdout); fclose's result. */
int render__output_fclose(FILE *f);

#endif /* INFLIGHT_RENDER_H */
