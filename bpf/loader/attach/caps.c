// SPDX-License-Identifier: BSD-2-Clause
/* Capabilities through the raw syscalls: libcap is not worth a dependency for this. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "attach/caps.h"
#include "util/errors.h"

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

int caps__check_attach(bool need_ptrace)
{
	bool bpf = caps__has(CAP_BPF), perfmon = caps__has(CAP_PERFMON);
	bool admin = caps__has(CAP_SYS_ADMIN);

	if (!admin && (!bpf || !perfmon)) {
		const char *missing = !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON"
				      : !bpf	      ? "CAP_BPF"
							: "CAP_PERFMON";

		return infl_err(EXIT_NOT_PRIV, CAPS_HINT,
				"not privileged: missing %s (needed to load BPF programs and "
				"attach uprobes)",
				missing);
	}
	if (need_ptrace && !caps__has(CAP_SYS_PTRACE))
		return infl_err(EXIT_NOT_PRIV,
				"run as the process's user, as root, or add cap_sys_ptrace",
				"not privileged: missing CAP_SYS_PTRACE to trace another user's "
				"process");
	return 0;
}

int caps__drop_all(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	/* ambient capabilities would come back across an exec: clear them too */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}
