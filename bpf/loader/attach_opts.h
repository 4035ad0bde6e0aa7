/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The target and limit options every attaching command shares (trace, record, serve), as
 * an argp child parser, and the validated number parsers behind them.
 *
 * Use: put { &attach_argp, 0, NULL, 0 } in the command's argp children, point
 * state->child_inputs[i] at a struct attach_opts in the command's ARGP_KEY_INIT, parse with
 * ARGP_IN_ORDER (so that a stray word before `--` is refused instead of being taken as the
 * command), then hand `so` to session__open(), which resolves and checks the target.
 */
#ifndef INFLIGHT_ATTACH_OPTS_H
#define INFLIGHT_ATTACH_OPTS_H

#include <argp.h>
#include <sys/types.h>
#include <linux/types.h>
#include "session.h"

/* map sizes, matching the kernel side's defaults (bpf/inflight.bpf.c) */
#define ATTACH_DEFAULT_MAX_BUFS 65536
#define ATTACH_DEFAULT_MAX_OWNERS 16384
#define ATTACH_DEFAULT_MAX_PROCS 64
#define ATTACH_LIMIT_MAX (1u << 24) /* per map: ample, and far below what the kernel refuses */

struct attach_opts {
	struct session_opts so; /* what session__open() takes */
	bool target_given;
};

extern const struct argp attach_argp;

/* Fills defaults (the child parser does it too, at ARGP_KEY_INIT). */
void attach_opts__init(struct attach_opts *a);

/*
 * Parsers of outside input (fuzzed): 0, or -EINVAL when `s` is not of the form, -ERANGE
 * when out of [min, max]. Numbers are decimal digits only: no sign, no spaces, no hex.
 */
int parse_u64(const char *s, __u64 min, __u64 max, __u64 *out);
int parse_pid(const char *s, pid_t *out);
/* "250ms", "2s", "1.5s", "2m", "1h", "500us"; a bare number is seconds. Up to 9 decimals. */
int parse_duration_ns(const char *s, __u64 min_ns, __u64 max_ns, __u64 *out_ns);

/* The sampling interval of -i (trace, record): 10 ms to 1 h. Bad input ends the run with
 * one line and EXIT_USAGE. */
#define SAMPLE_INTERVAL_MIN_NS 10000000ull
#define SAMPLE_INTERVAL_MAX_NS 3600000000000ull
__u64 parse_interval_or_die(const char *arg);

/* "/proc/PID/exe" for a live process (into buf), -ESRCH when there is none. */
int attach_pid_binary(pid_t pid, char *buf, size_t len);
/* Its path as the process sees it (readlink of /proc/PID/exe), for display. */
int attach_pid_exe_name(pid_t pid, char *buf, size_t len);
/* True for /proc/PID/root/... and /proc/self/root/...: a file seen through another
 * process's root, maybe in another mount namespace. Resolving such a path's links here
 * (realpath) would leave that namespace: keep it as given. */
bool attach_is_proc_root_path(const char *p);

#endif /* INFLIGHT_ATTACH_OPTS_H */
