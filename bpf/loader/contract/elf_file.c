// SPDX-License-Identifier: BSD-2-Clause
/* Opening ELF files. contract/elf_file.h */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "contract/elf_file.h"

int elf_file__open(const char *path, struct elf_file *ef)
{
	ef->elf = NULL;
	ef->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -errno;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		elf_file__close(ef);
		return -ENOEXEC;
	}
	return 0;
}

void elf_file__close(struct elf_file *ef)
{
	elf_end(ef->elf); /* NULL is fine */
	ef->elf = NULL;
	if (ef->fd >= 0)
		close(ef->fd);
	ef->fd = -1;
}
