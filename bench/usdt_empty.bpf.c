// SPDX-License-Identifier: BSD-2-Clause
/*
 * The floor for a BPF tracer on the contract's probes: programs that do nothing (empty_*),
 * and programs that only fetch every argument the way libbpf's USDT support does (args_*),
 * so that the cost of a probe hit can be split into the uprobe itself, argument fetching and
 * what a tracer does with them; and an empty kmem:rss_stat program, the floor of inflight's
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

/* the floor of a kmem:rss_stat handler, for the RSS breakdown (usdt_empty -r) */
SEC("tp_btf/rss_stat")
int empty_rss(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
