/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * All of a USDT probe's arguments for one spec lookup, from the loader's own spec map
 * (bpf/usdt_spec.h; attach/usdt_attach.c fills it from the binary's notes). libbpf's USDT
 * support is not used: its manager attaches a probe whole or not at all, cannot skip a dead
 * site and knows no RIP-relative or indexed operands; and its bpf_usdt_arg() looks the spec up
 * again for every argument and reads each register through a helper (measured here: ~170 ns
 * per 4-argument event, as much as the rest of our handler). Registers are loaded straight
 * from the context at constant offsets.
 *
 * The spec is found by the BPF cookie the loader gave the site (bpf_get_attach_cookie: Linux
 * 5.15 for perf-event uprobes, and every uprobe_multi link), or, on kernels without cookies,
 * by the site's file and offset: the probe's IP looked up in the process's mappings.
 */
#ifndef INFLIGHT_USDT_ARGS_BPF_H
#define INFLIGHT_USDT_ARGS_BPF_H

#include "vmlinux.h"
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "usdt_spec.h"

/* The key of what usdt_spec_by_ip found, per process (its start time), address space (an
 * exec gets a new one) and probe address: one lookup per hit after a site's first */
struct usdt_ip_cache_key {
	__u64 mm;
	__u64 start;
	__u64 ip;
};

/* The maps the fetch reads (their definitions: inflight.bpf.c) */
struct usdt_maps {
	void *specs;	/* array: spec id -> struct infl_usdt_spec */
	void *ips;	/* kernels without cookies: struct infl_usdt_ip_key -> spec id */
	void *ip_cache; /* LRU: struct usdt_ip_cache_key -> spec id */
	bool have_cookie; /* bpf_get_attach_cookie finds the spec (5.15+) */
};

#ifdef __TARGET_ARCH_x86
/*
 * A context load at a constant offset, in assembly: written in C, clang merges the cases of
 * the switch below into one load at a computed offset, which the verifier refuses
 * ("dereference of modified ctx ptr"). An immediate operand cannot be merged.
 */
#define USDT_CTX_LOAD(ctx, field, val)                                                         \
	asm volatile("%[v] = *(u64 *)(%[c] + %[o])"                                           \
		     : [v] "=r"(*(val))                                                        \
		     : [c] "r"(ctx), [o] "i"(__builtin_offsetof(struct pt_regs, field)))

/* a register by number, loaded from the context (no helper call) */
static __always_inline int usdt_reg(struct pt_regs *ctx, __u8 reg, __u64 *val)
{
	switch (reg) {
	case INFL_REG_DI: USDT_CTX_LOAD(ctx, di, val); return 0;
	case INFL_REG_SI: USDT_CTX_LOAD(ctx, si, val); return 0;
	case INFL_REG_DX: USDT_CTX_LOAD(ctx, dx, val); return 0;
	case INFL_REG_CX: USDT_CTX_LOAD(ctx, cx, val); return 0;
	case INFL_REG_R8: USDT_CTX_LOAD(ctx, r8, val); return 0;
	case INFL_REG_R9: USDT_CTX_LOAD(ctx, r9, val); return 0;
	case INFL_REG_AX: USDT_CTX_LOAD(ctx, ax, val); return 0;
	case INFL_REG_BX: USDT_CTX_LOAD(ctx, bx, val); return 0;
	case INFL_REG_BP: USDT_CTX_LOAD(ctx, bp, val); return 0;
	case INFL_REG_R10: USDT_CTX_LOAD(ctx, r10, val); return 0;
	case INFL_REG_R11: USDT_CTX_LOAD(ctx, r11, val); return 0;
	case INFL_REG_R12: USDT_CTX_LOAD(ctx, r12, val); return 0;
	case INFL_REG_R13: USDT_CTX_LOAD(ctx, r13, val); return 0;
	case INFL_REG_R14: USDT_CTX_LOAD(ctx, r14, val); return 0;
	case INFL_REG_R15: USDT_CTX_LOAD(ctx, r15, val); return 0;
	case INFL_REG_SP: USDT_CTX_LOAD(ctx, sp, val); return 0;
	case INFL_REG_IP: USDT_CTX_LOAD(ctx, ip, val); return 0;
	case INFL_REG_NONE: *val = 0; return 0;
	}
	return -EINVAL;
}
#else
#error "usdt_args.bpf.h: only x86-64 argument specs are decoded (contract/usdt_args.c)"
#endif

/* `size` bytes of the traced process's memory at `addr`, zero-extended */
static __always_inline int usdt_read_mem(__u64 addr, __u8 size, __u64 *val)
{
	int err;

	switch (size) {
	case 1: { __u8 v = 0; err = bpf_probe_read_user(&v, 1, (void *)addr); *val = v; break; }
	case 2: { __u16 v = 0; err = bpf_probe_read_user(&v, 2, (void *)addr); *val = v; break; }
	case 4: { __u32 v = 0; err = bpf_probe_read_user(&v, 4, (void *)addr); *val = v; break; }
	case 8: err = bpf_probe_read_user(val, 8, (void *)addr); break;
	default: err = -EINVAL;
	}
	return err;
}

static __always_inline int usdt_arg_of(struct pt_regs *ctx, const struct infl_usdt_arg *a,
				       __u64 *res)
{
	__u64 val = 0, idx = 0;
	int err = 0, shift;

	switch (a->kind) {
	case INFL_ARG_CONST:
		val = a->disp;
		break;
	case INFL_ARG_REG:
		err = usdt_reg(ctx, a->base, &val);
		val = (val >> (a->reg_shift & 63)) + a->disp;
		break;
	case INFL_ARG_MEM:
		err = usdt_reg(ctx, a->base, &val);
		err = err ?: usdt_reg(ctx, a->index, &idx);
		err = err ?: usdt_read_mem(val + (idx << (a->scale & 3)) + a->disp, a->size, &val);
		break;
	default:
		err = -EINVAL;
	}
	/* 1-, 2- and 4-byte arguments: clear (or sign-extend) the upper bits */
	shift = 64 - 8 * (a->size & 15);
	if (shift > 0 && shift < 64) {
		val <<= shift;
		val = a->is_signed ? (__u64)((__s64)val >> shift) : val >> shift;
	}
	*res = val;
	return err;
}

/* Kernels before 5.15 lack cookies but keep every mapping on the mm's list (the list went
 * with 6.1's maple tree, after cookies came): the site is found as the kernel's uprobe names
 * it, by the mapped file and the offset in it. These flavours are relocated against the
 * running kernel; on kernels without mm->mmap the code below is never reached. */
struct vm_area_struct___list {
	unsigned long vm_start;
	unsigned long vm_end;
	struct vm_area_struct___list *vm_next;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

struct mm_struct___list {
	struct vm_area_struct___list *mmap;
} __attribute__((preserve_access_index));

#define USDT_MAX_VMAS 512 /* mappings walked before the site is taken as not found */

static __always_inline int usdt_spec_by_ip(struct pt_regs *ctx, const struct usdt_maps *m,
					   __u32 *id)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct mm_struct___list *mm = (void *)BPF_CORE_READ(task, mm);
	struct vm_area_struct___list *vma;
	struct usdt_ip_cache_key ck = {
		.mm = (__u64)mm,
		.start = BPF_CORE_READ(task, group_leader, start_time),
	};
	struct infl_usdt_ip_key k = {};
	__u64 ip;
	__u32 *found;

	if (!bpf_core_field_exists(mm->mmap))
		return -EOPNOTSUPP;
	USDT_CTX_LOAD(ctx, ip, &ip);
	ck.ip = ip;
	found = bpf_map_lookup_elem(m->ip_cache, &ck);
	if (found) {
		*id = *found;
		return 0;
	}
	vma = BPF_CORE_READ(mm, mmap);
	for (int i = 0; i < USDT_MAX_VMAS && vma; i++) {
		if (ip < BPF_CORE_READ(vma, vm_end)) {
			if (ip < BPF_CORE_READ(vma, vm_start))
				return -ESRCH;
			k.off = ip - BPF_CORE_READ(vma, vm_start) + (BPF_CORE_READ(vma, vm_pgoff) << 12);
			k.ino = BPF_CORE_READ(vma, vm_file, f_inode, i_ino);
			k.dev = BPF_CORE_READ(vma, vm_file, f_inode, i_sb, s_dev);
			found = bpf_map_lookup_elem(m->ips, &k);
			if (!found)
				return -ESRCH;
			*id = *found;
			bpf_map_update_elem(m->ip_cache, &ck, id, BPF_ANY);
			return 0;
		}
		vma = BPF_CORE_READ(vma, vm_next);
	}
	return -ESRCH;
}

/* Argument 1, a class or a stage id of the site's image (numbered from 0 in each image): its
 * slot in the session, or INFL_ID_REFUSED | id (bpf/usdt_spec.h). */
static __always_inline __u64 usdt_id_slot(const struct infl_usdt_spec *spec, __u64 id)
{
	__u8 slot;

	if (id >= INFL_USDT_IDS)
		return id;
	slot = spec->id_slot[id];
	return slot < INFL_USDT_IDS ? slot : INFL_ID_REFUSED | id;
}

/* The first n (<= 4) arguments of the probe that fired, argument 1 as its slot. 0, or
 * -errno. `m` is a constant the caller builds where it calls (inlined, each field is the
 * map itself). */
static __always_inline int usdt_args(struct pt_regs *ctx, const struct usdt_maps *m, __u64 *out,
				     int n)
{
	struct infl_usdt_spec *spec;
	__u32 id = 0;
	int err = 0;

	if (m->have_cookie)
		id = (__u32)bpf_get_attach_cookie(ctx);
	else if (usdt_spec_by_ip(ctx, m, &id))
		return -ESRCH;
	spec = bpf_map_lookup_elem(m->specs, &id);
	if (!spec || spec->nargs < n)
		return -ESRCH;
	for (int i = 0; i < INFL_USDT_MAX_ARGS; i++)
		if (i < n && i != 1)
			err |= usdt_arg_of(ctx, &spec->args[i], &out[i]);
	/* argument 1 last: the spec is needed once more, for its slot, and then no longer */
	if (n > 1) {
		err |= usdt_arg_of(ctx, &spec->args[1], &out[1]);
		out[1] = usdt_id_slot(spec, out[1]);
	}
	return err;
}

#endif /* INFLIGHT_USDT_ARGS_BPF_H */
