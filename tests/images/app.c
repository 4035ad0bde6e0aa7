// SPDX-License-Identifier: BSD-2-Clause
/*
 * The application of tests/images: an executable with a contract of its own (classes input 0,
 * output 1; stages read 0 entry, gpu 1, done 2 terminal) that sends its work items through
 * one or two libraries of gpu_lib.h, each with a contract and ids of its own. The sequence
 * and its numbers are in gpu_lib.h.
 *
 *   app [--items N] [--lib PATH] [--lib2 PATH] [--hold yes]
 *
 * --items N    work items, one at a time (default 4)
 * --lib PATH   lib1 is the library PATH, loaded with dlopen, instead of the linked one
 * --lib2 PATH  also load the library PATH (dlopen) and send every item through it too
 * --hold yes   after the items, print "holding" and wait for a line on stdin (a tracer
 *              reads the process meanwhile: its mappings, a scrape)
 *
 * Prints one line, the same in every run: "done items=N libs=L checksum=0x...".
 * Exit: 0, 2 usage, 3 failed, 4 no library.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inflight_probes.h"
#include "gpu_lib.h"

#define APP_CLASSES(X) X(0, input) X(1, output)
#define APP_STAGES(X) X(0, read, entry) X(1, gpu, plain) X(2, done, terminal)
INFLIGHT_CONTRACT(APP_CLASSES, APP_STAGES);

enum { CLS_input = 0, CLS_output = 1 };
enum { STAGE_read = 0, STAGE_gpu = 1, STAGE_done = 2 };

#if defined(__clang__)
#define APP_SITE static __attribute__((noinline))
#else
#define APP_SITE static __attribute__((noinline, noclone))
#endif

/* one probe site each */
APP_SITE unsigned char *buffer_new(uint32_t cls, size_t bytes, uint64_t owner)
{
	unsigned char *p = malloc(bytes);

	if (p)
		inflight_buf_alloc((uint64_t)(uintptr_t)p, cls, bytes, owner);
	return p;
}

APP_SITE void buffer_drop(unsigned char *p, uint32_t cls, size_t bytes)
{
	inflight_buf_free((uint64_t)(uintptr_t)p, cls, bytes);
	free(p);
}

APP_SITE void enter(uint64_t owner, uint32_t stage)
{
	inflight_stage(owner, stage);
}

struct lib {
	gpu_begin_fn *begin;
	gpu_end_fn *end;
};

static int load(const char *path, struct lib *l)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "app: %s\n", dlerror());
		return -1;
	}
	l->begin = (gpu_begin_fn *)dlsym(h, "gpu_begin");
	l->end = (gpu_end_fn *)dlsym(h, "gpu_end");
	if (!l->begin || !l->end) {
		fprintf(stderr, "app: %s lacks gpu_begin or gpu_end\n", path);
		return -1;
	}
	return 0;
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max) {
		fprintf(stderr, "app: bad number '%s' (%ld..%ld)\n", s, min, max);
		exit(2);
	}
	return v;
}

/* item i through lib1 and lib2 (gpu_lib.h); its checksum, or 0 with *failed set */
static uint64_t run_item(uint64_t i, const struct lib *lib1, const struct lib *lib2, int *failed)
{
	unsigned char *in, *out;
	void *job1, *job2 = NULL;
	uint64_t sum;

	enter(i, STAGE_read);
	in = buffer_new(CLS_input, APP_INPUT_BYTES, i);
	if (!in)
		return *failed = 1, 0;
	for (unsigned k = 0; k < APP_INPUT_BYTES; k++)
		in[k] = (unsigned char)(i * 131 + k * 7);
	job1 = lib1->begin(i, in, APP_INPUT_BYTES);
	out = buffer_new(CLS_output, APP_OUTPUT_BYTES, i);
	if (!job1 || !out)
		abort(); /* the item's owner would never end: the numbers are lost anyway */
	for (unsigned k = 0; k < APP_OUTPUT_BYTES; k++)
		out[k] = (unsigned char)(in[k] + i);
	enter(i, STAGE_gpu);
	if (lib2 && !(job2 = lib2->begin(i, in, APP_INPUT_BYTES)))
		abort();
	sum = gpu_fnv1a(out, APP_OUTPUT_BYTES);
	if (job2)
		sum += 3 * lib2->end(job2);
	sum += lib1->end(job1);
	buffer_drop(in, CLS_input, APP_INPUT_BYTES);
	buffer_drop(out, CLS_output, APP_OUTPUT_BYTES);
	enter(i, STAGE_done);
	return sum;
}

int main(int argc, char **argv)
{
	const char *lib_path = NULL, *lib2_path = NULL, *hold = NULL;
	struct lib lib1, lib2;
	long items = 4;
	uint64_t sum = 0;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			fprintf(stderr, "app: unknown option or missing value: %s\n", a);
			return 2;
		}
		if (!strcmp(a, "--items"))
			items = number(v, 0, 1000000);
		else if (!strcmp(a, "--lib"))
			lib_path = v;
		else if (!strcmp(a, "--lib2"))
			lib2_path = v;
		else if (!strcmp(a, "--hold"))
			hold = v;
		else {
			fprintf(stderr, "app: unknown option: %s\n", a);
			return 2;
		}
		i++;
	}
	if (lib_path) {
		if (load(lib_path, &lib1))
			return 4;
	} else {
#ifdef APP_NO_BUILTIN
		fprintf(stderr, "app: this build links no library: give --lib\n");
		return 4;
#else
		lib1.begin = gpu_begin;
		lib1.end = gpu_end;
#endif
	}
	if (lib2_path && load(lib2_path, &lib2))
		return 4;
	for (long i = 1; i <= items && !failed; i++)
		sum += run_item((uint64_t)i, &lib1, lib2_path ? &lib2 : NULL, &failed);
	if (failed)
		return 3;
	if (hold) {
		char line[16];

		printf("holding\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = 0;
	}
	printf("done items=%ld libs=%d checksum=0x%016" PRIx64 "\n", items, lib2_path ? 2 : 1, sum);
	return 0;
}
