// SPDX-License-Identifier: BSD-2-Clause
/*
 * Probe sites whose arguments are every operand form inflight decodes (contract/usdt_args.c),
 * for tests/t_attach_args.sh. Each form is one buf_alloc site of its own class, with known
 * values, so that the summary's per-class counts and bytes say whether every argument of
 * that form was read right; every buffer is freed through a plain register site, so a buf
 * read wrong shows as an unmatched free, and an owner read wrong as a stage that did not
 * move the buffer. Built -O2 (PIE), -O0 (PIE) and -O2 without PIE (tests/attach/tests.mk):
 *   reg      8@%rdi ...                 registers ("r")
 *   glob     8@g_buf(%rip) ...          globals ("m": RIP-relative at any -O, PIE or not)
 *   stack    8@24(%rsp) / 8@-40(%rbp)   stack slots ("m" on volatile locals)
 *   indexed  8@8(%rdx,%rax,8) ...       base + index * scale + displacement ("m" on arrays)
 *   byte     1@%dl, 1@%ah               8-bit registers, the high byte too
 *   konst    8@$6000 ...                constants ("n")
 *   symaddr  8@$g_obj (no PIE) / 8@%rax the address of a symbol ("i")
 *   tls      8@%fs:40                   a form inflight does not read: the site is skipped
 * Usage: args_target ROUNDS (each round fires every site once); prints "done ROUNDS".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "inflight_probes.h"

#define CLASSES(X)                                                                             \
	X(0, reg) X(1, glob) X(2, stack) X(3, indexed) X(4, byte) X(5, konst) X(6, symaddr)     \
	X(7, tls)
#define STAGES(X) X(0, hold, entry) X(1, done, terminal)
INFLIGHT_CONTRACT(CLASSES, STAGES);

/* a buf_alloc site: 8-byte buf, bytes and owner; the class operand as given */
#define ALLOC(a1) INFLIGHT_P__SITE_ASM(buf_alloc, "8@%[a0] " a1 " 8@%[a2] 8@%[a3]")
#define NOINLINE __attribute__((noinline, noipa))

/* the values of class c: buffer 0x1000 * (c + 1) + round, (c + 1) * 1000 bytes, owner c + 1 */
#define BUF(c, r) (0x1000ull * ((c) + 1) + (r))
#define BYTES(c) (1000ull * ((c) + 1))
#define OWNER(c) ((uint64_t)(c) + 1)

uint64_t g_buf, g_bytes, g_owner;
uint32_t g_cls;
uint64_t g_arr[8];
uint32_t g_cls_arr[8];
char g_obj[64];

NOINLINE static void site_reg(uint64_t r)
{
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "r"(BUF(0, r)),
				     [a1] "r"((uint32_t)0), [a2] "r"(BYTES(0)), [a3] "r"(OWNER(0)));
}

NOINLINE static void site_glob(uint64_t r)
{
	g_buf = BUF(1, r);
	g_cls = 1;
	g_bytes = BYTES(1);
	g_owner = OWNER(1);
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "m"(g_buf), [a1] "m"(g_cls),
				     [a2] "m"(g_bytes), [a3] "m"(g_owner));
}

NOINLINE static void site_stack(uint64_t r)
{
	volatile uint64_t buf = BUF(2, r), bytes = BYTES(2), owner = OWNER(2);
	volatile uint32_t cls = 2;

	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "m"(buf), [a1] "m"(cls),
				     [a2] "m"(bytes), [a3] "m"(owner));
}

NOINLINE static void site_indexed(uint64_t r, int i)
{
	g_arr[i] = BUF(3, r);
	g_arr[i + 1] = BYTES(3);
	g_arr[i + 2] = OWNER(3);
	g_cls_arr[i] = 3;
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "m"(g_arr[i]),
				     [a1] "m"(g_cls_arr[i]), [a2] "m"(g_arr[i + 1]),
				     [a3] "m"(g_arr[i + 2]));
}

/* class 4 in a byte register, and again in %ah (the high byte of %ax: 0x04 of 0x0455) */
NOINLINE static void site_byte(uint64_t r)
{
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(ALLOC("1@%[a1]")::[a0] "r"(BUF(4, r)),
				     [a1] "q"((uint8_t)4), [a2] "r"(BYTES(4)), [a3] "r"(OWNER(4)));
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__("movl $0x0455, %%eax\n" ALLOC("1@%%ah")
				     ::[a0] "r"(BUF(4, r) + 0x800), [a2] "r"(BYTES(4)),
				     [a3] "r"(OWNER(4))
				     : "rax");
}

NOINLINE static void site_konst(uint64_t r)
{
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "r"(BUF(5, r)),
				     [a1] "n"(5), [a2] "n"(BYTES(5)), [a3] "n"(OWNER(5)));
}

/* the buffer is the address of g_obj, as a symbol's address ($g_obj) where the code is not
 * position-independent, else from a register; freed by the address itself */
NOINLINE static void site_symaddr(void)
{
	if (INFLIGHT_ENABLED(buf_alloc))
#ifdef __PIE__
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "r"(g_obj), [a1] "r"(6),
				     [a2] "r"(BYTES(6)), [a3] "r"(OWNER(6)));
#else
		__asm__ __volatile__(ALLOC("4@%[a1]")::[a0] "i"(g_obj), [a1] "r"(6),
				     [a2] "r"(BYTES(6)), [a3] "r"(OWNER(6)));
#endif
}

/* thread-local storage (a segment-relative operand): not read, so the site is skipped */
NOINLINE static void site_tls(uint64_t r)
{
	if (INFLIGHT_ENABLED(buf_alloc))
		__asm__ __volatile__(INFLIGHT_P__SITE_ASM(buf_alloc, "8@%%fs:40 4@%[a1] 8@%[a2] 8@%[a3]")
				     ::[a1] "r"(7), [a2] "r"(BYTES(7) + r), [a3] "r"(OWNER(7)));
}

int main(int argc, char **argv)
{
	uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	int i = argc > 2 ? atoi(argv[2]) : 2; /* a run-time index for the indexed form */

	for (uint64_t r = 0; r < rounds; r++) {
		for (int c = 0; c <= 6; c++)
			inflight_stage(OWNER(c), 0);
		site_reg(r);
		site_glob(r);
		site_stack(r);
		site_indexed(r, i);
		site_byte(r);
		site_konst(r);
		site_symaddr();
		site_tls(r);
		for (int c = 0; c <= 5; c++)
			inflight_buf_free(BUF(c, r), (uint32_t)c, BYTES(c));
		inflight_buf_free(BUF(4, r) + 0x800, 4, BYTES(4));
		inflight_buf_free((uintptr_t)g_obj, 6, BYTES(6));
		for (int c = 0; c <= 6; c++)
			inflight_stage(OWNER(c), 1);
	}
	printf("done %llu\n", (unsigned long long)rounds);
	return 0;
}
