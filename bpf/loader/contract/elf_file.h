/* SPDX-License-Identifier: BSD-2-Clause */
/* The one way the loader opens an ELF file (libelf, read-only, mapped). */
#ifndef INFLIGHT_CONTRACT_ELF_FILE_H
#define INFLIGHT_CONTRACT_ELF_FILE_H

#include <libelf.h>

struct elf_file {
	int fd;
	Elf *elf;
};

/* 0 with `ef` open (close it with elf_file__close), -ENOEXEC when `path` is not an ELF file,
 * -errno when it cannot be opened (-ENOENT: no such file). */
int elf_file__open(const char *path, struct elf_file *ef);
void elf_file__close(struct elf_file *ef);

#endif /* INFLIGHT_CONTRACT_ELF_FILE_H */
