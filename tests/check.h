/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal TAP-style checker for C tests: every CHECK prints "ok N - what" or
 * "not ok N - what (file:line)"; check_done() prints the plan; tests/run.sh adds them up.
 * No framework to install.
 */
#ifndef INFLIGHT_CHECK_H
#define INFLIGHT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

static int check__n, check__failed;

static inline int check__report(int ok, const char *file, int line, const char *what)
{
	++check__n;
	if (!ok)
		++check__failed;
	printf("%sok %d - %s", ok ? "" : "not ", check__n, what);
	if (!ok)
		printf(" (%s:%d)", file, line);
	printf("\n");
	fflush(stdout);
	return ok;
}

/* CHECK(cond, printf-style description) */
#define CHECK(cond, ...)                                                                       \
	({                                                                                     \
		char check__buf[512];                                                          \
		snprintf(check__buf, sizeof(check__buf), __VA_ARGS__);                         \
		check__report(!!(cond), __FILE__, __LINE__, check__buf);                       \
	})

/* CHECK_EQ_U64(actual, expected, description): prints both values on failure */
#define CHECK_EQ_U64(actual, expected, ...)                                                    \
	({                                                                                     \
		uint64_t check__a = (uint64_t)(actual), check__e = (uint64_t)(expected);       \
		char check__buf[512];                                                          \
		int check__o = snprintf(check__buf, sizeof(check__buf), __VA_ARGS__);          \
		if (check__o >= 0 && check__o < (int)sizeof(check__buf))                       \
			snprintf(check__buf + check__o, sizeof(check__buf) - check__o,         \
				 " (got %" PRIu64 ", want %" PRIu64 ")", check__a, check__e);   \
		check__report(check__a == check__e, __FILE__, __LINE__, check__buf);           \
	})

/* CHECK_SKIP(reason, description): a check that cannot run here, counted as skipped */
#define CHECK_SKIP(reason, ...)                                                                \
	({                                                                                     \
		char check__buf[512];                                                          \
		snprintf(check__buf, sizeof(check__buf), __VA_ARGS__);                         \
		printf("ok %d - %s # SKIP %s\n", ++check__n, check__buf, reason);               \
		fflush(stdout);                                                                \
	})

/* exit status for main(): 0 when every check passed. Prints the plan (tests/run.sh fails a
 * test whose plan is missing, i.e. that died before it got here). */
static inline int check_done(void)
{
	printf("1..%d\n", check__n);
	fflush(stdout);
	return check__failed ? 1 : 0;
}

#endif /* INFLIGHT_CHECK_H */
