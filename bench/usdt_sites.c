// SPDX-License-Identifier: BSD-2-Clause
/*
 * The USDT probe sites of one provider in an ELF file, as uprobe file offsets: what libbpf's
 * USDT support computes before it attaches, done here so that the benchmark can attach the
 * same sites by any mechanism. Each .note.stapsdt note gives the site's address, the
 * semaphore's address and the .stapsdt.base address at link time (a prelinked file moved
 * its sites by the difference, as libbpf accounts for too); a loadable segment maps each
 * address to its file offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "usdt_sites.h"

#define NT_STAPSDT 3

/* The file offset of a virtual address, from the loadable segment that holds it. */
static int vaddr_to_off(Elf *elf, uint64_t addr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t strndx;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, strndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static int add_site(struct usdt_sites *s, const struct usdt_site *site)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct usdt_site *more = realloc(s->sites, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		s->sites = more;
		s->cap = cap;
	}
	s->sites[s->n++] = *site;
	return 0;
}

/* One note's descriptor: pc, base, semaphore (8 bytes each), provider, name, arguments. */
static int parse_note(Elf *elf, const char *desc, size_t len, uint64_t base_now,
		      const char *provider, struct usdt_sites *s)
{
	const char *prov = desc + 24, *name, *end = desc + len;
	struct usdt_site site = { 0 };
	uint64_t pc, base, sema;

	if (len < 24 + 3)
		return -EINVAL;
	memcpy(&pc, desc, 8);
	memcpy(&base, desc + 8, 8);
	memcpy(&sema, desc + 16, 8);
	name = memchr(prov, 0, end - prov);
	if (!name || ++name >= end || !memchr(name, 0, end - name))
		return -EINVAL;
	if (strcmp(prov, provider))
		return 0;
	if (base && base_now)
		pc += base_now - base;
	if (vaddr_to_off(elf, pc, &site.off) || (sema && vaddr_to_off(elf, sema, &site.sema_off)))
		return -EINVAL;
	snprintf(site.name, sizeof(site.name), "%s", name);
	return add_site(s, &site);
}

int usdt_sites__read(const char *path, const char *provider, struct usdt_sites *s)
{
	GElf_Shdr sh, base_sh;
	Elf_Data *data = NULL;
	uint64_t base_now = 0;
	Elf_Scn *scn;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;
	int fd, err = 0;
	Elf *elf;

	memset(s, 0, sizeof(*s));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	if (section_named(elf, ".stapsdt.base", &base_sh))
		base_now = base_sh.sh_addr;
	scn = section_named(elf, ".note.stapsdt", &sh);
	if (scn)
		data = elf_getdata(scn, NULL);
	while (data && !err && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_STAPSDT && nh.n_namesz == 8 &&
		    !memcmp((char *)data->d_buf + name_off, "stapsdt", 8))
			err = parse_note(elf, (char *)data->d_buf + desc_off, nh.n_descsz, base_now,
					 provider, s);
	}
	elf_end(elf);
	close(fd);
	if (!err && !s->n)
		err = -ENOENT;
	if (err)
		usdt_sites__free(s);
	return err;
}

void usdt_sites__free(struct usdt_sites *s)
{
	free(s->sites);
	memset(s, 0, sizeof(*s));
}
