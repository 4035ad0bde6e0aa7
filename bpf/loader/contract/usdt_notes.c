// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reads ".note.stapsdt" (systemtap's sys/sdt.h format, the one libbpf attaches by): each note
 * of owner "stapsdt", type 3, has a descriptor of three addresses (probe site, the
 * .stapsdt.base address at link time, semaphore; 4 or 8 bytes by ELF class) followed by
 * three NUL-terminated strings: provider, name, arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h> /* inflight.h uses the kernel's fixed-width types */
#include "inflight.h"
#include "contract/elf_file.h"
#include "contract/usdt_notes.h"

#define STAPSDT_OWNER "stapsdt"
#define STAPSDT_TYPE 3
#define MAX_PROBES 100000 /* a sanity bound against a hostile file */

const struct usdt_contract_probe usdt_contract[USDT_CONTRACT_PROBES] = {
#define CONTRACT_ROW(id, name, nargs) [INFL_PROBE_##id] = { #name, nargs },
	INFL_PROBES(CONTRACT_ROW)
#undef CONTRACT_ROW
};

/* A copy of a note string with anything unprintable replaced, for terminals and JSON. */
static char *printable_dup(const char *s, size_t len)
{
	char *d = malloc(len + 1);

	if (!d)
		return NULL;
	for (size_t i = 0; i < len; i++)
		d[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	d[len] = '\0';
	return d;
}

static int count_words(const char *s)
{
	int n = 0;

	for (; *s; s++)
		if (*s != ' ' && (s[1] == ' ' || s[1] == '\0'))
			n++;
	return n;
}

static __u64 read_addr(const unsigned char *p, int size, bool swap)
{
	__u64 v = 0;

	for (int i = 0; i < size; i++) {
		int shift = swap ? (size - 1 - i) * 8 : i * 8;

		v |= (__u64)p[i] << shift;
	}
	return v;
}

static int add_probe(struct usdt_notes *un, const unsigned char *desc, size_t len, int asize,
		     bool big_endian, __s64 delta)
{
	const char *str = (const char *)desc + 3 * asize, *end = (const char *)desc + len;
	const char *s[3];
	size_t sl[3];
	struct usdt_probe *p, *grown;

	if (len < 3u * asize + 3)
		return -EBADMSG;
	for (int i = 0; i < 3; i++) {
		const char *nul = memchr(str, '\0', end - str);

		if (!nul)
			return -EBADMSG;
		s[i] = str;
		sl[i] = nul - str;
		str = nul + 1;
	}
	if (sl[0] == 0 || sl[1] == 0)
		return -EBADMSG;
	if (un->n >= MAX_PROBES)
		return -E2BIG;
	grown = realloc(un->probes, (un->n + 1) * sizeof(*p));
	if (!grown)
		return -ENOMEM;
	un->probes = grown;
	p = &un->probes[un->n];
	memset(p, 0, sizeof(*p));
	p->provider = printable_dup(s[0], sl[0]);
	p->name = printable_dup(s[1], sl[1]);
	p->args = printable_dup(s[2], sl[2]);
	un->n++; /* counted before the check so that free releases a partial entry */
	if (!p->provider || !p->name || !p->args)
		return -ENOMEM;
	p->nargs = count_words(p->args);
	p->loc = read_addr(desc, asize, big_endian) + delta;
	p->sema = read_addr(desc + 2 * asize, asize, big_endian);
	if (p->sema)
		p->sema += delta;
	return 0;
}

/* Prelinking moves a library after its notes were written: the note records where
 * .stapsdt.base was, the section header where it is now; sites move by the difference. */
static __s64 prelink_delta(Elf *elf, size_t shstrndx, Elf_Data *data, size_t desc_off, int asize,
			bool big_endian)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".stapsdt.base")) {
			__u64 noted = read_addr((unsigned char *)data->d_buf + desc_off + asize,
						asize, big_endian);

			return (__s64)(sh.sh_addr - noted);
		}
	}
	return 0;
}

static int read_elf(Elf *elf, struct usdt_notes *un)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int asize;
	bool big;

	if (!gelf_getehdr(elf, &eh))
		return -EBADMSG;
	asize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0; /* no section headers: no notes to find (libbpf needs them too) */
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = NULL;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		while ((data = elf_getdata(scn, data))) {
			size_t off = 0, next, name_off, desc_off;
			GElf_Nhdr nh;
			__s64 delta = 0;
			bool have_delta = false;
			int err;

			while (off < data->d_size &&
			       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
				off = next;
				if (nh.n_type != STAPSDT_TYPE ||
				    nh.n_namesz != sizeof(STAPSDT_OWNER) ||
				    memcmp((char *)data->d_buf + name_off, STAPSDT_OWNER,
					   sizeof(STAPSDT_OWNER)))
					continue;
				if (nh.n_descsz < 3u * asize)
					return -EBADMSG;
				if (!have_delta) {
					delta = prelink_delta(elf, shstrndx, data, desc_off, asize, big);
					have_delta = true;
				}
				err = add_probe(un, (unsigned char *)data->d_buf + desc_off,
						nh.n_descsz, asize, big, delta);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

void usdt_notes__free(struct usdt_notes *un)
{
	for (size_t i = 0; i < un->n; i++) {
		free(un->probes[i].provider);
		free(un->probes[i].name);
		free(un->probes[i].args);
	}
	free(un->probes);
	un->probes = NULL;
	un->n = 0;
}

int usdt_notes__read(const char *path, struct usdt_notes *out)
{
	struct elf_file ef;
	int err;

	out->n = 0;
	out->probes = NULL;
	err = elf_file__open(path, &ef);
	if (err)
		return err;
	err = read_elf(ef.elf, out);
	elf_file__close(&ef);
	if (err)
		usdt_notes__free(out);
	return err;
}

int usdt_notes__contract(const struct usdt_notes *un, int sites[USDT_CONTRACT_PROBES],
			 int bad_args[USDT_CONTRACT_PROBES])
{
	bool missing = false, bad = false;

	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		sites[i] = bad_args[i] = 0;
	for (size_t k = 0; k < un->n; k++) {
		const struct usdt_probe *p = &un->probes[k];

		if (strcmp(p->provider, USDT_CONTRACT_PROVIDER))
			continue;
		for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
			if (strcmp(p->name, usdt_contract[i].name))
				continue;
			if (p->nargs == usdt_contract[i].nargs)
				sites[i]++;
			else
				bad_args[i]++;
		}
	}
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		if (bad_args[i])
			bad = true;
		else if (!sites[i])
			missing = true;
	}
	return missing ? -ENOENT : bad ? -EPROTO : 0;
}

int usdt_notes__check_contract(const char *path)
{
	struct usdt_notes un;
	int sites[USDT_CONTRACT_PROBES], bad[USDT_CONTRACT_PROBES];
	int err = usdt_notes__read(path, &un);

	if (err == -EBADMSG)
		return -ENOENT; /* unreadable notes: as good as none, for attaching */
	if (err)
		return err;
	err = usdt_notes__contract(&un, sites, bad);
	usdt_notes__free(&un);
	return err;
}
