// SPDX-License-Identifier: BSD-2-Clause
/*
 * measure CMD ARGS...: runs CMD and, when it ends, prints on stderr one line
 *   measure wall_s=W user_s=U sys_s=S maxrss_kib=M minflt=F vcsw=V status=X
 * from wait4()'s resource usage of that process alone. SIGINT and SIGTERM are passed on to
 * it, so a script can stop a tracer through this wrapper and still get its figures. The
 * bench's loader-cost figures come from here (GNU time is not a dependency); minflt (minor
 * page faults, each a change of RSS and so a kmem:rss_stat event) sizes the RSS-tracking cost;
 * vcsw (voluntary context switches) shows how often a consumer sleeps and wakes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = forward };
	struct rusage ru;
	double t0;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "Usage: measure CMD [ARGS...]\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = mono_s();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "measure: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "measure: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	child = pid;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "measure: wait4: %s\n", strerror(errno));
			return 1;
		}
	}
	fprintf(stderr,
		"measure wall_s=%.3f user_s=%.3f sys_s=%.3f maxrss_kib=%ld minflt=%ld vcsw=%ld "
		"status=%d\n",
		mono_s() - t0, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, ru.ru_minflt,
		ru.ru_nvcsw,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
