// SPDX-License-Identifier: BSD-2-Clause
/*
 * The floor for a BPF tracer on the contract's probes: programs that do nothing (empty_*),
 * programs that only fetch every argument the way libbpf's USDT support does (args_*), and
 * programs that make one atomic add to shared or per-CPU state (shared_*, percpu_*), so that
 * the cost of a probe hit can be split into the uprobe itself, argument fetching, sharing
 * and what a tracer does with them; and an empty kmem:rss_stat program, the floor of inflight's
 * RSS handler.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

/* the fetched arguments land here, so that the compiler cannot drop the fetch */
__u64 sink;

SEC("usdt")
int empty_alloc(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int empty_free(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int empty_stage(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int BPF_USDT(args_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	sink += buf ^ cls ^ bytes ^ owner;
	return 0;
}

SEC("usdt")
int BPF_USDT(args_free, __u64 buf, __u32 cls, __u64 bytes)
{
	sink += buf ^ cls ^ bytes;
	return 0;
}

SEC("usdt")
int BPF_USDT(args_stage, __u64 owner, __u32 stage)
{
	sink += owner ^ stage;
	return 0;
}

/*
 * What the least shared state costs a hit: one atomic add to a word every thread of the
 * process shares (shared_*: the floor of any exact design with one serialization word, a
 * total or a lock), against one to this CPU's own word (percpu_*: what per-CPU counters
 * cost, which give no exact peak). With two threads on two CPUs the difference is the
 * cache line passed back and forth.
 */
__u64 shared_word;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu_word SEC(".maps");

static __always_inline int shared_add(void)
{
	__sync_fetch_and_add(&shared_word, 1);
	return 0;
}

static __always_inline int percpu_add(void)
{
	__u32 zero = 0;
	__u64 *w = bpf_map_lookup_elem(&percpu_word, &zero);

	if (w)
		*w += 1;
	return 0;
}

SEC("usdt")
int shared_alloc(struct pt_regs *ctx) { return shared_add(); }
SEC("usdt")
int shared_free(struct pt_regs *ctx) { return shared_add(); }
SEC("usdt")
int shared_stage(struct pt_regs *ctx) { return shared_add(); }
SEC("usdt")
int percpu_alloc(struct pt_regs *ctx) { return percpu_add(); }
SEC("usdt")
int percpu_free(struct pt_regs *ctx) { return percpu_add(); }
SEC("usdt")
int percpu_stage(struct pt_regs *ctx) { return percpu_add(); }

/* the floor of a kmem:rss_stat handler, for the RSS breakdown (usdt_empty -r) */
SEC("tp_btf/rss_stat")
int empty_rss(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
