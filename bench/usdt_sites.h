/* SPDX-License-Identifier: BSD-2-Clause */
/* The USDT probe sites of one provider in an ELF file, as uprobe offsets (usdt_sites.c). */
#ifndef BENCH_USDT_SITES_H
#define BENCH_USDT_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct usdt_site {
	uint64_t off;	   /* file offset of the probe's nop: where the uprobe goes */
	uint64_t sema_off; /* file offset of its semaphore (the uprobe's ref_ctr_offset), or 0 */
	char name[64];	   /* the probe's name */
};

struct usdt_sites {
	struct usdt_site *sites;
	size_t n, cap;
};

/* 0, -ENOENT when the file has no site of the provider, or another -errno. */
int usdt_sites__read(const char *path, const char *provider, struct usdt_sites *s);
void usdt_sites__free(struct usdt_sites *s);

#endif /* BENCH_USDT_SITES_H */
