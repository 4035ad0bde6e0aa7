/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A USDT note's argument string ("8@%rdi -4@%esi 8@g_buf(%rip) 8@16(%rsp,%rax,8)") decoded
 * into the spec the BPF side reads (bpf/usdt_spec.h), for x86-64: registers of every width
 * (%ah too), constants, register + displacement, base + index * scale + displacement, and
 * RIP-relative or absolute operands naming a symbol, resolved through the ELF's symbol table
 * into an offset from the probe site. What it cannot decode it names, so that the site can
 * be skipped with a warning instead of read wrong.
 */
#ifndef INFLIGHT_CONTRACT_USDT_ARGS_H
#define INFLIGHT_CONTRACT_USDT_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "usdt_spec.h"

/* Resolves a symbol to its link-time address: 0, -ENOENT (no such symbol), -EEXIST (more
 * than one symbol of that name: which one is meant cannot be told), -ENODATA (no symbol
 * table). */
typedef int (*usdt_sym_fn)(void *ctx, const char *name, __u64 *addr);

/*
 * Decodes `args` for the site at link-time address `site` into `spec`. `sym` may be NULL
 * (every symbol is then unresolvable). `fixed`: the file is loaded at its link-time
 * addresses (ET_EXEC), so a symbol may also be added to registers (`g_arr(,%rdx,8)`).
 * 0, or -EINVAL with `why` saying which argument and why it cannot be read (e.g.
 * "argument 1 '8@%fs:40': a segment-relative operand (thread-local storage) is not read").
 */
int usdt_args__parse(const char *args, __u64 site, bool fixed, usdt_sym_fn sym, void *sym_ctx,
		     struct infl_usdt_spec *spec, char *why, size_t why_len);

#endif /* INFLIGHT_CONTRACT_USDT_ARGS_H */
