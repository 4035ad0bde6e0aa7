// SPDX-License-Identifier: BSD-2-Clause
/* The detaching child (attach/detach.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "attach/detach.h"

struct linux_dirent64_ {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* BPF objects and perf events, as the kernel names their files ("anon_inode:bpf-link",
 * "anon_inode:bpf-map", "anon_inode:[perf_event]", ...): what the child keeps */
static int keep_fd(int fd)
{
	char path[32] = "/proc/self/fd/", target[64];
	int len = 14, digits = 0;
	ssize_t n;

	for (int v = fd; v; v /= 10)
		digits++;
	for (int i = digits - 1, v = fd; i >= 0; i--, v /= 10)
		path[len + i] = (char)('0' + v % 10);
	path[len + (digits ? digits : 1)] = '\0';
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return !strncmp(target, "anon_inode:bpf", 14) || !strncmp(target, "anon_inode:[bpf", 15) ||
	       !strcmp(target, "anon_inode:[perf_event]");
}

/* The attached files the child leases, set before it is made (it allocates nothing). */
static int leased[DETACH_FILES_MAX];
static int nleased;

static bool is_leased(int fd)
{
	for (int i = 0; i < nleased; i++)
		if (leased[i] == fd)
			return true;
	return false;
}

/* Closes every inherited fd above 2 but `go` and the leased files (all the others when
 * `all`, else all but the BPF objects'). */
static void close_fds(int go, bool all)
{
	char buf[4096];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dir < 0)
		return;
	/* closing while reading the directory is fine: a closed fd is simply not there */
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64_ *e = (void *)(buf + off);
			int fd = 0;

			off += e->d_reclen;
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			for (const char *c = e->d_name; *c; c++)
				fd = fd * 10 + (*c - '0');
			if (fd > 2 && fd != go && fd != dir && !is_leased(fd) && (all || !keep_fd(fd)))
				close(fd);
		}
	}
	close(dir);
}

/*
 * The child: no terminal, nothing of the parent's but the BPF objects; once the parent has
 * dropped its references (the go-ahead pipe's end: were the child first, the parent would
 * pay for the links), it closes them and exits. System calls only: it may
 * come from a process with threads (the exporter's), whose locks a raw clone does not reset,
 * so no malloc, no stdio, no threads.
 */
static void __attribute__((noreturn)) child(int go)
{
	int null = open("/dev/null", O_RDWR);
	char c;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	if (null >= 0) {
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		if (null > 2)
			close(null);
	}
	prctl(PR_SET_NAME, "inflight-detach", 0, 0, 0);
	close_fds(go, false);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	/* closed here rather than by the exit: meanwhile the child is still a process with its
	 * executable (ps, /proc/PID/exe show what it is). The links first: a lease goes with
	 * its file's close, once no probe is left on it. */
	close_fds(go, true);
	for (int i = 0; i < nleased; i++)
		close(leased[i]);
	_exit(0);
}

/* No child after all: the caller detaches inline, and a writer need wait for nothing */
static int unlease(int err)
{
	for (int i = 0; i < nleased; i++)
		fcntl(leased[i], F_SETLEASE, F_UNLCK);
	nleased = 0;
	return err;
}

int detach__hand_off(const int *files, int nfiles)
{
	int go[2];
	pid_t pid;

	/*
	 * A file rewritten in place while its probes are still registered has the kernel's copy
	 * of each replaced instruction, from the old content, run at the old offsets in every
	 * process started from the new one. A read lease makes such a write's open wait until
	 * the child has closed the links (or the kernel's lease-break-time has passed). Taken
	 * here, before our exit can let a writer in; held by the open file, which the child
	 * shares and closes last. Refused where the file is open for writing, not ours without
	 * CAP_LEASE, or on a file system without leases: then nothing waits (docs/attach.md). A
	 * writer's open tells the lease's taker by SIGIO, whose default would end the process.
	 */
	signal(SIGIO, SIG_IGN);
	nleased = 0;
	for (int i = 0; i < nfiles && nleased < DETACH_FILES_MAX; i++)
		if (!fcntl(files[i], F_SETLEASE, F_RDLCK))
			leased[nleased++] = files[i];

	if (pipe2(go, O_CLOEXEC))
		return unlease(-errno);
	fflush(NULL);
	/* a child of our parent, reaped by it (SIGCHLD as a fork's); a namespace's init cannot
	 * make one (EINVAL): then a plain child, left to this namespace's init */
	pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
	if (pid < 0 && errno == EINVAL)
		pid = fork();
	if (pid == 0) {
		close(go[1]);
		child(go[0]);
	}
	close(go[0]);
	if (pid < 0) {
		pid = -errno;
		close(go[1]);
		return unlease(pid);
	}
	return go[1];
}

void detach__go(int fd)
{
	if (fd >= 0)
		close(fd);
}
