// SPDX-License-Identifier: BSD-2-Clause
/*
 * Starts PROGRAM stopped right after its exec (ptrace), prints "stopped PID", waits for a line
 * on stdin, lets it run and prints "exit STATUS". A process at that moment still has both
 * copies of an LLD/mold RELRO page writable: what a tracer attaching by pid then does with
 * its semaphores is what tests/t_attach_exit.sh checks.
 *   stopped_exec PROGRAM [ARGS...]
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	char line[64];
	int st;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: stopped_exec PROGRAM [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "stopped_exec: %s did not start\n", argv[1]);
		return 1;
	}
	printf("stopped %d\n", pid);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	printf("exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
