/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Running a command started under ptrace (stopped right after its exec) to the moment its
 * probes can be attached: its entry point. By then the dynamic loader has mapped the
 * libraries it needs and made the executable's RELRO read-only, so the kernel raises each
 * semaphore in the copy the program reads (docs/programs.md, finding 1: LLD and mold map the
 * page of RELRO's end and RW's start twice, and right after exec both copies are writable).
 * What runs before it is ld.so and the constructors of the shared libraries: a probe fired
 * there is not seen (the executable's own constructors run later, from __libc_start_main).
 */
#ifndef INFLIGHT_ATTACH_ENTRY_H
#define INFLIGHT_ATTACH_ENTRY_H

#include <sys/types.h>

/*
 * Runs the ptrace-stopped child `pid` until its first instruction at AT_ENTRY and stops it
 * there, as if it had never run past it (the breakpoint's byte restored, the instruction
 * pointer back on the entry). Signals it receives meanwhile are delivered. 0, -ECHILD when
 * it exited or was killed first (*status: its wait status), or -errno.
 */
int entry__run_to(pid_t pid, int *status);

#endif /* INFLIGHT_ATTACH_ENTRY_H */
