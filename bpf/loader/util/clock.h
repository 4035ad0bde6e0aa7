/* SPDX-License-Identifier: BSD-2-Clause */
/* The loader's one clock: the kernel side's (bpf_ktime_get_ns, CLOCK_MONOTONIC). */
#ifndef INFLIGHT_UTIL_CLOCK_H
#define INFLIGHT_UTIL_CLOCK_H

#include <time.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC now, in ns: the clock of infl_proc and infl_event timestamps. */
static inline __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

#endif /* INFLIGHT_UTIL_CLOCK_H */
