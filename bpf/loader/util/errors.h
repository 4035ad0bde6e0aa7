/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One error voice for the whole loader: "inflight: WHAT: WHY; HINT" on stderr, and named,
 * distinct exit codes (documented in --help and the README).
 */
#ifndef INFLIGHT_ERRORS_H
#define INFLIGHT_ERRORS_H

#include <stdio.h>

enum infl_exit {
	EXIT_OK_ = 0,
	EXIT_GENERIC = 1,      /* unexpected failure (errno text says what) */
	EXIT_USAGE = 2,	       /* bad command line: option, number, missing argument */
	EXIT_NOT_PRIV = 3,     /* lacks CAP_BPF / CAP_PERFMON (or root) */
	EXIT_NO_BTF = 4,       /* kernel has no BTF at /sys/kernel/btf/vmlinux */
	EXIT_NO_PROBES = 5,    /* binary does not carry the contract's probes */
	EXIT_NO_PID = 6,       /* no such process */
	EXIT_TARGET_EXITED = 7, /* the target exited before we could attach */
	EXIT_BAD_FILE = 8,     /* recording or input file unreadable, truncated or corrupt */
	EXIT_IO = 9,	       /* cannot write output */
	EXIT_BPF = 10,	       /* BPF load or attach failed for another reason */
	EXIT_LISTEN = 11,      /* exporter cannot bind its address */
	EXIT_NO_BINARY = 12,   /* no such binary / not an ELF file */
	EXIT_OLD_KERNEL = 13,  /* the kernel lacks a feature inflight needs (below Linux 5.8) */
	EXIT_SEMAPHORE = 14,   /* its semaphores cannot be raised where the program reads them */
};

/* Prints "inflight: <what>: <why>[; <hint>]" and returns `code` (for `return infl_err(...)`). */
int infl_err(int code, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, then exits with `code`. */
void infl_die(int code, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/* A one-line warning that does not end the run: "inflight: warning: ..." */
void infl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Replaces stdout with a stream that remembers why a write to it failed (main calls it
 * first); infl_output_errno(stdout) then says why, 0 when nothing failed. */
void infl_track_stdout(void);
int infl_output_errno(FILE *f);

/* Flushes `f` (named `name` in the message): 0 when everything was written; otherwise one
 * line with the real reason (ENOSPC, EIO, EPIPE...) and EXIT_IO. Call it before anything else
 * can touch errno. */
int infl_flush_output(FILE *f, const char *name);

/* Maps an errno from BPF load/attach to the exit code and hint a user needs. */
int infl_bpf_exit_code(int err, const char **hint);

/* An error of libbpf or the kernel (`err`: -errno) while doing `what`: one line, with the
 * exit code and hint infl_bpf_exit_code gives; returns that code. */
int infl_bpf_err(int err, const char *what);

#endif /* INFLIGHT_ERRORS_H */
