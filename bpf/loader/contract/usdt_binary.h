/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What one ELF file offers inflight, decided once for `list` and for the attach alike: the
 * provider it is traced by (its names note's, default `prover`), every site of the contract's
 * probes with its file offsets and decoded arguments, which sites cannot be used and why
 * (a dead note of code --gc-sections removed, an argument inflight cannot read), where the
 * semaphores are, and whether the file can be traced at all (a verdict with its own words).
 */
#ifndef INFLIGHT_CONTRACT_USDT_BINARY_H
#define INFLIGHT_CONTRACT_USDT_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "usdt_spec.h"
#include "contract/names.h"
#include "contract/usdt_notes.h"

enum usdt_site_fate {
	USDT_SITE_LIVE = 0,
	USDT_SITE_DEAD,	    /* its address lies in no executable segment: removed code */
	USDT_SITE_BAD_ARGS, /* an argument inflight cannot read (why says which) */
};

struct usdt_site {
	const struct usdt_probe *note;
	int probe;		/* index in usdt_contract[] */
	enum usdt_site_fate fate;
	__u64 off;		/* file offset of the site: the uprobe's offset */
	__u64 sema_off;		/* file offset of its semaphore: the uprobe's ref_ctr_offset */
	struct infl_usdt_spec spec;
	char why[192];		/* DEAD, BAD_ARGS: why, in words */
};

/* Whether the file can be traced; USDT_OK when every contract probe has a live site. */
enum usdt_verdict {
	USDT_OK = 0,
	USDT_ELF32,		/* a 32-bit ELF file */
	USDT_NOT_X86_64,	/* another machine's code */
	USDT_PROVIDER_MISMATCH, /* the names note's provider has no probes; another has them */
	USDT_MISSING,		/* a contract probe has no site */
	USDT_BAD_NARGS,		/* a contract probe's sites take the wrong number of arguments */
	USDT_NO_SEMAPHORE,	/* a contract probe has no semaphore */
	USDT_SEMA_NOT_FILE,	/* a semaphore the kernel cannot raise: not in the file's data */
	USDT_NO_LIVE_SITE,	/* a contract probe has sites, none usable */
};

struct usdt_binary {
	struct usdt_notes notes;
	struct infl_names names;
	int names_err;		  /* names__from_elf's result: 0, -ENOENT (no note), -EBADMSG */
	char provider[INFL_NAME_LEN]; /* the provider traced */
	bool provider_declared;	  /* from the names note (else the default, prover) */
	bool elf64, x86_64;
	__u16 e_type;		  /* ET_EXEC, ET_DYN */
	bool interp;		  /* has PT_INTERP: ld.so relocates it (and applies RELRO) */
	__u64 entry;		  /* e_entry */
	bool imports_dlopen;	  /* calls dlopen(): may load a library carrying the contract */
	bool imports_exec;	  /* calls execve() and kin: may become a program carrying it */
	/* the first PT_LOAD (lowest address): where a mapping of the file tells the load bias */
	__u64 base_vaddr, base_off;
	struct usdt_site *sites;  /* the traced provider's contract probe sites, note order */
	size_t nsites;
	int live[USDT_CONTRACT_PROBES], dead[USDT_CONTRACT_PROBES];
	int bad_args[USDT_CONTRACT_PROBES], wrong_nargs[USDT_CONTRACT_PROBES];
	int no_sema[USDT_CONTRACT_PROBES], sema_not_file[USDT_CONTRACT_PROBES];
	/* the probe's semaphore (its first site's): link-time address, file offset, and whether
	 * its file page is mapped by more than one writable segment (LLD and mold put RELRO's
	 * end and RW's start in one page, mapped twice: the kernel may raise the wrong copy) */
	__u64 sema_vaddr[USDT_CONTRACT_PROBES], sema_off[USDT_CONTRACT_PROBES];
	bool sema_shared[USDT_CONTRACT_PROBES];
	char other_provider[INFL_NAME_LEN]; /* a provider that has the contract's probes, "" */
	enum usdt_verdict verdict;
};

/* Reads the file at `path`. 0 with `b` filled (the verdict says whether it can be traced;
 * free it with usdt_binary__free), -ENOEXEC when it is not an ELF file, -EBADMSG when its
 * notes are malformed, or -errno (-ENOENT: no such file). */
int usdt_binary__read(const char *path, struct usdt_binary *b);
void usdt_binary__free(struct usdt_binary *b);

/* The file offset of symbol `name` (its link-time address, through the PT_LOAD that holds
 * it): where a uprobe on it goes. 0, -ENOENT (no such symbol), or -errno. */
int usdt_binary__sym_offset(const char *path, const char *name, __u64 *off);

/* True when the file at `path` can be traced (USDT_OK), quietly. */
bool usdt_binary__traceable(const char *path);

/* The verdict as one message and a hint, for `inflight: PATH: MESSAGE; HINT`. */
void usdt_binary__why(const struct usdt_binary *b, char *buf, size_t len, const char **hint);

/* True when some semaphore shares its page with another writable segment (sema_shared). */
bool usdt_binary__sema_shared(const struct usdt_binary *b);

/* Sites skipped (dead or unreadable) over all contract probes. */
int usdt_binary__skipped(const struct usdt_binary *b);

#endif /* INFLIGHT_CONTRACT_USDT_BINARY_H */
