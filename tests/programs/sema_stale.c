// SPDX-License-Identifier: BSD-2-Clause
/*
 * Leaves a process in the state a departed tracer leaves it in: every site of the program's
 * probes is registered as a uprobe with its reference counter for every process (one perf
 * event per CPU, as perf and bpftrace do), the program is started, and once it prints
 * "holding" (probes/examples: --hold-before, --hold-round) the uprobes are closed while it
 * holds. Then it prints "released PID" and passes the rest of the program's output on.
 *
 *   sema_stale SITE:SEMAPHORE[,SITE:SEMAPHORE...] PROGRAM [ARGS...]
 *
 * Offsets are file offsets (tests/programs/elf_facts.py sites ELF). In a binary whose
 * semaphore page RELRO shares (LLD, mold), the kernel raised the RELRO copy at the exec and
 * cannot lower the copy the program reads at the close: the breakpoints stay in the process
 * with its semaphores at 0 (tests/t_attach_stale.sh). Elsewhere the close leaves it clean.
 * stdin is the program's. Exits with the program's status. Needs root.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAX_FDS 1024

static void die(const char *what)
{
	fprintf(stderr, "sema_stale: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int uprobe_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;

	if (!f || fscanf(f, "%d", &type) != 1)
		die("uprobe PMU type");
	fclose(f);
	return type;
}

static int uprobe(int type, int cpu, const char *exe, unsigned long site, unsigned long sema)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config = (uint64_t)sema << 32; /* format: ref_ctr_offset is config:32-63 */
	a.config1 = (uint64_t)(uintptr_t)exe;
	a.config2 = site;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die("perf_event_open (uprobe)");
	return fd;
}

int main(int argc, char **argv)
{
	int fds[MAX_FDS], nfd = 0, out[2], st, type;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char exe[PATH_MAX], line[512];
	FILE *prog;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: sema_stale SITE:SEMA[,SITE:SEMA...] PROGRAM [ARGS]\n");
		return 2;
	}
	if (!realpath(argv[2], exe))
		die("realpath");
	type = uprobe_type();
	for (char *p = argv[1]; *p;) {
		char *end;
		unsigned long site = strtoul(p, &end, 0), sema;

		if (*end != ':') {
			fprintf(stderr, "sema_stale: bad SITE:SEMA list at '%s'\n", p);
			return 2;
		}
		sema = strtoul(end + 1, &end, 0);
		for (long c = 0; c < ncpu && nfd < MAX_FDS; c++)
			fds[nfd++] = uprobe(type, (int)c, exe, site, sema);
		p = *end == ',' ? end + 1 : end;
	}
	if (pipe(out))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execv(argv[2], argv + 2);
		_exit(127);
	}
	close(out[1]);
	prog = fdopen(out[0], "r");
	if (!prog)
		die("fdopen");
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), prog)) {
		fputs(line, stdout);
		if (nfd && !strcmp(line, "holding\n")) {
			while (nfd)
				close(fds[--nfd]);
			printf("released %d\n", (int)pid);
		}
	}
	if (waitpid(pid, &st, 0) != pid)
		die("wait");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
