/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Parsers of outside input (fuzzed): 0, or -EINVAL when `s` is not of the form, -ERANGE when
 * out of [min, max]. Numbers are decimal digits only: no sign, no spaces, no hex.
 */
#ifndef INFLIGHT_UTIL_PARSE_H
#define INFLIGHT_UTIL_PARSE_H

#include <sys/types.h>
#include <linux/types.h>

#define PID_LIMIT (1 << 22) /* PID_MAX_LIMIT on 64-bit kernels */

int parse_u64(const char *s, __u64 min, __u64 max, __u64 *out);
int parse_pid(const char *s, pid_t *out);
/* "250ms", "2s", "1.5s", "2m", "1h", "500us"; a bare number is seconds. Up to 9 decimals. */
int parse_duration_ns(const char *s, __u64 min_ns, __u64 max_ns, __u64 *out_ns);

/* "64M", "64MiB", "1.5G", "512K", "4096", "4096B": binary units (K = 1024); a bare number
 * is bytes. Up to 9 decimals. */
int parse_size(const char *s, __u64 min, __u64 max, __u64 *out);

/* The sampling interval of -i (trace, record): 10 ms to 1 h. Bad input ends the run with
 * one line and EXIT_USAGE. */
#define SAMPLE_INTERVAL_MIN_NS 10000000ull
#define SAMPLE_INTERVAL_MAX_NS 3600000000000ull
__u64 parse_interval_or_die(const char *arg);

#endif /* INFLIGHT_UTIL_PARSE_H */
