/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The C ABI of the "GPU" libraries of tests/images: one process, several images (the
 * application and one or two shared libraries), each with its own contract and its own
 * class and stage ids, all of them 0, 1, 2. The application (app.c) and every library
 * (gpu_lib.c as C, as C++ and as libaux.so; rust/src/lib.rs; plain_lib.c) implement the
 * same sequence with the same numbers, so that tests/images/expect.sh knows the answers.
 *
 *   image          classes (id)                 stages (id, flag)
 *   app            input 0, output 1            read 0 entry, gpu 1, done 2 terminal
 *   libgpu.so      weights 0, kbuf 1            upload 0 entry, kernel 1, fin 2
 *   libgpu_cxx.so  the same, the source compiled as C++ (probes in inline functions)
 *   libgpu_rs.so   the same, a Rust cdylib (probes/rust)
 *   libaux.so      tiles 0, kbuf 1              upload 0 entry, merge 1, fin 2
 *   libplain.so    no names note; constant ids at every site: classes 0, 1, stages 0, 1
 *
 * Items 1..N, one at a time (owner = item id; an owner is the process's, whichever image
 * names it), through lib1 (always) and lib2 (only with --lib2):
 *
 *   app   stage(i, read)            alloc input 4096
 *   lib1  gpu_begin: stage(i, upload)  alloc weights 307200, alloc kbuf 71680  stage(i, kernel)
 *   app   alloc output 1024         stage(i, gpu)
 *   lib2  gpu_begin: stage(i, upload)  alloc class 0 307200, alloc class 1 71680
 *                                      stage(i, merge)   (libplain.so: stage 0, then 1)
 *   lib2  gpu_end:   free class 1, free class 0, stage(i, fin)   (libplain.so: no stage)
 *   lib1  gpu_end:   free kbuf, free weights, stage(i, fin)
 *   app   free input, free output   stage(i, done): the item ends holding nothing
 *
 * The numbers, per process (every item reaches the same high-water mark; item 1 sets it):
 *   one library:  per item 4 allocs, 4 frees, 6 stages; peak 384000 bytes in 4 buffers, at
 *                 item 1's alloc of output (its 7th event), all of them in lib1's `kernel`:
 *                 input 4096 + weights 307200 + kbuf 71680 + output 1024;
 *   two:          per item 6 allocs, 6 frees, 9 stages (libplain.so: 8); peak 762880 bytes in
 *                 6 buffers, at item 1's alloc of lib2's class 1 (its 11th event), all in
 *                 lib2's `upload` (libplain.so: its stage 0): the four above + 307200 + 71680.
 * Every owner is started (read is an entry stage) and done (done is terminal, nothing held).
 *
 * Output, one line: "done items=N libs=L checksum=0x%016x" (L = 1 or 2), the same for every
 * library of a row's kind (they compute alike: gpu_fill, gpu_digest below).
 */
#ifndef TESTS_IMAGES_GPU_LIB_H
#define TESTS_IMAGES_GPU_LIB_H

#include <stddef.h>
#include <stdint.h>

#define APP_INPUT_BYTES 4096u
#define APP_OUTPUT_BYTES 1024u
#define GPU_WEIGHTS_BYTES 307200u /* a library's class 0 */
#define GPU_KBUF_BYTES 71680u	  /* a library's class 1 */

/* every library's ids: the same numbers, its own names */
enum { GPU_CLS_0 = 0, GPU_CLS_1 = 1 };
enum { GPU_STAGE_UPLOAD = 0, GPU_STAGE_KERNEL = 1, GPU_STAGE_FIN = 2 };

/*
 * gpu_begin: item `item` enters the library's upload stage, the library allocates its two
 * buffers for it (owner = item), fills them from `input` (n bytes), and moves the item into
 * its kernel stage. Returns the job, or NULL when a buffer could not be had.
 * gpu_end: frees the job's buffers (class 1 first), moves the item into the library's fin
 * stage, and returns the job's digest.
 */
typedef void *gpu_begin_fn(uint64_t item, const unsigned char *input, size_t n);
typedef uint64_t gpu_end_fn(void *job);

#ifdef __cplusplus
extern "C" {
#endif
gpu_begin_fn gpu_begin;
gpu_end_fn gpu_end;
#ifdef __cplusplus
}
#endif

/* FNV-1a */
static inline uint64_t gpu_fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* what every library computes: w[i] = item + 3i, k[j] = w[j] ^ input[j % n] */
static inline void gpu_fill(uint64_t item, const unsigned char *input, size_t n,
			    unsigned char *w, unsigned char *k)
{
	for (size_t i = 0; i < GPU_WEIGHTS_BYTES; i++)
		w[i] = (unsigned char)(item + 3 * i);
	for (size_t j = 0; j < GPU_KBUF_BYTES; j++)
		k[j] = (unsigned char)(w[j] ^ input[j % n]);
}

/* a job's digest: FNV-1a of kbuf, then of the last 64 bytes of weights on top */
static inline uint64_t gpu_digest(const unsigned char *w, const unsigned char *k)
{
	return gpu_fnv1a(k, GPU_KBUF_BYTES) ^ (gpu_fnv1a(w + GPU_WEIGHTS_BYTES - 64, 64) << 1);
}

#endif /* TESTS_IMAGES_GPU_LIB_H */
