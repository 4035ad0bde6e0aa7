/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process's RSS counters, read the way the kmem:rss_stat tracepoint reads them, on both
 * layouts of struct mm_struct:
 *   before 6.2: `struct mm_rss_stat rss_stat` holding `atomic_long_t count[NR_MM_COUNTERS]`;
 *   since 6.2:  `struct percpu_counter rss_stat[NR_MM_COUNTERS]` (upstream f1a7941243c1,
 *               "mm: convert mm's rss stats into percpu_counter"); the tracepoint reports
 *               percpu_counter_read_positive(), the shared count, and so do we.
 * The flavours below (CO-RE's `___suffix` convention) let one object carry both.
 */
#ifndef INFLIGHT_MM_RSS_BPF_H
#define INFLIGHT_MM_RSS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

struct mm_struct___percpu {
	struct percpu_counter rss_stat[4];
} __attribute__((preserve_access_index));

/* The loader picks the program built for the running kernel's layout (attach/features.c):
 * each program holds the relocations of one layout only. Guarding both in one program with
 * bpf_core_type_exists() is not enough: clang hoisted the address arithmetic of both out of
 * an unrolled loop, above the test, and the verifier refuses a relocation the kernel cannot
 * resolve wherever it sits on a path it walks. */
enum rss_layout_kind { RL_PERCPU, RL_PRE62 };

/* Pages in counter `member` (0..3) of `mm` (any kernel pointer); a percpu_counter's shared
 * part can be negative for a moment: it reads as 0. */
static __always_inline long mm_rss_pages(const void *mm, __u32 member,
					 const enum rss_layout_kind rl)
{
	long pages;

	if (rl == RL_PRE62) {
		const struct mm_struct___pre62 *m = mm;

		pages = BPF_CORE_READ(m, rss_stat.count[member & 3].counter);
	} else {
		const struct mm_struct___percpu *m = mm;

		pages = BPF_CORE_READ(m, rss_stat[member & 3].count);
	}
	return pages < 0 ? 0 : pages;
}

#endif /* INFLIGHT_MM_RSS_BPF_H */
