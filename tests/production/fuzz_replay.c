// SPDX-License-Identifier: BSD-2-Clause
/*
 * Runs a libFuzzer target without libFuzzer, for the suite: every file of the committed
 * corpus, then MUTANTS deterministic mutants of each (bit flips, interesting bytes,
 * deletions, insertions, truncations), each file's batch in a child process so that a
 * crash or a broken promise is one "not ok" naming the input, not a dead test program.
 * Usage: test_fuzz_NAME [CORPUS_DIR] [--mutant FILE INDEX]  (the latter replays one mutant)
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MUTANTS 400
#define INPUT_MAX (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n_tests, n_failed;

static void tap(int ok, const char *fmt, const char *a, long b)
{
	char what[512];

	snprintf(what, sizeof(what), fmt, a, b);
	printf("%sok %d - %s\n", ok ? "" : "not ", ++n_tests, what);
	fflush(stdout);
	n_failed += !ok;
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(INPUT_MAX);

	*size = 0;
	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	*size = fread(buf, 1, INPUT_MAX, f);
	fclose(f);
	return buf;
}

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Mutant `index` of `in` into out (capacity INPUT_MAX); returns its size. */
static size_t mutate(const uint8_t *in, size_t size, const char *name, long index, uint8_t *out)
{
	static const uint8_t interesting[] = { 0,   '\n', ' ', '0', '9', ':', '.', '[', ']', '-',
					       '#', 'a',  'z', '_', 0x7f, 0x80, 0xff, '\t', 's' };
	uint64_t h = 1469598103934665603ull;
	int edits;

	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	rng = h ^ ((uint64_t)index * 0x9e3779b97f4a7c15ull) ^ 1;
	memcpy(out, in, size);
	edits = 1 + next() % 4;
	while (edits--) {
		size_t at = size ? next() % size : 0;

		switch (next() % 6) {
		case 0: /* flip a bit */
			if (size)
				out[at] ^= 1u << (next() % 8);
			break;
		case 1: /* an interesting byte */
			if (size)
				out[at] = interesting[next() % sizeof(interesting)];
			break;
		case 2: /* delete a byte */
			if (size) {
				memmove(out + at, out + at + 1, size - at - 1);
				size--;
			}
			break;
		case 3: /* insert a byte */
			if (size < INPUT_MAX) {
				memmove(out + at + 1, out + at, size - at);
				out[at] = interesting[next() % sizeof(interesting)];
				size++;
			}
			break;
		case 4: /* truncate */
			size = at;
			break;
		default: /* overwrite with a random byte */
			if (size)
				out[at] = next();
			break;
		}
	}
	return size;
}

/* The file and its mutants in a child; the index being run is shared, for the report. */
static void run_file(const char *path, const char *name)
{
	volatile long *current = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	if (current == MAP_FAILED) {
		tap(0, "%s: mmap failed (%ld)", name, errno);
		return;
	}
	*current = -1;
	pid = fork();
	if (pid == 0) {
		size_t size, msize;
		uint8_t *in = read_file(path, &size), *out = malloc(INPUT_MAX);

		if (!in || !out)
			_exit(3);
		LLVMFuzzerTestOneInput(in, size);
		for (long i = 0; i < MUTANTS; i++) {
			*current = i;
			msize = mutate(in, size, name, i, out);
			LLVMFuzzerTestOneInput(out, msize);
		}
		free(in);
		free(out);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		tap(1, "%s and %ld mutants: every promise kept", name, MUTANTS);
	else if (*current < 0)
		tap(0, "%s itself fails (replay: --mutant FILE %ld)", name, *current);
	else
		tap(0, "%s: mutant %ld fails (replay: --mutant FILE INDEX)", name, *current);
	munmap((void *)current, sizeof(long));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 && argv[1][0] != '-' ? argv[1] : FUZZ_CORPUS;
	char *names[1024], path[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (argc == 4 && !strcmp(argv[1], "--mutant")) {
		size_t size;
		uint8_t *in = read_file(argv[2], &size), *out = malloc(INPUT_MAX);
		const char *base = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
		long i = atol(argv[3]);

		if (!in || !out)
			return 2;
		if (i < 0)
			LLVMFuzzerTestOneInput(in, size);
		else
			LLVMFuzzerTestOneInput(out, mutate(in, size, base, i, out));
		printf("ok 1 - mutant %ld of %s\n1..1\n", i, argv[2]);
		return 0;
	}
	d = opendir(dir);
	if (!d) {
		printf("not ok 1 - corpus %s: %s\n1..1\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d)) && n < 1024)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	tap(n > 0, "corpus %s has inputs (%ld)", dir, n);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		run_file(path, names[i]);
		free(names[i]);
	}
	printf("1..%d\n", n_tests);
	return n_failed ? 1 : 0;
}
