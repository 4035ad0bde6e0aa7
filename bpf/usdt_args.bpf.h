/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * All of a USDT probe's arguments for one spec lookup. libbpf's bpf_usdt_arg() looks the
 * spec up again for every argument and reads each register with bpf_probe_read_kernel();
 * measured here that cost ~170 ns per 4-argument event, as much as the rest of our handler.
 * We read the same specs (libbpf fills __bpf_usdt_specs from the binary's notes at attach
 * time) but load registers straight from the context at constant offsets.
 */
#ifndef INFLIGHT_USDT_ARGS_BPF_H
#define INFLIGHT_USDT_ARGS_BPF_H

#include <bpf/usdt.bpf.h>

#ifdef __TARGET_ARCH_x86
/*
 * A context load at a constant offset, in assembly: written in C, clang merges the cases of
 * the switch below into one load from ctx plus a looked-up offset, which every verifier
 * refuses ("dereference of modified ctx ptr"; 5.10 failed on it). The offsets are the
 * x86-64 pt_regs layout, the kprobe context's ABI, checked against vmlinux.h below.
 */
#define CTX_U64(ctx, off)                                                                      \
	({                                                                                     \
		__u64 __v;                                                                     \
		asm volatile("%[v] = *(u64 *)(%[c] + " #off ")" : [v] "=r"(__v) : [c] "r"(ctx)); \
		__v;                                                                           \
	})
_Static_assert(__builtin_offsetof(struct pt_regs, r15) == 0, "pt_regs.r15");
_Static_assert(__builtin_offsetof(struct pt_regs, r14) == 8, "pt_regs.r14");
_Static_assert(__builtin_offsetof(struct pt_regs, r13) == 16, "pt_regs.r13");
_Static_assert(__builtin_offsetof(struct pt_regs, r12) == 24, "pt_regs.r12");
_Static_assert(__builtin_offsetof(struct pt_regs, bp) == 32, "pt_regs.bp");
_Static_assert(__builtin_offsetof(struct pt_regs, bx) == 40, "pt_regs.bx");
_Static_assert(__builtin_offsetof(struct pt_regs, r11) == 48, "pt_regs.r11");
_Static_assert(__builtin_offsetof(struct pt_regs, r10) == 56, "pt_regs.r10");
_Static_assert(__builtin_offsetof(struct pt_regs, r9) == 64, "pt_regs.r9");
_Static_assert(__builtin_offsetof(struct pt_regs, r8) == 72, "pt_regs.r8");
_Static_assert(__builtin_offsetof(struct pt_regs, ax) == 80, "pt_regs.ax");
_Static_assert(__builtin_offsetof(struct pt_regs, cx) == 88, "pt_regs.cx");
_Static_assert(__builtin_offsetof(struct pt_regs, dx) == 96, "pt_regs.dx");
_Static_assert(__builtin_offsetof(struct pt_regs, si) == 104, "pt_regs.si");
_Static_assert(__builtin_offsetof(struct pt_regs, di) == 112, "pt_regs.di");
_Static_assert(__builtin_offsetof(struct pt_regs, ip) == 128, "pt_regs.ip");
_Static_assert(__builtin_offsetof(struct pt_regs, sp) == 152, "pt_regs.sp");

/* pt_regs at a run-time offset, as constant-offset context loads (no helper call) */
static __always_inline int usdt_reg(struct pt_regs *ctx, short off, __u64 *val)
{
	switch (off) {
	case 0: *val = CTX_U64(ctx, 0); return 0; /* r15 */
	case 8: *val = CTX_U64(ctx, 8); return 0; /* r14 */
	case 16: *val = CTX_U64(ctx, 16); return 0; /* r13 */
	case 24: *val = CTX_U64(ctx, 24); return 0; /* r12 */
	case 32: *val = CTX_U64(ctx, 32); return 0; /* bp */
	case 40: *val = CTX_U64(ctx, 40); return 0; /* bx */
	case 48: *val = CTX_U64(ctx, 48); return 0; /* r11 */
	case 56: *val = CTX_U64(ctx, 56); return 0; /* r10 */
	case 64: *val = CTX_U64(ctx, 64); return 0; /* r9 */
	case 72: *val = CTX_U64(ctx, 72); return 0; /* r8 */
	case 80: *val = CTX_U64(ctx, 80); return 0; /* ax */
	case 88: *val = CTX_U64(ctx, 88); return 0; /* cx */
	case 96: *val = CTX_U64(ctx, 96); return 0; /* dx */
	case 104: *val = CTX_U64(ctx, 104); return 0; /* si */
	case 112: *val = CTX_U64(ctx, 112); return 0; /* di */
	case 128: *val = CTX_U64(ctx, 128); return 0; /* ip */
	case 152: *val = CTX_U64(ctx, 152); return 0; /* sp */
	}
	/* no USDT argument names another register (orig_ax, cs, flags, ss) */
	return -EINVAL;
}
#else
static __always_inline int usdt_reg(struct pt_regs *ctx, short off, __u64 *val)
{
	return bpf_probe_read_kernel(val, sizeof(*val), (void *)ctx + off);
}
#endif

static __always_inline int usdt_arg_of(struct pt_regs *ctx, struct __bpf_usdt_arg_spec *a,
				       __u64 *res)
{
	__u64 val = 0;
	int err = 0;

	switch (a->arg_type) {
	case BPF_USDT_ARG_CONST:
		val = a->val_off;
		break;
	case BPF_USDT_ARG_REG:
		err = usdt_reg(ctx, a->reg_off, &val);
		break;
	case BPF_USDT_ARG_REG_DEREF:
		err = usdt_reg(ctx, a->reg_off, &val);
		if (!err)
			err = bpf_probe_read_user(&val, sizeof(val), (void *)val + a->val_off);
		break;
	default:
		err = -EINVAL;
	}
	/* 1-, 2- and 4-byte arguments: clear (or sign-extend) the upper bits */
	val <<= a->arg_bitshift;
	if (a->arg_signed)
		val = ((long)val) >> a->arg_bitshift;
	else
		val >>= a->arg_bitshift;
	*res = val;
	return err;
}

/* The first n (<= 4) arguments of the probe that fired. 0, or -errno. */
static __always_inline int usdt_args(struct pt_regs *ctx, __u64 *out, int n)
{
	struct __bpf_usdt_spec *spec;
	int id = __bpf_usdt_spec_id(ctx), err = 0;

	if (id < 0)
		return -ESRCH;
	spec = bpf_map_lookup_elem(&__bpf_usdt_specs, &id);
	if (!spec || spec->arg_cnt < n)
		return -ESRCH;
	for (int i = 0; i < 4; i++)
		if (i < n)
			err |= usdt_arg_of(ctx, &spec->args[i], &out[i]);
	return err;
}

#endif /* INFLIGHT_USDT_ARGS_BPF_H */
