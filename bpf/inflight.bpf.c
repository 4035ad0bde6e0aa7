// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * inflight's kernel side: the contract's three USDT probes aggregated per traced process into
 * counts and bytes per (class, stage), owners per stage, an exact high-water mark with its
 * full composition, stage dwell histograms and every anomaly counted. Optionally every event
 * goes to a ring buffer (record mode). RSS comes from the kmem:rss_stat tracepoint.
 *
 * Concurrency: a process's threads hit probes at once, and a stage event moves an owner's
 * buffers between stages while another thread frees one of them, so all accounting of one
 * process happens under one lock in its infl_proc. bpf_spin_lock is refused in tracing
 * programs ("tracing progs cannot use bpf_spin_lock yet", still so on 6.18; so is
 * bpf_res_spin_lock), hence a cmpxchg lock with a bounded spin: an update that cannot get it
 * is skipped and counted in lock_timeouts, which marks the totals inexact. Critical sections
 * call no helpers and are short; uprobe handlers do not sleep.
 * Map element creation and deletion (helpers) happen outside the lock.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "usdt_args.bpf.h"
#include "inflight.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* set by the loader before load, from the traced binary's names note */
const volatile __u16 entry_stage_mask = 0xffff;
const volatile __u16 terminal_stage_mask = 0;
const volatile bool record_events = false;
const volatile __u32 page_shift = 12; /* log2 of the page size, from sysconf() */

/* bytes of RSS change worth a recorded event */
#define RSS_EVENT_STEP (1 << 20)

/* events from processes that could not get a slot in `procs` (map full) */
__u64 procs_map_full = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_DEFAULT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct infl_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_DEFAULT_MAX_BUFS);
	__type(key, struct infl_buf_key);
	__type(value, struct infl_buf);
} bufs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_DEFAULT_MAX_OWNERS);
	__type(key, struct infl_owner_key);
	__type(value, struct infl_owner);
} owners SEC(".maps");

/* kmem:rss_stat names an mm; remember which process it belongs to */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64); /* struct mm_struct address */
	__type(value, __u32);
} mm_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* resized by the loader in record mode */
} events SEC(".maps");

/* zeroed templates for new map elements (too big for the 512-byte stack) */
static const struct infl_proc zero_proc;
static const struct infl_owner zero_owner;

/*
 * How long a contended update spins before it gives up (and counts a lock_timeout). The
 * holder's critical section is well under a microsecond, but on a VM its vCPU can be
 * descheduled by the host while it holds the lock: 4096 spins (~50 us) timed out a few
 * times per million events with two threads here; 2^20 spins (~10 ms) has not.
 */
#define LOCK_SPINS (1 << 20)

/* Clamp an index the verifier must see bounded even after clang spilled it to the stack;
 * the barrier keeps clang from dropping the mask it can prove redundant. */
#define BOUNDED(v, n) ({ barrier_var(v); (v) & ((n) - 1); })

struct lock_try {
	struct infl_proc *p;
	int locked;
};

static int lock_try_once(__u32 i, void *ctx)
{
	struct lock_try *t = ctx;

	if (!t->p)
		return 1;
	if (__sync_val_compare_and_swap(&t->p->lock, 0, 1) == 0) {
		t->locked = 1;
		return 1; /* stop */
	}
	return 0;
}

/* bpf_loop (5.17+) keeps verification O(1) in the spin count: an open-coded loop made
 * every program take ~0.2 s to verify, too slow for a 100 ms attach. */
static __always_inline bool proc_lock(struct infl_proc *p)
{
	struct lock_try t = { .p = p };

	if (__sync_val_compare_and_swap(&p->lock, 0, 1) != 0) {
		bpf_loop(LOCK_SPINS, lock_try_once, &t, 0); /* contended */
		if (!t.locked)
			return false;
	}
	p->write_begin++;
	barrier(); /* write_begin is stored before any field of the section */
	return true;
}

static __always_inline void proc_unlock(struct infl_proc *p)
{
	barrier();
	p->write_end = p->write_begin;
	__sync_lock_test_and_set(&p->lock, 0); /* xchg: a full barrier on every JIT */
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffff) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline void read_rss(struct infl_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	long pages, total = 0;

	for (int i = 0; i < INFL_RSS__COUNT; i++) {
		pages = BPF_CORE_READ(task, mm, rss_stat[i].count);
		if (pages < 0)
			pages = 0;
		p->rss[i] = (__u64)pages << page_shift;
		if (i != INFL_RSS_SWAP)
			total += pages;
	}
	p->rss_total = (__u64)total << page_shift;
}

/* The state of process `pid`, created on its first event. */
static __always_inline struct infl_proc *proc_get(__u32 pid)
{
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);

	if (p)
		return p;
	/* EEXIST when another thread created it first: fine, look it up again */
	bpf_map_update_elem(&procs, &pid, &zero_proc, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p) {
		__sync_fetch_and_add(&procs_map_full, 1);
		return NULL;
	}
	/* RSS so far, refined by kmem:rss_stat from now on; racy only against itself */
	if (!p->first_ns)
		read_rss(p);
	return p;
}

/* An owner's record, created (in no stage) when first seen. *created tells which. */
static __always_inline struct infl_owner *owner_get(__u32 pid, __u64 owner, bool *created)
{
	struct infl_owner_key k = { .pid = pid, .owner = owner };
	struct infl_owner *o = bpf_map_lookup_elem(&owners, &k);

	*created = false;
	if (o)
		return o;
	if (bpf_map_update_elem(&owners, &k, &zero_owner, BPF_NOEXIST) == 0)
		*created = true;
	return bpf_map_lookup_elem(&owners, &k);
}

static __always_inline struct infl_event *event_reserve(void)
{
	if (!record_events)
		return NULL;
	return bpf_ringbuf_reserve(&events, sizeof(struct infl_event), 0);
}

/*
 * Under the lock: count the event and give it its order. The clock is read only when
 * something needs it (stage dwell, a recorded event, a new peak, the first event): it is
 * the costliest helper on this path, and most allocs and frees need no time at all.
 * Returns the time, or 0 when it was not read.
 */
static __always_inline __u64 account_event(struct infl_proc *p, int probe, bool timed)
{
	__u64 now = 0;

	p->seq++;
	if (timed || record_events || !p->first_ns) {
		now = bpf_ktime_get_ns();
		if (!p->first_ns)
			p->first_ns = now;
		p->last_ns = now;
	}
	if (probe >= 0 && probe < INFL_PROBE__COUNT)
		p->events[probe]++;
	return now;
}

static __always_inline void event_fill(struct infl_event *ev, struct infl_proc *p, __u64 now,
				       __u8 type, __u8 id, __u8 flags, __u8 slot, __u64 a0, __u64 a1,
				       __u64 a2)
{
	__u64 id_tgid = bpf_get_current_pid_tgid();

	ev->ts_ns = now;
	ev->seq = p->seq;
	ev->pid = id_tgid >> 32;
	ev->tid = (__u32)id_tgid;
	ev->type = type;
	ev->id = id;
	ev->flags = flags;
	ev->from_slot = slot;
	ev->pad = 0;
	ev->arg0 = a0;
	ev->arg1 = a1;
	ev->arg2 = a2;
}

/* After the unlock: submit, or count the drop (the reservation failed earlier). */
static __always_inline void event_finish(struct infl_event *ev)
{
	if (ev)
		bpf_ringbuf_submit(ev, 0);
}

/* Under the lock: if this raised the total past the peak, capture the composition now. */
static __always_inline bool peak_check(struct infl_proc *p, __u64 now)
{
	if (p->total_bytes <= p->peak_bytes)
		return false;
	if (!now) {
		now = bpf_ktime_get_ns();
		p->last_ns = now;
	}
	p->peak_bytes = p->total_bytes;
	p->peak_bufs = p->total_bufs;
	p->peak_ns = now;
	p->peak_seq = p->seq;
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++)
			p->peak[c][s] = p->cur[c][s];
	for (int s = 0; s < INFL_SLOTS; s++)
		p->peak_owners[s] = p->owners[s];
	return true;
}

static __always_inline void cell_add(struct infl_proc *p, __u32 cls, __u32 slot, __u64 bytes)
{
	if (cls >= INFL_MAX_CLASSES || slot >= INFL_SLOTS)
		return;
	p->cur[cls][slot].count++;
	p->cur[cls][slot].bytes += bytes;
	p->total_bufs++;
	p->total_bytes += bytes;
}

static __always_inline void cell_sub(struct infl_proc *p, __u32 cls, __u32 slot, __u64 bytes)
{
	if (cls >= INFL_MAX_CLASSES || slot >= INFL_SLOTS)
		return;
	p->cur[cls][slot].count--;
	p->cur[cls][slot].bytes -= bytes;
	p->total_bufs--;
	p->total_bytes -= bytes;
}

static __always_inline bool is_terminal(__u32 slot)
{
	return slot < INFL_MAX_STAGES && (terminal_stage_mask & (1u << slot));
}

static __always_inline bool holds_nothing(const struct infl_owner *o)
{
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (o->held[c].count)
			return false;
	return true;
}

/* Under the lock: an owner in a terminal stage that holds nothing more is done. */
static __always_inline bool owner_retire(struct infl_proc *p, struct infl_owner *o)
{
	if (!is_terminal(o->slot) || !holds_nothing(o))
		return false;
	p->owners[o->slot & 0xf]--;
	p->owners_done++;
	return true;
}

/* Events that change nothing but a counter: rejected ids, untracked, unmatched. */
static __always_inline void count_only(struct infl_proc *p, int probe, __u64 *counter,
				       struct infl_event *ev, __u8 type, __u8 id, __u8 flags,
				       __u64 a0, __u64 a1, __u64 a2)
{
	__u64 now;

	if (!proc_lock(p)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		if (ev)
			bpf_ringbuf_discard(ev, 0);
		return;
	}
	now = account_event(p, probe, false);
	if (counter)
		(*counter)++;
	if (ev)
		event_fill(ev, p, now, type, id, flags, INFL_SLOT_NONE, a0, a1, a2);
	else if (record_events)
		p->ring_drops++;
	proc_unlock(p);
	event_finish(ev);
}

static __always_inline int handle_alloc(__u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_buf_key bk = { .pid = pid, .buf = buf };
	struct infl_buf nb = { .bytes = bytes, .owner = owner, .cls = cls };
	struct infl_owner *o = NULL, *old_o = NULL;
	struct infl_buf *old, prev = {};
	struct infl_proc *p;
	struct infl_event *ev;
	bool created = false, dup = false, peaked;
	__u64 now;
	__u32 slot;

	p = proc_get(pid);
	if (!p)
		return 0;
	ev = event_reserve();
	if (cls >= INFL_MAX_CLASSES) {
		count_only(p, INFL_PROBE_ALLOC, &p->bad_class, ev, INFL_EV_ALLOC, cls,
			   INFL_EVF_REJECTED, buf, bytes, owner);
		return 0;
	}
	if (owner)
		o = owner_get(pid, owner, &created);
	if (!o)
		nb.flags = INFL_BUF_UNSTAGED;

	/* the common case first: a new buffer is one insert, no lookup */
	if (bpf_map_update_elem(&bufs, &bk, &nb, BPF_NOEXIST)) {
		old = bpf_map_lookup_elem(&bufs, &bk);
		if (!old) {
			count_only(p, INFL_PROBE_ALLOC, &p->buf_map_full, ev, INFL_EV_ALLOC, cls,
				   INFL_EVF_UNTRACKED, buf, bytes, owner);
			return 0;
		}
		/* contract violation: alloc of a live buffer. Replace the old record. */
		dup = true;
		prev = *old;
		if (!(prev.flags & INFL_BUF_UNSTAGED)) {
			struct infl_owner_key ok = { .pid = pid, .owner = prev.owner };

			old_o = bpf_map_lookup_elem(&owners, &ok);
		}
		*old = nb;
	}

	if (!proc_lock(p)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		if (ev)
			bpf_ringbuf_discard(ev, 0);
		return 0;
	}
	now = account_event(p, INFL_PROBE_ALLOC, false);
	if (owner && !o)
		p->owner_map_full++;
	if (dup) {
		__u32 old_slot = old_o ? old_o->slot : INFL_SLOT_NONE;

		p->dup_alloc++;
		if (old_o && prev.cls < INFL_MAX_CLASSES) {
			__u32 c = BOUNDED(prev.cls, INFL_MAX_CLASSES);

			old_o->held[c].count--;
			old_o->held[c].bytes -= prev.bytes;
		}
		cell_sub(p, prev.cls, old_slot, prev.bytes);
	}
	if (created && o) {
		/* an owner seen first through a buffer: it has no stage until its first event */
		o->slot = INFL_SLOT_NONE;
		o->entered_ns = now;
		p->owners[INFL_SLOT_NONE]++;
	}
	slot = o ? o->slot : INFL_SLOT_NONE;
	if (o) {
		__u32 c = BOUNDED(cls, INFL_MAX_CLASSES);

		o->held[c].count++;
		o->held[c].bytes += bytes;
	}
	cell_add(p, cls, slot, bytes);
	peaked = peak_check(p, now);
	if (ev)
		event_fill(ev, p, now, INFL_EV_ALLOC, cls,
			   (dup ? INFL_EVF_DUP : 0) | (peaked ? INFL_EVF_NEW_PEAK : 0) |
				   (owner && !o ? INFL_EVF_UNSTAGED : 0),
			   slot, buf, bytes, owner);
	else if (record_events)
		p->ring_drops++;
	proc_unlock(p);
	event_finish(ev);
	return 0;
}

static __always_inline int handle_free(__u64 buf, __u32 cls, __u64 bytes)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_buf_key bk = { .pid = pid, .buf = buf };
	struct infl_owner_key ok = { .pid = pid };
	struct infl_owner *o = NULL;
	struct infl_buf *b, rec;
	struct infl_proc *p;
	struct infl_event *ev;
	bool retired = false;
	__u64 now;
	__u32 slot, c;

	p = proc_get(pid);
	if (!p)
		return 0;
	ev = event_reserve();
	if (cls >= INFL_MAX_CLASSES) {
		count_only(p, INFL_PROBE_FREE, &p->bad_class, ev, INFL_EV_FREE, cls,
			   INFL_EVF_REJECTED, buf, bytes, 0);
		return 0;
	}
	b = bpf_map_lookup_elem(&bufs, &bk);
	if (b) {
		rec = *b;
		/* the delete decides who owns the free if two threads race on one buffer */
		if (bpf_map_delete_elem(&bufs, &bk))
			b = NULL;
	}
	if (!b) {
		/* a buffer allocated before we attached: count it, never go negative */
		if (!proc_lock(p)) {
			__sync_fetch_and_add(&p->lock_timeouts, 1);
			if (ev)
				bpf_ringbuf_discard(ev, 0);
			return 0;
		}
		now = account_event(p, INFL_PROBE_FREE, false);
		c = BOUNDED(cls, INFL_MAX_CLASSES);
		p->unmatched_free[c].count++;
		p->unmatched_free[c].bytes += bytes;
		if (ev)
			event_fill(ev, p, now, INFL_EV_FREE, cls, INFL_EVF_UNMATCHED,
				   INFL_SLOT_NONE, buf, bytes, 0);
		else if (record_events)
			p->ring_drops++;
		proc_unlock(p);
		event_finish(ev);
		return 0;
	}
	if (!(rec.flags & INFL_BUF_UNSTAGED)) {
		ok.owner = rec.owner;
		o = bpf_map_lookup_elem(&owners, &ok);
	}

	if (!proc_lock(p)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		if (ev)
			bpf_ringbuf_discard(ev, 0);
		return 0;
	}
	now = account_event(p, INFL_PROBE_FREE, false);
	slot = o ? o->slot : INFL_SLOT_NONE;
	/* the recorded class and size are authoritative: they are what was added */
	if (o && rec.cls < INFL_MAX_CLASSES) {
		c = BOUNDED(rec.cls, INFL_MAX_CLASSES);
		o->held[c].count--;
		o->held[c].bytes -= rec.bytes;
		retired = owner_retire(p, o);
	}
	cell_sub(p, rec.cls, slot, rec.bytes);
	if (ev)
		event_fill(ev, p, now, INFL_EV_FREE, rec.cls, 0, slot, buf, rec.bytes, rec.owner);
	else if (record_events)
		p->ring_drops++;
	proc_unlock(p);
	event_finish(ev);
	if (retired)
		bpf_map_delete_elem(&owners, &ok);
	return 0;
}

static __always_inline int handle_stage(__u64 owner, __u32 stage)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_owner_key ok = { .pid = pid, .owner = owner };
	struct infl_owner *o;
	struct infl_proc *p;
	struct infl_event *ev;
	bool created, retired = false;
	__u32 from;
	__u64 now;

	p = proc_get(pid);
	if (!p)
		return 0;
	ev = event_reserve();
	if (stage >= INFL_MAX_STAGES) {
		count_only(p, INFL_PROBE_STAGE, &p->bad_stage, ev, INFL_EV_STAGE, stage,
			   INFL_EVF_REJECTED, owner, 0, 0);
		return 0;
	}
	o = owner_get(pid, owner, &created);
	if (!o) {
		count_only(p, INFL_PROBE_STAGE, &p->owner_map_full, ev, INFL_EV_STAGE, stage,
			   INFL_EVF_UNTRACKED, owner, 0, 0);
		return 0;
	}

	if (!proc_lock(p)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		if (ev)
			bpf_ringbuf_discard(ev, 0);
		return 0;
	}
	now = account_event(p, INFL_PROBE_STAGE, true);
	stage = BOUNDED(stage, INFL_MAX_STAGES);
	if (created) {
		o->slot = INFL_SLOT_NONE;
		p->owners[INFL_SLOT_NONE]++;
		if (entry_stage_mask & (1u << stage))
			p->owners_started++;
		else
			p->unmatched_stage[stage]++; /* born before we attached */
	}
	from = o->slot;
	if (from < INFL_MAX_STAGES) {
		__u32 f = BOUNDED(from, INFL_MAX_STAGES);
		__u64 us = (now - o->entered_ns) / 1000;
		__u32 b = us ? log2_u64(us) : 0;

		if (b >= INFL_HIST_SLOTS)
			b = INFL_HIST_SLOTS - 1;
		b = BOUNDED(b, INFL_HIST_SLOTS);
		p->dwell_hist[f][b]++;
		p->dwell_sum_ns[f] += now - o->entered_ns;
		p->dwell_count[f]++;
	}
	if (from < INFL_SLOTS) {
		from = from < INFL_MAX_STAGES ? BOUNDED(from, INFL_MAX_STAGES) : INFL_SLOT_NONE;
		for (int c = 0; c < INFL_MAX_CLASSES; c++) {
			struct infl_cell h = o->held[c];

			if (!h.count)
				continue;
			p->cur[c][from].count -= h.count;
			p->cur[c][from].bytes -= h.bytes;
			p->cur[c][stage].count += h.count;
			p->cur[c][stage].bytes += h.bytes;
		}
		p->owners[from]--;
	}
	p->owners[stage]++;
	o->slot = stage;
	o->entered_ns = now;
	retired = owner_retire(p, o);
	if (ev)
		event_fill(ev, p, now, INFL_EV_STAGE, stage,
			   created && !(entry_stage_mask & (1u << stage)) ? INFL_EVF_UNMATCHED : 0,
			   from, owner, 0, 0);
	else if (record_events)
		p->ring_drops++;
	proc_unlock(p);
	event_finish(ev);
	if (retired)
		bpf_map_delete_elem(&owners, &ok);
	return 0;
}

SEC("usdt")
int on_buf_alloc(struct pt_regs *ctx)
{
	__u64 a[4];

	if (usdt_args(ctx, a, 4))
		return 0;
	return handle_alloc(a[0], (__u32)a[1], a[2], a[3]);
}

SEC("usdt")
int on_buf_free(struct pt_regs *ctx)
{
	__u64 a[4];

	if (usdt_args(ctx, a, 3))
		return 0;
	return handle_free(a[0], (__u32)a[1], a[2]);
}

SEC("usdt")
int on_stage(struct pt_regs *ctx)
{
	__u64 a[4];

	if (usdt_args(ctx, a, 2))
		return 0;
	return handle_stage(a[0], (__u32)a[1]);
}

/* Under the lock: the process's RSS changed; keep the peak and maybe tell the recorder. */
static __always_inline bool rss_update(struct infl_proc *p, __u32 member, long size, __u64 now)
{
	__u64 total, last;

	if (member >= INFL_RSS__COUNT)
		return false;
	member = BOUNDED(member, INFL_RSS__COUNT);
	p->rss[member] = size > 0 ? size : 0;
	total = p->rss[INFL_RSS_FILE] + p->rss[INFL_RSS_ANON] + p->rss[INFL_RSS_SHMEM];
	p->rss_total = total;
	if (total > p->rss_peak) {
		p->rss_peak = total;
		p->rss_peak_ns = now;
		p->tracked_at_rss_peak = p->total_bytes;
	}
	last = p->rss_emitted;
	if (total - last < RSS_EVENT_STEP && last - total < RSS_EVENT_STEP)
		return false;
	p->rss_emitted = total;
	return true;
}

/* tp_btf needs no tracefs; (mm, member) is the prototype since 6.2 and the first two
 * arguments before it. The size is read as the tracepoint itself computes it. */
SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 mm_key = (__u64)mm, now, seq, rss, tracked;
	struct infl_event *ev = NULL;
	struct infl_proc *p;
	__u32 pid, *known;
	long size;
	bool emit;

	if (member < 0 || member >= INFL_RSS__COUNT)
		return 0;
	if ((__u64)BPF_CORE_READ(task, mm) == mm_key) {
		pid = bpf_get_current_pid_tgid() >> 32;
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p)
			return 0;
		known = bpf_map_lookup_elem(&mm_pids, &mm_key);
		if (!known || *known != pid)
			bpf_map_update_elem(&mm_pids, &mm_key, &pid, BPF_ANY);
	} else {
		/* reclaim or exit acting on another task's mm */
		known = bpf_map_lookup_elem(&mm_pids, &mm_key);
		if (!known)
			return 0;
		pid = *known;
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p)
			return 0;
	}
	size = BPF_CORE_READ(mm, rss_stat[member & 3].count) << page_shift;
	if (!proc_lock(p)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		return 0;
	}
	/* time and order taken under the lock: a recorded RSS event then sits between the
	 * accounting events around it in both time and seq */
	now = bpf_ktime_get_ns();
	emit = rss_update(p, member, size, now) && record_events;
	seq = p->seq;
	rss = p->rss_total;
	tracked = p->tracked_at_rss_peak;
	proc_unlock(p);
	if (!emit)
		return 0;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&p->ring_drops, 1);
		return 0;
	}
	/* not an accounting event: seq is the accounting order it follows */
	ev->ts_ns = now;
	ev->seq = seq;
	ev->pid = pid;
	ev->tid = (__u32)bpf_get_current_pid_tgid();
	ev->type = INFL_EV_RSS;
	ev->id = 0;
	ev->flags = 0;
	ev->from_slot = INFL_SLOT_NONE;
	ev->pad = 0;
	ev->arg0 = rss;
	ev->arg1 = tracked;
	ev->arg2 = 0;
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_proc *p;
	struct infl_event *ev;
	__u64 now;

	/* the whole process is gone only when its last thread exits (live is decremented
	 * before the tracepoint fires, on every kernel since 2.6) */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p)
		return 0;
	ev = event_reserve();
	if (!proc_lock(p)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		if (ev)
			bpf_ringbuf_discard(ev, 0);
		return 0;
	}
	now = bpf_ktime_get_ns();
	p->exited = 1;
	p->exit_ns = now;
	if (ev)
		event_fill(ev, p, now, INFL_EV_EXIT, 0, 0, INFL_SLOT_NONE, p->total_bytes,
			   p->total_bufs, 0);
	else if (record_events)
		p->ring_drops++;
	proc_unlock(p);
	event_finish(ev);
	return 0;
}

#include "oom.bpf.h" /* the OOM killer's victims: bpf/oom.bpf.h (its own map, reads procs) */
