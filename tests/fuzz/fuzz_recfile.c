// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: recordings (bpf/loader/rec_reader.c), the one input of `inflight report` and
 * `compare`. Each input is read three ways: as is, without CRC checks (so that mutations
 * reach the record parsers instead of dying at the checksum) and also partial. Promises
 * beyond "no crash, no out-of-bounds access, no leak" (ASan, UBSan): a refused file comes
 * with a message and no recording; an accepted one builds a timeline whose replay never
 * leaves a negative count, and renders in every format (and compare) with no escape byte in
 * any output: the strings it keeps as they are are escaped on their way out. A broken
 * promise aborts.
 * Built for libFuzzer (`make fuzz`) and as a corpus replay in the suite.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/timeline.h"
#include "recording/rec_reader.h"
#include "analysis/compare.h"
#include "render/render.h"

#define PROMISE(cond)                                                                            \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_recfile: broken promise: %s (%s:%d)\n", #cond,     \
				__FILE__, __LINE__);                                             \
			abort();                                                                 \
		}                                                                                \
	} while (0)

static FILE *sink;

/* Every renderer, each into memory: none may fail, and no output may carry an escape byte
 * (strings from the file are escaped as they are read). compare runs the recording against
 * itself. */
static void render_all(struct recording *r, struct timeline *tl)
{
	struct render_opts o = { .source = "fuzz", .columns = 64 };
	int (*const fns[])(FILE *, const struct timeline *, const struct render_opts *) = {
		render__text, render__csv, render__json, render__chrome, render__folded, render__svg,
		render__html,
	};
	struct cmp_run run = { .file = "fuzz", .rec = r, .tl = tl, .p = timeline__primary(tl) };

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]) + 3; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int err = 0;

		PROMISE(f != NULL);
		if (i < sizeof(fns) / sizeof(fns[0])) {
			err = fns[i](f, tl, &o);
		} else if (run.p) {
			struct cmp c = { .side = { { &run, 1 }, { &run, 1 } } };
			size_t k = i - sizeof(fns) / sizeof(fns[0]);

			PROMISE(cmp__build(&c) == 0);
			err = k == 0 ? render__compare_text(f, &c) : k == 1 ? render__compare_json(f, &c)
							       : render__compare_svg(f, &c);
			cmp__free(&c);
		}
		fclose(f);
		PROMISE(!err);
		PROMISE(!memchr(buf, '\x1b', len));
		if (sink)
			fwrite(buf, 1, len, sink);
		free(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = { 0, REC_READ_NO_CRC, REC_READ_NO_CRC | REC_READ_PARTIAL };
	char err[REC_ERR_LEN];
	bool rendered = false;

	if (!sink)
		sink = fopen("/dev/null", "w");
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct recording *r = (struct recording *)1;
		struct timeline *tl = NULL;
		int ret = recording__read_mem(data, size, modes[m], &r, err);

		if (ret) {
			PROMISE(r == NULL);
			PROMISE(err[0] != 0 && strlen(err) < REC_ERR_LEN);
			PROMISE(!strchr(err, '\x1b') && !strchr(err, '\n'));
			continue;
		}
		PROMISE(r != NULL);
		PROMISE(r->has_end || (modes[m] & REC_READ_PARTIAL));
		if (timeline__build(r, &tl, err) == 0) {
			for (size_t i = 0; i < tl->nprocs; i++) {
				const struct tl_proc *p = &tl->procs[i];
				char what[128];

				/* the replay clamps instead of wrapping below zero */
				PROMISE(p->final.total_bytes <= p->peak_bytes || !p->peak_bytes ||
					p->diverged);
				PROMISE(p->retired <= p->nlives);
				timeline__check(p, what, sizeof(what));
			}
			/* every renderer once per input: the modes read the same records */
			if (!rendered)
				render_all(r, tl);
			rendered = true;
			timeline__free(tl);
		}
		recording__free(r);
	}
	return 0;
}
