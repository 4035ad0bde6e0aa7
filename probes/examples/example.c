// SPDX-License-Identifier: BSD-2-Clause
/*
 * The example program: the pipeline of pipeline.h, in this binary or in a shared library.
 *
 *   example [--items N] [--threads T] [--workers W] [--hold-before] [--hold-round R]
 *           [--lib PATH]
 *
 * --items N      work items (default 8); --threads T: T items at a time (default 1).
 * --workers W    fork W workers (prefork): the parent allocates the table, each worker runs
 *                all N items, the parent frees the table once they have exited.
 * --hold-before  hold before anything else (before --lib is loaded);
 * --hold-round R hold after phase B of round R (the items R*T+1.. hold all their buffers).
 *                A hold prints "holding" and waits for a line (or end of file) on stdin, so
 *                a test can attach with -p and then let it go on: no sleeping and hoping.
 * --lib PATH     the pipeline and its probes are in the shared library PATH, loaded with
 *                dlopen at start, or right after the --hold-before hold.
 *
 * Prints, when it ran the items itself, one line that is the same in every run and in the
 * Rust example: "done items=N checksum=0x...". Exit: 0, 2 usage, 3 failed, 4 no library.
 */
#ifndef EXAMPLE_NO_LIB
#include <dlfcn.h>
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "pipeline.h"

struct entry {
	example_table_alloc_fn *table_alloc;
	example_table_free_fn *table_free;
	example_items_fn *items;
};

static void hold(void)
{
	int c;

	printf("holding\n");
	fflush(stdout);
	while ((c = getchar()) != EOF && c != '\n')
		;
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max) {
		fprintf(stderr, "example: bad number '%s' (%ld..%ld)\n", s, min, max);
		exit(2);
	}
	return v;
}

/* The pipeline's entry points from the shared library `lib`. */
static int load(const char *lib, struct entry *e)
{
#ifdef EXAMPLE_NO_LIB /* static builds: glibc's dlopen would want the shared libc anyway */
	(void)e;
	fprintf(stderr, "example: this build cannot load %s\n", lib);
	return -1;
#else
	void *h = dlopen(lib, RTLD_NOW);

	if (!h) {
		fprintf(stderr, "example: %s\n", dlerror());
		return -1;
	}
	e->table_alloc = (example_table_alloc_fn *)dlsym(h, "example_table_alloc");
	e->table_free = (example_table_free_fn *)dlsym(h, "example_table_free");
	e->items = (example_items_fn *)dlsym(h, "example_items");
	if (!e->table_alloc || !e->table_free || !e->items) {
		fprintf(stderr, "example: %s lacks the pipeline's entry points\n", lib);
		return -1;
	}
	return 0;
#endif
}

/* The pipeline's entry points: linked in, or from the library. */
static int resolve(const char *lib, struct entry *e)
{
	if (lib)
		return load(lib, e);
#ifdef EXAMPLE_NO_BUILTIN
	fprintf(stderr, "example: this build has no pipeline of its own: give --lib\n");
	return -1;
#else
	e->table_alloc = example_table_alloc;
	e->table_free = example_table_free;
	e->items = example_items;
	return 0;
#endif
}

/* Prefork: W workers run the items; the parent holds only the table. */
static int run_workers(const struct entry *e, const struct example_opts *o, int workers)
{
	void *table = e->table_alloc();
	int failed = !table;

	fflush(stdout);
	for (int i = 0; i < workers && !failed; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			uint64_t sum;

			_exit(e->items(o, &sum) ? 3 : 0);
		}
		failed |= pid < 0;
	}
	for (int st; wait(&st) > 0;)
		failed |= !WIFEXITED(st) || WEXITSTATUS(st);
	if (table)
		e->table_free(table);
	return failed ? 3 : 0;
}

int main(int argc, char **argv)
{
	struct example_opts o = { .items = 8, .threads = 1, .hold_round = -1, .hold = hold };
	const char *lib = NULL;
	int workers = 0, hold_before = 0;
	struct entry e;
	uint64_t sum = 0;
	void *table;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--hold-before")) {
			hold_before = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "example: unknown option or missing value: %s\n", a);
			return 2;
		}
		if (!strcmp(a, "--items"))
			o.items = number(v, 0, 1000000);
		else if (!strcmp(a, "--threads"))
			o.threads = (int)number(v, 1, 64);
		else if (!strcmp(a, "--workers"))
			workers = (int)number(v, 0, 64);
		else if (!strcmp(a, "--hold-round"))
			o.hold_round = number(v, 0, 1000000);
		else if (!strcmp(a, "--lib"))
			lib = v;
		else {
			fprintf(stderr, "example: unknown option: %s\n", a);
			return 2;
		}
		i++;
	}
	if (workers && o.hold_round >= 0) {
		fprintf(stderr, "example: --hold-round holds the items, which workers run\n");
		return 2;
	}
	if (hold_before)
		hold();
	if (resolve(lib, &e))
		return 4;
	if (workers)
		return run_workers(&e, &o, workers);
	table = e.table_alloc();
	if (!table)
		return 3;
	rc = e.items(&o, &sum);
	e.table_free(table);
	if (rc)
		return 3;
	printf("done items=%ld checksum=0x%016" PRIx64 "\n", o.items, sum);
	return 0;
}
