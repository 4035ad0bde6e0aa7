// SPDX-License-Identifier: BSD-2-Clause
/*
 * The atomic form's buffer table on the loader's side (attach/buf_table.h). An ended image's
 * records are removed here, not in the kernel: no thread of the image runs any more, and a
 * walk of the whole table is the loader's time, not a probe hit's.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include "attach/buf_table.h"

__u32 buf_table__slots(__u32 max_bufs)
{
	__u64 n = INFL_BUF_WINDOW * 2;

	while (n < (__u64)INFL_BUF_SLOTS_PER_BUF * max_bufs)
		n <<= 1;
	return (__u32)n;
}

int buf_table__configure(struct inflight_bpf *skel, __u32 max_bufs, bool atomic)
{
	__u32 slots = atomic ? buf_table__slots(max_bufs) : 1;

	skel->rodata->buf_table_mask = atomic ? slots - 1 : 0;
	skel->rodata->buf_limit = max_bufs;
	return bpf_map__set_max_entries(skel->maps.buf_table, slots) ?:
	       bpf_map__set_max_entries(skel->maps.bufs, atomic ? 1 : max_bufs);
}

static size_t table_bytes(const struct inflight_bpf *skel)
{
	return (size_t)bpf_map__max_entries(skel->maps.buf_table) * sizeof(struct infl_buf_slot);
}

int buf_table__open(struct inflight_bpf *skel, void **mem)
{
	void *m = mmap(NULL, table_bytes(skel), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(skel->maps.buf_table), 0);

	*mem = NULL;
	if (m == MAP_FAILED)
		return -errno;
	*mem = m;
	return 0;
}

void buf_table__close(struct inflight_bpf *skel, void *mem)
{
	if (mem)
		munmap(mem, table_bytes(skel));
}

__u64 buf_table__forget(struct inflight_bpf *skel, void *mem, __u32 pid, __u64 gen)
{
	__u32 n = bpf_map__max_entries(skel->maps.buf_table);
	struct infl_buf_slot *slot = mem;
	__u64 removed = 0;

	if (!mem)
		return 0;
	for (__u32 i = 0; i < n; i++) {
		struct infl_buf_slot *s = &slot[i];
		__u64 st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

		if (INFL_BS_KIND(st) != INFL_BS_LIVE || s->key.pid != pid || s->key.gen != gen)
			continue;
		/* the kernel's own removal: a slot changed since its state was read is not its */
		if (__atomic_compare_exchange_n(&s->state, &st, INFL_BS_NEXT(st, INFL_BS_DEAD), false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			__atomic_fetch_sub(&skel->data_bufs_live->bufs_live, 1, __ATOMIC_SEQ_CST);
			removed++;
		}
	}
	return removed;
}

__u64 buf_table__live(const struct inflight_bpf *skel)
{
	return __atomic_load_n(&skel->data_bufs_live->bufs_live, __ATOMIC_RELAXED);
}
