// SPDX-License-Identifier: BSD-2-Clause
/*
 * Decoding USDT argument strings (contract/usdt_args.h). Each argument is "[-]N@OPERAND",
 * N the value's width in bytes (negative: signed), OPERAND in AT&T syntax as the compiler
 * printed it for the asm operand of the probe (systemtap's sys/sdt.h, probes/
 * inflight_probes.h): %reg, $constant, $symbol, disp(%base,%index,scale), symbol(%rip), or
 * an absolute address. The probe site is a nop, so a RIP-relative operand cannot be taken
 * relative to an instruction: its symbol is what names the memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/usdt_args.h"

struct reg_name {
	const char *name;
	__u8 reg;
	__u8 width; /* bytes */
	__u8 shift; /* %ah: the second byte */
};

#define R64(n, r) { n, INFL_REG_##r, 8, 0 }
#define R32(n, r) { n, INFL_REG_##r, 4, 0 }
#define R16(n, r) { n, INFL_REG_##r, 2, 0 }
#define R8(n, r) { n, INFL_REG_##r, 1, 0 }
#define RH(n, r) { n, INFL_REG_##r, 1, 8 }

static const struct reg_name regs[] = {
	R64("rax", AX), R64("rbx", BX), R64("rcx", CX), R64("rdx", DX), R64("rsi", SI),
	R64("rdi", DI), R64("rbp", BP), R64("rsp", SP), R64("r8", R8), R64("r9", R9),
	R64("r10", R10), R64("r11", R11), R64("r12", R12), R64("r13", R13), R64("r14", R14),
	R64("r15", R15), R64("rip", IP),
	R32("eax", AX), R32("ebx", BX), R32("ecx", CX), R32("edx", DX), R32("esi", SI),
	R32("edi", DI), R32("ebp", BP), R32("esp", SP), R32("r8d", R8), R32("r9d", R9),
	R32("r10d", R10), R32("r11d", R11), R32("r12d", R12), R32("r13d", R13),
	R32("r14d", R14), R32("r15d", R15),
	R16("ax", AX), R16("bx", BX), R16("cx", CX), R16("dx", DX), R16("si", SI), R16("di", DI),
	R16("bp", BP), R16("sp", SP), R16("r8w", R8), R16("r9w", R9), R16("r10w", R10),
	R16("r11w", R11), R16("r12w", R12), R16("r13w", R13), R16("r14w", R14), R16("r15w", R15),
	R8("al", AX), R8("bl", BX), R8("cl", CX), R8("dl", DX), R8("sil", SI), R8("dil", DI),
	R8("bpl", BP), R8("spl", SP), R8("r8b", R8), R8("r9b", R9), R8("r10b", R10),
	R8("r11b", R11), R8("r12b", R12), R8("r13b", R13), R8("r14b", R14), R8("r15b", R15),
	RH("ah", AX), RH("bh", BX), RH("ch", CX), RH("dh", DX),
};

/* The register named at s (after its '%'), `len` characters. */
static const struct reg_name *reg_lookup(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (strlen(regs[i].name) == len && !strncmp(regs[i].name, s, len))
			return &regs[i];
	return NULL;
}

static bool sym_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' ||
	       c == '$' || (!first && c >= '0' && c <= '9');
}

struct expr {
	char sym[256]; /* "" when none */
	__s64 num;
};

/* "", "16", "-0x10", "g_buf", "g_buf+8", "g_buf-8", "8+g_buf": a symbol and a number. */
static int parse_expr(const char *s, size_t len, struct expr *e, const char **why)
{
	char buf[320], *end;
	size_t i = 0, n;

	e->sym[0] = '\0';
	e->num = 0;
	if (len >= sizeof(buf))
		return *why = "operand too long", -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	while (i < len) {
		if (sym_char(buf[i], true) && buf[i] != '$') {
			if (e->sym[0])
				return *why = "more than one symbol in a displacement", -EINVAL;
			for (n = 0; i + n < len && sym_char(buf[i + n], n == 0); n++)
				;
			if (n >= sizeof(e->sym))
				return *why = "symbol name too long", -EINVAL;
			memcpy(e->sym, buf + i, n);
			e->sym[n] = '\0';
			i += n;
		} else {
			long long v = strtoll(buf + i, &end, 0);

			if (end == buf + i)
				return *why = "not a number or a symbol", -EINVAL;
			e->num += v;
			i = end - buf;
		}
		if (i == len)
			break;
		if (buf[i] != '+' && buf[i] != '-')
			return *why = "not a number or a symbol", -EINVAL;
		/* "sym-8" subtracts: strtoll reads the sign of a number itself */
		if (buf[i] == '+')
			i++;
		else if (i + 1 < len && sym_char(buf[i + 1], true))
			return *why = "a negated symbol cannot be resolved", -EINVAL;
	}
	return 0;
}

struct ctx {
	__u64 site;
	bool fixed;
	usdt_sym_fn sym;
	void *sym_ctx;
	const char *why;
};

/* The link-time address of e's symbol plus its number, as an offset from the site. */
static int site_relative(struct ctx *c, const struct expr *e, __s64 *disp)
{
	__u64 addr = 0;
	int err = c->sym ? c->sym(c->sym_ctx, e->sym, &addr) : -ENODATA;

	if (err == -ENOENT)
		return c->why = "its symbol is not in the symbol table", -EINVAL;
	if (err == -EEXIST)
		return c->why = "its symbol names more than one object (local symbols of one name)",
		       -EINVAL;
	if (err)
		return c->why = "its symbol cannot be resolved (no symbol table: stripped?)", -EINVAL;
	*disp = (__s64)(addr + (__u64)e->num - c->site);
	return 0;
}

/* "(%base)", "(%base,%index)", "(%base,%index,scale)", "(,%index,scale)" */
static int parse_regs(struct ctx *c, const char *s, struct infl_usdt_arg *a)
{
	const char *p = s + 1, *close = strchr(s, ')');
	const struct reg_name *r;
	size_t n;

	if (!close || close[1])
		return c->why = "unbalanced parentheses", -EINVAL;
	for (int part = 0; p < close; part++) {
		n = strcspn(p, ",)");
		if (part == 2) {
			char *end;
			long scale = strtol(p, &end, 10);

			if (end != p + n || (scale != 1 && scale != 2 && scale != 4 && scale != 8))
				return c->why = "a scale other than 1, 2, 4 or 8", -EINVAL;
			a->scale = (__u8)__builtin_ctzl((unsigned long)scale);
		} else if (part < 2 && n) {
			if (*p != '%' || !(r = reg_lookup(p + 1, n - 1)))
				return c->why = "an unknown register", -EINVAL;
			if (r->width != 8)
				return c->why = "an address register narrower than 64 bits", -EINVAL;
			if (part == 1 && (r->reg == INFL_REG_IP || r->reg == INFL_REG_SP))
				return c->why = "%rip or %rsp as an index", -EINVAL;
			if (part == 0)
				a->base = r->reg;
			else
				a->index = r->reg;
		} else if (part > 2) {
			return c->why = "more than three parts in parentheses", -EINVAL;
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

/* "disp(...)", "sym(%rip)" or an absolute "addr"/"sym": memory. */
static int parse_mem(struct ctx *c, const char *op, struct infl_usdt_arg *a)
{
	const char *paren = strchr(op, '(');
	struct expr e;
	int err;

	a->kind = INFL_ARG_MEM;
	err = parse_expr(op, paren ? (size_t)(paren - op) : strlen(op), &e, &c->why);
	if (err)
		return err;
	if (paren) {
		err = parse_regs(c, paren, a);
		if (err)
			return err;
	}
	if (a->base == INFL_REG_IP) {
		if (!e.sym[0])
			return c->why = "a RIP-relative offset without a symbol (it would be "
					"relative to an instruction the probe does not have)",
			       -EINVAL;
		return site_relative(c, &e, &a->disp);
	}
	if (!paren) { /* an absolute address: link-time, moved with the binary like the site */
		a->base = INFL_REG_IP;
		if (e.sym[0])
			return site_relative(c, &e, &a->disp);
		a->disp = (__s64)((__u64)e.num - c->site);
		return 0;
	}
	a->disp = e.num;
	if (!e.sym[0])
		return 0;
	/* a symbol plus registers: an absolute address, right only where the file is loaded at
	 * its link-time addresses */
	if (!c->fixed)
		return c->why = "a symbol added to registers in position-independent code", -EINVAL;
	err = site_relative(c, &e, &a->disp);
	a->disp += (__s64)c->site;
	return err;
}

static int parse_arg(struct ctx *c, const char *text, struct infl_usdt_arg *a)
{
	const struct reg_name *r;
	const char *op;
	struct expr e;
	char *end;
	long n = strtol(text, &end, 10);
	int err;

	memset(a, 0, sizeof(*a));
	if (end == text || *end != '@')
		return c->why = "no size prefix (N@)", -EINVAL;
	if (n != 1 && n != 2 && n != 4 && n != 8 && n != -1 && n != -2 && n != -4 && n != -8)
		return c->why = "a size other than 1, 2, 4 or 8 bytes", -EINVAL;
	a->size = (__u8)(n < 0 ? -n : n);
	a->is_signed = n < 0;
	op = end + 1;
	if (strchr(op, ':'))
		return c->why = "a segment-relative operand (thread-local storage) is not read",
		       -EINVAL;
	if (*op == '%') {
		r = reg_lookup(op + 1, strlen(op + 1));
		if (!r)
			return c->why = "an unknown register", -EINVAL;
		a->kind = INFL_ARG_REG;
		a->base = r->reg;
		a->reg_shift = r->shift;
		if (r->width < a->size)
			a->size = r->width;
		return 0;
	}
	if (*op == '$') {
		err = parse_expr(op + 1, strlen(op + 1), &e, &c->why);
		if (err)
			return err;
		if (!e.sym[0]) {
			a->kind = INFL_ARG_CONST;
			a->disp = e.num;
			return 0;
		}
		/* a symbol's address: where the site is, plus the distance between them */
		a->kind = INFL_ARG_REG;
		a->base = INFL_REG_IP;
		return site_relative(c, &e, &a->disp);
	}
	return parse_mem(c, op, a);
}

int usdt_args__parse(const char *args, __u64 site, bool fixed, usdt_sym_fn sym, void *sym_ctx,
		     struct infl_usdt_spec *spec, char *why, size_t why_len)
{
	struct ctx c = { .site = site, .fixed = fixed, .sym = sym, .sym_ctx = sym_ctx };
	const char *p = args;
	char word[512];
	int i = 0;

	memset(spec, 0, sizeof(*spec));
	if (why_len)
		why[0] = '\0';
	while (*p) {
		size_t n;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		n = strcspn(p, " ");
		if (i == INFL_USDT_MAX_ARGS) {
			snprintf(why, why_len, "more than %d arguments", INFL_USDT_MAX_ARGS);
			return -EINVAL;
		}
		if (n >= sizeof(word)) {
			snprintf(why, why_len, "argument %d is too long", i + 1);
			return -EINVAL;
		}
		memcpy(word, p, n);
		word[n] = '\0';
		if (parse_arg(&c, word, &spec->args[i])) {
			snprintf(why, why_len, "argument %d '%s': %s", i + 1, word, c.why);
			return -EINVAL;
		}
		i++;
		p += n;
	}
	spec->nargs = (__u32)i;
	return 0;
}
