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
/* pt_regs at a run-time offset, as constant-offset context loads (no helper call) */
static __always_inline int usdt_reg(struct pt_regs *ctx, short off, __u64 *val)
{
	switch (off) {
	case __builtin_offsetof(struct pt_regs, di): *val = ctx->di; return 0;
	case __builtin_offsetof(struct pt_regs, si): *val = ctx->si; return 0;
	case __builtin_offsetof(struct pt_regs, dx): *val = ctx->dx; return 0;
	case __builtin_offsetof(struct pt_regs, cx): *val = ctx->cx; return 0;
	case __builtin_offsetof(struct pt_regs, r8): *val = ctx->r8; return 0;
	case __builtin_offsetof(struct pt_regs, r9): *val = ctx->r9; return 0;
	case __builtin_offsetof(struct pt_regs, ax): *val = ctx->ax; return 0;
	case __builtin_offsetof(struct pt_regs, bx): *val = ctx->bx; return 0;
	case __builtin_offsetof(struct pt_regs, bp): *val = ctx->bp; return 0;
	case __builtin_offsetof(struct pt_regs, r10): *val = ctx->r10; return 0;
	case __builtin_offsetof(struct pt_regs, r11): *val = ctx->r11; return 0;
	case __builtin_offsetof(struct pt_regs, r12): *val = ctx->r12; return 0;
	case __builtin_offsetof(struct pt_regs, r13): *val = ctx->r13; return 0;
	case __builtin_offsetof(struct pt_regs, r14): *val = ctx->r14; return 0;
	case __builtin_offsetof(struct pt_regs, r15): *val = ctx->r15; return 0;
	case __builtin_offsetof(struct pt_regs, sp): *val = ctx->sp; return 0;
	case __builtin_offsetof(struct pt_regs, ip): *val = ctx->ip; return 0;
	}
	return bpf_probe_read_kernel(val, sizeof(*val), (void *)ctx + off);
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
