// SPDX-License-Identifier: BSD-2-Clause
/*
 * libplain.so: a library of gpu_lib.h with the contract's probes and NO names note, the
 * way a program instrumented with systemtap's <sys/sdt.h> alone looks. Its semaphores are
 * its own (hidden, on a page of their own, as probes/README.md asks); every probe site
 * passes its class or stage id as a constant, so the library claims exactly classes 0, 1
 * and stages 0, 1 (the sites' `4@$0`, `4@$1`), which a tracer names cls0, cls1, stage0,
 * stage1. gpu_begin: stage 0, alloc class 0 (307200), alloc class 1 (71680), stage 1;
 * gpu_end: free class 1, free class 0, and no stage of its own (it has none left): the
 * item stays in stage 1 until the caller moves it on.
 */
#include <stdlib.h>
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include "gpu_lib.h"

/*
 * The semaphores sys/sdt.h's notes name (PROVIDER_NAME_semaphore), hidden, alone on one
 * page of ".probes" (aligned and padded to 4096): the layout rule of probes/README.md.
 */
#define PLAIN_SEMA_DEF(sym)                                                                    \
	".globl " sym "\n.hidden " sym "\n.type " sym ", @object\n.size " sym ", 2\n"        \
	sym ": .2byte 0\n"
__asm__(".pushsection .probes,\"aw\",@progbits\n"
	".balign 4096\n"
	PLAIN_SEMA_DEF("prover_buf_alloc_semaphore")
	PLAIN_SEMA_DEF("prover_buf_free_semaphore")
	PLAIN_SEMA_DEF("prover_stage_semaphore")
	".balign 4096\n"
	".popsection\n");
#define PLAIN_SEMA_DECL(sym) \
	extern volatile unsigned short sym __attribute__((visibility("hidden")))
PLAIN_SEMA_DECL(prover_buf_alloc_semaphore);
PLAIN_SEMA_DECL(prover_buf_free_semaphore);
PLAIN_SEMA_DECL(prover_stage_semaphore);

#define GPU_API __attribute__((visibility("default")))

/* each site with its id a constant: (uint32_t) so the note says 4@$N, not -4@$N */
#define PLAIN_ALLOC(p, cls, bytes, owner)                                                      \
	do {                                                                                   \
		if (prover_buf_alloc_semaphore)                                                \
			STAP_PROBE4(prover, buf_alloc, (uint64_t)(uintptr_t)(p), (uint32_t)(cls), \
				    (uint64_t)(bytes), (uint64_t)(owner));                     \
	} while (0)
#define PLAIN_FREE(p, cls, bytes)                                                              \
	do {                                                                                   \
		if (prover_buf_free_semaphore)                                                 \
			STAP_PROBE3(prover, buf_free, (uint64_t)(uintptr_t)(p), (uint32_t)(cls),  \
				    (uint64_t)(bytes));                                        \
	} while (0)
#define PLAIN_STAGE(owner, st)                                                              \
	do {                                                                                   \
		if (prover_stage_semaphore)                                                    \
			STAP_PROBE2(prover, stage, (uint64_t)(owner), (uint32_t)(st));             \
	} while (0)

struct plain_job {
	uint64_t item;
	unsigned char *w, *k;
};

GPU_API void *gpu_begin(uint64_t item, const unsigned char *input, size_t n)
{
	struct plain_job *j = calloc(1, sizeof(*j));

	if (!j || !n) {
		free(j);
		return NULL;
	}
	j->item = item;
	PLAIN_STAGE(item, 0);
	j->w = malloc(GPU_WEIGHTS_BYTES);
	if (!j->w)
		abort();
	PLAIN_ALLOC(j->w, 0, GPU_WEIGHTS_BYTES, item);
	j->k = malloc(GPU_KBUF_BYTES);
	if (!j->k)
		abort();
	PLAIN_ALLOC(j->k, 1, GPU_KBUF_BYTES, item);
	gpu_fill(item, input, n, j->w, j->k);
	PLAIN_STAGE(item, 1);
	return j;
}

GPU_API uint64_t gpu_end(void *job)
{
	struct plain_job *j = job;
	uint64_t d = gpu_digest(j->w, j->k);

	PLAIN_FREE(j->k, 1, GPU_KBUF_BYTES);
	free(j->k);
	PLAIN_FREE(j->w, 0, GPU_WEIGHTS_BYTES);
	free(j->w);
	free(j);
	return d;
}
