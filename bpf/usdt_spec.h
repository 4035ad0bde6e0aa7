/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A USDT probe site's arguments as the loader decoded them from the site's note, in the form
 * the BPF side reads them (usdt_args.bpf.h): the loader's own spec map, one entry per
 * distinct spec, found by the site's BPF cookie (bpf_get_attach_cookie) or, on kernels
 * without cookies (before 5.15), by the site's file identity (usdt_ip_key).
 * Shared by the kernel side and the loader (contract/usdt_args.c writes it); fixed-width
 * fields only.
 */
#ifndef INFLIGHT_USDT_SPEC_H
#define INFLIGHT_USDT_SPEC_H

#define INFL_USDT_MAX_ARGS 4	   /* the contract's longest probe (buf_alloc) */
#define INFL_USDT_MAX_SPECS 4096   /* distinct specs one session holds (spec map size) */
#define INFL_USDT_MAX_SITES 65536  /* sites one session attaches (IP map size) */

/* x86-64 registers, by number: each side maps them to its own struct pt_regs */
enum infl_usdt_reg {
	INFL_REG_NONE = 0,
	INFL_REG_AX, INFL_REG_BX, INFL_REG_CX, INFL_REG_DX, INFL_REG_SI, INFL_REG_DI,
	INFL_REG_BP, INFL_REG_SP, INFL_REG_R8, INFL_REG_R9, INFL_REG_R10, INFL_REG_R11,
	INFL_REG_R12, INFL_REG_R13, INFL_REG_R14, INFL_REG_R15,
	INFL_REG_IP, /* the probe site's address when the probe fires */
	INFL_REG__COUNT,
};

enum infl_usdt_arg_kind {
	INFL_ARG_NONE = 0,
	INFL_ARG_CONST = 1, /* value = disp */
	INFL_ARG_REG = 2,   /* value = (base >> reg_shift) + disp */
	INFL_ARG_MEM = 3,   /* value = *(size bytes at base + (index << scale) + disp) */
};

/*
 * One argument. A RIP-relative operand (`8@g_buf(%rip)`), a symbol's address (`8@$g_buf`) or
 * an absolute address is turned into base INFL_REG_IP with disp = target - site: the site's
 * address is what the IP register holds when the probe fires, wherever the binary is loaded.
 */
struct infl_usdt_arg {
	__s64 disp;
	__u8 kind;	/* enum infl_usdt_arg_kind */
	__u8 base;	/* enum infl_usdt_reg; MEM may have none (index only) */
	__u8 index;	/* MEM: enum infl_usdt_reg, INFL_REG_NONE when none */
	__u8 scale;	/* MEM: log2 of the index's scale, 0 to 3 */
	__u8 size;	/* the value's width in bytes: 1, 2, 4 or 8 */
	__u8 is_signed; /* sign-extended from `size` bytes, else zero-extended */
	__u8 reg_shift; /* REG: 8 for %ah, %bh, %ch, %dh; else 0 */
	__u8 pad;
};

/*
 * Argument 1 of every contract probe is a class id (buf_alloc, buf_free) or a stage id
 * (stage), < INFL_USDT_IDS, of the image the site is in. Several images of one process (an
 * application and its libraries) each number their own from 0, so the loader gives each
 * image's ids slots of the session (contract/images.c) and every site's spec says where its
 * image's ids go: the kernel side counts slots. A slot >= INFL_USDT_IDS refuses the id (an id
 * its image does not declare whose slot another image's declaration took): it reads as
 * INFL_ID_REFUSED | id, counted as a bad class or stage.
 */
#define INFL_USDT_IDS 16
/* A refused id as the kernel side sees it: out of range, and still telling the id (the low
 * byte, which an event records) */
#define INFL_ID_REFUSED 0x100

struct infl_usdt_spec {
	struct infl_usdt_arg args[INFL_USDT_MAX_ARGS];
	__u32 nargs;
	__u16 image;	/* the loader's: the image whose slots id_slot holds */
	__u8 probe;	/* the loader's: enum infl_probe of the site */
	__u8 pad;
	__u8 id_slot[INFL_USDT_IDS];
};

/* The IP map's key (kernels without BPF cookies): the site as the kernel's uprobe names it,
 * the file (device as the kernel encodes it, inode) and the offset in it. */
struct infl_usdt_ip_key {
	__u64 dev;
	__u64 ino;
	__u64 off;
};

#endif /* INFLIGHT_USDT_SPEC_H */
