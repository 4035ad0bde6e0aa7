// SPDX-License-Identifier: BSD-2-Clause
/*
 * Kernel feature probing, before load. Each probe names the kernel release (and the commit)
 * that brought what it looks for; attach/session.c turns the answers into program variants
 * (bpf_program__set_autoload) and rodata, and the BPF side's CO-RE flavours do the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "attach/features.h"

/*
 * BPF_ATOMIC_OP(BPF_DW, BPF_CMPXCHG) on the stack, in a socket filter: accepted from 5.12
 * (upstream 5ffa25502b5a "bpf: Add instructions for atomic_[cmp]xchg"); 5.10's verifier
 * reads the opcode as BPF_XADD with reserved fields set and refuses it.
 */
static bool probe_atomics(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool has_typedef(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) >= 0;
}

/* The type behind `id`, through typedefs and qualifiers. */
static const struct btf_type *resolved(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

/* The layout of an rss_stat member of type `id`. */
static enum rss_layout rss_member_layout(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = resolved(btf, id);
	const char *name;

	if (t && btf_is_array(t))
		t = resolved(btf, btf_array(t)->type);
	if (!t || !btf_is_struct(t))
		return RSS_LAYOUT_NONE;
	name = btf__name_by_offset(btf, t->name_off);
	if (!strcmp(name, "mm_rss_stat"))
		return RSS_LAYOUT_ATOMIC;
	if (!strcmp(name, "percpu_counter"))
		return RSS_LAYOUT_PERCPU;
	return RSS_LAYOUT_NONE;
}

/* Looks for member rss_stat in struct or union `t`, and in its anonymous members (since
 * 6.x most of mm_struct sits in one anonymous struct). */
static enum rss_layout rss_find(const struct btf *btf, const struct btf_type *t, int depth)
{
	const struct btf_member *m = btf_members(t);

	for (__u16 i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *mt;

		if (!strcmp(name, "rss_stat"))
			return rss_member_layout(btf, m->type);
		mt = resolved(btf, m->type);
		if (!*name && depth < 4 && mt && (btf_is_struct(mt) || btf_is_union(mt))) {
			enum rss_layout l = rss_find(btf, mt, depth + 1);

			if (l != RSS_LAYOUT_NONE)
				return l;
		}
	}
	return RSS_LAYOUT_NONE;
}

/* mm_struct.rss_stat: a struct mm_rss_stat before 6.2, an array of struct percpu_counter
 * since (upstream f1a7941243c1, "mm: convert mm's rss stats into percpu_counter"). */
static enum rss_layout rss_layout_of(const struct btf *btf)
{
	__s32 id = btf__find_by_name_kind(btf, "mm_struct", BTF_KIND_STRUCT);
	const struct btf_type *mm = id < 0 ? NULL : btf__type_by_id(btf, id);

	return mm ? rss_find(btf, mm, 0) : RSS_LAYOUT_NONE;
}

int features__probe(struct infl_features *f)
{
	struct utsname u;
	struct btf *btf;

	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0)
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return -ENOENT;
	f->btf = true;
	/* tp_btf programs (5.5) on the tracepoints we need, by their BTF typedefs */
	f->tp_btf = has_typedef(btf, "btf_trace_sched_process_exit") &&
		    has_typedef(btf, "btf_trace_sched_process_exec") &&
		    has_typedef(btf, "btf_trace_sched_process_fork");
	f->rss_tp = has_typedef(btf, "btf_trace_rss_stat"); /* kmem:rss_stat, 5.5 */
	f->rss = rss_layout_of(btf);
	btf__free(btf);
	/* BPF_MAP_TYPE_RINGBUF: 5.8 (upstream 457f44363a88) */
	f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	f->atomics = probe_atomics();
	/* bpf_loop: 5.17 (upstream e6f2dd0f8067) */
	f->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
	/* bpf_get_attach_cookie: 5.15 (upstream 7adfc6c9b315); libbpf's usdt.bpf.h falls
	 * back to an IP-to-spec map without it */
	f->cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					    NULL) == 1;
	return 0;
}

const char *features__missing(const struct infl_features *f)
{
	if (!f->btf)
		return "kernel BTF at /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF, Linux 5.4)";
	if (!f->ringbuf)
		return "the BPF ring buffer (Linux 5.8)";
	if (!f->tp_btf)
		return "BTF-typed tracepoints for sched_process_exit, exec and fork (Linux 5.5)";
	return NULL;
}

const char *features__rss_unavailable(const struct infl_features *f)
{
	if (!f->rss_tp)
		return "no kmem:rss_stat tracepoint in this kernel (Linux 5.5)";
	if (f->rss == RSS_LAYOUT_NONE)
		return "this kernel's struct mm_struct has no rss_stat counters inflight can read";
	return NULL;
}

void features__describe(const struct infl_features *f, char *buf, size_t len)
{
	snprintf(buf, len, "kernel %s: %s lock, %s, RSS %s", f->release[0] ? f->release : "?",
		 f->atomics && f->bpf_loop ? "cmpxchg" :
		 f->atomics ? "map-insert (no bpf_loop before 5.17)" :
			      "map-insert (no BPF cmpxchg before 5.12)",
		 f->cookie ? "BPF cookies" : "USDT specs by address (no BPF cookies before 5.15)",
		 features__rss_unavailable(f) ? "unavailable" :
		 f->rss == RSS_LAYOUT_ATOMIC ? "from atomic counters (before 6.2)" :
					       "from percpu counters");
}
