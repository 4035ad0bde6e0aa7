// SPDX-License-Identifier: BSD-2-Clause
/*
 * Record mode's event rings (event_rings.h). Why a ring per CPU: with one ring every
 * recorded hit takes that ring's lock and writes its producer position, and two threads
 * firing flat out on two CPUs paid for it in every hit (docs/bench-notes.md). Why the merge:
 * the replay restores each process's seq order within a window (model/timeline_replay.h),
 * and draining the rings one after another would put a whole ring's worth of one CPU's
 * events ahead of another's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/event_rings.h"
#include "util/grow.h"

/* One ring's events of the current pass, copied out of the ring as they were read. */
struct ring_stage {
	struct event_rings *owner;
	struct infl_event *v;
	size_t n, cap, at; /* at: the next to hand on */
};

struct event_rings {
	struct ring_buffer *rb;
	int *fds; /* the rings, one per possible CPU (the outer map holds them too) */
	struct ring_stage *stage;
	int *heap; /* indexes of stages with events left, by their next event's time */
	int n;
	__u64 lost;
};

__u32 event_rings__ring_bytes(__u32 asked, int cpus, long page)
{
	__u64 share = (asked ? asked : EVENT_RINGS_DEFAULT_BYTES) / (__u64)(cpus > 0 ? cpus : 1);
	__u64 bytes = (__u64)page;

	while (bytes * 2 <= share)
		bytes *= 2;
	if (!asked && bytes < EVENT_RING_MIN_DEFAULT)
		bytes = EVENT_RING_MIN_DEFAULT;
	return (__u32)bytes;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct ring_stage *st = ctx;
	struct infl_event *v;

	if (size < sizeof(struct infl_event)) {
		st->owner->lost++;
		return 0;
	}
	v = grow_array(st->v, &st->cap, st->n, sizeof(*st->v));
	if (!v) {
		st->owner->lost++;
		return 0;
	}
	st->v = v;
	memcpy(&st->v[st->n++], data, sizeof(*st->v));
	return 0;
}

int event_rings__new(__u32 ring_bytes, struct event_rings **out)
{
	struct event_rings *r = calloc(1, sizeof(*r));
	int cpus = libbpf_num_possible_cpus();

	*out = NULL;
	if (!r)
		return -ENOMEM;
	if (cpus < 0) {
		free(r);
		return cpus;
	}
	r->fds = malloc((size_t)cpus * sizeof(*r->fds));
	r->stage = calloc((size_t)cpus, sizeof(*r->stage));
	r->heap = malloc((size_t)cpus * sizeof(*r->heap));
	if (!r->fds || !r->stage || !r->heap) {
		event_rings__free(r);
		return -ENOMEM;
	}
	while (r->n < cpus) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "infl_events", 0, 0, ring_bytes, NULL);

		if (fd < 0) {
			int err = -errno;

			event_rings__free(r);
			return err;
		}
		r->stage[r->n].owner = r;
		r->fds[r->n++] = fd;
	}
	*out = r;
	return 0;
}

int event_rings__template(const struct event_rings *r, struct bpf_map *outer)
{
	return bpf_map__set_max_entries(outer, (__u32)r->n) ?:
	       bpf_map__set_inner_map_fd(outer, r->fds[0]);
}

int event_rings__open(struct event_rings *r, struct bpf_map *outer)
{
	for (__u32 cpu = 0; cpu < (__u32)r->n; cpu++) {
		if (bpf_map_update_elem(bpf_map__fd(outer), &cpu, &r->fds[cpu], BPF_ANY))
			return -errno;
		if (!r->rb)
			r->rb = ring_buffer__new(r->fds[cpu], on_sample, &r->stage[cpu], NULL);
		else if (ring_buffer__add(r->rb, r->fds[cpu], on_sample, &r->stage[cpu]))
			return -errno;
		if (!r->rb)
			return -errno;
	}
	return 0;
}

int event_rings__epoll_fd(const struct event_rings *r)
{
	return ring_buffer__epoll_fd(r->rb);
}

static const struct infl_event *next_of(const struct event_rings *r, int i)
{
	const struct ring_stage *st = &r->stage[i];

	return &st->v[st->at];
}

/* heap[a] before heap[b]: the earlier next event; the lower CPU on a tie, for one order */
static int earlier(const struct event_rings *r, int a, int b)
{
	__u64 ta = next_of(r, r->heap[a])->ts_ns, tb = next_of(r, r->heap[b])->ts_ns;

	return ta != tb ? ta < tb : r->heap[a] < r->heap[b];
}

static void swap_at(int *heap, int a, int b)
{
	int t = heap[a];

	heap[a] = heap[b];
	heap[b] = t;
}

static void sift_down(struct event_rings *r, int len, int i)
{
	for (;;) {
		int c = 2 * i + 1;

		if (c >= len)
			return;
		if (c + 1 < len && earlier(r, c + 1, c))
			c++;
		if (!earlier(r, c, i))
			return;
		swap_at(r->heap, i, c);
		i = c;
	}
}

int event_rings__consume(struct event_rings *r, event_rings_fn fn, void *ctx)
{
	int got = ring_buffer__consume(r->rb), len = 0, err = 0;

	for (int i = 0; i < r->n; i++)
		if (r->stage[i].n)
			r->heap[len++] = i;
	for (int i = len / 2 - 1; i >= 0; i--)
		sift_down(r, len, i);
	while (len) {
		struct ring_stage *st = &r->stage[r->heap[0]];

		if (!err)
			err = fn(ctx, &st->v[st->at]);
		if (++st->at == st->n)
			r->heap[0] = r->heap[--len];
		sift_down(r, len, 0);
	}
	for (int i = 0; i < r->n; i++)
		r->stage[i].n = r->stage[i].at = 0;
	return err ? err : got;
}

__u64 event_rings__lost(const struct event_rings *r)
{
	return r ? r->lost : 0;
}

void event_rings__free(struct event_rings *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	for (int i = 0; i < r->n; i++) {
		close(r->fds[i]);
		free(r->stage[i].v);
	}
	free(r->fds);
	free(r->stage);
	free(r->heap);
	free(r);
}
