/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Least privilege: say which capability is missing before trying; once the probes are
 * attached give up every capability, the bounding set included, become an unprivileged user
 * where one is known, and set NoNewPrivs (the maps are then read through their fds); start a
 * `--` command with no capability in any set, so that none comes back at its next exec.
 * docs/production.md says what each mode ends up with.
 */
#ifndef INFLIGHT_CAPS_H
#define INFLIGHT_CAPS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/capability.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* What to grant instead of root, CAP_SYS_ADMIN included: for an attach the kernel refused
 * without it (perf-event uprobes on 6.16+ and the stables with upstream ba677dbe77af). */
#define CAPS_HINT "run as root, or grant them: setcap cap_bpf,cap_perfmon,cap_sys_admin+ep inflight"

/* The same before trying, for the mechanism this kernel will get: uprobe_multi links (6.6+,
 * unless INFLIGHT_ATTACH=perf) need CAP_BPF and CAP_PERFMON alone; perf-event uprobes want
 * CAP_SYS_ADMIN too on kernels with ba677dbe77af (docs/attach.md, Privileges). */
const char *caps__hint(bool multi_named);

#define CAPS_MAX_GROUPS 64

/* A user to become: inflight itself once attached, and a `--` command from its start. */
struct caps_user {
	bool set;
	uid_t uid;
	gid_t gid;
	int ngroups; /* supplementary groups, the user's own (getgrouplist) */
	gid_t groups[CAPS_MAX_GROUPS];
	char name[64]; /* for messages */
};

/* 0 when the effective set has CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN, which kernels
 * before 5.8 required) and inflight runs in the initial pid namespace; otherwise prints one
 * line naming what is missing and returns EXIT_NOT_PRIV. `need_ptrace` adds CAP_SYS_PTRACE
 * for another user's process. `multi_named` (features__uprobe_multi_named), asked only for
 * the hint of a refusal, tells whether the kernel has uprobe_multi links. */
int caps__check_attach(bool need_ptrace, bool (*multi_named)(void));

/* A load refused with `err` (-errno) on a kernel (`release`, uname's) before 5.11, which
 * counts BPF memory against RLIMIT_MEMLOCK, with a limit too low and no CAP_SYS_RESOURCE to
 * raise it: one line, EXIT_NOT_PRIV. 0 when that is not why. */
int caps__memlock_error(const char *release, int err);

/* `-p PID` of a kernel thread: one line, EXIT_NO_BINARY. */
int caps__kthread_error(pid_t pid);

/* `-p PID` whose /proc/PID/exe cannot be read (errno `err`): what is really missing
 * (CAP_SYS_PTRACE, a security module's refusal), one line; returns the exit code. */
int caps__exe_error(pid_t pid, int err);

/* True when capability `cap` is in the effective set. */
bool caps__has(int cap);

/* Fills `u` for the user NAME (a name or a numeric uid) from the password and group
 * databases. 0, or -ENOENT when there is no such user. */
int caps__lookup_user(const char *name, struct caps_user *u);

/* The user who ran `sudo inflight ...` (SUDO_UID, SUDO_GID, SUDO_USER), when inflight runs
 * as root through sudo. 0, or -ENOENT. */
int caps__sudo_user(struct caps_user *u);

/*
 * In a `--` command's child, between fork and exec: drops the bounding set (when it holds
 * CAP_SETPCAP, as root does), locks SECBIT_NOROOT (root's exec grants no capability), becomes
 * `u` when set, clears the effective, permitted, inheritable and ambient sets, and sets
 * NoNewPrivs unless `allow_new_privs` (setuid and file-capability programs it runs later
 * then keep its privileges, no more). 0 or -errno.
 */
int caps__child_setup(const struct caps_user *u, bool allow_new_privs);

/* Once attached: the same for inflight itself (NoNewPrivs always). 0 or -errno. */
int caps__drop_all(const struct caps_user *u);

#endif /* INFLIGHT_CAPS_H */
