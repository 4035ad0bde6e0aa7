/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Least privilege: say which capability is missing before trying, and give up every
 * capability once the probes are attached (the maps are then read through their fds).
 */
#ifndef INFLIGHT_CAPS_H
#define INFLIGHT_CAPS_H

#include <stdbool.h>
#include <linux/capability.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* What to grant instead of root; CAP_SYS_ADMIN only where uprobes need it (6.16+). */
#define CAPS_HINT "run as root, or grant them: setcap cap_bpf,cap_perfmon,cap_sys_admin+ep inflight"

/* 0 when the effective set has CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN, which kernels
 * before 5.8 required); otherwise prints one line naming what is missing and returns
 * EXIT_NOT_PRIV. `need_ptrace` adds CAP_SYS_PTRACE for another user's process. */
int caps__check_attach(bool need_ptrace);

/* True when capability `cap` is in the effective set. */
bool caps__has(int cap);

/* Clears the effective, permitted, inheritable and ambient sets. 0 or -errno. */
int caps__drop_all(void);

#endif /* INFLIGHT_CAPS_H */
