// SPDX-License-Identifier: BSD-2-Clause
/*
 * A binary's USDT sites as inflight will attach them (contract/usdt_binary.h): the notes
 * (contract/usdt_notes.c), the names note's provider, the program headers (where each site
 * and semaphore lies in the file) and the symbol tables (RIP-relative arguments).
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/elf_file.h"
#include "contract/usdt_binary.h"
#include "contract/usdt_args.h"

#define PAGE 4096ull

struct segs {
	GElf_Phdr *ph;
	size_t n;
};

static int read_segs(Elf *elf, struct segs *s)
{
	size_t n;

	s->ph = NULL;
	s->n = 0;
	if (elf_getphdrnum(elf, &n))
		return -EBADMSG;
	s->ph = calloc(n ? n : 1, sizeof(*s->ph));
	if (!s->ph)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &s->ph[s->n]))
			s->n++;
	return 0;
}

/* The PT_LOAD whose file-backed part holds `vaddr`, or NULL. */
static const GElf_Phdr *load_of(const struct segs *s, __u64 vaddr)
{
	for (size_t i = 0; i < s->n; i++) {
		const GElf_Phdr *p = &s->ph[i];

		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr && vaddr < p->p_vaddr + p->p_filesz)
			return p;
	}
	return NULL;
}

/* Writable PT_LOADs whose file pages include the page of file offset `off`. */
static int writable_maps(const struct segs *s, __u64 off)
{
	__u64 page = off & ~(PAGE - 1);
	int n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const GElf_Phdr *p = &s->ph[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_W) && p->p_filesz &&
		    (p->p_offset & ~(PAGE - 1)) <= page && page < p->p_offset + p->p_filesz)
			n++;
	}
	return n;
}

/* --- symbols, for RIP-relative and absolute operands ------------------------------------ */

struct syms {
	Elf *elf;
};

/* Looks `name` up in one symbol table: 1 found, 0 not there, -EEXIST two different ones. */
static int sym_in(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, __u64 *addr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	int found = 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		const char *sn;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) == STT_TLS || GELF_ST_TYPE(sym.st_info) == STT_SECTION)
			continue;
		sn = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sn || strcmp(sn, name))
			continue;
		if (found && *addr != sym.st_value)
			return -EEXIST;
		*addr = sym.st_value;
		found = 1;
	}
	return found;
}

/* .symtab first (it has the local symbols), then .dynsym. */
static int sym_lookup(void *ctx, const char *name, __u64 *addr)
{
	struct syms *y = ctx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool tables = false;

	for (int pass = 0; pass < 2; pass++) {
		Elf64_Word want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		while ((scn = elf_nextscn(y->elf, scn))) {
			int r;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
				continue;
			tables = true;
			r = sym_in(y->elf, scn, &sh, name, addr);
			if (r)
				return r < 0 ? r : 0;
		}
	}
	return tables ? -ENOENT : -ENODATA;
}

/* True when the dynamic symbol table has `name` undefined: the file calls it. */
static bool imports(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Sym sym;
			const char *sn;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx != SHN_UNDEF)
				continue;
			sn = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sn && !strcmp(sn, name))
				return true;
		}
	}
	return false;
}

/* --- sites --------------------------------------------------------------------------------- */

static int contract_index(const struct usdt_probe *p)
{
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		if (!strcmp(p->name, usdt_contract[i].name))
			return i;
	return -1;
}

static void site_fill(struct usdt_binary *b, struct usdt_site *st, const struct segs *segs,
		      struct syms *y)
{
	const struct usdt_probe *p = st->note;
	const GElf_Phdr *code = load_of(segs, p->loc);
	char why[160];

	if (!code || !(code->p_flags & PF_X)) {
		st->fate = USDT_SITE_DEAD;
		snprintf(st->why, sizeof(st->why), "its address 0x%llx is in no executable segment "
			 "(a note of code the linker removed)", (unsigned long long)p->loc);
		b->dead[st->probe]++;
		return;
	}
	st->off = p->loc - code->p_vaddr + code->p_offset;
	if (usdt_args__parse(p->args, p->loc, b->e_type == ET_EXEC, sym_lookup, y, &st->spec, why,
			     sizeof(why))) {
		st->fate = USDT_SITE_BAD_ARGS;
		snprintf(st->why, sizeof(st->why), "%s", why);
		b->bad_args[st->probe]++;
		return;
	}
	b->live[st->probe]++;
}

/* The semaphore of a site: where it is in the file, and whether the kernel can raise it. */
static void sema_fill(struct usdt_binary *b, struct usdt_site *st, const struct segs *segs)
{
	const struct usdt_probe *p = st->note;
	const GElf_Phdr *data = p->sema ? load_of(segs, p->sema) : NULL;
	int i = st->probe;

	if (!p->sema) {
		b->no_sema[i]++;
		return;
	}
	if (!data) {
		b->sema_not_file[i]++;
		return;
	}
	st->sema_off = p->sema - data->p_vaddr + data->p_offset;
	if (!b->sema_vaddr[i]) {
		b->sema_vaddr[i] = p->sema;
		b->sema_off[i] = st->sema_off;
		b->sema_shared[i] = writable_maps(segs, st->sema_off) > 1;
	}
}

static int collect_sites(struct usdt_binary *b, Elf *elf)
{
	struct syms y = { .elf = elf };
	struct segs segs;
	int err = read_segs(elf, &segs);

	if (err)
		return err;
	b->sites = calloc(b->notes.n ? b->notes.n : 1, sizeof(*b->sites));
	if (!b->sites) {
		free(segs.ph);
		return -ENOMEM;
	}
	b->base_vaddr = ~0ull;
	for (size_t i = 0; i < segs.n; i++) {
		const GElf_Phdr *p = &segs.ph[i];

		b->interp |= p->p_type == PT_INTERP;
		if (p->p_type == PT_LOAD && p->p_vaddr < b->base_vaddr) {
			b->base_vaddr = p->p_vaddr;
			b->base_off = p->p_offset;
		}
	}
	for (size_t k = 0; k < b->notes.n; k++) {
		const struct usdt_probe *p = &b->notes.probes[k];
		struct usdt_site *st = &b->sites[b->nsites];
		int i = contract_index(p);

		if (i < 0 || strcmp(p->provider, b->provider))
			continue;
		if (p->nargs != usdt_contract[i].nargs) {
			b->wrong_nargs[i]++;
			continue;
		}
		st->note = p;
		st->probe = i;
		sema_fill(b, st, &segs);
		site_fill(b, st, &segs, &y);
		b->nsites++;
	}
	free(segs.ph);
	return 0;
}

/* A provider other than ours with all of the contract's probes, for the messages. */
static void find_other_provider(struct usdt_binary *b)
{
	for (size_t k = 0; k < b->notes.n; k++) {
		const struct usdt_probe *p = &b->notes.probes[k];
		int have = 0;

		if (!strcmp(p->provider, b->provider) || contract_index(p) < 0)
			continue;
		for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
			for (size_t j = 0; j < b->notes.n; j++)
				if (!strcmp(b->notes.probes[j].provider, p->provider) &&
				    !strcmp(b->notes.probes[j].name, usdt_contract[i].name)) {
					have++;
					break;
				}
		if (have == USDT_CONTRACT_PROBES) {
			snprintf(b->other_provider, sizeof(b->other_provider), "%s", p->provider);
			return;
		}
	}
}

static enum usdt_verdict judge(struct usdt_binary *b)
{
	bool missing = false, nargs = false, nosema = false, notfile = false, nolive = false;

	if (!b->elf64)
		return USDT_ELF32;
	if (!b->x86_64)
		return USDT_NOT_X86_64;
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		int sites = b->live[i] + b->dead[i] + b->bad_args[i];

		missing |= !sites && !b->wrong_nargs[i];
		nargs |= b->wrong_nargs[i] > 0;
		nosema |= b->no_sema[i] > 0;
		notfile |= b->sema_not_file[i] > 0;
		nolive |= sites && !b->live[i];
	}
	find_other_provider(b);
	if (missing && b->provider_declared && b->other_provider[0])
		return USDT_PROVIDER_MISMATCH;
	if (missing)
		return USDT_MISSING;
	if (nargs)
		return USDT_BAD_NARGS;
	if (nosema)
		return USDT_NO_SEMAPHORE;
	if (notfile)
		return USDT_SEMA_NOT_FILE;
	return nolive ? USDT_NO_LIVE_SITE : USDT_OK;
}

int usdt_binary__read(const char *path, struct usdt_binary *b)
{
	struct elf_file ef;
	GElf_Ehdr eh;
	int err;

	memset(b, 0, sizeof(*b));
	err = elf_file__open(path, &ef);
	if (err)
		return err;
	if (!gelf_getehdr(ef.elf, &eh)) {
		elf_file__close(&ef);
		return -ENOEXEC;
	}
	b->elf64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	b->x86_64 = eh.e_machine == EM_X86_64;
	b->e_type = eh.e_type;
	b->entry = eh.e_entry;
	err = usdt_notes__read(path, &b->notes);
	if (!err) {
		b->names_err = names__from_elf(path, &b->names);
		if (b->names_err)
			names__init(&b->names);
		b->provider_declared = !b->names_err && b->names.provider[0];
		snprintf(b->provider, sizeof(b->provider), "%s",
			 b->provider_declared ? b->names.provider : USDT_CONTRACT_PROVIDER);
		err = collect_sites(b, ef.elf);
		b->imports_dlopen = imports(ef.elf, "dlopen");
		for (const char *const *e = (const char *const[]){ "execve", "execv", "execvp",
				"execvpe", "execl", "execlp", "execle", "fexecve", "posix_spawn",
				"posix_spawnp", NULL }; *e && !b->imports_exec; e++)
			b->imports_exec = imports(ef.elf, *e);
	}
	elf_file__close(&ef);
	if (err) {
		usdt_binary__free(b);
		return err;
	}
	b->verdict = judge(b);
	return 0;
}

int usdt_binary__sym_offset(const char *path, const char *name, __u64 *off)
{
	struct elf_file ef;
	struct segs segs;
	struct syms y;
	const GElf_Phdr *p;
	__u64 addr;
	int err = elf_file__open(path, &ef);

	if (err)
		return err;
	y.elf = ef.elf;
	err = sym_lookup(&y, name, &addr);
	if (!err)
		err = read_segs(ef.elf, &segs);
	if (!err) {
		p = load_of(&segs, addr);
		if (p)
			*off = addr - p->p_vaddr + p->p_offset;
		else
			err = -ENOENT;
		free(segs.ph);
	}
	elf_file__close(&ef);
	return err == -ENODATA || err == -EEXIST ? -ENOENT : err;
}

bool usdt_binary__traceable(const char *path)
{
	struct usdt_binary b;
	bool ok;

	if (usdt_binary__read(path, &b))
		return false;
	ok = b.verdict == USDT_OK;
	usdt_binary__free(&b);
	return ok;
}

void usdt_binary__free(struct usdt_binary *b)
{
	usdt_notes__free(&b->notes);
	free(b->sites);
	b->sites = NULL;
	b->nsites = 0;
}

/* "prover:buf_free, prover:stage": the probes for which `pick` is true */
static void probe_list(const struct usdt_binary *b, const int *count, bool when_zero, char *buf,
		       size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		bool pick = when_zero ? !count[i] : count[i] > 0;

		if (pick && used < len)
			used += snprintf(buf + used, len - used, "%s%s:%s", used ? ", " : "",
					 b->provider, usdt_contract[i].name);
	}
}

static void why_missing(const struct usdt_binary *b, char *buf, size_t len, const char **hint)
{
	int present[USDT_CONTRACT_PROBES];
	char which[160];

	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		present[i] = b->live[i] + b->dead[i] + b->bad_args[i] + b->wrong_nargs[i];
	probe_list(b, present, true, which, sizeof(which));
	if (b->other_provider[0]) {
		snprintf(buf, len, "has no %s:buf_alloc/buf_free/stage USDT probes (its probes are "
			 "%s:*, and no names note declares provider %s)", b->provider,
			 b->other_provider, b->other_provider);
		*hint = "declare the provider in the names note (probes/README.md)";
		return;
	}
	if (!present[0] && !present[1] && !present[2])
		snprintf(buf, len, "has no %s:buf_alloc/buf_free/stage USDT probes", b->provider);
	else
		snprintf(buf, len, "no %s probe", which);
	*hint = "build it with the probe contract (probes/README.md); `inflight list` shows the "
		"probes it has";
}

void usdt_binary__why(const struct usdt_binary *b, char *buf, size_t len, const char **hint)
{
	char which[160];

	*hint = "see the probe contract in probes/README.md";
	switch (b->verdict) {
	case USDT_OK:
		snprintf(buf, len, "can be traced");
		return;
	case USDT_ELF32:
		snprintf(buf, len, "a 32-bit ELF file: inflight traces 64-bit x86 programs");
		*hint = "build it for x86-64";
		return;
	case USDT_NOT_X86_64:
		snprintf(buf, len, "not an x86-64 program: inflight reads x86-64 probe arguments");
		*hint = NULL;
		return;
	case USDT_PROVIDER_MISMATCH:
		snprintf(buf, len, "its names note declares provider %s, but its probes are %s:*",
			 b->provider, b->other_provider);
		*hint = "make the names note and the probes name one provider (probes/README.md)";
		return;
	case USDT_MISSING:
		why_missing(b, buf, len, hint);
		return;
	case USDT_BAD_NARGS:
		probe_list(b, b->wrong_nargs, false, which, sizeof(which));
		snprintf(buf, len, "its %s probes do not take the contract's arguments (%s: wrong "
			 "number of arguments)", b->provider, which);
		return;
	case USDT_NO_SEMAPHORE:
		probe_list(b, b->no_sema, false, which, sizeof(which));
		snprintf(buf, len, "%s without a semaphore: the contract needs an is-enabled "
			 "semaphore per probe", which);
		*hint = "define the probes with semaphores, e.g. with probes/inflight_probes.h";
		return;
	case USDT_SEMA_NOT_FILE:
		probe_list(b, b->sema_not_file, false, which, sizeof(which));
		snprintf(buf, len, "the semaphore of %s is not in the file's data: the kernel "
			 "cannot raise it", which);
		*hint = "put the semaphores in an initialized data section (probes/inflight_probes.h)";
		return;
	case USDT_NO_LIVE_SITE: {
		int none[USDT_CONTRACT_PROBES];

		for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
			none[i] = b->live[i] == 0;
		probe_list(b, none, false, which, sizeof(which));
		snprintf(buf, len, "%s: no site inflight can use (in removed code, or with "
			 "arguments it cannot read)", which);
		*hint = "`inflight list` shows each site and why it is skipped";
		return;
	}
	}
	snprintf(buf, len, "unknown verdict %d", b->verdict);
}

bool usdt_binary__sema_shared(const struct usdt_binary *b)
{
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		if (b->sema_shared[i])
			return true;
	return false;
}

int usdt_binary__skipped(const struct usdt_binary *b)
{
	int n = 0;

	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		n += b->dead[i] + b->bad_args[i];
	return n;
}
