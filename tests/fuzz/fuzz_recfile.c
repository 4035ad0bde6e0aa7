// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: recordings (bpf/loader/rec_reader.c), the one input of `inflight report` and
 * `compare`. Each input is read three ways: as is, without CRC checks (so that mutations
 * reach the record parsers instead of dying at the checksum) and also partial. Promises
 * beyond "no crash, no out-of-bounds access, no leak" (ASan, UBSan): a refused file comes
 * with a message and no recording; an accepted one builds a timeline whose replay never
 * leaves a negative count, and renders in every format. A broken promise aborts.
 * Built for libFuzzer (`make fuzz`) and as a corpus replay in the suite.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recording/rec_reader.h"
#include "render/render.h"
#include "render/timeline.h"

#define PROMISE(cond)                                                                            \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_recfile: broken promise: %s (%s:%d)\n", #cond,     \
				__FILE__, __LINE__);                                             \
			abort();                                                                 \
		}                                                                                \
	} while (0)

static FILE *sink;

static void render_all(const struct timeline *tl)
{
	struct render_opts o = { .source = "fuzz" };
	int (*const fns[])(FILE *, const struct timeline *, const struct render_opts *) = {
		render_text, render_csv, render_json, render_chrome, render_folded, render_svg,
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		int err = fns[i](sink, tl, &o);

		/* svg without a process is refused; nothing else may fail on /dev/null */
		PROMISE(!err || (fns[i] == render_svg && !tl->nprocs));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = { 0, REC_READ_NO_CRC, REC_READ_NO_CRC | REC_READ_PARTIAL };
	char err[REC_ERR_LEN];

	if (!sink)
		sink = fopen("/dev/null", "w");
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct recording *r = (struct recording *)1;
		struct timeline *tl = NULL;
		int ret = rec_read_mem(data, size, modes[m], &r, err);

		if (ret) {
			PROMISE(r == NULL);
			PROMISE(err[0] != 0 && strlen(err) < REC_ERR_LEN);
			PROMISE(!strchr(err, '\x1b') && !strchr(err, '\n'));
			continue;
		}
		PROMISE(r != NULL);
		PROMISE(r->has_end || (modes[m] & REC_READ_PARTIAL));
		PROMISE(!strpbrk(r->host, "\x1b\n\r") && !strpbrk(r->cmdline, "\x1b\n\r"));
		if (timeline__build(r, &tl, err) == 0) {
			for (size_t i = 0; i < tl->nprocs; i++) {
				const struct tl_proc *p = &tl->procs[i];
				char what[128];

				/* the replay clamps instead of wrapping below zero */
				PROMISE(p->final.total_bytes <= p->peak_bytes || !p->peak_bytes ||
					p->diverged);
				PROMISE(p->retired <= p->nlives);
				PROMISE(!strpbrk(p->comm, "\x1b\n\r"));
				timeline__check(p, what, sizeof(what));
			}
			render_all(tl);
			timeline__free(tl);
		}
		recording__free(r);
	}
	return 0;
}
