/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A reference model of the contract's accounting, written apart from the BPF code, that the
 * tests feed the same probe sequence as the kernel and compare field by field.
 */
#ifndef INFLIGHT_TEST_MODEL_H
#define INFLIGHT_TEST_MODEL_H

#include <stdbool.h>
#include <linux/types.h>
#include "inflight.h"

struct model_buf {
	__u64 id, owner, bytes;
	__u32 cls;
	bool unstaged, live;
};

struct model_owner {
	__u64 id;
	__u32 slot;
	bool live;
	struct infl_cell held[INFL_MAX_CLASSES];
};

struct model {
	struct infl_proc st; /* expected kernel record (timestamps and RSS not modelled) */
	__u16 entry_mask, terminal_mask;
	bool from_start; /* traced from its first instruction: an unknown free is a double free */
	struct model_buf *bufs;
	size_t nbufs, capbufs;
	struct model_owner *owners;
	size_t nowners, capowners;
};

void model_init(struct model *m, __u16 entry_mask, __u16 terminal_mask);
/* The process was traced from its first instruction (--, -b on a later start, fork). */
void model_from_start(struct model *m);
void model_free_all(struct model *m);
void model_alloc(struct model *m, __u64 buf, __u32 cls, __u64 bytes, __u64 owner);
void model_free(struct model *m, __u64 buf, __u32 cls, __u64 bytes);
void model_stage(struct model *m, __u64 owner, __u32 stage);
/* applies one script line (probegen syntax); returns false for lines it does not know */
bool model_apply_line(struct model *m, const char *line);

#endif /* INFLIGHT_TEST_MODEL_H */
