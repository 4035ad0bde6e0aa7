/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the running kernel offers the BPF side, probed before load, and the choices made from
 * it: which program variants load, what degrades (and how each output says so), or which
 * missing feature puts the kernel below inflight's minimum (Linux 5.8; docs/production.md).
 */
#ifndef INFLIGHT_FEATURES_H
#define INFLIGHT_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

enum rss_layout {
	RSS_LAYOUT_NONE = 0,	 /* neither layout: RSS unavailable */
	RSS_LAYOUT_ATOMIC = 1,	 /* before 6.2: struct mm_rss_stat { atomic_long_t count[] } */
	RSS_LAYOUT_PERCPU = 2,	 /* since 6.2: struct percpu_counter rss_stat[] */
};

struct infl_features {
	char release[65];     /* uname -r */
	bool btf;	      /* /sys/kernel/btf/vmlinux: CO-RE and tp_btf (5.4/5.5) */
	bool ringbuf;	      /* BPF ring buffer (5.8): required */
	bool tp_btf;	      /* BTF-typed tracepoints with our prototypes (5.5): required */
	bool atomics;	      /* BPF cmpxchg/xchg/fetch ops (5.12) */
	bool bpf_loop;	      /* the bpf_loop helper (5.17); with atomics: the CAS lock */
	bool cookie;	      /* bpf_get_attach_cookie (5.15); else libbpf's IP map for USDT */
	bool rss_tp;	      /* kmem:rss_stat (5.5) */
	enum rss_layout rss;  /* how mm_struct counts RSS */
};

/* Probes the running kernel (BTF queries and small probe programs). 0, or -errno when
 * the probing itself failed (no BTF: -ENOENT). */
int features__probe(struct infl_features *f);

/* NULL when the kernel has everything inflight needs; else the name of what is missing
 * ("the BPF ring buffer (Linux 5.8)"). */
const char *features__missing(const struct infl_features *f);

/* Why RSS cannot be followed here, or NULL when it can. */
const char *features__rss_unavailable(const struct infl_features *f);

/* One line naming the kernel and the choices made ("6.1.0-rt: CAS lock, cookies, RSS
 * from percpu counters"), for -v and the benchmarks. */
void features__describe(const struct infl_features *f, char *buf, size_t len);

/* Whether the kernel's BTF names the uprobe_multi attach type (Linux 6.6+): what the attach
 * will use, told without privileges (features__probe and usdt_attach.c test the link itself,
 * which needs CAP_BPF), for the hint of a refusal. */
bool features__uprobe_multi_named(void);

/* The libbpf this binary links ("1.5"), asked of the library itself at run time: the headers
 * a file was compiled against may be another's (libbpf-dev's in /usr/include/bpf). */
const char *features__libbpf_version(void);

#endif /* INFLIGHT_FEATURES_H */
