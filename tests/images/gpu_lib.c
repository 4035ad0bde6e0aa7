// SPDX-License-Identifier: BSD-2-Clause
/*
 * A library of gpu_lib.h with a contract of its own (probes/inflight_probes.h): its own
 * semaphores and its own names note, ids 0, 1 (classes) and 0, 1, 2 (stages) like the
 * application's. Built three ways (tests/images/tests.mk):
 *   libgpu.so      C: classes weights, kbuf; stages upload (entry), kernel, fin;
 *   libgpu_cxx.so  the same source as C++: its probe sites then sit in inline functions of
 *                  external linkage (COMDAT groups), as C++ code's often do;
 *   libaux.so      -DGPU_AUX: classes tiles, kbuf; stages upload (entry), merge, fin: two
 *                  names (kbuf, upload) and fin the same as libgpu.so's, the others not.
 * One probe site per probe (the functions below), their ids in registers: the library
 * claims the ids its note declares. Built with -fvisibility=hidden: only gpu_begin and
 * gpu_end are exported, so two of these libraries in one process never bind to each other.
 */
#include <stdlib.h>
#include "inflight_probes.h"
#include "gpu_lib.h"

#ifdef GPU_AUX
#define LIB_CLASSES(X) X(0, tiles) X(1, kbuf)
#define LIB_STAGES(X) X(0, upload, entry) X(1, merge, plain) X(2, fin, plain)
#else
#define LIB_CLASSES(X) X(0, weights) X(1, kbuf)
#define LIB_STAGES(X) X(0, upload, entry) X(1, kernel, plain) X(2, fin, plain)
#endif
INFLIGHT_CONTRACT(LIB_CLASSES, LIB_STAGES);

#define GPU_API __attribute__((visibility("default")))

#ifdef __cplusplus
/* inline functions of external linkage kept out of line: each site in a COMDAT group */
#define GPU_SITE inline __attribute__((noinline))
#elif defined(__clang__)
#define GPU_SITE static __attribute__((noinline))
#else
#define GPU_SITE static __attribute__((noinline, noclone)) /* no constprop copies */
#endif

GPU_SITE unsigned char *gpu_buffer_new(uint32_t cls, size_t bytes, uint64_t owner)
{
	unsigned char *p = (unsigned char *)malloc(bytes);

	if (p)
		inflight_buf_alloc((uint64_t)(uintptr_t)p, cls, bytes, owner);
	return p;
}

GPU_SITE void gpu_buffer_drop(unsigned char *p, uint32_t cls, size_t bytes)
{
	inflight_buf_free((uint64_t)(uintptr_t)p, cls, bytes);
	free(p);
}

GPU_SITE void gpu_enter(uint64_t owner, uint32_t stage)
{
	inflight_stage(owner, stage);
}

struct gpu_job {
	uint64_t item;
	unsigned char *w, *k;
};

GPU_API void *gpu_begin(uint64_t item, const unsigned char *input, size_t n)
{
	struct gpu_job *j = (struct gpu_job *)calloc(1, sizeof(*j));

	if (!j || !n) {
		free(j);
		return NULL;
	}
	j->item = item;
	gpu_enter(item, GPU_STAGE_UPLOAD);
	j->w = gpu_buffer_new(GPU_CLS_0, GPU_WEIGHTS_BYTES, item);
	j->k = gpu_buffer_new(GPU_CLS_1, GPU_KBUF_BYTES, item);
	if (!j->w || !j->k)
		abort(); /* the test's numbers would be wrong: nothing to report but a crash */
	gpu_fill(item, input, n, j->w, j->k);
	gpu_enter(item, GPU_STAGE_KERNEL);
	return j;
}

GPU_API uint64_t gpu_end(void *job)
{
	struct gpu_job *j = (struct gpu_job *)job;
	uint64_t d = gpu_digest(j->w, j->k);

	gpu_buffer_drop(j->k, GPU_CLS_1, GPU_KBUF_BYTES);
	gpu_buffer_drop(j->w, GPU_CLS_0, GPU_WEIGHTS_BYTES);
	gpu_enter(j->item, GPU_STAGE_FIN);
	free(j);
	return d;
}
