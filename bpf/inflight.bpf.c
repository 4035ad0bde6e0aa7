// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * inflight's kernel side: the contract's three USDT probes aggregated per traced process into
 * counts and bytes per (class, stage), owners per stage, an exact high-water mark with its
 * full composition, stage dwell histograms and every anomaly counted. Optionally every event
 * goes to a ring buffer (record mode). RSS comes from the kmem:rss_stat tracepoint; fork,
 * exec and exit tracepoints follow each process's life (docs/production.md, "Processes").
 *
 * Concurrency: a process's threads hit probes at once, and a stage event moves an owner's
 * buffers between stages while another thread frees one of them, so all accounting of one
 * process happens under one lock in its infl_proc (proc_lock.bpf.h: its two forms, and why
 * the spin is short). A uprobe handler that cannot get it gives up and counts the event in
 * lock_timeouts, which marks the totals inexact. The tracepoint handlers never wait: the RSS
 * fields are written without the lock, and exit and exec run when no other thread of the
 * process is left to race with. Map element creation and deletion (helpers) happen outside
 * the lock.
 *
 * Every program exists twice, for the two lock forms (suffix _nocas: kernels without BPF
 * cmpxchg, before 5.12); the loader loads one set (attach/features.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "usdt_args.bpf.h"
#include "inflight.h"

#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif
#include "proc_lock.bpf.h"
#include "mm_rss.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* set by the loader before load */
/* from the names note or the command line; not read-only: a library loaded after the attach
 * (dlopen) brings the names note, and the loader sets them then (attach/libs.c) */
volatile __u16 entry_stage_mask = 0xffff;
volatile __u16 terminal_stage_mask = 0;
const volatile bool record_events = false;
const volatile __u32 page_shift = 12;	   /* log2 of the page size, from sysconf() */
const volatile bool traced_set = false;	   /* records come only from the loader (the target),
					    * fork (its children) and exec: a probe hit of any
					    * other process is ignored (attached binary-wide) */
const volatile bool follow_forks = false;  /* fork adds a traced process's children */
const volatile __u64 events_wake_bytes = 0; /* wake the recorder past this much unread data */

/* bytes of RSS change worth a recorded event */
#define RSS_EVENT_STEP (1 << 20)

/* events from processes that could not get a slot in `procs` (map full) */
__u64 procs_map_full = 0;
/* final records that found the control ring full: they stay in `procs` until swept */
__u64 ctl_full = 0;
/* set by the loader when tracing ends: probe hits after it are not accounted, so that the
 * final counters and the recorded events end at the same event */
__u32 stopped = 0;

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

/* processes refused a slot (procs full), so that the record they get later says so */
struct denied_key {
	__u32 pid;
	__u32 pad;
	__u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct denied_key);
	__type(value, __u64); /* events lost */
} denied SEC(".maps");

/* the binaries the loader attached to, and when: an image that began after is traced from
 * its first instruction (INFL_PROC_FROM_START) */
struct image_key {
	__u64 dev;
	__u64 ino;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct image_key);
	__type(value, __u64); /* attach time, ns */
} images SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* resized by the loader in record mode */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* ~70 final records in flight */
} ctl SEC(".maps");

/* templates for new map elements (too big for the 512-byte stack): a record made by a
 * tracepoint, where nothing can race with its filling, and one made by a probe hit, which
 * other threads may find before it is filled: it is born locked (LK_CAS; LK_MAP takes the
 * lock before the insert), and they wait for the lock like for any update */
static const struct infl_proc zero_proc;
static const struct infl_proc born_locked = { .lock = 1 };
static const struct infl_owner new_owner = { .slot = INFL_SLOT_NONE };

/* Clamp an index the verifier must see bounded even after clang spilled it to the stack;
 * the barrier keeps clang from dropping the mask it can prove redundant. */
#define BOUNDED(v, n) ({ barrier_var(v); (v) & ((n) - 1); })
/* The same for any n: older verifiers (6.1) lose a bound checked before clang spilled the
 * value and reloaded it, so the clamp sits where the index is used. */
#define CLAMPED(v, n) ({ __u32 __c = (v); barrier_var(__c); __c < (n) ? __c : (n) - 1; })

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

/* --- process records ------------------------------------------------------------------- */

/* Every counter of `mm`, as the record's starting point; later rss_stat events refine it. */
static __always_inline void rss_read_all(struct infl_proc *p, __u32 pid, const void *mm,
					 const enum rss_layout_kind rl)
{
	__u64 total = 0, key = (__u64)mm;

	for (int i = 0; i < INFL_RSS__COUNT; i++) {
		p->rss[i] = (__u64)mm_rss_pages(mm, i, rl) << page_shift;
		if (i != INFL_RSS_SWAP)
			total += p->rss[i];
	}
	p->rss_total = total;
	p->rss_mm = key;
	bpf_map_update_elem(&mm_pids, &key, &pid, BPF_ANY);
}

static __always_inline bool image_attached_before(struct task_struct *task, __u64 t)
{
	struct image_key k = {
		.dev = BPF_CORE_READ(task, mm, exe_file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino),
	};
	__u64 *at = bpf_map_lookup_elem(&images, &k);

	return at && *at < t;
}

/*
 * Fills a record just inserted for `task`, then publishes it: `gen` is stored last, and a
 * record with gen 0 is not ready (proc_wait_ready). Its maker is alone with it: made by a
 * tracepoint, no thread of the process runs yet; made by a probe hit, it holds the lock.
 */
static __always_inline void proc_init(struct infl_proc *p, struct task_struct *task, __u32 pid,
				      __u32 flags, __u32 ppid, __u64 now)
{
	struct denied_key dk = { .pid = pid };
	__u64 *lost;

	dk.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	p->start_ns = dk.start_ns;
	p->ppid = ppid;
	lost = bpf_map_lookup_elem(&denied, &dk);
	if (lost) {
		p->missed_events = *lost;
		bpf_map_delete_elem(&denied, &dk);
	}
	p->flags = flags;
	barrier();
	WRITE_ONCE(p->gen, now);
}

/* A process found no slot: count it globally, and remember it for the record it may get. */
static __always_inline void proc_denied(struct task_struct *task, __u32 pid)
{
	struct denied_key dk = { .pid = pid };
	__u64 one = 1, *lost;

	__sync_fetch_and_add(&procs_map_full, 1);
	dk.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	lost = bpf_map_lookup_elem(&denied, &dk);
	if (lost)
		__sync_fetch_and_add(lost, 1);
	else
		bpf_map_update_elem(&denied, &dk, &one, BPF_NOEXIST);
}

/* Inserts and fills the record of `pid` (from a tracepoint: fork, exec); NULL when the map
 * is full or the pid is taken. */
static __always_inline struct infl_proc *proc_create(__u32 pid, struct task_struct *task,
						     __u32 flags, __u32 ppid)
{
	struct infl_proc *p;

	if (bpf_map_update_elem(&procs, &pid, &zero_proc, BPF_NOEXIST))
		return NULL;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (p)
		proc_init(p, task, pid, flags, ppid, bpf_ktime_get_ns());
	return p;
}

/* A record another thread may still be filling: its creator holds the lock until it is. */
static __always_inline struct infl_proc *proc_wait_ready(struct infl_proc *p, __u32 pid,
							 const enum lock_kind lk)
{
	if (!p)
		return NULL;
	if (READ_ONCE(p->exited)) {
		/* an ended image whose record could not reach the loader yet: not this one's */
		proc_denied((struct task_struct *)bpf_get_current_task(), pid);
		return NULL;
	}
	if (READ_ONCE(p->gen))
		return p;
	if (!proc_spinlock(p, pid, lk)) {
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		return NULL;
	}
	proc_lock_release(p, pid, lk);
	return READ_ONCE(p->gen) ? p : NULL;
}

/* The first probe hit of a process that is not part of a traced set (-b) makes its record. */
static __always_inline struct infl_proc *proc_first_hit(__u32 pid, const enum lock_kind lk)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 flags = 0;
	struct infl_proc *p;
	int err;

	if (image_attached_before(task, BPF_CORE_READ(task, group_leader, start_time)))
		flags |= INFL_PROC_FROM_START;
	if (lk == LK_MAP && !lock_map_try(pid))
		return proc_wait_ready(bpf_map_lookup_elem(&procs, &pid), pid, lk);
	if (lk == LK_MAP)
		err = bpf_map_update_elem(&procs, &pid, &zero_proc, BPF_NOEXIST);
	else
		err = bpf_map_update_elem(&procs, &pid, &born_locked, BPF_NOEXIST);
	if (err) {
		/* EEXIST: another thread made it first; else the map is full */
		if (lk == LK_MAP)
			proc_lock_release(NULL, pid, lk);
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p)
			proc_denied(task, pid);
		return proc_wait_ready(p, pid, lk);
	}
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p) {
		if (lk == LK_MAP)
			proc_lock_release(NULL, pid, lk);
		return NULL;
	}
	proc_init(p, task, pid, flags, 0, bpf_ktime_get_ns());
	proc_lock_release(p, pid, lk);
	return p;
}

/* The record of the current process for a probe hit: its own, or (when it is not a traced
 * set's) a new one made on its first event. NULL: not traced, or no slot (counted). */
static __always_inline struct infl_proc *proc_current(__u32 *pidp, const enum lock_kind lk)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);

	*pidp = pid;
	if (READ_ONCE(stopped))
		return NULL;
	if (p && READ_ONCE(p->gen) && !READ_ONCE(p->exited)) {
		if (!p->start_ns) /* seeded by the loader: the rest comes from the task */
			p->start_ns = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(),
						    group_leader, start_time);
		return p;
	}
	if (p || traced_set)
		return proc_wait_ready(p, pid, lk);
	return proc_first_hit(pid, lk);
}

/* --- events ------------------------------------------------------------------------------ */

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

/*
 * How a recorded event is submitted: without waking the recorder, which reads the ring every
 * poll interval (a wake-up per event, an irq_work and a context switch, would cost more than
 * the event); past events_wake_bytes of unread data it is woken, so the ring never fills
 * while it sleeps.
 */
static __always_inline __u64 ring_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= events_wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * Under the lock: a recorded event's record, on the stack. It is copied into the ring after
 * the unlock (event_finish): no reservation is held across the lock, and none is tested for
 * NULL twice, which 6.1's verifier cannot follow ("Unreleased reference").
 */
static __always_inline void event_note(struct infl_event *ev, struct infl_proc *p, __u64 now,
				       __u8 type, __u8 id, __u8 flags, __u8 slot, __u64 a0, __u64 a1,
				       __u64 a2)
{
	if (record_events)
		event_fill(ev, p, now, type, id, flags, slot, a0, a1, a2);
}

/* After the unlock: the record into the ring, or its loss counted. */
static __always_inline void event_finish(struct infl_event *ev, struct infl_proc *p)
{
	if (record_events && bpf_ringbuf_output(&events, ev, sizeof(*ev), ring_flags()))
		__sync_fetch_and_add(&p->ring_drops, 1);
}

/* The one way into a locked section for a probe hit: the lock, or the event counted as not
 * accounted (lock_timeouts). */
static __always_inline bool lock_or_count(struct infl_proc *p, __u32 pid, const enum lock_kind lk)
{
	if (proc_spinlock(p, pid, lk)) {
		section_begin(p);
		return true;
	}
	__sync_fetch_and_add(&p->lock_timeouts, 1);
	return false;
}

static __always_inline void proc_unlock(struct infl_proc *p, __u32 pid, const enum lock_kind lk)
{
	section_end(p);
	proc_lock_release(p, pid, lk);
}

/* --- accounting (under the lock) --------------------------------------------------------- */

/* If this raised the total past the peak, capture the composition now. */
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
	cls = BOUNDED(cls, INFL_MAX_CLASSES);
	slot = CLAMPED(slot, INFL_SLOTS);
	p->cur[cls][slot].count++;
	p->cur[cls][slot].bytes += bytes;
	p->total_bufs++;
	p->total_bytes += bytes;
}

static __always_inline void cell_sub(struct infl_proc *p, __u32 cls, __u32 slot, __u64 bytes)
{
	if (cls >= INFL_MAX_CLASSES || slot >= INFL_SLOTS)
		return;
	cls = BOUNDED(cls, INFL_MAX_CLASSES);
	slot = CLAMPED(slot, INFL_SLOTS);
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

/* An owner in a terminal stage that holds nothing more is done. */
static __always_inline bool owner_retire(struct infl_proc *p, struct infl_owner *o)
{
	if (!is_terminal(o->slot) || !holds_nothing(o))
		return false;
	p->owners[o->slot & 0xf]--;
	p->owners_done++;
	return true;
}

/* An owner record not yet counted (just created, possibly by a thread that then timed out
 * on the lock) enters the no-stage slot: whoever holds the lock first counts it, once. */
static __always_inline void owner_admit(struct infl_proc *p, struct infl_owner *o, __u64 now)
{
	if (o->live)
		return;
	o->live = 1;
	o->slot = INFL_SLOT_NONE;
	o->entered_ns = now;
	p->owners[INFL_SLOT_NONE]++;
}

/* An owner's record, created (not yet counted: owner_admit) when first seen. */
static __always_inline struct infl_owner *owner_get(struct infl_owner_key *k)
{
	struct infl_owner *o = bpf_map_lookup_elem(&owners, k);

	if (o)
		return o;
	bpf_map_update_elem(&owners, k, &new_owner, BPF_NOEXIST); /* EEXIST: another thread */
	return bpf_map_lookup_elem(&owners, k);
}

/* --- the probes ---------------------------------------------------------------------------- */

/* An argument the fast path cannot read (a spec it does not know, a memory operand that
 * does not read) is counted (arg_errors), never dropped in silence. Every argument kind
 * libbpf's USDT specs have (constant, register, register + offset) is read here; a kind a
 * later libbpf adds lands in that counter until this learns it. */
static __always_inline bool probe_args(struct pt_regs *ctx, struct infl_proc *p, __u64 *a, int n)
{
	if (!usdt_args(ctx, a, n))
		return true;
	__sync_fetch_and_add(&p->arg_errors, 1);
	return false;
}

enum alloc_kind { AK_NEW, AK_DUP, AK_BAD_CLASS, AK_MAP_FULL };

static __always_inline int handle_alloc(struct pt_regs *ctx, const enum lock_kind lk)
{
	struct infl_buf_key bk = {};
	struct infl_owner_key ok = {};
	struct infl_owner *o = NULL, *old_o = NULL;
	struct infl_buf nb = {}, *old = NULL, prev = {};
	enum alloc_kind kind = AK_NEW;
	struct infl_event ev;
	struct infl_proc *p;
	__u64 a[4], buf, bytes, owner, now;
	__u32 pid, cls, slot, c;
	bool peaked;
	__u8 flags = 0;

	p = proc_current(&pid, lk);
	if (!p || !probe_args(ctx, p, a, 4))
		return 0;
	buf = a[0], cls = (__u32)a[1], bytes = a[2], owner = a[3];
	bk = (struct infl_buf_key){ .pid = pid, .gen = p->gen, .buf = buf };
	nb = (struct infl_buf){ .bytes = bytes, .owner = owner, .cls = cls };
	if (cls >= INFL_MAX_CLASSES) {
		kind = AK_BAD_CLASS;
		goto locked;
	}
	ok = (struct infl_owner_key){ .pid = pid, .gen = p->gen, .owner = owner };
	if (owner)
		o = owner_get(&ok);
	if (!o)
		nb.flags = INFL_BUF_UNSTAGED;
	/* the common case first: a new buffer is one insert, no lookup */
	if (bpf_map_update_elem(&bufs, &bk, &nb, BPF_NOEXIST)) {
		old = bpf_map_lookup_elem(&bufs, &bk);
		kind = old ? AK_DUP : AK_MAP_FULL;
		if (old) {
			prev = *old;
			if (!(prev.flags & INFL_BUF_UNSTAGED)) {
				struct infl_owner_key pk = { .pid = pid, .gen = p->gen,
							     .owner = prev.owner };

				old_o = bpf_map_lookup_elem(&owners, &pk);
			}
		}
	}
locked:
	if (!lock_or_count(p, pid, lk)) {
		/* a buffer in the map must be in the totals: take back what was not counted */
		if (kind == AK_NEW)
			bpf_map_delete_elem(&bufs, &bk);
		if (kind == AK_NEW || kind == AK_MAP_FULL)
			__sync_fetch_and_add(&p->untracked_allocs, 1);
		return 0;
	}
	now = account_event(p, INFL_PROBE_ALLOC, false);
	if (kind == AK_BAD_CLASS) {
		p->bad_class++;
		event_note(&ev, p, now, INFL_EV_ALLOC, cls, INFL_EVF_REJECTED, INFL_SLOT_NONE, buf,
			   bytes, owner);
		goto out;
	}
	if (kind == AK_MAP_FULL) {
		p->buf_map_full++;
		__sync_fetch_and_add(&p->untracked_allocs, 1); /* also counted without the lock */
		event_note(&ev, p, now, INFL_EV_ALLOC, cls, INFL_EVF_UNTRACKED, INFL_SLOT_NONE, buf,
			   bytes, owner);
		goto out;
	}
	if (owner && !o)
		p->owner_map_full++;
	if (kind == AK_DUP) {
		/* contract violation: alloc of a live buffer. The new record replaces the old. */
		p->dup_alloc++;
		if (old_o && prev.cls < INFL_MAX_CLASSES) {
			c = BOUNDED(prev.cls, INFL_MAX_CLASSES);
			old_o->held[c].count--;
			old_o->held[c].bytes -= prev.bytes;
		}
		cell_sub(p, prev.cls, old_o ? old_o->slot : INFL_SLOT_NONE, prev.bytes);
		if (old)
			*old = nb;
	}
	if (o)
		owner_admit(p, o, now);
	slot = o ? o->slot : INFL_SLOT_NONE;
	c = BOUNDED(cls, INFL_MAX_CLASSES);
	if (o) {
		o->held[c].count++;
		o->held[c].bytes += bytes;
	}
	cell_add(p, cls, slot, bytes);
	p->allocated[c].count++;
	p->allocated[c].bytes += bytes;
	peaked = peak_check(p, now);
	flags = (kind == AK_DUP ? INFL_EVF_DUP : 0) | (peaked ? INFL_EVF_NEW_PEAK : 0) |
		(owner && !o ? INFL_EVF_UNSTAGED : 0);
	event_note(&ev, p, now, INFL_EV_ALLOC, cls, flags, slot, buf, bytes, owner);
out:
	proc_unlock(p, pid, lk);
	event_finish(&ev, p);
	return 0;
}

/* Under the lock: a free of a buffer the map does not hold. Which kind it is decides where
 * it is counted; see docs/cli.md ("unmatched events"). Returns the event's flags. */
static __always_inline __u8 free_unmatched(struct infl_proc *p, __u32 cls, __u64 bytes)
{
	if (p->untracked_allocs > p->untracked_free) {
		p->untracked_free++; /* its alloc was dropped (map full, lock timeout) */
		return INFL_EVF_UNMATCHED | INFL_EVF_DROPPED;
	}
	if (p->flags & INFL_PROC_FROM_START) {
		p->double_free++; /* traced from its start: it never was live, or is no more */
		return INFL_EVF_UNMATCHED | INFL_EVF_DOUBLE;
	}
	cls = BOUNDED(cls, INFL_MAX_CLASSES); /* late attach: allocated before we were there */
	p->unmatched_free[cls].count++;
	p->unmatched_free[cls].bytes += bytes;
	return INFL_EVF_UNMATCHED;
}

static __always_inline int handle_free(struct pt_regs *ctx, const enum lock_kind lk)
{
	struct infl_buf_key bk = {};
	struct infl_owner_key ok = {};
	struct infl_owner *o = NULL;
	struct infl_buf *b, rec = {};
	struct infl_event ev;
	struct infl_proc *p;
	bool retired = false;
	__u64 a[4], buf, bytes, now;
	__u32 pid, cls, slot, c;
	__u8 flags;

	p = proc_current(&pid, lk);
	if (!p || !probe_args(ctx, p, a, 3))
		return 0;
	buf = a[0], cls = (__u32)a[1], bytes = a[2];
	bk = (struct infl_buf_key){ .pid = pid, .gen = p->gen, .buf = buf };
	b = bpf_map_lookup_elem(&bufs, &bk);
	if (b) {
		rec = *b;
		/* the delete decides who owns the free if two threads race on one buffer */
		if (bpf_map_delete_elem(&bufs, &bk))
			b = NULL;
	}
	if (b && !(rec.flags & INFL_BUF_UNSTAGED)) {
		ok = (struct infl_owner_key){ .pid = pid, .gen = p->gen, .owner = rec.owner };
		o = bpf_map_lookup_elem(&owners, &ok);
	}
	if (!lock_or_count(p, pid, lk))
		return 0;
	now = account_event(p, INFL_PROBE_FREE, false);
	if (!b) {
		if (cls >= INFL_MAX_CLASSES) {
			p->bad_class++;
			flags = INFL_EVF_REJECTED;
		} else {
			flags = free_unmatched(p, cls, bytes);
		}
		event_note(&ev, p, now, INFL_EV_FREE, cls, flags, INFL_SLOT_NONE, buf, bytes, 0);
		goto out;
	}
	/* the recorded class and size are authoritative: they are what was added, whatever
	 * the free says (a class id out of range is still counted as one) */
	if (cls >= INFL_MAX_CLASSES)
		p->bad_class++;
	slot = o ? o->slot : INFL_SLOT_NONE;
	c = BOUNDED(rec.cls, INFL_MAX_CLASSES);
	if (o && o->live) {
		o->held[c].count--;
		o->held[c].bytes -= rec.bytes;
		retired = owner_retire(p, o);
	}
	cell_sub(p, rec.cls, slot, rec.bytes);
	p->freed[c].count++;
	p->freed[c].bytes += rec.bytes;
	event_note(&ev, p, now, INFL_EV_FREE, rec.cls, 0, slot, buf, rec.bytes, rec.owner);
out:
	proc_unlock(p, pid, lk);
	event_finish(&ev, p);
	if (retired)
		bpf_map_delete_elem(&owners, &ok);
	return 0;
}

/* Under the lock: the time spent in stage `from`, into its histogram. */
static __always_inline void dwell_note(struct infl_proc *p, __u32 from, __u64 entered, __u64 now)
{
	__u32 f = BOUNDED(from, INFL_MAX_STAGES);
	__u64 us = (now - entered) / 1000;
	__u32 b = us ? log2_u64(us) : 0;

	if (b >= INFL_HIST_SLOTS)
		b = INFL_HIST_SLOTS - 1;
	b = BOUNDED(b, INFL_HIST_SLOTS);
	p->dwell_hist[f][b]++;
	p->dwell_sum_ns[f] += now - entered;
	p->dwell_count[f]++;
}

/* Under the lock: every buffer the owner holds moves from slot `from` to `stage`. */
static __always_inline void owner_move(struct infl_proc *p, struct infl_owner *o, __u32 from,
				       __u32 stage)
{
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
	p->owners[stage]++;
}

enum stage_kind { SK_MOVE, SK_BAD_STAGE, SK_OWNER0, SK_MAP_FULL };

static __always_inline int handle_stage(struct pt_regs *ctx, const enum lock_kind lk)
{
	struct infl_owner_key ok = {};
	enum stage_kind kind = SK_MOVE;
	struct infl_owner *o = NULL;
	struct infl_event ev;
	struct infl_proc *p;
	bool retired = false, unmatched = false;
	__u64 a[4], owner, now;
	__u32 pid, stage, from;
	__u8 flags;

	p = proc_current(&pid, lk);
	if (!p || !probe_args(ctx, p, a, 2))
		return 0;
	owner = a[0], stage = (__u32)a[1];
	if (stage >= INFL_MAX_STAGES) {
		kind = SK_BAD_STAGE;
	} else if (!owner) {
		kind = SK_OWNER0; /* owner 0 is "no owner": it has no stage to enter */
	} else {
		ok = (struct infl_owner_key){ .pid = pid, .gen = p->gen, .owner = owner };
		o = owner_get(&ok);
		if (!o)
			kind = SK_MAP_FULL;
	}
	if (!lock_or_count(p, pid, lk))
		return 0;
	now = account_event(p, INFL_PROBE_STAGE, true);
	if (kind != SK_MOVE || !o) {
		flags = INFL_EVF_REJECTED;
		if (kind == SK_BAD_STAGE) {
			p->bad_stage++;
		} else if (kind == SK_OWNER0) {
			p->stage_owner0++;
		} else {
			p->owner_map_full++;
			flags = INFL_EVF_UNTRACKED;
		}
		event_note(&ev, p, now, INFL_EV_STAGE, stage, flags, INFL_SLOT_NONE, owner, 0, 0);
		goto out;
	}
	stage = BOUNDED(stage, INFL_MAX_STAGES);
	owner_admit(p, o, now);
	from = o->slot;
	if (from >= INFL_MAX_STAGES) {
		/* its first stage: an entry stage starts it; any other means it began before we
		 * were there (late attach), however it was first seen (a stage or an alloc) */
		unmatched = !(entry_stage_mask & (1u << stage));
		if (unmatched)
			p->unmatched_stage[stage]++;
		else
			p->owners_started++;
	} else {
		dwell_note(p, from, o->entered_ns, now);
	}
	owner_move(p, o, from, stage);
	o->slot = stage;
	o->entered_ns = now;
	retired = owner_retire(p, o);
	event_note(&ev, p, now, INFL_EV_STAGE, stage, unmatched ? INFL_EVF_UNMATCHED : 0,
		   from < INFL_MAX_STAGES ? from : INFL_SLOT_NONE, owner, 0, 0);
out:
	proc_unlock(p, pid, lk);
	event_finish(&ev, p);
	if (retired)
		bpf_map_delete_elem(&owners, &ok);
	return 0;
}

SEC("usdt")
int on_buf_alloc(struct pt_regs *ctx)
{
	return handle_alloc(ctx, LK_CAS);
}

SEC("usdt")
int on_buf_free(struct pt_regs *ctx)
{
	return handle_free(ctx, LK_CAS);
}

SEC("usdt")
int on_stage(struct pt_regs *ctx)
{
	return handle_stage(ctx, LK_CAS);
}

SEC("usdt")
int on_buf_alloc_nocas(struct pt_regs *ctx)
{
	return handle_alloc(ctx, LK_MAP);
}

SEC("usdt")
int on_buf_free_nocas(struct pt_regs *ctx)
{
	return handle_free(ctx, LK_MAP);
}

SEC("usdt")
int on_stage_nocas(struct pt_regs *ctx)
{
	return handle_stage(ctx, LK_MAP);
}

/* --- RSS ----------------------------------------------------------------------------------- */

/*
 * Without the lock: RSS member `member` of the process is now `size` bytes. Each field is
 * one aligned store; two CPUs updating one process's RSS at once may leave rss_total a
 * moment behind one of them, never torn. The peak is a compare-and-swap maximum where the
 * kernel has cmpxchg; on 5.10 and 5.11 two simultaneous new peaks may keep the smaller.
 * Returns the new total.
 */
static __always_inline __u64 rss_update(struct infl_proc *p, __u32 member, long size, __u64 now,
					const enum lock_kind lk)
{
	__u64 total, peak;

	member = BOUNDED(member, INFL_RSS__COUNT);
	WRITE_ONCE(p->rss[member], size > 0 ? size : 0);
	total = READ_ONCE(p->rss[INFL_RSS_FILE]) + READ_ONCE(p->rss[INFL_RSS_ANON]) +
		READ_ONCE(p->rss[INFL_RSS_SHMEM]);
	WRITE_ONCE(p->rss_total, total);
	peak = READ_ONCE(p->rss_peak);
	if (total <= peak)
		return total;
	if (lk == LK_CAS) {
		for (int i = 0; i < 4 && total > peak; i++) {
			__u64 seen = __sync_val_compare_and_swap(&p->rss_peak, peak, total);

			if (seen == peak)
				break;
			peak = seen;
		}
		if (total <= peak)
			return total;
	} else {
		WRITE_ONCE(p->rss_peak, total);
	}
	WRITE_ONCE(p->rss_peak_ns, now);
	WRITE_ONCE(p->tracked_at_rss_peak, READ_ONCE(p->total_bytes));
	return total;
}

/*
 * Record mode: an RSS change of a step or more becomes an event. Its time and order are
 * taken under the lock, so that it sits between the accounting events around it in both;
 * the tracepoint never waits for the lock, though: when it is held, this change is not
 * recorded, and the next one (or the next snapshot) carries the value.
 */
static __always_inline void rss_emit(struct infl_proc *p, __u32 pid, __u64 total,
				     const enum lock_kind lk)
{
	struct infl_event *ev;
	__u64 last = READ_ONCE(p->rss_emitted), now, seq, tracked;

	if (total - last < RSS_EVENT_STEP && last - total < RSS_EVENT_STEP)
		return;
	if (!proc_trylock(p, pid, lk))
		return;
	section_begin(p);
	now = bpf_ktime_get_ns();
	seq = p->seq;
	tracked = p->tracked_at_rss_peak;
	p->rss_emitted = total;
	proc_unlock(p, pid, lk);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&p->ring_drops, 1);
		return;
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
	ev->arg0 = total;
	ev->arg1 = tracked;
	ev->arg2 = 0;
	bpf_ringbuf_submit(ev, ring_flags());
}

/* The traced process an rss_stat event is about, or NULL. The first event of an mm reads
 * all its counters: a record starts with no RSS until then (RSS exists only once a page
 * was faulted in, which is such an event). */
static __always_inline struct infl_proc *rss_proc(struct mm_struct *mm, __u32 *pidp,
						  const enum rss_layout_kind rl)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 mm_key = (__u64)mm;
	struct infl_proc *p;
	__u32 pid, *known;

	if ((__u64)BPF_CORE_READ(task, mm) == mm_key) {
		pid = bpf_get_current_pid_tgid() >> 32;
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p || !READ_ONCE(p->gen) || READ_ONCE(p->exited))
			return NULL;
		if (READ_ONCE(p->rss_mm) != mm_key) {
			/* first sight of this mm: every counter, then one per event */
			rss_read_all(p, pid, mm, rl);
		}
	} else {
		/* reclaim or exit acting on another task's mm */
		known = bpf_map_lookup_elem(&mm_pids, &mm_key);
		if (!known)
			return NULL;
		pid = *known;
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p || READ_ONCE(p->rss_mm) != mm_key || READ_ONCE(p->exited))
			return NULL;
	}
	*pidp = pid;
	return p;
}

/* tp_btf needs no tracefs; (mm, member) is the prototype since 6.2 and the first two
 * arguments of (mm, member, count) before it (upstream f1a7941243c1). The size is read as
 * the tracepoint itself computes it. */
static __always_inline int handle_rss(struct mm_struct *mm, int member, const enum lock_kind lk,
				      const enum rss_layout_kind rl)
{
	struct infl_proc *p;
	__u64 total;
	long pages;
	__u32 pid;

	if (member < 0 || member >= INFL_RSS__COUNT)
		return 0;
	p = rss_proc(mm, &pid, rl);
	if (!p)
		return 0;
	pages = mm_rss_pages(mm, member, rl);
	total = rss_update(p, member, pages << page_shift, bpf_ktime_get_ns(), lk);
	if (record_events)
		rss_emit(p, pid, total, lk);
	return 0;
}

/* one program per lock form and mm_struct layout; the loader loads one */
#define RSS_PROG(name, lk, rl)                                                                 \
	SEC("tp_btf/rss_stat")                                                                 \
	int BPF_PROG(name, struct mm_struct *mm, int member)                                   \
	{                                                                                      \
		return handle_rss(mm, member, lk, rl);                                         \
	}
RSS_PROG(on_rss_stat, LK_CAS, RL_PERCPU)
RSS_PROG(on_rss_stat_pre62, LK_CAS, RL_PRE62)
RSS_PROG(on_rss_stat_nocas, LK_MAP, RL_PERCPU)
RSS_PROG(on_rss_stat_nocas_pre62, LK_MAP, RL_PRE62)

/* --- the process's life --------------------------------------------------------------------- */

/*
 * An image ended (exit, or exec): it is no more than its final record. The record goes to
 * the loader through the control ring and leaves `procs`, so that a reused pid (or the new
 * image) starts afresh; what it left in `bufs` and `owners` is keyed by its gen, where no
 * later record of the pid will look, and the loader removes it. When the control ring is
 * full the record stays, marked exited, until the loader sweeps it (session.c).
 * No lock: no other thread of the image is left to race with.
 */
static __always_inline void image_end(struct infl_proc *p, __u32 pid, __u32 type, __u64 now)
{
	struct infl_event *ev;
	struct infl_ctl *c;
	__u64 mm = p->rss_mm;

	section_begin(p);
	p->exit_ns = now;
	p->exited = 1;
	if (type == INFL_CTL_EXEC)
		p->flags |= INFL_PROC_EXEC;
	section_end(p);
	if (mm)
		bpf_map_delete_elem(&mm_pids, &mm);
	if (p->seq && record_events) {
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
		if (ev) {
			event_fill(ev, p, now, INFL_EV_EXIT, 0, 0, INFL_SLOT_NONE,
				   p->total_bytes, p->total_bufs, 0);
			ev->pid = pid;
			bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
		} else {
			__sync_fetch_and_add(&p->ring_drops, 1);
		}
	}
	if (!p->seq && !p->arg_errors && !p->lock_timeouts && !p->missed_events) {
		/* it never hit a probe: nothing to report, nothing left behind */
		bpf_map_delete_elem(&procs, &pid);
		return;
	}
	c = bpf_ringbuf_reserve(&ctl, sizeof(*c), 0);
	if (!c) {
		__sync_fetch_and_add(&ctl_full, 1);
		return;
	}
	c->type = type;
	c->pid = pid;
	c->ts_ns = now;
	bpf_probe_read_kernel(&c->final, sizeof(c->final), p);
	bpf_ringbuf_submit(c, BPF_RB_FORCE_WAKEUP);
	bpf_map_delete_elem(&procs, &pid);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct infl_proc *p;

	/* the whole process is gone only when its last thread exits (live is decremented
	 * before the tracepoint fires, on every kernel since 2.6) */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p || READ_ONCE(p->exited))
		return 0;
	image_end(p, pid, INFL_CTL_EXIT, bpf_ktime_get_ns());
	return 0;
}

/*
 * exec replaced a traced process's image: the old one ends here, with whatever it still
 * held (gone with its address space, not leaked), and the pid stays traced as a new image:
 * the probes of a binary already attached fire from its first instruction; for another
 * binary the loader is told (INFL_CTL_EXEC) and attaches if it carries the contract.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_process_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = BPF_CORE_READ(task, tgid), flags = INFL_PROC_EXEC_BORN;
	struct image_key k = {
		.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
	};
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);
	__u64 now = bpf_ktime_get_ns();
	__u32 ppid;

	if (!p || READ_ONCE(p->exited))
		return 0;
	ppid = p->ppid;
	image_end(p, pid, INFL_CTL_EXEC, now);
	if (bpf_map_lookup_elem(&images, &k))
		flags |= INFL_PROC_FROM_START;
	if (!proc_create(pid, task, flags, ppid))
		proc_denied(task, pid);
	return 0;
}

/* fork: a child of a traced process is traced too (-- and -p, unless --no-follow). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), pid = BPF_CORE_READ(child, tgid);
	struct infl_proc *p;

	if (!follow_forks || pid == ppid) /* a new thread, not a new process */
		return 0;
	p = bpf_map_lookup_elem(&procs, &ppid);
	if (!p || READ_ONCE(p->exited))
		return 0;
	/* not "from its start": it begins with a copy of its parent's buffers, and a free of one
	 * of those is a free from before it was traced, not a double free */
	if (!proc_create(pid, child, INFL_PROC_FORKED, ppid))
		proc_denied(child, pid);
	return 0;
}

#include "oom.bpf.h" /* the OOM killer's victims: bpf/oom.bpf.h (its own map, reads procs) */
