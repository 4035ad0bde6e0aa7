/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Class and stage names of a traced program, read from its ELF note ".note.inflight"
 * (format: probes/inflight_note.h, probes/README.md). Numeric fallback ("cls3", "stage5").
 */
#ifndef INFLIGHT_NAMES_H
#define INFLIGHT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"

#define INFL_NAME_LEN 32

struct infl_names {
	int contract_version;		      /* 0 when the binary carries no note */
	char provider[INFL_NAME_LEN];
	char cls[INFL_MAX_CLASSES][INFL_NAME_LEN];   /* "" when not declared */
	char stage[INFL_MAX_STAGES][INFL_NAME_LEN];
	__u16 entry_mask;    /* bit s: stage s is an entry stage */
	__u16 terminal_mask; /* bit s: stage s ends its owner */
	__u16 cls_declared;  /* bit c: class c has a name */
	__u16 stage_declared;
};

/* Fills `n` from the ELF file at `path`. Returns 0, or -ENOENT (no note: numeric names),
 * -EBADMSG (malformed note), or another -errno (cannot open/read the ELF file). */
int names__from_elf(const char *path, struct infl_names *n);

/* Parses a note descriptor (the text itself); used by the ELF reader, recordings and fuzzing. */
int names__parse(const char *text, size_t len, struct infl_names *n);

/* Numeric defaults: no names declared, every stage an entry stage, no terminal stage. */
void names__init(struct infl_names *n);

/* Name of class `id` (INFL_CLS_CUDA_*: the tracer's own, never the program's) / stage slot `slot` (INFL_SLOT_NONE: "(none)"), never NULL. */
const char *names__cls(const struct infl_names *n, unsigned id);
const char *names__stage(const struct infl_names *n, unsigned slot);

#endif /* INFLIGHT_NAMES_H */
