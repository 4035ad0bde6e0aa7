// SPDX-License-Identifier: BSD-2-Clause
/*
 * stamp_exec FILE CMD ARGS...: writes CLOCK_MONOTONIC in nanoseconds to FILE, then execs CMD.
 * Marks the start of a tracer's command for the attach-latency benchmark, without the fork
 * and exec of `date` in between.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "Usage: stamp_exec FILE CMD [ARGS...]\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f) {
		fprintf(stderr, "stamp_exec: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(f, "%llu\n", (unsigned long long)ts.tv_sec * 1000000000ull +
				     (unsigned long long)ts.tv_nsec);
	if (fclose(f)) {
		fprintf(stderr, "stamp_exec: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "stamp_exec: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
