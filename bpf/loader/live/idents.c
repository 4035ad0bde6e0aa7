// SPDX-License-Identifier: BSD-2-Clause
/* Who each traced process is, read once from /proc. live/idents.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include "live/idents.h"
#include "util/procfs.h"

#define CMDLINE_MAX 4096  /* as much of a command line as is kept */
#define CMDLINE_WORDS 256 /* and as many of its words */

/*
 * A pidfd's exit information: PIDFD_GET_INFO with PIDFD_INFO_EXIT, Linux 6.15 (pidfs), once
 * the process has been reaped, for any process, not only a child. The first published
 * struct (64 bytes), declared here: the build host's <linux/pidfd.h> may predate it.
 */
struct infl_pidfd_info {
	__u64 mask;
	__u64 cgroupid;
	__u32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	__s32 exit_code; /* waitpid's status */
};
#define INFL_PIDFD_INFO_EXIT (1ull << 3)
#define INFL_PIDFD_GET_INFO _IOWR(0xFF, 11, struct infl_pidfd_info)
_Static_assert(sizeof(struct infl_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");

/* The words into id: argv, and the words joined by spaces as its command. */
static void set_argv(struct proc_ident *id, char *const *words, int n)
{
	size_t len = 0;

	if (!n)
		return;
	id->argv = calloc(n + 1, sizeof(*id->argv));
	for (int i = 0; i < n; i++)
		len += strlen(words[i]) + 1;
	id->command = calloc(1, len);
	if (!id->argv || !id->command) {
		free(id->argv);
		free(id->command);
		id->argv = NULL;
		id->command = NULL;
		return;
	}
	for (int i = 0; i < n; i++) {
		id->argv[i] = strdup(words[i]);
		if (i)
			strcat(id->command, " ");
		strcat(id->command, words[i]);
	}
}

/* /proc/PID/cmdline: its words, and the words joined by spaces, into id. */
static void read_cmdline(struct proc_ident *id)
{
	char buf[CMDLINE_MAX], *words[CMDLINE_WORDS];

	set_argv(id, words, proc_cmdline_words(id->pid, buf, sizeof(buf), words, CMDLINE_WORDS));
}

/* A command line's words (each ending in a NUL, the last perhaps cut short) into id. */
static void set_words(struct proc_ident *id, const char *buf, size_t len)
{
	char copy[INFL_IDENT_ARGS + 1], *words[CMDLINE_WORDS];
	int n = 0;

	if (!len || len > INFL_IDENT_ARGS)
		return;
	memcpy(copy, buf, len);
	copy[len] = '\0';
	for (size_t i = 0; i < len && n < CMDLINE_WORDS; i += strlen(copy + i) + 1)
		words[n++] = copy + i;
	set_argv(id, words, n);
}

/* What /proc did not say, from the kernel's record of the image. */
static void from_kernel(const struct proc_idents *t, struct proc_ident *id)
{
	struct infl_ident k;

	if (!t->kernel || (id->comm && id->argv) || t->kernel(t->kernel_ctx, id->pid, id->gen, &k))
		return;
	k.comm[sizeof(k.comm) - 1] = '\0';
	if (!id->comm && k.comm[0])
		id->comm = strdup(k.comm);
	if (!id->argv)
		set_words(id, k.args, k.args_len);
}

static int add(struct proc_idents *t, __u32 pid, __u64 gen, bool ended)
{
	struct proc_ident *id;
	char comm[64];

	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		struct proc_ident *more = realloc(t->id, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		t->id = more;
		t->cap = cap;
	}
	id = &t->id[t->n++];
	memset(id, 0, sizeof(*id));
	id->pid = pid;
	id->gen = gen;
	id->wait_status = -1;
	if (!ended) {
		id->pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* Linux 5.3; -1: no status */
		proc_read(pid, "comm", comm, sizeof(comm));
		id->comm = comm[0] ? strdup(comm) : NULL;
		read_cmdline(id);
	} else {
		id->pidfd = -1;
	}
	from_kernel(t, id);
	return 0;
}

int idents__sync(struct proc_idents *t, const struct snapshot *snap)
{
	for (int i = 0; i < snap->nprocs; i++) {
		const struct proc_snapshot *ps = &snap->procs[i];

		if ((ps->st.exited && !t->kernel) || idents__find(t, ps->pid, ps->st.gen))
			continue;
		if (add(t, ps->pid, ps->st.gen, ps->st.exited))
			return -ENOMEM;
	}
	return 0;
}

void idents__collect_exits(struct proc_idents *t)
{
	for (int i = 0; i < t->n; i++) {
		struct proc_ident *id = &t->id[i];
		struct infl_pidfd_info info = { .mask = INFL_PIDFD_INFO_EXIT };

		if (id->pidfd < 0 || ioctl(id->pidfd, INFL_PIDFD_GET_INFO, &info) ||
		    !(info.mask & INFL_PIDFD_INFO_EXIT))
			continue; /* running, not reaped yet, or a kernel before 6.15 */
		id->wait_status = info.exit_code;
		close(id->pidfd);
		id->pidfd = -1;
	}
}

const struct proc_ident *idents__find(const struct proc_idents *t, __u32 pid, __u64 gen)
{
	for (int i = t->n - 1; i >= 0; i--)
		if (t->id[i].pid == pid && t->id[i].gen == gen)
			return &t->id[i];
	return NULL;
}

static void ident_free(struct proc_ident *id)
{
	for (char **a = id->argv; a && *a; a++)
		free(*a);
	free(id->argv);
	free(id->command);
	free(id->comm);
	if (id->pidfd >= 0)
		close(id->pidfd);
}

void idents__drop(struct proc_idents *t, __u32 pid, __u64 gen)
{
	for (int i = 0; i < t->n; i++)
		if (t->id[i].pid == pid && t->id[i].gen == gen) {
			ident_free(&t->id[i]);
			t->id[i] = t->id[--t->n];
			return;
		}
}

void idents__free(struct proc_idents *t)
{
	for (int i = 0; i < t->n; i++)
		ident_free(&t->id[i]);
	free(t->id);
	memset(t, 0, sizeof(*t));
}
