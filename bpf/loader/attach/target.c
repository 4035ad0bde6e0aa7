// SPDX-License-Identifier: BSD-2-Clause
/* What a session traces (attach/target.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "attach/caps.h"
#include "attach/cuda.h"
#include "attach/entry.h"
#include "attach/libs.h"
#include "attach/target.h"
#include "attach/usdt_attach.h"
#include "util/errors.h"
#include "util/procfs.h"

void target__init(struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->pidfd = -1;
	t->status = -1;
}

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/* SPAWN: a binary refused whatever its libraries carry (32-bit, a provider mismatch, no
 * semaphores...) is refused before it runs at all. */
static int refuse_early(struct target *t, const char *shown)
{
	struct usdt_binary b;
	int err = usdt_binary__read(t->path, &b);

	if (err)
		return usdt_attach__read(t->path, shown, &t->bin); /* the words for the error */
	err = b.verdict == USDT_OK || (b.verdict == USDT_MISSING && !b.other_provider[0]);
	usdt_binary__free(&b);
	return err ? 0 : usdt_attach__read(t->path, shown, &t->bin);
}

/*
 * PID and SPAWN (after its entry point: the libraries it links are mapped): the target's
 * executable, or else the first library it maps that carries the contract; a program
 * without either that calls dlopen() is traced for the libraries it loads later.
 */
static int choose_image(struct target *t, const struct cuda_attach *cuda, const char *shown)
{
	char lib[PATH_MAX];
	int err = usdt_binary__read(t->path, &t->bin);

	/* a process that exits while its files are read: what happened, not what failed */
	if (err && t->pid > 0 && proc_gone(t->pid))
		return infl_err(EXIT_TARGET_EXITED, NULL,
				"pid %d exited before inflight could attach to it", t->pid);
	if (err) /* t->bin is empty again: usdt_attach__read says why */
		return usdt_attach__read(t->path, shown, &t->bin);
	if (t->bin.verdict == USDT_OK)
		return 0;
	if (t->bin.verdict == USDT_MISSING && !t->bin.other_provider[0]) {
		if (!libs__first(t->pid, t->path, lib, sizeof(lib))) {
			usdt_binary__free(&t->bin);
			snprintf(t->path, sizeof(t->path), "%s", lib);
			t->lib_main = true;
			return usdt_attach__read(t->path, lib, &t->bin);
		}
		if (t->pid > 0 && libs__maps_cuda(cuda, t->pid)) {
			t->deferred = t->cuda_only = true;
			infl_warn("%s carries none of the contract's probes: tracing libcuda's "
				  "memory calls alone, owners (none)%s", shown,
				  t->bin.imports_dlopen ? ", and what it loads that does" : "");
			return 0;
		}
		if (t->bin.imports_dlopen || t->bin.imports_exec) {
			t->deferred = true;
			infl_warn("%s carries none of the contract's probes: tracing what it loads "
				  "(dlopen) or runs (exec) that does", shown);
			return 0;
		}
	}
	usdt_binary__free(&t->bin);
	return usdt_attach__read(t->path, shown, &t->bin);
}

/*
 * Starts the command stopped right after its exec (PTRACE_TRACEME), so that the probes can be
 * attached to it, by pid, before its first instruction. target__go lets it go. The child
 * gives up every privilege first (caps__child_setup): what fails there, or the exec, comes
 * back through the pipe as {stage, errno}.
 */
static int spawn_stopped(const struct session_opts *o, pid_t *out)
{
	char **argv = o->argv;
	int pipefd[2], status, child_err[2] = { 0, 0 };
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return infl_err(EXIT_GENERIC, NULL, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return infl_err(EXIT_GENERIC, NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		/* the command gets none of the tracer's capabilities, now or at a later exec */
		child_err[1] = -caps__child_setup(&o->user, o->allow_new_privs);
		if (child_err[1])
			child_err[0] = 1;
		else if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		if (!child_err[0])
			child_err[1] = errno;
		if (write(pipefd[1], child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], child_err, sizeof(child_err)) == sizeof(child_err)) {
		close(pipefd[0]);
		waitpid(pid, &status, 0);
		if (child_err[0])
			return infl_err(EXIT_NOT_PRIV, "see docs/production.md, Privileges",
					"cannot start %s without privileges: %s", argv[0],
					strerror(child_err[1]));
		return infl_err(child_err[1] == ENOENT || child_err[1] == EACCES ? EXIT_NO_BINARY
										 : EXIT_GENERIC,
				"give a command that exists (a path, or a name on $PATH)",
				"cannot run %s: %s", argv[0], strerror(child_err[1]));
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		return infl_err(EXIT_TARGET_EXITED, NULL, "%s exited before it could be traced",
				argv[0]);
	}
	*out = pid;
	return 0;
}

/*
 * SPAWN: the command runs to its entry point first (attach/entry.h), so that ld.so has
 * made RELRO read-only and the kernel raises each semaphore where the program reads it.
 */
static int run_to_entry(struct target *t, const char *cmd)
{
	int status, err = entry__run_to(t->pid, &status);

	if (err == -ECHILD) {
		t->child = false; /* reaped */
		return infl_err(EXIT_TARGET_EXITED, NULL, "%s %s before its entry point", cmd,
				WIFSIGNALED(status) ? "was killed" : "exited");
	}
	return err ? infl_err(EXIT_GENERIC, NULL, "run %s to its entry point: %s", cmd,
			      strerror(-err)) : 0;
}

/* The target's executable as its /proc/PID/exe link names it. */
static void shown_from_link(struct target *t)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", t->pid);
	n = readlink(link, t->shown, sizeof(t->shown) - 1);
	t->shown[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(t->shown, sizeof(t->shown), "%s", t->path);
}

/* -b: a binary without the contract, where a libcuda is there to attach (the system's or
 * --cuda-lib), is traced for its processes' device memory alone */
static bool binary_cuda_only(struct target *t, const struct cuda_attach *cuda)
{
	const char *lib = cuda_attach__default_lib(cuda);

	if (!lib || usdt_binary__read(t->path, &t->bin))
		return false;
	if (t->bin.verdict == USDT_MISSING && !t->bin.other_provider[0]) {
		t->deferred = t->cuda_only = true;
		infl_warn("%s carries none of the contract's probes: tracing libcuda's memory calls "
			  "(%s) alone in its processes, owners (none)", t->shown, lib);
		return true;
	}
	usdt_binary__free(&t->bin);
	return false;
}

int target__resolve(struct target *t, const struct session_opts *o, const struct cuda_attach *cuda)
{
	int err;

	switch (o->mode) {
	case SESSION_PID:
		if (o->pid <= 0 || (kill(o->pid, 0) && errno == ESRCH))
			return infl_err(EXIT_NO_PID, "check the pid with `ps`",
					"no such process: %d", o->pid);
		t->pid = o->pid;
		if (proc_is_zombie(o->pid))
			return infl_err(EXIT_TARGET_EXITED, NULL,
					"pid %d has exited (a zombie waiting for its parent)", o->pid);
		if (proc_is_kthread(o->pid))
			return caps__kthread_error(o->pid);
		err = proc_exe_path(o->pid, t->path, sizeof(t->path));
		if (err && proc_gone(o->pid))
			return infl_err(EXIT_TARGET_EXITED, NULL, "pid %d exited before inflight "
					"could attach to it", o->pid);
		if (err)
			return caps__exe_error(o->pid, -err);
		shown_from_link(t);
		return choose_image(t, cuda, t->shown);
	case SESSION_BINARY:
		if (!o->binary || !*o->binary)
			return infl_err(EXIT_USAGE, "give -b PATH", "no binary given");
		/* /proc/PID/root/... reaches into another mount namespace: realpath() would
		 * resolve it in ours. libbpf and the kernel resolve it in the target's. */
		if (proc_is_root_path(o->binary) && access(o->binary, R_OK) == 0)
			snprintf(t->path, sizeof(t->path), "%s", o->binary);
		else if (!realpath(o->binary, t->path))
			return infl_err(EXIT_NO_BINARY, "give the path of an executable", "%s: %s",
					o->binary, strerror(errno));
		snprintf(t->shown, sizeof(t->shown), "%s", o->binary);
		if (binary_cuda_only(t, cuda))
			return 0;
		return usdt_attach__read(t->path, o->binary, &t->bin);
	case SESSION_SPAWN:
		if (!o->argv || !o->argv[0])
			return infl_err(EXIT_USAGE, "give a command after --", "no command given");
		err = spawn_stopped(o, &t->pid);
		if (err)
			return err;
		t->child = true;
		err = proc_exe_path(t->pid, t->path, sizeof(t->path));
		if (err)
			return infl_err(EXIT_GENERIC, NULL, "cannot read the executable of %s: %s",
					o->argv[0], strerror(-err));
		shown_from_link(t);
		err = refuse_early(t, o->argv[0]);
		err = err ?: run_to_entry(t, o->argv[0]);
		return err ?: choose_image(t, cuda, o->argv[0]);
	}
	return infl_err(EXIT_USAGE, NULL, "unknown attach mode %d", o->mode);
}

int target__go(struct target *t, const char *cmd)
{
	if (t->pid > 0)
		t->pidfd = pidfd_open(t->pid);
	if (t->child && ptrace(PTRACE_DETACH, t->pid, NULL, NULL))
		return infl_err(EXIT_GENERIC, NULL, "cannot start %s: %s", cmd, strerror(errno));
	return 0;
}

bool target__gone(struct target *t, int *status)
{
	if (status)
		*status = t->status;
	if (t->pid <= 0)
		return false; /* BINARY mode never ends by itself */
	if (t->gone)
		return true;
	if (t->child) {
		int st;

		if (waitpid(t->pid, &st, WNOHANG) == t->pid) {
			t->status = st;
			t->gone = true;
		}
	} else if (t->pidfd >= 0) {
		struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

		t->gone = poll(&pfd, 1, 0) == 1;
	} else {
		t->gone = kill(t->pid, 0) && errno == ESRCH;
	}
	if (status)
		*status = t->status;
	return t->gone;
}

void target__kill(struct target *t)
{
	if (t->child && t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		t->child = false;
	}
}

void target__free(struct target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	usdt_binary__free(&t->bin);
}
