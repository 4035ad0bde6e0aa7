// SPDX-License-Identifier: BSD-2-Clause
/* Reading a process's semaphores where it reads them (attach/sema.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "attach/sema.h"
#include "util/errors.h"
#include "util/procfs.h"

#define PAGE_MASK_ (~0xfffull)

int sema__load_bias(pid_t pid, const char *path, const struct usdt_binary *b, __u64 *bias)
{
	struct infl_image_key file;
	struct proc_mapping m;
	int err;
	FILE *f;

	err = proc_image_key(path, &file);
	if (err)
		return err;
	f = proc_maps_open(pid);
	if (!f)
		return -errno;
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

int sema__verify(pid_t pid, const char *path, const char *shown, const struct usdt_binary *b)
{
	struct sema_check c;
	int err = sema__check(pid, path, b, &c);

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
