// SPDX-License-Identifier: BSD-2-Clause
/*
 * contract/usdt_args.c: every operand form decoded to the exact spec the BPF side reads, and
 * every form it cannot read refused with the words the warning will carry. A fake symbol
 * table: g_buf at 0x4010, g_arr at 0x5000, `twice` defined twice, no table for "nosyms".
 */
#include <errno.h>
#include "check.h"
#include "contract/usdt_args.h"

#define SITE 0x1234ull

static int fake_syms(void *ctx, const char *name, __u64 *addr)
{
	if (ctx)
		return -ENODATA;
	if (!strcmp(name, "g_buf"))
		return *addr = 0x4010, 0;
	if (!strcmp(name, "g_arr"))
		return *addr = 0x5000, 0;
	if (!strcmp(name, "twice"))
		return -EEXIST;
	return -ENOENT;
}

struct want {
	__u8 kind, base, index, scale, size, is_signed, reg_shift;
	__s64 disp;
};

static void one(const char *args, bool fixed, const struct want *w, const char *what)
{
	struct infl_usdt_spec spec;
	char why[192];
	int err = usdt_args__parse(args, SITE, fixed, fake_syms, NULL, &spec, why, sizeof(why));
	const struct infl_usdt_arg *a = &spec.args[0];

	CHECK(!err && spec.nargs == 1 && a->kind == w->kind && a->base == w->base &&
		      a->index == w->index && a->scale == w->scale && a->size == w->size &&
		      a->is_signed == w->is_signed && a->reg_shift == w->reg_shift &&
		      a->disp == w->disp,
	      "%s: '%s' (err %d '%s'; kind %u base %u index %u scale %u size %u signed %u shift %u "
	      "disp %lld)", what, args, err, why, a->kind, a->base, a->index, a->scale, a->size,
	      a->is_signed, a->reg_shift, (long long)a->disp);
}

static void refused(const char *args, bool fixed, const char *why_part, const char *what)
{
	struct infl_usdt_spec spec;
	char why[192];
	int err = usdt_args__parse(args, SITE, fixed, fake_syms, NULL, &spec, why, sizeof(why));

	CHECK(err == -EINVAL && strstr(why, why_part), "%s: '%s' refused: '%s'", what, args, why);
}

static void test_forms(void)
{
	const __s64 rel = 0x4010 - (__s64)SITE; /* g_buf from the site */

	one("8@%rdi", false, &(struct want){ INFL_ARG_REG, INFL_REG_DI, 0, 0, 8, 0, 0, 0 },
	    "64-bit register");
	one("-4@%esi", false, &(struct want){ INFL_ARG_REG, INFL_REG_SI, 0, 0, 4, 1, 0, 0 },
	    "32-bit register, signed");
	one("8@%eax", false, &(struct want){ INFL_ARG_REG, INFL_REG_AX, 0, 0, 4, 0, 0, 0 },
	    "a 32-bit register for an 8-byte value: its 32 bits");
	one("2@%r9w", false, &(struct want){ INFL_ARG_REG, INFL_REG_R9, 0, 0, 2, 0, 0, 0 },
	    "16-bit register");
	one("1@%sil", false, &(struct want){ INFL_ARG_REG, INFL_REG_SI, 0, 0, 1, 0, 0, 0 },
	    "8-bit register");
	one("1@%ah", false, &(struct want){ INFL_ARG_REG, INFL_REG_AX, 0, 0, 1, 0, 8, 0 },
	    "high byte register");
	one("4@$1024", false, &(struct want){ INFL_ARG_CONST, 0, 0, 0, 4, 0, 0, 1024 },
	    "constant");
	one("-8@$-0x10", false, &(struct want){ INFL_ARG_CONST, 0, 0, 0, 8, 1, 0, -16 },
	    "negative hex constant");
	one("8@-24(%rbp)", false, &(struct want){ INFL_ARG_MEM, INFL_REG_BP, 0, 0, 8, 0, 0, -24 },
	    "register + displacement");
	one("4@(%rsp)", false, &(struct want){ INFL_ARG_MEM, INFL_REG_SP, 0, 0, 4, 0, 0, 0 },
	    "register, no displacement");
	one("8@8(%rdx,%rax,8)", false,
	    &(struct want){ INFL_ARG_MEM, INFL_REG_DX, INFL_REG_AX, 3, 8, 0, 0, 8 },
	    "base + index * 8 + displacement");
	one("8@(%rdx,%rax)", false,
	    &(struct want){ INFL_ARG_MEM, INFL_REG_DX, INFL_REG_AX, 0, 8, 0, 0, 0 },
	    "base + index");
	one("8@g_buf(%rip)", false,
	    &(struct want){ INFL_ARG_MEM, INFL_REG_IP, 0, 0, 8, 0, 0, rel }, "RIP-relative symbol");
	one("4@g_buf+8(%rip)", false,
	    &(struct want){ INFL_ARG_MEM, INFL_REG_IP, 0, 0, 4, 0, 0, rel + 8 },
	    "RIP-relative symbol + offset");
	one("4@g_buf-4(%rip)", false,
	    &(struct want){ INFL_ARG_MEM, INFL_REG_IP, 0, 0, 4, 0, 0, rel - 4 },
	    "RIP-relative symbol - offset");
	one("8@$g_buf", false, &(struct want){ INFL_ARG_REG, INFL_REG_IP, 0, 0, 8, 0, 0, rel },
	    "a symbol's address");
	one("8@g_buf", false, &(struct want){ INFL_ARG_MEM, INFL_REG_IP, 0, 0, 8, 0, 0, rel },
	    "absolute symbol");
	one("8@0x4010", false, &(struct want){ INFL_ARG_MEM, INFL_REG_IP, 0, 0, 8, 0, 0, rel },
	    "absolute address");
	one("8@g_arr(,%rdx,8)", true,
	    &(struct want){ INFL_ARG_MEM, 0, INFL_REG_DX, 3, 8, 0, 0, 0x5000 },
	    "symbol + index at a fixed load address");
}

static void test_refusals(void)
{
	refused("8@%fs:40", false, "segment-relative", "TLS");
	refused("8@-8(%rip)", false, "RIP-relative offset without a symbol", "numeric RIP offset");
	refused("8@nosuch(%rip)", false, "not in the symbol table", "unknown symbol");
	refused("8@twice(%rip)", false, "more than one object", "ambiguous local symbol");
	refused("8@g_arr(,%rdx,8)", false, "position-independent", "symbol + index, PIE");
	refused("3@%rax", false, "size other than", "size 3");
	refused("%rax", false, "no size prefix", "no size");
	refused("8@%xmm0", false, "unknown register", "vector register");
	refused("8@(%eax)", false, "narrower than 64 bits", "32-bit address register");
	refused("8@(%rax,%rsp,2)", false, "%rsp as an index", "rsp index");
	refused("8@(%rax,%rbx,3)", false, "scale other than", "scale 3");
	refused("8@%rax 8@%rbx 8@%rcx 8@%rdx 8@%rsi", false, "more than 4 arguments", "5 args");
	refused("8@-g_buf(%rip)", false, "not a number or a symbol", "negated symbol");
}

static void test_list(void)
{
	struct infl_usdt_spec spec;
	char why[192];
	int err = usdt_args__parse("8@%rdi -4@%esi 8@$4096  8@%rcx", SITE, false, fake_syms, NULL,
				   &spec, why, sizeof(why));

	CHECK(!err && spec.nargs == 4 && spec.args[1].is_signed && spec.args[2].disp == 4096 &&
		      spec.args[3].base == INFL_REG_CX,
	      "four arguments, two spaces between two of them");
	err = usdt_args__parse("8@g_buf(%rip)", SITE, false, fake_syms, (void *)1, &spec, why,
			       sizeof(why));
	CHECK(err == -EINVAL && strstr(why, "no symbol table"), "stripped: '%s'", why);
	err = usdt_args__parse("", SITE, false, NULL, NULL, &spec, why, sizeof(why));
	CHECK(!err && spec.nargs == 0, "no arguments");
}

int main(void)
{
	test_forms();
	test_refusals();
	test_list();
	return check_done();
}
