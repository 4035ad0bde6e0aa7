// SPDX-License-Identifier: BSD-2-Clause
/* Capabilities through the raw syscalls: libcap is not worth a dependency for this. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "attach/caps.h"
#include "util/errors.h"
#include "util/parse.h"
#include "util/procfs.h"

static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	memset(data, 0, 2 * sizeof(*data));
	return syscall(SYS_capget, &hdr, data) ? -errno : 0;
}

bool caps__has(int cap)
{
	struct __user_cap_data_struct data[2];

	if (caps_get(data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

/* The initial pid namespace's inode number (PROC_PID_INIT_INO, include/linux/proc_ns.h). */
#define PID_NS_INIT_INO 4026531836ull

/*
 * The kernel side keys processes by their pid in the initial pid namespace; from inside
 * another one (a container without --pid=host) those are not the pids inflight sees, so
 * its targets could not be matched. Refused plainly rather than half working.
 */
static int check_pid_namespace(void)
{
	char link[64];
	unsigned long long ino;
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);

	if (n <= 0)
		return 0; /* no /proc/self/ns: nothing to tell */
	link[n] = '\0';
	if (sscanf(link, "pid:[%llu]", &ino) != 1 || ino == PID_NS_INIT_INO)
		return 0;
	return infl_err(EXIT_NOT_PRIV,
			"run it in the host's pid namespace (docker run --pid=host, Kubernetes "
			"hostPID: true, or nsenter -t 1 -p)",
			"inflight runs in a pid namespace of its own (%s): the kernel names "
			"processes by their host pids, which it cannot see from here", link);
}

const char *caps__hint(bool multi_named)
{
	const char *force = getenv("INFLIGHT_ATTACH");

	if (multi_named && !(force && !strcmp(force, "perf")))
		return "run as root, or grant them: setcap cap_bpf,cap_perfmon+ep inflight (this "
		       "kernel has uprobe_multi links, which need no CAP_SYS_ADMIN)";
	return "run as root, or grant them: setcap cap_bpf,cap_perfmon,cap_sys_admin+ep "
	       "inflight (perf-event uprobes: Linux 6.16+ and the stables since July 2025 "
	       "want CAP_SYS_ADMIN for them)";
}

int caps__check_attach(bool need_ptrace, bool (*multi_named)(void))
{
	bool bpf = caps__has(CAP_BPF), perfmon = caps__has(CAP_PERFMON);
	bool admin = caps__has(CAP_SYS_ADMIN);

	if (!admin && (!bpf || !perfmon)) {
		const char *missing = !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON"
				      : !bpf	      ? "CAP_BPF"
							: "CAP_PERFMON";

		return infl_err(EXIT_NOT_PRIV, caps__hint(multi_named && multi_named()),
				"not privileged: missing %s (needed to load BPF programs and "
				"attach uprobes)",
				missing);
	}
	if (need_ptrace && !caps__has(CAP_SYS_PTRACE))
		return infl_err(EXIT_NOT_PRIV,
				"run as the process's user, as root, or add cap_sys_ptrace",
				"not privileged: missing CAP_SYS_PTRACE to trace another user's "
				"process");
	return check_pid_namespace();
}

int caps__kthread_error(pid_t pid)
{
	char comm[64];

	proc_read(pid, "comm", comm, sizeof(comm));
	return infl_err(EXIT_NO_BINARY,
			"give the pid of a process running a program with the contract's probes",
			"pid %d is a kernel thread (%s): it runs no program, so it has no probes",
			(int)pid, comm);
}

int caps__exe_error(pid_t pid, int err)
{
	char scope[16] = "";

	if (err == ENOENT)
		return infl_err(EXIT_NO_PID, "check the pid with ps",
				"pid %d: its executable is gone from /proc: %s", (int)pid,
				strerror(err));
	if (err != EACCES && err != EPERM)
		return infl_err(EXIT_GENERIC, NULL, "pid %d: cannot read its executable: %s",
				(int)pid, strerror(err));
	/* ptrace_may_access(): another user's process, or one with capabilities we lack,
	 * needs CAP_SYS_PTRACE; with it, only a security module says no */
	if (!caps__has(CAP_SYS_PTRACE))
		return infl_err(EXIT_NOT_PRIV,
				geteuid() == 0
					? "inflight runs as root without CAP_SYS_PTRACE (containers drop "
					  "it by default): add it (docker run --cap-add SYS_PTRACE), or "
					  "trace the binary with -b PATH"
					: "run as the process's user, grant cap_sys_ptrace, or trace the "
					  "binary with -b PATH",
				"pid %d: cannot read its executable (%s): it belongs to another user "
				"or holds capabilities inflight lacks, which needs CAP_SYS_PTRACE",
				(int)pid, strerror(err));
	proc_read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope));
	return infl_err(EXIT_NOT_PRIV,
			!strcmp(scope, "3") ? "kernel.yama.ptrace_scope is 3, which forbids it until "
					      "reboot; trace its binary instead: -b PATH"
					    : "trace its binary instead: -b PATH needs no access to the "
					      "process",
			"pid %d: cannot read its executable: %s, although inflight holds "
			"CAP_SYS_PTRACE: the kernel protects this process (a security module "
			"or a protected init)",
			(int)pid, strerror(err));
}

static void fill_groups(struct caps_user *u)
{
	u->ngroups = CAPS_MAX_GROUPS;
	if (getgrouplist(u->name, u->gid, u->groups, &u->ngroups) < 0) {
		u->groups[0] = u->gid; /* more than we keep: the primary group alone */
		u->ngroups = 1;
	}
}

int caps__lookup_user(const char *name, struct caps_user *u)
{
	struct passwd *pw = getpwnam(name);
	__u64 id;

	memset(u, 0, sizeof(*u));
	if (!pw && !parse_u64(name, 0, (uid_t)-2, &id))
		pw = getpwuid((uid_t)id);
	if (!pw)
		return -ENOENT;
	u->set = true;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	fill_groups(u);
	return 0;
}

int caps__sudo_user(struct caps_user *u)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID"), *name = getenv("SUDO_USER");
	__u64 v, g;

	memset(u, 0, sizeof(*u));
	if (geteuid() != 0 || !uid || !gid || parse_u64(uid, 1, (uid_t)-2, &v) ||
	    parse_u64(gid, 0, (gid_t)-2, &g))
		return -ENOENT;
	u->set = true;
	u->uid = (uid_t)v;
	u->gid = (gid_t)g;
	snprintf(u->name, sizeof(u->name), "%s", name && *name ? name : uid);
	if (name && *name)
		fill_groups(u);
	else
		u->groups[0] = u->gid, u->ngroups = 1;
	return 0;
}

/* The highest capability this kernel knows (/proc/sys/kernel/cap_last_cap). */
static int cap_last(void)
{
	char buf[16];
	__u64 v;

	proc_read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf));
	return parse_u64(buf, 0, 63, &v) ? 63 : (int)v;
}

/* The bounding set, and root's claim to capabilities at exec, given up for good: only with
 * CAP_SETPCAP, which root has; without it nothing can come back through them anyway unless
 * the process is root (a root without CAP_SETPCAP is told by the caller). */
static int drop_bounding(void)
{
	if (!caps__has(CAP_SETPCAP))
		return 0;
	for (int c = 0, last = cap_last(); c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			return -errno;
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
					     SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0))
		return -errno;
	return 0;
}

static int become(const struct caps_user *u)
{
	if (!u || !u->set)
		return 0;
	if (setgroups(u->ngroups, u->groups) || setresgid(u->gid, u->gid, u->gid) ||
	    setresuid(u->uid, u->uid, u->uid))
		return -errno;
	return 0;
}

static int clear_sets(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	/* ambient capabilities would come back across an exec: clear them too */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

static int drop(const struct caps_user *u, bool no_new_privs)
{
	/* in this order: the bounding set and securebits need CAP_SETPCAP, the user change
	 * CAP_SETUID and CAP_SETGID, and becoming a user empties the sets anyway */
	int err = drop_bounding();

	err = err ?: become(u);
	err = err ?: clear_sets();
	if (!err && no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = -errno;
	return err;
}

int caps__child_setup(const struct caps_user *u, bool allow_new_privs)
{
	return drop(u, !allow_new_privs);
}

int caps__drop_all(const struct caps_user *u)
{
	return drop(u, true);
}

/*
 * Before 5.11 (upstream 97306be45fbe, memcg accounting of BPF memory) the maps count against
 * RLIMIT_MEMLOCK, which libbpf raises only with CAP_SYS_RESOURCE: a capable but not root
 * inflight is refused there with EPERM. Says so instead of naming capabilities it has.
 */
int caps__memlock_error(const char *release, int err)
{
	unsigned major = 0, minor = 0;
	struct rlimit rl;

	if (err != -EPERM || caps__has(CAP_SYS_RESOURCE) ||
	    sscanf(release, "%u.%u", &major, &minor) != 2 ||
	    major > 5 || (major == 5 && minor >= 11) ||
	    (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY))
		return 0;
	return infl_err(EXIT_NOT_PRIV, "raise it (ulimit -l unlimited, LimitMEMLOCK=infinity) or "
			"grant CAP_SYS_RESOURCE",
			"load BPF programs: kernel %s counts BPF memory against RLIMIT_MEMLOCK "
			"(before Linux 5.11), and it is too low", release);
}
