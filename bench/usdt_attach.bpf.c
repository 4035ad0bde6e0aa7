// SPDX-License-Identifier: BSD-2-Clause
/*
 * The program bench/usdt_attach.c attaches to every probe site, one per attach mechanism
 * (the kernel wants the mechanism known at load time: a uprobe_multi program cannot go on a
 * perf event, nor the reverse). With count_hits it counts the hits, to check that every site
 * was attached; without, it is empty, the floor for the cost per hit.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h> /* libbpf's USDT support (site_usdt) needs its maps */

const volatile bool count_hits;
__u64 hits;

static __always_inline int hit(void)
{
	if (count_hits)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("uprobe")
int site_perf(struct pt_regs *ctx)
{
	return hit();
}

SEC("uprobe.multi")
int site_multi(struct pt_regs *ctx)
{
	return hit();
}

SEC("usdt")
int site_usdt(struct pt_regs *ctx)
{
	return hit();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
