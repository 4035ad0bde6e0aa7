// SPDX-License-Identifier: BSD-2-Clause
/* Reading a process's semaphores where it reads them (attach/sema.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "attach/sema.h"
#include "util/errors.h"
#include "util/procfs.h"

#define PAGE_MASK_ (~0xfffull)

/* /proc/PID/maps, with the key of the file `path` (to match its mappings with
 * proc_mapping_of). NULL with *err set to -errno. */
static FILE *maps_of_file(pid_t pid, const char *path, struct infl_image_key *file, int *err)
{
	FILE *f;

	*err = proc_image_key(path, file);
	if (*err)
		return NULL;
	f = proc_maps_open(pid);
	if (!f)
		*err = -errno;
	return f;
}

int sema__load_bias(pid_t pid, const char *path, const struct usdt_binary *b, __u64 *bias)
{
	struct infl_image_key file;
	struct proc_mapping m;
	int err;
	FILE *f = maps_of_file(pid, path, &file, &err);

	if (!f)
		return err;
	err = -ENOENT;
	/* mappings are in address order: the first of the file's base page is its lowest */
	while (proc_maps_next(f, &m)) {
		if (!proc_mapping_of(&m, &file) || m.offset != (b->base_off & PAGE_MASK_))
			continue;
		*bias = m.start - (b->base_vaddr & PAGE_MASK_);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int sema__read(pid_t pid, const char *path, const struct usdt_binary *b,
	       unsigned short vals[USDT_CONTRACT_PROBES], __u64 addrs[USDT_CONTRACT_PROBES])
{
	char mem[64];
	__u64 bias;
	int fd, err = sema__load_bias(pid, path, b, &bias);

	if (err)
		return err;
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		vals[i] = 0;
		addrs[i] = b->sema_vaddr[i] ? bias + b->sema_vaddr[i] : 0;
		if (addrs[i] && pread(fd, &vals[i], sizeof(vals[i]), (off_t)addrs[i]) !=
					sizeof(vals[i])) {
			err = errno ? -errno : -EIO;
			break;
		}
	}
	close(fd);
	return err;
}

#define INT3 0xcc

/* What the kernel holds for each probe in `pid`: one breakpoint per live site and private
 * mapping of the file that covers it and reads int3 there (how often it lowers the probe's
 * semaphore when the last tracer leaves), and where it raises and lowers that semaphore (the
 * first writable private mapping of the file that covers it, in address order; 0: none);
 * beside them, where the program reads it (0: no semaphore) and what it reads there. */
struct kernel_books {
	int breakpoints[USDT_CONTRACT_PROBES];
	__u64 counted_at[USDT_CONTRACT_PROBES];
	__u64 read_at[USDT_CONTRACT_PROBES];
	unsigned short value[USDT_CONTRACT_PROBES];
};

/* One walk of the process's mappings of the file, its memory read through `mem`. 0,
 * -ENOENT when it maps no such file, or -errno. */
static int read_books(pid_t pid, const char *path, const struct usdt_binary *b, int mem,
		      struct kernel_books *k)
{
	struct infl_image_key file;
	struct proc_mapping m;
	bool based = false;
	int err;
	FILE *f = maps_of_file(pid, path, &file, &err);

	memset(k, 0, sizeof(*k));
	if (!f)
		return err;
	while (proc_maps_next(f, &m)) {
		__u64 len = m.end - m.start;

		if (!proc_mapping_of(&m, &file))
			continue;
		/* the load bias as sema__load_bias finds it: the lowest mapping of the base page */
		for (int i = 0; !based && m.offset == (b->base_off & PAGE_MASK_) &&
				i < USDT_CONTRACT_PROBES; i++)
			if (b->sema_vaddr[i])
				k->read_at[i] = m.start - (b->base_vaddr & PAGE_MASK_) +
						b->sema_vaddr[i];
		based |= m.offset == (b->base_off & PAGE_MASK_);
		if (m.perms[3] != 'p')
			continue;
		for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
			if (m.perms[1] == 'w' && !k->counted_at[i] && b->sema_off[i] >= m.offset &&
			    b->sema_off[i] < m.offset + len)
				k->counted_at[i] = m.start + b->sema_off[i] - m.offset;
		for (size_t i = 0; i < b->nsites; i++) {
			const struct usdt_site *s = &b->sites[i];
			unsigned char op;

			if (s->fate != USDT_SITE_LIVE || s->sema_off != b->sema_off[s->probe] ||
			    s->off < m.offset || s->off >= m.offset + len)
				continue;
			if (pread(mem, &op, 1, (off_t)(m.start + s->off - m.offset)) == 1 &&
			    op == INT3)
				k->breakpoints[s->probe]++;
		}
	}
	fclose(f);
	for (int i = 0; based && i < USDT_CONTRACT_PROBES; i++)
		if (k->read_at[i] && pread(mem, &k->value[i], sizeof(k->value[i]),
					   (off_t)k->read_at[i]) != sizeof(k->value[i]))
			return errno ? -errno : -EIO;
	return based ? 0 : -ENOENT;
}

/* Short of its breakpoints where the program reads it, and counted there by the kernel (a
 * copy the kernel counts elsewhere, RELRO's while still writable, is not ours to touch: it
 * lowers whichever copy is writable when it detaches). */
static bool settle_wanted(const struct usdt_binary *b, const struct kernel_books *k, int i)
{
	return b->live[i] && k->read_at[i] && k->counted_at[i] == k->read_at[i] &&
	       k->value[i] < k->breakpoints[i];
}

int sema__settle(pid_t pid, const char *path, const struct usdt_binary *b,
		 struct sema_settled *out)
{
	struct kernel_books k;
	bool wanted = false;
	char mem[64];
	int fd, err;

	memset(out, 0, sizeof(*out));
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	err = read_books(pid, path, b, fd, &k);
	close(fd);
	for (int i = 0; !err && i < USDT_CONTRACT_PROBES; i++)
		wanted |= settle_wanted(b, &k, i);
	if (!wanted)
		return 0; /* the common case: nothing to write, no write access asked for */
	fd = open(mem, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		unsigned short want = (unsigned short)k.breakpoints[i], now = 0;
		off_t at = (off_t)k.read_at[i];

		if (!settle_wanted(b, &k, i))
			continue;
		/* read again right before the write: the window in which a tracer attaching
		 * at the same time could raise it too is two system calls wide */
		if (pread(fd, &now, sizeof(now), at) != sizeof(now) || now >= want)
			continue;
		if (pwrite(fd, &want, sizeof(want), at) != sizeof(want)) {
			err = errno ? -errno : -EIO;
			break;
		}
		out->from[i] = now;
		out->to[i] = want;
	}
	close(fd);
	return err;
}

int sema__check(pid_t pid, const char *path, const struct usdt_binary *b, struct sema_check *out)
{
	unsigned short v[USDT_CONTRACT_PROBES];
	__u64 addr[USDT_CONTRACT_PROBES];
	int err = sema__read(pid, path, b, v, addr);

	memset(out, 0, sizeof(*out));
	out->probe = -1;
	if (err)
		return err;
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++) {
		if (!b->live[i] || !addr[i])
			continue;
		out->checked++;
		if (v[i] || out->zero++)
			continue;
		out->probe = i;
		out->addr = addr[i];
	}
	return 0;
}

#define RELINK_HINT "relink with -z norelro or a page-aligned semaphore section, or use " \
		    "probes/inflight_probes.h (docs/attach.md)"

int sema__check_layout(const struct usdt_binary *b, const char *shown)
{
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		if (b->sema_shared[i] && b->live[i])
			return infl_err(EXIT_SEMAPHORE, RELINK_HINT,
					"%s: the semaphore of %s:%s shares its page with RELRO (an "
					"LLD or mold layout): in processes started after the attach "
					"the kernel raises it in a copy the program does not read, so "
					"-b cannot enable its probes (-p PID and -- CMD can)",
					shown, b->provider, usdt_contract[i].name);
	return 0;
}

void sema__settle_said(pid_t pid, const char *path, const char *shown,
		       const struct usdt_binary *b)
{
	struct sema_settled st;
	int err = sema__settle(pid, path, b, &st);

	if (err && err != -ENOENT && err != -ESRCH)
		infl_warn("%s: cannot raise its semaphores to the kernel's breakpoints in pid %d "
			  "(%s)", shown, pid, strerror(-err));
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		if (st.to[i])
			infl_warn("%s: pid %d: the semaphore of %s:%s read %u for the kernel's %u "
				  "breakpoints at its sites (left by a tracer that ended after the "
				  "process started%s); raised to %u, which the kernel takes back at "
				  "the detach", shown, pid, b->provider, usdt_contract[i].name,
				  st.from[i], st.to[i],
				  b->sema_shared[i] ? ": the kernel raised the other copy of its page "
						      "for it" : "",
				  st.to[i]);
}

int sema__verify(pid_t pid, const char *path, const char *shown, const struct usdt_binary *b)
{
	struct sema_check c;
	int err;

	sema__settle_said(pid, path, shown, b);
	err = sema__check(pid, path, b, &c);

	if (err == -ENOENT || err == -ESRCH)
		return 0; /* it exited already: nothing left to verify */
	if (err) {
		infl_warn("%s: cannot read its semaphores back (%s): not verified", shown,
			  strerror(-err));
		return 0;
	}
	if (!c.zero)
		return 0;
	if (b->sema_shared[c.probe])
		return infl_err(EXIT_SEMAPHORE, RELINK_HINT,
				"%s: the semaphore of %s:%s at 0x%llx reads 0 after the attach: it "
				"shares its page with RELRO (an LLD or mold layout) and the kernel "
				"raised the other copy%s",
				shown, b->provider, usdt_contract[c.probe].name,
				(unsigned long long)c.addr,
				b->interp ? "" : " (a static binary applies RELRO after its "
						 "entry point)");
	return infl_err(EXIT_SEMAPHORE, NULL,
			"%s: the semaphore of %s:%s at 0x%llx reads 0 after the attach: its probe "
			"would never fire", shown, b->provider,
			usdt_contract[c.probe].name, (unsigned long long)c.addr);
}
