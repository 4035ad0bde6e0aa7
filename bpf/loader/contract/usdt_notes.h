/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A binary's USDT probes as its ".note.stapsdt" notes describe them (provider, name, argument
 * string, probe site, semaphore), and whether it implements the inflight contract: provider
 * `prover` with buf_alloc (4 arguments), buf_free (3) and stage (2). libbpf reads the same
 * notes to attach; we read them first to say what is missing in words a user can act on.
 */
#ifndef INFLIGHT_USDT_NOTES_H
#define INFLIGHT_USDT_NOTES_H

#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"

#define USDT_CONTRACT_PROVIDER "prover"
#define USDT_CONTRACT_PROBES INFL_PROBE__COUNT

struct usdt_contract_probe {
	const char *name;
	int nargs;
};

/* The contract's probes in enum infl_probe order (INFL_PROBES in inflight.h). */
extern const struct usdt_contract_probe usdt_contract[USDT_CONTRACT_PROBES];

struct usdt_probe {
	char *provider; /* printable ASCII: other bytes become '?' */
	char *name;
	char *args;	/* e.g. "8@%rdi -4@%esi 8@%rdx 8@%rcx" */
	int nargs;	/* words in args */
	__u64 loc;	/* virtual address of the probe site (prelink-adjusted) */
	__u64 sema;	/* virtual address of its semaphore, 0 when it has none */
};

struct usdt_notes {
	size_t n;
	struct usdt_probe *probes; /* in note order */
};

/* Reads every stapsdt note of the ELF file at `path` into `out` (free it with
 * usdt_notes__free). Returns 0 (also when there are none), -ENOEXEC when the file is not an
 * ELF file, -EBADMSG when a note is malformed, or -errno (e.g. -ENOENT: no such file). */
int usdt_notes__read(const char *path, struct usdt_notes *out);
void usdt_notes__free(struct usdt_notes *un);

/* Sites of each contract probe in `un` (sites[i] for usdt_contract[i]); a site whose
 * argument count differs from the contract's is counted in bad_args[i] instead.
 * Returns 0 when every contract probe has a site and none is bad, -ENOENT when one is
 * missing, -EPROTO when all are there but some site has the wrong argument count. */
int usdt_notes__contract(const struct usdt_notes *un, int sites[USDT_CONTRACT_PROBES],
			 int bad_args[USDT_CONTRACT_PROBES]);

/* 0 when the binary at `path` carries prover:buf_alloc, prover:buf_free and prover:stage
 * with the contract's argument counts; -ENOENT when it is an ELF file without them, -EPROTO
 * when their argument counts are wrong, -ENOEXEC when not an ELF file, -errno otherwise. */
int usdt_notes__check_contract(const char *path);

#endif /* INFLIGHT_USDT_NOTES_H */
