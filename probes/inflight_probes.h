/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The inflight probe contract for C and C++ in one header: the three semaphore-guarded USDT
 * probes and the class/stage names note, with no generator step (no `dtrace -h/-G`) and no
 * dependency beyond a GNU-compatible compiler (gcc, g++, clang, clang++). Layout and
 * rationale: probes/README.md ("One header, no generator").
 *
 *   #define INFLIGHT_PROVIDER myapp        optional, before the include (default: prover)
 *   #include "inflight_probes.h"
 *
 *   inflight_buf_alloc(buf, cls, bytes, owner);   anywhere: while nobody listens, a test of
 *   inflight_buf_free(buf, cls, bytes);           a 2-byte semaphore and a branch not taken
 *   inflight_stage(owner, stage);
 *   if (INFLIGHT_ENABLED(buf_alloc)) ...          guard costly argument computations
 *
 *   #define MY_CLASSES(X) X(0, input) X(1, scratch)
 *   #define MY_STAGES(X)  X(0, read, entry) X(1, compute, plain) X(2, done, terminal)
 *   INFLIGHT_CONTRACT(MY_CLASSES, MY_STAGES);     in exactly one file of each executable
 *                                                 or shared library that has probes
 *
 * What it emits, per probe site: a 1-byte nop; a stapsdt note (version 3: site, the address
 * of _.stapsdt.base, semaphore; provider, name, argument string) in the non-allocated
 * ".note.stapsdt"; a 4-byte PC-relative reference to the site in ".inflight.keep", a section
 * flagged SHF_GNU_RETAIN. Linkers never follow a non-allocated note's relocations when they
 * collect garbage: without the reference, --gc-sections (lld, mold) removes a function with
 * a probe and keeps its note, whose site then reads as the offset of the nop in the removed
 * section (the 0x1b of a Rust release build), or (gold) refuses to link. With it, a function
 * that holds a probe site is never collected, so no note can outlive its code. In a COMDAT
 * function (C++ inline, templates) both go into the function's group ("?"): a discarded
 * duplicate takes its note and its reference along.
 *
 * INFLIGHT_CONTRACT defines the semaphores in a ".probes" section of exactly one page of
 * its own (aligned to 4096 and padded to 4096): a semaphore must not live in a file page
 * that is also mapped by the RELRO segment, as lld's and mold's layouts do with the first
 * page of their RW segment. The kernel raises a semaphore in the first writable mapping of its file
 * offset; right after exec that is the RELRO copy, which the program never reads.
 */
#ifndef INFLIGHT_PROBES_H
#define INFLIGHT_PROBES_H

#include <stdint.h>

#if !defined(__x86_64__)
#error "inflight_probes.h: x86_64 only (the contract's arguments are 64-bit; only x86_64 is tested)"
#endif

#ifndef INFLIGHT_PROVIDER
#define INFLIGHT_PROVIDER prover
#endif

#define INFLIGHT_PROBES_NOTE_TYPE 0x31464e49u /* "INF1", the names note's type */
#define INFLIGHT_P__NOTE_TYPE_ASM "0x31464e49"
#define INFLIGHT_PROBES_CONTRACT_VERSION 1
#define INFLIGHT_PROBES_MAX_ID 16 /* class and stage ids are < 16 */

#define INFLIGHT_P__STR(x) #x
#define INFLIGHT_P__XSTR(x) INFLIGHT_P__STR(x)
#define INFLIGHT_P__PROVIDER INFLIGHT_P__XSTR(INFLIGHT_PROVIDER)
/* the semaphore of a probe, named as dtrace -G names it: PROVIDER_NAME_semaphore */
#define INFLIGHT_SEMAPHORE(probe) INFLIGHT_P__SEMA_NAME(INFLIGHT_PROVIDER, probe)
#define INFLIGHT_P__SEMA_NAME(provider, probe) INFLIGHT_P__SEMA_NAME_(provider, probe)
#define INFLIGHT_P__SEMA_NAME_(provider, probe) provider##_##probe##_semaphore
#define INFLIGHT_P__SEMA_STR(probe) INFLIGHT_P__XSTR(INFLIGHT_SEMAPHORE(probe))
/*
 * The name the probes' code and notes link against: a second label of the same semaphore,
 * which says where it comes from. A program that uses the probes but forgot
 * INFLIGHT_CONTRACT fails to link with "undefined reference to
 * `prover_buf_alloc_semaphore__define_with_INFLIGHT_CONTRACT'" (probes/README.md).
 */
#define INFLIGHT_P__LINK_NAME(provider, probe) INFLIGHT_P__LINK_NAME_(provider, probe)
#define INFLIGHT_P__LINK_NAME_(provider, probe) \
	provider##_##probe##_semaphore__define_with_INFLIGHT_CONTRACT
#define INFLIGHT_P__LINK_STR(probe) INFLIGHT_P__XSTR(INFLIGHT_P__LINK_NAME(INFLIGHT_PROVIDER, probe))

#ifdef __cplusplus
extern "C" {
#endif
/* defined by INFLIGHT_CONTRACT; hidden: each ELF object (a program, each shared library)
 * has its own, and a library never binds to the program's. Referenced by the link name
 * that names INFLIGHT_CONTRACT (above). */
extern volatile unsigned short INFLIGHT_SEMAPHORE(buf_alloc) __asm__(INFLIGHT_P__LINK_STR(buf_alloc))
	__attribute__((visibility("hidden")));
extern volatile unsigned short INFLIGHT_SEMAPHORE(buf_free) __asm__(INFLIGHT_P__LINK_STR(buf_free))
	__attribute__((visibility("hidden")));
extern volatile unsigned short INFLIGHT_SEMAPHORE(stage) __asm__(INFLIGHT_P__LINK_STR(stage))
	__attribute__((visibility("hidden")));
#ifdef __cplusplus
}
#endif

/* True while a tracer is attached to `probe` (buf_alloc, buf_free or stage). */
#define INFLIGHT_ENABLED(probe) __builtin_expect(INFLIGHT_SEMAPHORE(probe) != 0, 0)

/* _.stapsdt.base: one byte whose link-time address every note records, so that a tool can
 * tell a prelinked (moved) file; shared with <sys/sdt.h>'s copy through the same group. */
#define INFLIGHT_P__BASE_ASM                                                                   \
	".ifndef _.stapsdt.base\n"                                                             \
	".pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n"                   \
	".weak _.stapsdt.base\n"                                                               \
	".hidden _.stapsdt.base\n"                                                             \
	"_.stapsdt.base: .space 1\n"                                                           \
	".size _.stapsdt.base, 1\n"                                                            \
	".popsection\n"                                                                        \
	".endif\n"

/* The site's instruction: a 1-byte nop, which the uprobes of every kernel emulate. Not for
 * programs to change: the tests build sites of another size through it. */
#ifndef INFLIGHT_P__NOP
#define INFLIGHT_P__NOP "nop"
#endif

/* One probe site: the nop, its note, the reference that keeps its code. ARGS is the note's
 * argument string, e.g. "8@%[a0] 4@%[a1]": SIZE@OPERAND per argument, unsigned. */
#define INFLIGHT_P__SITE_ASM(probe, args)                                                      \
	"990: " INFLIGHT_P__NOP "\n"                                                           \
	".pushsection .note.stapsdt,\"?\",@note\n"                                              \
	".balign 4\n"                                                                          \
	".4byte 992f-991f, 994f-993f, 3\n"                                                     \
	"991: .asciz \"stapsdt\"\n"                                                            \
	"992: .balign 4\n"                                                                     \
	"993: .8byte 990b\n"                                                                   \
	".8byte _.stapsdt.base\n"                                                              \
	".8byte " INFLIGHT_P__LINK_STR(probe) "\n"                                             \
	".asciz \"" INFLIGHT_P__PROVIDER "\"\n"                                                \
	".asciz \"" #probe "\"\n"                                                              \
	".asciz \"" args "\"\n"                                                                \
	"994: .balign 4\n"                                                                     \
	".popsection\n"                                                                        \
	".pushsection .inflight.keep,\"aR?\",@progbits\n"                                       \
	".balign 4\n"                                                                          \
	".4byte 990b - .\n"                                                                    \
	".popsection\n" INFLIGHT_P__BASE_ASM

/* The probes themselves, unguarded: test INFLIGHT_ENABLED(probe) first. Operands are
 * registers or constants ("nr"): every consumer (libbpf, bpftrace, gdb) parses those. */
#define INFLIGHT_PROBE_BUF_ALLOC(buf, cls, bytes, owner)                                       \
	__asm__ __volatile__(INFLIGHT_P__SITE_ASM(buf_alloc, "8@%[a0] 4@%[a1] 8@%[a2] 8@%[a3]")  \
			     ::[a0] "nr"((uint64_t)(buf)), [a1] "nr"((uint32_t)(cls)),          \
			     [a2] "nr"((uint64_t)(bytes)), [a3] "nr"((uint64_t)(owner)))
#define INFLIGHT_PROBE_BUF_FREE(buf, cls, bytes)                                               \
	__asm__ __volatile__(INFLIGHT_P__SITE_ASM(buf_free, "8@%[a0] 4@%[a1] 8@%[a2]")           \
			     ::[a0] "nr"((uint64_t)(buf)), [a1] "nr"((uint32_t)(cls)),          \
			     [a2] "nr"((uint64_t)(bytes)))
#define INFLIGHT_PROBE_STAGE(owner, stage)                                                     \
	__asm__ __volatile__(INFLIGHT_P__SITE_ASM(stage, "8@%[a0] 4@%[a1]")                      \
			     ::[a0] "nr"((uint64_t)(owner)), [a1] "nr"((uint32_t)(stage)))

/* The contract's probes, each behind its semaphore. */
static inline void inflight_buf_alloc(uint64_t buf, uint32_t cls, uint64_t bytes, uint64_t owner)
{
	if (INFLIGHT_ENABLED(buf_alloc))
		INFLIGHT_PROBE_BUF_ALLOC(buf, cls, bytes, owner);
}

static inline void inflight_buf_free(uint64_t buf, uint32_t cls, uint64_t bytes)
{
	if (INFLIGHT_ENABLED(buf_free))
		INFLIGHT_PROBE_BUF_FREE(buf, cls, bytes);
}

static inline void inflight_stage(uint64_t owner, uint32_t stage)
{
	if (INFLIGHT_ENABLED(stage))
		INFLIGHT_PROBE_STAGE(owner, stage);
}

/* ---- INFLIGHT_CONTRACT: the semaphores, their page, and the names note ---- */

#ifdef __cplusplus
#define INFLIGHT_P__STATIC_ASSERT(e, msg) static_assert(e, msg)
#else
#define INFLIGHT_P__STATIC_ASSERT(e, msg) _Static_assert(e, msg)
#endif

/* both names of a semaphore: dtrace -G's, and the link name of the probes' references */
#define INFLIGHT_P__SEMA_DEF(probe)                                                            \
	".globl " INFLIGHT_P__LINK_STR(probe) "\n"                                             \
	".hidden " INFLIGHT_P__LINK_STR(probe) "\n"                                            \
	".type " INFLIGHT_P__LINK_STR(probe) ", @object\n"                                     \
	".size " INFLIGHT_P__LINK_STR(probe) ", 2\n"                                           \
	INFLIGHT_P__LINK_STR(probe) ":\n"                                                      \
	".globl " INFLIGHT_P__SEMA_STR(probe) "\n"                                             \
	".hidden " INFLIGHT_P__SEMA_STR(probe) "\n"                                            \
	".type " INFLIGHT_P__SEMA_STR(probe) ", @object\n"                                     \
	".size " INFLIGHT_P__SEMA_STR(probe) ", 2\n"                                           \
	INFLIGHT_P__SEMA_STR(probe) ": .2byte 0\n"
#define INFLIGHT_P__KEEP(sym) ".4byte " sym " - .\n"

/* The names note's text, one ".ascii" per line of the descriptor. */
#define INFLIGHT_P__CLASS_ASM(id, name) ".ascii \"class " #id " " #name "\\n\"\n"
#define INFLIGHT_P__STAGE_ASM(id, name, flag) ".ascii \"stage " #id " " #name " " #flag "\\n\"\n"
#define INFLIGHT_P__ID_BAD(id, ...) +((id) < 0 || (id) >= INFLIGHT_PROBES_MAX_ID)

/*
 * Semaphores: one page of their own in ".probes" (PROGBITS, so file-backed: the kernel finds
 * a semaphore by its file offset). Names note: ".note.inflight", allocated (strip keeps it),
 * owner "inflight", type "INF1", text "inflight-contract 1\nprovider P\nclass ...\nstage ...".
 * ".inflight.keep" (SHF_GNU_RETAIN) holds the semaphores and _.stapsdt.base against
 * --gc-sections; the names note is a note, which every linker keeps.
 */
#define INFLIGHT_CONTRACT(CLASSES, STAGES)                                                     \
	INFLIGHT_P__STATIC_ASSERT(0 CLASSES(INFLIGHT_P__ID_BAD) == 0, "class ids must be < 16");  \
	INFLIGHT_P__STATIC_ASSERT(0 STAGES(INFLIGHT_P__ID_BAD) == 0, "stage ids must be < 16");   \
	__asm__(".pushsection .probes,\"aw\",@progbits\n"                                      \
		".balign 4096\n"                                                               \
		INFLIGHT_P__SEMA_DEF(buf_alloc)                                                \
		INFLIGHT_P__SEMA_DEF(buf_free)                                                 \
		INFLIGHT_P__SEMA_DEF(stage)                                                    \
		".balign 4096\n"                                                               \
		".popsection\n"                                                                \
		INFLIGHT_P__BASE_ASM                                                           \
		".pushsection .inflight.keep,\"aR\",@progbits\n"                               \
		".balign 4\n"                                                                  \
		INFLIGHT_P__KEEP(INFLIGHT_P__SEMA_STR(buf_alloc))                              \
		INFLIGHT_P__KEEP(INFLIGHT_P__SEMA_STR(buf_free))                               \
		INFLIGHT_P__KEEP(INFLIGHT_P__SEMA_STR(stage))                                  \
		INFLIGHT_P__KEEP("_.stapsdt.base")                                             \
		".popsection\n"                                                                \
		".pushsection .note.inflight,\"a\",@note\n"                                    \
		".balign 4\n"                                                                  \
		".4byte 9, 2f - 1f, " INFLIGHT_P__NOTE_TYPE_ASM "\n"                           \
		".asciz \"inflight\"\n"                                                        \
		".balign 4\n"                                                                  \
		"1: .ascii \"inflight-contract "                                                \
		INFLIGHT_P__XSTR(INFLIGHT_PROBES_CONTRACT_VERSION) "\\n\"\n"                   \
		".ascii \"provider " INFLIGHT_P__PROVIDER "\\n\"\n"                             \
		CLASSES(INFLIGHT_P__CLASS_ASM)                                                 \
		STAGES(INFLIGHT_P__STAGE_ASM)                                                  \
		".byte 0\n"                                                                    \
		"2: .balign 4\n"                                                               \
		".popsection\n")

#endif /* INFLIGHT_PROBES_H */
