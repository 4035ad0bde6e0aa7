// SPDX-License-Identifier: BSD-2-Clause
/* Running a traced child to its entry point (attach/entry.h): a one-shot int3 there. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "attach/entry.h"

static int auxv_entry(pid_t pid, unsigned long *entry)
{
	unsigned long kv[2];
	char path[64];
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, kv, sizeof(kv)) == sizeof(kv) && kv[0] != AT_NULL)
		if (kv[0] == AT_ENTRY) {
			*entry = kv[1];
			err = 0;
			break;
		}
	close(fd);
	return err;
}

/* Continues the child until it stops at the breakpoint; other signals are passed on. */
static int run_until_trap(pid_t pid, unsigned long entry, int *status)
{
	struct user_regs_struct regs;
	int sig = 0;

	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig))
			return -errno;
		if (waitpid(pid, status, 0) != pid)
			return -errno;
		if (!WIFSTOPPED(*status))
			return -ECHILD; /* exited or killed before its entry point */
		sig = WSTOPSIG(*status);
		if (sig != SIGTRAP)
			continue; /* delivered with the next PTRACE_CONT */
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
			return -errno;
		if (regs.rip == entry + 1)
			return 0;
		/* a SIGTRAP of its own (not our int3): deliver it */
	}
}

int entry__run_to(pid_t pid, int *status)
{
	struct user_regs_struct regs;
	unsigned long entry = 0, word;
	int err = auxv_entry(pid, &entry);

	*status = 0;
	if (err)
		return err;
	errno = 0;
	word = (unsigned long)ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL);
	if (errno)
		return -errno;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)((word & ~0xfful) | 0xcc)))
		return -errno;
	err = run_until_trap(pid, entry, status);
	if (err)
		return err;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return -errno;
	regs.rip = entry;
	return ptrace(PTRACE_SETREGS, pid, NULL, &regs) ? -errno : 0;
}
