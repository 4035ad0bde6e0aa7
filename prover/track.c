// SPDX-License-Identifier: BSD-2-Clause
/* Tracked host memory: mmap'd, populated, reported through the probe contract. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "exit_codes.h"
#include "track.h"

static const char *const class_names[] = {
#define CLASS_NAME(id, name) [id] = #name,
	PROVER_CLASSES(CLASS_NAME)
#undef CLASS_NAME
};

void *track_alloc(enum prover_class cls, size_t bytes, uint64_t owner)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "prover: cannot allocate %zu bytes for a %s buffer: %s\n", bytes,
			class_names[cls], strerror(errno));
		exit(PROVER_EXIT_SYSTEM);
	}
	track_note_alloc(p, cls, bytes, owner);
	return p;
}

void track_free(void *buf, enum prover_class cls, size_t bytes)
{
	if (!buf)
		return;
	track_note_free(buf, cls, bytes);
	munmap(buf, bytes ? bytes : 1);
}
