// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * inflight's kernel side: the contract's three USDT probes aggregated per traced process into
 * counts and bytes per (class, stage), owners per stage, an exact high-water mark with its
 * full composition, stage dwell histograms and every anomaly counted. Optionally every event
 * goes to a ring buffer (record mode). RSS comes from the kmem:rss_stat tracepoint; fork,
 * exec and exit tracepoints follow each process's life (docs/production.md, "Processes").
 *
 * Concurrency: a process's threads hit probes at once, and a stage event moves an owner's
 * buffers between stages while another thread frees one of them. Each hit's accounting is
 * acct.bpf.h's steps, whose protocol is stated there once: a place in the process's order by
 * one fetch-and-add, counts by atomic adds, an owner's buffers in held words that carry their
 * slot. Two forms, one set of programs each, the loader loads one (attach/programs.c, from
 * attach/features.c's answers):
 *   - the atomic form (kernels with BPF atomics and bpf_loop, 5.17+): no lock; no hit waits
 *     for another, and none is given up for contention;
 *   - the locked form (suffix _nocas; before 5.17, where BPF has no atomic that returns a
 *     value): the same steps as plain loads and stores under one lock per process
 *     (proc_lock.bpf.h), a hit that finds it held queued for its holder in a BPF queue map
 *     ("the locked form's queue" below), and given up (lock_timeouts, the totals marked
 *     inexact) only when that queue stays full.
 * The tracepoint handlers never wait: the RSS fields are written by aligned stores, and exit
 * and exec run when no other thread of the process is left to race with.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "inflight.h"
#include "once.bpf.h"
#include "acct.bpf.h"
#include "hit.bpf.h"
#include "owners.bpf.h"
#include "maps.bpf.h"
#include "mm_rss.bpf.h"
#include "oom.bpf.h"
#include "oom.h"
#include "proc_lock.bpf.h"
#include "usdt_args.bpf.h"

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
const volatile __u64 events_wake_bytes = 0; /* wake the recorder at each multiple of this
					     * much unread data (ring_flags) */
const volatile bool defer_all = false;	   /* tests, the locked form: every probe hit goes
					    * through the queue, as if the lock were always held */

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

/* processes refused a slot (procs full), so that the record they get later says so; the
 * same layout as struct infl_ident_key, whose place proc_init reuses */
struct denied_key {
	__u32 pid;
	__u32 pad;
	__u64 start_ns;
};
_Static_assert(sizeof(struct denied_key) == sizeof(struct infl_ident_key) &&
		       __builtin_offsetof(struct denied_key, start_ns) ==
			       __builtin_offsetof(struct infl_ident_key, gen),
	       "proc_init keys the idents map with a denied_key");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct denied_key);
	__type(value, __u64); /* events lost */
} denied SEC(".maps");

/*
 * Who may be traced, decided before any map lookup: kmem:rss_stat fires on every page fault
 * of every process on the host, and most of them are not traced. `traced_pids` holds one
 * byte a pid (1: it has a record in `procs`), in chunks of 64 that an array lookup reaches
 * without a hash (the JIT inlines it); sized by the loader from pid_max, and a pid past it
 * takes the lookup as before. Plain byte stores: two pids never share a byte, and a pid's
 * byte goes to 1 at its record's creation and back at its end, which never race.
 */
struct infl_pid_chunk {
	__u8 traced[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32768 / 64); /* resized by the loader from pid_max */
	__type(key, __u32);
	__type(value, struct infl_pid_chunk);
} traced_pids SEC(".maps");

/* each image's identity (inflight.h: infl_ident); LRU: a loader that never removes the
 * entries of the images it forgot cannot fill it */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct infl_ident_key);
	__type(value, struct infl_ident);
} idents SEC(".maps");

/* the binaries the loader attached to, and when: an image that began after is traced from
 * its first instruction (INFL_PROC_FROM_START) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct infl_image_key);
	__type(value, __u64); /* attach time, ns */
} images SEC(".maps");

/*
 * Record mode's event rings, one per CPU: hits on two CPUs never share a ring's lock or its
 * producer position. The loader creates them and fills this array by CPU; the recorder
 * merges them by time (attach/event_rings.c), and the replay puts each process's events back
 * in seq order (model/timeline_replay.h), as it did with one ring.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* the loader: one per possible CPU */
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, 4096); /* the loader: each CPU's share */
	});
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* ~70 final records in flight */
} ctl SEC(".maps");

/* --- the USDT argument fetch's maps (usdt_args.bpf.h; attach/usdt_attach.c fills them) --- */

/* set by the loader before load: false on kernels without bpf_get_attach_cookie (< 5.15) */
const volatile bool usdt_have_cookie = true;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INFL_USDT_MAX_SPECS);
	__type(key, __u32);
	__type(value, struct infl_usdt_spec);
} usdt_specs SEC(".maps");

/* kernels without cookies: site (file, offset) -> spec id; sized to 1 by the loader elsewhere */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_USDT_MAX_SITES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct infl_usdt_ip_key);
	__type(value, __u32);
} usdt_ips SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct usdt_ip_cache_key);
	__type(value, __u32);
} usdt_ip_cache SEC(".maps");


/* --- the locked form's lock (proc_lock.bpf.h) and the queue behind it ------------------------ */


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_DEFAULT_MAX_PROCS); /* resized with procs */
	__type(key, __u32);
	__type(value, __u8);
} locks SEC(".maps");

/* a process's queue map (map_queues), by pid. Not preallocated (here and in
 * map_queue_claims): a preallocated map's free elements sit on per-CPU lists, and an insert
 * that looks at one CPU's list while an element is given back to another's fails with one
 * free; allocated, an insert fails only when max_entries are in use. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, INFL_DEFER_MAX_QUEUES); /* resized by the loader */
	__type(key, __u32);   /* pid */
	__type(value, __u32); /* its queue in map_queues */
} deferred_of SEC(".maps");

/* probe hits that went through a queue, and that found one full and waited, all processes
 * (the tests) */
__u64 deferred_ops = 0;
__u64 deferred_full = 0;

/* the atomic form: retired owners' records removed (owner_reap), and those that could not be
 * queued for it (owner_reap_push: this CPU's ring full; they stay until their image ends) */
__u64 owners_reaped = 0;
__u64 owners_unreaped = 0;

/* templates for new map elements (too big for the 512-byte stack): an owner's held words
 * start in the no-stage slot, where its state starts. A process's record is inserted from
 * proc_stage below. */
static const struct infl_ident zero_ident;
static const struct infl_owner new_owner = {
	.state = (__u64)INFL_SLOT_NONE << INFL_OS_SLOT_SHIFT,
	.held_count = { [0 ... INFL_CLASSES - 1] = (__u64)INFL_SLOT_NONE << INFL_HELD_SLOT_SHIFT },
	.held_bytes = { [0 ... INFL_CLASSES - 1] = (__u64)INFL_SLOT_NONE << INFL_HELD_SLOT_SHIFT },
};

/* Clamp an index the verifier must see bounded even after clang spilled it to the stack;
 * the barrier keeps clang from dropping the mask it can prove redundant. */
#define BOUNDED(v, n) ({ barrier_var(v); (v) & ((n) - 1); })
/* The same for any n: older verifiers (6.1) lose a bound checked before clang spilled the
 * value and reloaded it, so the clamp sits where the index is used. */
#define CLAMPED(v, n) ({ __u32 __c = (v); barrier_var(__c); __c < (n) ? __c : (n) - 1; })

/* --- process records ------------------------------------------------------------------- */

/*
 * A new process record is inserted whole, its gen in: every thread that finds it finds the
 * image's gen, which every key of the image carries, and no thread waits for its maker (a
 * maker off its CPU between an insert and a write of the gen made the others wait, or give
 * up). The insert copies this CPU's stage, zero but for the gen it is given right before
 * the copy and cleared right after. Two programs on one CPU (where the kernel lets one
 * preempt another) may find it cleared by the other: the record then comes in without a gen
 * and is given one as before (proc_init, proc_current).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct infl_proc);
} proc_stage SEC(".maps");

/* 0, or the insert's error (EEXIST: another thread made it first; else the map is full) */
static __always_inline long proc_insert(__u32 pid, __u64 gen)
{
	struct infl_proc *stage;
	__u32 zero = 0;
	long err;

	stage = bpf_map_lookup_elem(&proc_stage, &zero);
	if (!stage)
		return -ENOENT;
	WRITE_ONCE(stage->gen, gen);
	err = bpf_map_update_elem(&procs, &pid, stage, BPF_NOEXIST);
	WRITE_ONCE(stage->gen, 0);
	return err;
}

static __always_inline void pid_mark(__u32 pid, __u8 traced)
{
	__u32 chunk = pid / 64;
	struct infl_pid_chunk *c = bpf_map_lookup_elem(&traced_pids, &chunk);

	if (c)
		WRITE_ONCE(c->traced[pid & 63], traced);
}

/* false only when the pid certainly has no record (a pid past the table may have one) */
static __always_inline bool pid_maybe_traced(__u32 pid)
{
	__u32 chunk = pid / 64;
	struct infl_pid_chunk *c = bpf_map_lookup_elem(&traced_pids, &chunk);

	return !c || READ_ONCE(c->traced[pid & 63]);
}

/* An RSS change the handler need not look at: a process nobody traces, faulting its own
 * pages (every other process on the host). Another task's mm (reclaim, exit) is looked up. */
static __always_inline bool rss_of_untraced(const struct mm_struct *mm)
{
	struct task_struct *t;

	/* one helper call, the task's fields read without one (5.11, upstream 3ca1032ab7ab) */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		t = bpf_get_current_task_btf();
		return t->mm == mm && !pid_maybe_traced(t->tgid);
	}
	if (pid_maybe_traced(bpf_get_current_pid_tgid() >> 32))
		return false;
	t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, mm) == mm;
}

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
	struct infl_image_key k = {
		.dev = BPF_CORE_READ(task, mm, exe_file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino),
	};
	__u64 *at = bpf_map_lookup_elem(&images, &k);

	return at && *at < t;
}

/*
 * The identity of the image whose record is being made: its comm and command line words,
 * read from the address space of the current task (the image itself at its first probe hit
 * or its exec; at a fork the parent, whose command line the child shares).
 */
static __always_inline void ident_note(struct task_struct *task, const void *key)
{
	unsigned long start, end;
	struct infl_ident *id;
	__u64 len;

	if (bpf_map_update_elem(&idents, key, &zero_ident, BPF_ANY))
		return;
	id = bpf_map_lookup_elem(&idents, key);
	if (!id)
		return;
	BPF_CORE_READ_INTO(&id->comm, task, comm);
	start = BPF_CORE_READ(task, mm, arg_start);
	end = BPF_CORE_READ(task, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > INFL_IDENT_ARGS - 1)
		len = INFL_IDENT_ARGS - 1;
	len = BOUNDED(len, INFL_IDENT_ARGS);
	if (len && !bpf_probe_read_user(id->args, len, (void *)start))
		id->args_len = len;
}


/*
 * Fills a record just inserted for `task` (proc_insert), while other threads may already
 * use it. Its gen is in, but for the insert that found the stage cleared (proc_stage): then
 * it is given one here, by compare-and-swap from 0 in the atomic form (where hits that find
 * it first give it one themselves, proc_current: whoever comes first), by a plain store in
 * the locked form (whose hits wait for it: proc_wait_ready). The fields after it are read by
 * nobody during a hit but INFL_PROC_FROM_START, which a hit reads from the task while
 * INFL_PROC_FLAGS_SET is not set (proc_from_start).
 */
static __always_inline void proc_init(struct infl_proc *p, struct task_struct *task, __u32 pid,
				      __u32 flags, __u32 ppid, __u64 now, const enum acct_mode m)
{
	struct denied_key dk = { .pid = pid };
	__u64 *lost, gen = READ_ONCE(p->gen);

	if (gen) {
		/* inserted whole */
	} else if (m == ACCT_ATOMIC) {
		gen = __sync_val_compare_and_swap(&p->gen, 0, now);
		if (!gen)
			gen = now;
	} else {
		WRITE_ONCE(p->gen, now);
		gen = now;
	}
	pid_mark(pid, 1);
	/* the denied key's slot, reused as the ident's key (pid, gen): the probe handlers that
	 * inline this have no stack to spare (6.1: 512 bytes for the program and its calls) */
	dk.start_ns = gen;
	ident_note(task, &dk);
	dk.start_ns = BPF_CORE_READ(task, group_leader, start_time);
	p->start_ns = dk.start_ns;
	p->ppid = ppid;
	lost = bpf_map_lookup_elem(&denied, &dk);
	if (lost) {
		p->missed_events = *lost;
		bpf_map_delete_elem(&denied, &dk);
	}
	WRITE_ONCE(p->flags, flags | INFL_PROC_FLAGS_SET);
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

/* Inserts and fills the record of `pid` (from a tracepoint: fork, exec, where no thread of the
 * process runs yet); NULL when the map is full or the pid is taken. */
static __always_inline struct infl_proc *proc_create(__u32 pid, struct task_struct *task,
						     __u32 flags, __u32 ppid)
{
	__u64 now = bpf_ktime_get_ns();
	struct infl_proc *p;

	if (proc_insert(pid, now))
		return NULL;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (p)
		proc_init(p, task, pid, flags, ppid, now, ACCT_LOCKED);
	return p;
}

/* Whether the image is traced from its first instruction: its flags once they are set, else
 * what its maker is about to set there, from the task. */
static __always_inline bool proc_from_start(struct infl_proc *p)
{
	struct task_struct *task;
	__u32 f = READ_ONCE(p->flags);

	if (f & INFL_PROC_FLAGS_SET)
		return f & INFL_PROC_FROM_START;
	task = (struct task_struct *)bpf_get_current_task();
	return image_attached_before(task, BPF_CORE_READ(task, group_leader, start_time));
}

/* Looks at a record's gen while its maker writes it (proc_init) */
#define PROC_GEN_LOOKS 64

/* The locked form: a record that came in without its gen (proc_stage), whose maker writes it
 * right after; a hit that does not see it within PROC_GEN_LOOKS looks gives up, counted. */
static __always_inline struct infl_proc *proc_wait_ready(struct infl_proc *p, __u32 pid)
{
	if (!p)
		return NULL;
	if (READ_ONCE(p->exited)) {
		/* an ended image whose record could not reach the loader yet: not this one's */
		proc_denied((struct task_struct *)bpf_get_current_task(), pid);
		return NULL;
	}
	for (int i = 0; i < PROC_GEN_LOOKS; i++)
		if (READ_ONCE(p->gen))
			return p;
	__sync_fetch_and_add(&p->lock_timeouts, 1);
	return NULL;
}

/* The first probe hit of a process that is not part of a traced set (-b) makes its record. */
static __always_inline struct infl_proc *proc_first_hit(__u32 pid, const enum acct_mode m)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 now = bpf_ktime_get_ns();
	__u32 flags = 0;
	struct infl_proc *p;

	if (image_attached_before(task, BPF_CORE_READ(task, group_leader, start_time)))
		flags |= INFL_PROC_FROM_START;
	if (proc_insert(pid, now)) {
		/* EEXIST: another thread made it first; else the map is full */
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p) {
			proc_denied(task, pid);
			return NULL;
		}
		if (m == ACCT_LOCKED)
			return proc_wait_ready(p, pid);
		if (READ_ONCE(p->exited)) {
			proc_denied(task, pid);
			return NULL;
		}
		/* being filled: its gen, whoever gives it first */
		if (!READ_ONCE(p->gen))
			__sync_val_compare_and_swap(&p->gen, 0, bpf_ktime_get_ns());
		return p;
	}
	p = bpf_map_lookup_elem(&procs, &pid);
	if (p)
		proc_init(p, task, pid, flags, 0, now, m);
	return p;
}

/* The same, a call of its own in the atomic form: its locals then stay out of the probe
 * handler's frame (6.1 counts a program's frames together: 512 bytes in all). The locked
 * form's programs, which tail call and run on kernels that refuse a subprogram beside a
 * large frame there, keep it inline. */
static __noinline struct infl_proc *proc_first_hit_atomic(__u32 pid)
{
	return proc_first_hit(pid, ACCT_ATOMIC);
}

/* The record of the current process for a probe hit: its own, or (when it is not a traced
 * set's) a new one made on its first event. NULL: not traced, or no slot (counted). The
 * hit's pid and thread id come with it: the one read of them a hit makes (a helper call,
 * each of which a hit pays for). */
static __always_inline struct infl_proc *proc_current(__u32 *pidp, __u32 *tidp,
						      const enum acct_mode m)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);

	*pidp = pid;
	*tidp = (__u32)id;
	if (READ_ONCE(stopped))
		return NULL;
	if (p && READ_ONCE(p->gen) && !READ_ONCE(p->exited)) {
		if (!p->start_ns) /* seeded by the loader: the rest comes from the task */
			p->start_ns = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(),
						    group_leader, start_time);
		return p;
	}
	if (p || traced_set) {
		if (m == ACCT_LOCKED)
			return proc_wait_ready(p, pid);
		if (!p)
			return NULL;
		if (READ_ONCE(p->exited)) {
			proc_denied((struct task_struct *)bpf_get_current_task(), pid);
			return NULL;
		}
		/* being filled: its gen, whoever gives it first */
		__sync_val_compare_and_swap(&p->gen, 0, bpf_ktime_get_ns());
		return p;
	}
	if (m == ACCT_ATOMIC)
		return proc_first_hit_atomic(pid);
	return proc_first_hit(pid, m);
}

/* --- events ------------------------------------------------------------------------------ */

/* What a recorded event takes of its ring: the record and the ring's header */
#define EVENT_RING_BYTES (sizeof(struct infl_event) + BPF_RINGBUF_HDR_SZ)

/*
 * How a recorded event is submitted: without waking the recorder, which reads the rings every
 * poll interval (a wake-up per event, an irq_work and a context switch, would cost more than
 * the event). The event that takes its CPU's unread data past a multiple of
 * events_wake_bytes (a quarter of the ring) wakes it, so that the ring does not fill while
 * it sleeps; that event only, not every one after it: a recorder behind (stopped,
 * descheduled, on a slow disk) would be woken by each, and each wake-up is an interrupt this
 * CPU sends itself (in a VM an exit to the hypervisor: 10 us a hit, measured). A recorder
 * that is not asleep finds the data when it polls next, woken or not (a ring polls readable
 * while it holds data). Two events racing on one CPU (one preempted between its look and
 * its output) may both miss a mark; the next mark, or the recorder's poll timeout, wakes
 * it. `queued`: the event is in the unread data already (reserved) or not yet (output).
 */
static __always_inline __u64 ring_flags(void *ring, bool queued)
{
	__u64 after = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) + (queued ? 0 : EVENT_RING_BYTES);
	__u64 before = after > EVENT_RING_BYTES ? after - EVENT_RING_BYTES : 0;

	if (events_wake_bytes && after / events_wake_bytes != before / events_wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* This CPU's event ring (uprobes and tracepoints run with migration disabled), or NULL. */
static __always_inline void *event_ring(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&events, &cpu);
}

/* The record into the ring, or its loss counted. */
static __always_inline void event_finish(const struct infl_event *ev, struct infl_proc *p)
{
	void *ring;

	if (!record_events)
		return;
	ring = event_ring();
	if (!ring || bpf_ringbuf_output(ring, (void *)ev, sizeof(*ev), ring_flags(ring, false)))
		__sync_fetch_and_add(&p->ring_drops, 1);
}

/* --- a hit's accounting (hit.bpf.h): what it needs from this program ------------------------- */

/* A hit's recorded event into its CPU's ring (record mode), or its loss counted. */
static void hit_event(struct infl_proc *p, const struct infl_event *ev)
{
	event_finish(ev, p);
}

static bool hit_from_start(struct infl_proc *p)
{
	return proc_from_start(p);
}

/* What the accounting of a hit of the current process reads from the program's settings. */
static __always_inline void hit_env_init(struct hit_env *env, __u32 pid)
{
	env->bufs = &bufs;
	env->pid = pid;
	env->entry_mask = entry_stage_mask;
	env->terminal_mask = terminal_stage_mask;
	env->recording = record_events;
}

/* --- the atomic form's owner records (owners.bpf.h) ---------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct owner_reap_ring);
} owner_reap SEC(".maps");

static __always_inline void owner_maps_init(struct owner_maps *om)
{
	om->owners = &owners;
	om->procs = &procs;
	om->reap = &owner_reap;
	om->fresh = &new_owner;
	om->reaped = &owners_reaped;
	om->unreaped = &owners_unreaped;
	om->terminal_mask = terminal_stage_mask;
}

/* --- the atomic form: no lock ----------------------------------------------------------- */

/* After a hit retired its owner: the record queued for removal, older ones removed. */
static __always_inline void hit_retired(struct infl_owner *o)
{
	struct owner_maps om;

	owner_maps_init(&om);
	owner_retired(&om, o);
}

/* hit_owner_round's argument and result bits beside HOLD_* */
#define HOLD_CREATE 0x100 /* in: the record is made if there is none */
#define HOLD_MADE1 0x200  /* in and out: this hit made side 1's record */
#define HOLD_RACED 0x400  /* out: another hit held the record too */
#define HOLD_WHY 0xff

/* A look of owner_hold_slow (owner_hold_round) in a function of its own, which the verifier
 * checks once, where a loop of them inline would be walked look by look in every handler
 * that holds an owner. k: the key, its side set where the result is HOLD_OK. */
__noinline int hit_owner_round(struct infl_owner_key *k, __u64 nheld, int flags)
{
	bool raced = false, made1 = flags & HOLD_MADE1;
	struct infl_owner_key key;
	struct owner_maps om;
	int why;

	if (!k)
		return HOLD_LOST;
	/* on the stack: 6.1's verifier takes a map key there or in a map value, not in an
	 * argument's memory */
	key = *k;
	owner_maps_init(&om);
	why = owner_hold_round(&om, &key, nheld, flags & HOLD_CREATE, &raced, &made1);
	k->side = key.side;
	return why | (raced ? HOLD_RACED : 0) | (made1 ? HOLD_MADE1 : 0);
}

/* The owner of a hit's key (`owner`) held for it; NULL when it has none to hold, and then
 * OPF_OWNER_LOST when it should have had one (the accounting counts it: contention_lost; a
 * full map is counted as owner_map_full). */
static __always_inline struct infl_owner *hit_owner(struct infl_proc *p, __u32 pid,
						    struct infl_op *op, __u64 owner, __u64 nheld,
						    bool create)
{
	struct infl_owner_key k = { .pid = pid, .gen = p->gen, .owner = owner };
	struct owner_maps om;
	struct infl_owner *o;
	int why = HOLD_OK;
	bool raced = false;

	owner_maps_init(&om);
	o = owner_hold_side(&om, &k, 0, nheld, &raced);
	if (!o && !create) {
		o = owner_hold_side(&om, &k, 1, nheld, &raced);
		why = o ? HOLD_OK : HOLD_NONE;
	} else if (!o) {
		int r = 0;

		for (int i = 0; i < OWNER_HOLD_TRIES; i++) {
			r = hit_owner_round(&k, nheld, (r & HOLD_MADE1) | HOLD_CREATE);
			if ((r & HOLD_WHY) != HOLD_AGAIN)
				break;
		}
		why = r & HOLD_WHY;
		raced = r & HOLD_RACED;
		if (why == HOLD_AGAIN)
			why = HOLD_LOST;
		/* the record the round holds a reference on: its key leads to it */
		if (why == HOLD_OK && !(o = bpf_map_lookup_elem(&owners, &k)))
			why = HOLD_LOST;
	}
	if (why == HOLD_LOST || (why == HOLD_NONE && !create))
		op->flags |= OPF_OWNER_LOST;
	/* its owner's life follows the owner's own order, which the order of places may not
	 * (acct.bpf.h): counted, for the readers of a recording */
	if (o && raced)
		__sync_fetch_and_add(&p->owner_races, 1);
	return o;
}

/*
 * The accounting of one hit, each a global function: the kernel's verifier checks it once,
 * whatever calls it (inlined into every handler, the programs took many times as long to
 * load). `o`: the owner's record, referenced by the handler (hit_owner), or NULL.
 */

/* the buffer a dup alloc replaced, counted out after the alloc (acct_replaced) */
__noinline int hit_replaced(struct infl_proc *p, __u32 pid, struct infl_op *op)
{
	struct infl_owner *o = NULL;
	struct hit_env env;

	if (!p || !op)
		return 0;
	hit_env_init(&env, pid);
	/* its owner holds the buffer, so its record is there */
	if (!(op->prev.flags & INFL_BUF_UNSTAGED))
		o = hit_owner(p, env.pid, op, op->prev.owner, 0, false);
	if (acct_replaced(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
	return 0;
}

__noinline int hit_alloc(struct infl_proc *p, __u32 pid, struct infl_op *op, struct infl_owner *o)
{
	struct hit_env env;

	if (!p || !op)
		return 0;
	hit_env_init(&env, pid);
	if (acct_alloc(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
	return 0;
}

__noinline int hit_free(struct infl_proc *p, __u32 pid, struct infl_op *op, struct infl_owner *o)
{
	struct hit_env env;

	if (!p || !op)
		return 0;
	hit_env_init(&env, pid);
	if (acct_free(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
	return 0;
}

__noinline int hit_stage(struct infl_proc *p, __u32 pid, struct infl_op *op, struct infl_owner *o)
{
	struct hit_env env;

	if (!p || !op || !o)
		return 0;
	hit_env_init(&env, pid);
	if (acct_stage(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
	return 0;
}

/* what a refused hit is counted as (acct_refused) */
enum refusal { RF_BAD_CLASS, RF_BAD_STAGE, RF_OWNER0, RF_OWNER_FULL, RF_OWNER_LOST };

__noinline int hit_refused(struct infl_proc *p, __u32 pid, struct infl_op *op, int why)
{
	__u8 type = op && op->probe == INFL_PROBE_STAGE ? INFL_EV_STAGE : INFL_EV_ALLOC;
	struct hit_env env;

	if (!p || !op)
		return 0;
	hit_env_init(&env, pid);
	if (why == RF_BAD_CLASS)
		acct_refused(&env, p, op, &p->bad_class, type, INFL_EVF_REJECTED, op->owner, ACCT_ATOMIC);
	else if (why == RF_BAD_STAGE)
		acct_refused(&env, p, op, &p->bad_stage, type, INFL_EVF_REJECTED, 0, ACCT_ATOMIC);
	else if (why == RF_OWNER0)
		acct_refused(&env, p, op, &p->stage_owner0, type, INFL_EVF_REJECTED, 0, ACCT_ATOMIC);
	else if (why == RF_OWNER_FULL)
		acct_refused(&env, p, op, &p->owner_map_full, type, INFL_EVF_UNTRACKED, 0, ACCT_ATOMIC);
	else
		acct_refused(&env, p, op, &p->contention_lost, type, INFL_EVF_UNTRACKED, 0, ACCT_ATOMIC);
	return 0;
}

/* --- the locked form: acct.bpf.h's steps under the process's lock ----------------------- */

static __always_inline struct infl_owner *owner_lookup(__u32 pid, __u64 gen, __u64 owner)
{
	struct infl_owner_key k = { .pid = pid, .gen = gen, .owner = owner };

	return bpf_map_lookup_elem(&owners, &k);
}

static __always_inline void owner_forget(__u32 pid, __u64 gen, __u64 owner)
{
	struct infl_owner_key k = { .pid = pid, .gen = gen, .owner = owner };

	bpf_map_delete_elem(&owners, &k);
}

/* How often owner_get looks again for a record that another thread made and a section
 * retired and deleted meanwhile (threads sharing an owner that retires: `probegen churn`
 * with 2 threads saw it twice in a row, and on 6.12-rt with 2 vCPUs 4 times in a row) */
#define OWNER_GET_TRIES 16

/* An owner's record, created (not yet counted: owner_admit) when first seen. NULL when the
 * map is full (counted as owner_map_full). */
static __always_inline struct infl_owner *owner_get(struct infl_owner_key *k)
{
	struct infl_owner *o;

	/* unrolled: a loop counter would take a stack slot, which 6.1's 512 bytes for a
	 * handler and its calls do not have */
#pragma clang loop unroll(full)
	for (int i = 0; i < OWNER_GET_TRIES; i++) {
		o = bpf_map_lookup_elem(&owners, k);
		if (o)
			return o;
		/* made here or by another thread (EEXIST), the next look finds it, unless a
		 * section retired and deleted it meanwhile; or the map is full */
		bpf_map_update_elem(&owners, k, &new_owner, BPF_NOEXIST);
	}
	return NULL;
}

/*
 * Under the lock: whether a record a handler found outside it is still the live record of
 * owner `id` of image (pid, gen). The locked form deletes records only under the lock, right
 * after they retire, and a deleted element keeps its contents until it is reused: so the key
 * must still lead to it (a record deleted since the handler's lookup does not pass, however
 * alike its contents), and it must carry that key (owner_claim: a record not used under the
 * lock yet does not pass). One that passes cannot be deleted, or reused, before the lock is
 * released. One that fails sends its hit through the queue, whose holder looks the owner up
 * again (apply_relooked).
 */
static __always_inline bool owner_current(const struct infl_owner *o, __u32 pid, __u64 id,
					  __u64 gen)
{
	struct infl_owner_key k = { .pid = pid, .gen = gen, .owner = id };

	if (!o)
		return true;
	return READ_ONCE(o->id) == id && READ_ONCE(o->id_gen) == gen &&
	       bpf_map_lookup_elem(&owners, &k) == o;
}

/* Under the lock, a record just looked up by its key: it carries the key from now on. */
static __always_inline void owner_claim(struct infl_owner *o, __u64 id, __u64 gen, __u32 pid)
{
	if (o && !o->id) {
		o->id_gen = gen;
		o->id_pid = pid;
		WRITE_ONCE(o->id, id);
	}
}

/* what a section returns: which owners' records the caller deletes, under the lock */
#define SECTION_STALE 1	      /* a record is not the one its handler found (owner_current):
			       * nothing was done, the hit goes through the queue */
#define SECTION_RETIRED 2     /* the hit's owner retired */
#define SECTION_RETIRED_OLD 4 /* a dup's replaced buffer's owner retired */

/*
 * Under the lock: one probe hit accounted (ACCT_LOCKED), its recorded event into the ring.
 * `o`, `old_o`: the records its handler's map operations found (NULL: none); each gets its
 * reference for the hit's steps, as the atomic form's handler gives it (hit_owner).
 */
static __always_inline int section_of(struct infl_proc *p, struct infl_op *op,
				      struct infl_owner *o, struct infl_owner *old_o)
{
	struct hit_env env;
	int rc = 0;
	__u32 pid;
	__u64 id;

	if (!p || !op)
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	hit_env_init(&env, pid);
	id = op->probe == INFL_PROBE_ALLOC ? op->owner :
	     op->probe == INFL_PROBE_FREE  ? op->prev.owner : op->arg;
	if (!owner_current(o, pid, id, p->gen) ||
	    !owner_current(old_o, pid, op->prev.owner, p->gen))
		return SECTION_STALE;
	if (op->probe == INFL_PROBE_ALLOC) {
		if (op->kind == AK_BAD_CLASS) {
			acct_refused(&env, p, op, &p->bad_class, INFL_EV_ALLOC, INFL_EVF_REJECTED,
				     op->owner, ACCT_LOCKED);
			return 0;
		}
		if (o)
			owner_ref(o, 1, ACCT_LOCKED);
		if (acct_alloc(&env, p, op, o, ACCT_LOCKED))
			rc |= SECTION_RETIRED;
		if (op->flags & OPF_REPLACED) {
			if (old_o)
				owner_ref(old_o, 0, ACCT_LOCKED);
			if (acct_replaced(&env, p, op, old_o, ACCT_LOCKED))
				rc |= SECTION_RETIRED_OLD;
		}
	} else if (op->probe == INFL_PROBE_FREE) {
		if (o)
			owner_ref(o, 0, ACCT_LOCKED);
		if (acct_free(&env, p, op, o, ACCT_LOCKED))
			rc |= SECTION_RETIRED;
	} else if (op->kind == SK_MOVE && o) {
		owner_ref(o, 0, ACCT_LOCKED);
		if (acct_stage(&env, p, op, o, ACCT_LOCKED))
			rc |= SECTION_RETIRED;
	} else if (op->kind == SK_BAD_STAGE) {
		acct_refused(&env, p, op, &p->bad_stage, INFL_EV_STAGE, INFL_EVF_REJECTED, 0, ACCT_LOCKED);
	} else if (op->kind == SK_OWNER0) {
		acct_refused(&env, p, op, &p->stage_owner0, INFL_EV_STAGE, INFL_EVF_REJECTED, 0,
			     ACCT_LOCKED);
	} else {
		acct_refused(&env, p, op, &p->owner_map_full, INFL_EV_STAGE, INFL_EVF_UNTRACKED, 0,
			     ACCT_LOCKED);
	}
	return rc;
}

/* Under the lock, after a section: the records of owners it retired are deleted (the locked
 * form has no sweep: every record it deletes is deleted here, under the lock). */
static __always_inline void section_forget(struct infl_proc *p, const struct infl_op *op, int rc)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (rc & SECTION_RETIRED)
		owner_forget(pid, p->gen, op->probe == INFL_PROBE_ALLOC ? op->owner :
					  op->probe == INFL_PROBE_FREE  ? op->prev.owner : op->arg);
	if (rc & SECTION_RETIRED_OLD)
		owner_forget(pid, p->gen, op->prev.owner);
}

/* Under the lock: a hit whose handler did not apply it itself (queued, or carried into
 * lock_wait_more), with the records its handler found looked up again (an owner it created
 * is there: only a section retires one); an owner it retires is removed. */
static __always_inline void apply_relooked(struct infl_proc *p, struct infl_op *op)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_owner *o = NULL, *old_o = NULL;
	struct infl_owner_key ok = { .pid = pid, .gen = p->gen };

	if (op->probe == INFL_PROBE_ALLOC) {
		if ((op->flags & OPF_REPLACED) && !(op->prev.flags & INFL_BUF_UNSTAGED))
			old_o = owner_lookup(pid, ok.gen, op->prev.owner);
		ok.owner = op->owner;
		if ((op->kind == AK_NEW || op->kind == AK_DUP) && op->owner &&
		    !(op->flags & INFL_BUF_UNSTAGED))
			o = owner_get(&ok);
	} else if (op->probe == INFL_PROBE_FREE) {
		ok.owner = op->prev.owner;
		if (op->kind == FK_FOUND && !(op->prev.flags & INFL_BUF_UNSTAGED))
			o = bpf_map_lookup_elem(&owners, &ok);
	} else {
		ok.owner = op->arg;
		if (op->kind == SK_MOVE)
			o = owner_get(&ok);
	}
	owner_claim(o, ok.owner, ok.gen, pid);
	owner_claim(old_o, op->prev.owner, ok.gen, pid);
	/* just claimed: never SECTION_STALE */
	section_forget(p, op, section_of(p, op, o, old_o));
}

/* What a try at the queue came to: queued, or why the hit must wait. */
enum defer_result {
	DEFER_NO_QUEUE = -1, /* the pool had no queue map free for the process */
	DEFER_FULL = 0,	     /* its queue is full */
	DEFER_QUEUED = 1,
};

/* How a probe hit got past the lock (lock_or_defer). */
enum lock_outcome {
	LOCKED,	   /* the lock is ours, nothing queued before it: account it, release */
	DEFERRED,  /* queued: the lock's holder applies it */
	WAIT_MORE, /* the lock held and no room in a queue: go on in lock_wait_more */
};

/* A hit that could not queue (`why`: enum defer_result) and now waits, counted in its
 * process's record by the reason (INFL_ANOMALIES: slot_waits, pool_waits). Outside the lock:
 * an atomic add. */
static __always_inline void deferred_count_wait(struct infl_proc *p, int why)
{
	if (why == DEFER_NO_QUEUE)
		__sync_fetch_and_add(&p->pool_waits, 1);
	else
		__sync_fetch_and_add(&p->slot_waits, 1);
	__sync_fetch_and_add(&deferred_full, 1);
}

/*
 * The locked form's queue behind the lock (kernels before 5.17), built from what 5.10 has: a
 * BPF queue map, whose push and pop are atomic in the kernel (the map's own spinlock, held
 * for a copy, interrupts off): a hit that finds the lock held pushes what its map operations
 * found and returns; its FIFO order is the accounting order of everything queued. The
 * bounded loops that drain it are global functions (checked once by the verifier, which
 * cannot walk a loop over an inlined section) in a program of their own, map_combine,
 * which hits reach by a tail call: a handler's frame and a drain's would not fit in one
 * stack.
 *
 * The protocol:
 * - defer_tail (struct infl_proc) counts the hits pushed and not yet applied, defer_head the
 *   ones applied: a push adds 1 first (atomic add, 5.10 has it) and takes it back if the
 *   queue is full; the holder adds 1 to defer_head for each hit it applies. So tail == head
 *   means nothing of this image is queued or being pushed, and tail - head at the image's
 *   end is what was left (applied by the image's end, image_end).
 * - A hit that gets the lock with something queued goes behind it (push, then combine):
 *   what was queued may have happened before it. With nothing queued it applies itself.
 * - Every push is followed by an attempt at the lock (map_combine), and every holder looks
 *   at tail and head after its release, both after a full barrier (the lock is a hash
 *   insert and delete under the bucket's lock): either the pusher gets the lock and drains,
 *   or the holder it failed against sees the push once it released, and drains.
 * - A queue is drawn from a pool of INFL_DEFER_MAX_QUEUES by the first hit that needs one:
 *   a claim is an insert of the queue's index into map_queue_claims that fails if the index
 *   is taken (an atomic test-and-set, like the lock), then the process's name for it in
 *   deferred_of (threads of one image drawing at once take the same one: map_queue_claim).
 *   The image's end gives it back. A queue's next owner drops what an earlier one left
 *   (told apart by gen; counted at that image's end).
 * - A hit that can neither push (the queue full, the pool empty) nor get the lock waits in
 *   lock_wait_more as before, trying both; past that it gives up, counted.
 */
struct map_queue {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, INFL_DEFER_SLOTS); /* resized by the loader (1: not loaded) */
	__type(value, struct infl_op);
};

/* INFL_DEFER_MAX_QUEUES of them */
struct map_queue mq_0 SEC(".maps"), mq_1 SEC(".maps"), mq_2 SEC(".maps"), mq_3 SEC(".maps"),
	mq_4 SEC(".maps"), mq_5 SEC(".maps"), mq_6 SEC(".maps"), mq_7 SEC(".maps"),
	mq_8 SEC(".maps"), mq_9 SEC(".maps"), mq_10 SEC(".maps"), mq_11 SEC(".maps"),
	mq_12 SEC(".maps"), mq_13 SEC(".maps"), mq_14 SEC(".maps"), mq_15 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, INFL_DEFER_MAX_QUEUES);
	__type(key, __u32);
	__array(values, struct map_queue);
} map_queues SEC(".maps") = {
	.values = { &mq_0, &mq_1, &mq_2, &mq_3, &mq_4, &mq_5, &mq_6, &mq_7,
		    &mq_8, &mq_9, &mq_10, &mq_11, &mq_12, &mq_13, &mq_14, &mq_15 },
};
_Static_assert(INFL_DEFER_MAX_QUEUES == 16, "map_queues: one mq_N for each queue of the pool");

/* the pool's queues in use: index -> the gen of the image that holds it (not
 * preallocated: deferred_of) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, INFL_DEFER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u64);
} map_queue_claims SEC(".maps");

/* The queue of image (pid, gen) when it has one. */
static __always_inline void *map_queue_of(__u32 pid, __u64 gen)
{
	__u32 *idx = bpf_map_lookup_elem(&deferred_of, &pid);
	__u64 *owner;

	if (!idx)
		return NULL;
	owner = bpf_map_lookup_elem(&map_queue_claims, idx);
	if (!owner || *owner != gen)
		return NULL;
	return bpf_map_lookup_elem(&map_queues, idx);
}

/*
 * The image's queue, drawn from the pool when it has none yet; NULL when none is free.
 * Threads of one image drawing at once scan the pool in the same order, and one that finds a
 * queue claimed for its own image (its gen) takes that one rather than claiming another: a
 * second claim, held even for the instant before it is given back, could show the pool full
 * to another process while one of its queues is as good as free.
 */
static __always_inline void *map_queue_claim(__u32 pid, __u64 gen)
{
	void *q = map_queue_of(pid, gen);
	__u32 *named;
	__u64 *owner;

	if (q || bpf_map_lookup_elem(&deferred_of, &pid))
		return q;
	/* twice round the pool: a queue an ended image gave back behind the scan is found on
	 * the second */
#pragma clang loop unroll(full)
	for (int i = 0; i < 2 * INFL_DEFER_MAX_QUEUES; i++) {
		__u32 key = i % INFL_DEFER_MAX_QUEUES;

		if (bpf_map_update_elem(&map_queue_claims, &key, &gen, BPF_NOEXIST)) {
			owner = bpf_map_lookup_elem(&map_queue_claims, &key);
			if (!owner || *owner != gen)
				continue; /* another image's, or the pool is smaller */
			/* claimed by another thread of this image: named by whichever comes first */
			bpf_map_update_elem(&deferred_of, &pid, &key, BPF_NOEXIST);
			return map_queue_of(pid, gen);
		}
		if (!bpf_map_update_elem(&deferred_of, &pid, &key, BPF_NOEXIST))
			return bpf_map_lookup_elem(&map_queues, &key);
		named = bpf_map_lookup_elem(&deferred_of, &pid);
		if (named && *named == key)
			return bpf_map_lookup_elem(&map_queues, &key); /* named by a thread above */
		/* another thread of the image named another queue (one freed while the two
		 * scanned): this one goes back */
		bpf_map_delete_elem(&map_queue_claims, &key);
		return map_queue_of(pid, gen);
	}
	return NULL;
}

/* The image ended: its queue goes back to the pool (image_end applied what it held; what it
 * could not is counted in lock_timeouts, and dropped by the next owner). */
static __always_inline void map_queue_release(__u32 pid, __u64 gen)
{
	__u32 *idx = bpf_map_lookup_elem(&deferred_of, &pid);
	__u64 *owner;

	if (!idx)
		return;
	owner = bpf_map_lookup_elem(&map_queue_claims, idx);
	if (owner && *owner == gen)
		bpf_map_delete_elem(&map_queue_claims, idx);
	/* the pid's name for it goes too: the pid's next image, or another process given the
	 * pid, draws a queue of its own */
	bpf_map_delete_elem(&deferred_of, &pid);
}

/* Queues `op` behind p's lock: enum defer_result. */
static __always_inline int map_queue_push(struct infl_proc *p, __u32 pid,
					  const struct infl_op *op)
{
	struct infl_op o = *op;
	void *q = map_queue_claim(pid, p->gen);

	if (!q)
		return DEFER_NO_QUEUE;
	o.gen = p->gen;
	__sync_fetch_and_add(&p->defer_tail, 1); /* before the push: tail >= head always */
	if (bpf_map_push_elem(q, &o, 0)) {
		__sync_fetch_and_add(&p->defer_tail, -1);
		return DEFER_FULL;
	}
	__sync_fetch_and_add(&deferred_ops, 1);
	return DEFER_QUEUED;
}

static __always_inline bool map_queue_empty(struct infl_proc *p)
{
	return READ_ONCE(p->defer_tail) == READ_ONCE(p->defer_head);
}

/* The lock held: the queue's next hit applied, or an earlier owner's dropped. 1 when one
 * was taken, 0 when the queue is empty. A global function, checked once; before 5.12 one
 * cannot take pointers, so it looks up its own. */
__noinline int map_queue_apply_next(__u32 pid)
{
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);
	struct infl_op op;
	void *q;

	if (!p)
		return 0;
	q = map_queue_of(pid, p->gen);
	if (!q || bpf_map_pop_elem(q, &op))
		return 0;
	if (op.gen != p->gen)
		return 1;
	apply_relooked(p, &op);
	p->defer_head++;
	return 1;
}

/* The lock held: up to MAP_DRAIN_STEP of the queue, in its order; how many were taken. Two
 * loops, each a global function: the verifier walks every iteration of a loop and keeps a
 * branch of each pending, 8192 at most. */
#define MAP_DRAIN_STEP 256
__noinline int map_queue_drain_step(__u32 pid)
{
	int i;

	for (i = 0; i < MAP_DRAIN_STEP; i++)
		if (!map_queue_apply_next(pid))
			break;
	return i;
}

/* The lock held: the whole queue, in its order. */
__noinline int map_queue_drain(__u32 pid)
{
	for (int i = 0; i < INFL_DEFER_SLOTS / MAP_DRAIN_STEP; i++)
		if (map_queue_drain_step(pid) < MAP_DRAIN_STEP)
			break;
	return 0;
}

/* The one way past the lock for a probe hit of the locked form: the lock after a few looks,
 * with nothing queued before the hit; else the queue; else the wait in lock_wait_more. */
static __always_inline enum lock_outcome lock_or_defer(struct infl_proc *p, __u32 pid,
						       const struct infl_op *op)
{
	int why;

	if (!defer_all && lock_map_look(&locks, pid, LOCK_MAP_LOOKS)) {
		if (map_queue_empty(p))
			return LOCKED;
		lock_map_release(&locks, pid);
	}
	why = map_queue_push(p, pid, op);
	if (why == DEFER_QUEUED)
		return DEFERRED;
	deferred_count_wait(p, why);
	return WAIT_MORE;
}

/*
 * The locked form's wait past one round of looks. A round is bounded by what a 5.10 verifier will
 * walk (LOCK_MAP_SPINS), ~20 us natively, while a holder on a vCPU that its hypervisor
 * descheduled (or an emulated one) is away for milliseconds: a hit that gave up then was
 * lost. Instead the hit is carried into lock_wait_more, which waits another round and tail
 * calls itself, LOCK_WAIT_ROUNDS rounds at most, then applies the hit under the lock or,
 * only after all of them, gives it up (counted). Those rounds count looks, not time, so
 * the wait scales with the CPU it runs on: ~0.7 ms natively, tens of ms under TCG.
 * The carry is per CPU: these kernels (before 5.17, so before 6.0) run uprobe programs with
 * preemption disabled and never two on one CPU at once (bpf_prog_active), so the chain has
 * its CPU's slot to itself, and the hit's thread, held in its probe, keeps its order.
 */
/* tail calls: the kernel's limit is 32 (33 from 5.12), and map_combine needs two after them */
#define LOCK_WAIT_ROUNDS 28

/* rounds waited in lock_wait_more, all processes: how often holders stalled (bench, -v) */
__u64 lock_wait_rounds = 0;

/* what map_combine is entered for */
enum carry_mode {
	CARRY_COMBINE, /* a hit was queued, or a holder released with hits queued: drain */
	CARRY_LOCKED,  /* the carried hit holds the lock and found hits queued: they go first */
};

struct lock_carry {
	struct infl_op op;
	__u64 gen;    /* the image whose hit it is */
	__u32 pid;
	__u16 rounds; /* rounds waited in lock_wait_more */
	__u16 mode;   /* enum carry_mode */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lock_carry);
} lock_carry SEC(".maps");

/* the locked form's tail calls, set by the loader where they are loaded */
enum lock_prog { LP_WAIT_MORE, LP_COMBINE, LP__COUNT };
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, LP__COUNT);
	__type(key, __u32);
	__type(value, __u32);
} lock_wait_progs SEC(".maps");

/* A hit given up: what its handler changed outside the lock is taken back where it must be
 * (a new buffer in the map must be in the totals), and it is counted. */
static __always_inline void hit_gave_up(struct infl_proc *p, const struct infl_op *op,
					__u32 pid)
{
	__sync_fetch_and_add(&p->lock_timeouts, 1);
	if (op->probe != INFL_PROBE_ALLOC)
		return;
	if (op->kind == AK_NEW || op->kind == AK_DUP) {
		struct infl_buf_key bk = { .pid = pid, .space = buf_space(op->flags),
					   .gen = p->gen, .buf = op->arg };

		bpf_map_delete_elem(&bufs, &bk);
	}
	if (op->kind != AK_BAD_CLASS)
		__sync_fetch_and_add(&p->untracked_allocs, 1);
}

/* WAIT_MORE: the hit goes on waiting in lock_wait_more (no return), or is given up when the
 * tail call cannot be made (no slot set). */
static __always_inline void wait_more(void *ctx, struct infl_proc *p, __u32 pid,
				      const struct infl_op *op)
{
	__u32 zero = 0;
	struct lock_carry *c = bpf_map_lookup_elem(&lock_carry, &zero);

	if (c) {
		c->op = *op;
		c->gen = p->gen;
		c->pid = pid;
		c->rounds = 0;
		bpf_tail_call(ctx, &lock_wait_progs, LP_WAIT_MORE);
	}
	hit_gave_up(p, op, pid);
}

/* into map_combine, with the carry's fields set for it (no return when it runs) */
static __always_inline void combine_call(void *ctx, struct lock_carry *c, __u32 pid, __u64 gen,
					 enum carry_mode mode)
{
	c->pid = pid;
	c->gen = gen;
	c->mode = mode;
	bpf_tail_call(ctx, &lock_wait_progs, LP_COMBINE);
}

SEC("usdt")
int lock_wait_more(struct pt_regs *ctx)
{
	__u32 zero = 0, pid;
	struct lock_carry *c = bpf_map_lookup_elem(&lock_carry, &zero);
	struct infl_proc *p;

	if (!c)
		return 0;
	pid = c->pid;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p || p->gen != c->gen) /* cannot be: the hit's thread lives in the image */
		return 0;
	__sync_fetch_and_add(&lock_wait_rounds, 1);
	if (map_queue_push(p, pid, &c->op) == DEFER_QUEUED) {
		/* room again: queued like any other; the push's attempt at the lock follows */
		combine_call(ctx, c, pid, p->gen, CARRY_COMBINE);
		return 0; /* no tail call left: the holder it failed against drains it */
	}
	if (lock_map_wait(&locks, pid)) {
		if (!map_queue_empty(p)) {
			/* what is queued may have happened before this hit: it goes behind */
			combine_call(ctx, c, pid, p->gen, CARRY_LOCKED);
			lock_map_release(&locks, pid);
			hit_gave_up(p, &c->op, pid);
			return 0;
		}
		apply_relooked(p, &c->op);
		lock_map_release(&locks, pid);
		if (!map_queue_empty(p))
			combine_call(ctx, c, pid, p->gen, CARRY_COMBINE);
		return 0;
	}
	/* rounds end a tail call early: map_combine needs one after them */
	if (++c->rounds < LOCK_WAIT_ROUNDS)
		bpf_tail_call(ctx, &lock_wait_progs, LP_WAIT_MORE);
	hit_gave_up(p, &c->op, pid);
	return 0;
}

/* map_combine's rounds: each takes the lock (a few looks), drains the queue, releases; the
 * last looks once more and goes on in a tail call of its own while hits keep coming */
#define COMBINE_ROUNDS 4
#define COMBINE_LOOKS 64
/* a carried hit that finds the queue refilled while it drains gives up after this many
 * drains (it is counted): producers then outrun the holder by a queue's length each time */
#define CARRY_PUSH_TRIES 4

/*
 * The queue applied by whoever can take the lock now (combining). Entered by a tail call,
 * from a handler after its push or after its release with hits queued (CARRY_COMBINE), or
 * from lock_wait_more holding the lock (CARRY_LOCKED: its carried hit goes behind the queue).
 */
SEC("usdt")
int map_combine(struct pt_regs *ctx)
{
	__u32 zero = 0, pid;
	struct lock_carry *c = bpf_map_lookup_elem(&lock_carry, &zero);
	struct infl_proc *p;
	bool queued = false;
	int r;

	if (!c)
		return 0;
	pid = c->pid;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p || p->gen != c->gen) /* cannot be: the hit's thread lives in the image */
		return 0;
	if (c->mode == CARRY_LOCKED) {
		c->mode = CARRY_COMBINE;
		for (r = 0; r < CARRY_PUSH_TRIES && !queued; r++) {
			map_queue_drain(pid);
			queued = map_queue_push(p, pid, &c->op) == DEFER_QUEUED;
		}
		if (queued)
			map_queue_drain(pid);
		lock_map_release(&locks, pid);
		if (!queued)
			hit_gave_up(p, &c->op, pid);
	}
	for (r = 0; r < COMBINE_ROUNDS; r++) {
		if (map_queue_empty(p) || !lock_map_look(&locks, pid, COMBINE_LOOKS))
			return 0; /* nothing left, or a holder that looks after its release */
		map_queue_drain(pid);
		lock_map_release(&locks, pid);
	}
	if (!map_queue_empty(p))
		bpf_tail_call(ctx, &lock_wait_progs, LP_COMBINE);
	return 0;
}

/* --- the owner each thread last named (libcuda's calls are charged to it) ------------------ */

/* libcuda is traced at all (not --no-cuda): without it the verifier prunes every use of the
 * maps below from the contract's programs */
const volatile bool cuda_enabled = false;
/* set by the loader once it attached libcuda somewhere: until then a contract hit does not
 * pay for the map update either */
volatile __u32 cuda_attached = 0;

/* libcuda's calls in progress: what the entry saw, for the return */
enum cuda_call_kind {
	CC_ALLOC, /* the pointer (or handle) at `out`, `bytes` long */
	CC_PITCH, /* cuMemAllocPitch: the pitch at `pitch`, times `bytes` rows */
	CC_FREE,  /* accounted at the entry: the return only counts a failure */
};

/* A traced thread's state, one map element by tid: written only by the thread itself (its
 * probe hits, and its exit, which deletes it; an exec deletes the exec'ing thread's) */
struct cuda_thread {
	__u64 owner; /* the owner it last named; 0: "no owner" (an alloc of owner 0) */
	__u64 gen;   /* the image it was named in (a tid outlives an exec); 0: never named */
	/* the call in progress, from its entry, while `pending` */
	__u64 out;
	__u64 bytes;
	__u64 pitch;
	__u32 cls;   /* INFL_CLS_CUDA_* */
	__u16 flags; /* INFL_BUF_CUDA [| INFL_BUF_HANDLE] */
	__u8 kind;   /* enum cuda_call_kind */
	__u8 pending;
};

/* Threads of traced processes that named an owner or called libcuda, at once: past it a
 * thread's calls are not seen (the loader sizes it to 1 with --no-cuda) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct cuda_thread);
} cuda_threads SEC(".maps");

static __always_inline void thread_names_owner(struct infl_proc *p, __u32 tid, __u64 owner)
{
	struct cuda_thread t = { .owner = owner, .gen = p->gen };
	struct cuda_thread *cur;

	if (!cuda_enabled || !READ_ONCE(cuda_attached))
		return;
	cur = map_lookup_or_init(&cuda_threads, &tid, &t);
	if (cur && (cur->owner != owner || cur->gen != t.gen)) {
		cur->owner = owner;
		cur->gen = t.gen;
	}
}

/* A traced thread's state ends with it (and with its image, at exec). */
static __always_inline void thread_forget(__u32 tgid, __u32 tid)
{
	if (!cuda_enabled || !READ_ONCE(cuda_attached) || !pid_maybe_traced(tgid))
		return;
	bpf_map_delete_elem(&cuda_threads, &tid);
}

/* --- the probes ---------------------------------------------------------------------------- */

/* An argument the fast path cannot read (a spec it does not know, a memory operand that
 * does not read) is counted (arg_errors), never dropped in silence. Every argument kind
 * libbpf's USDT specs have (constant, register, register + offset) is read here; a kind a
 * later libbpf adds lands in that counter until this learns it. */
static __always_inline bool probe_args(struct pt_regs *ctx, struct infl_proc *p, __u64 *a, int n)
{
	const struct usdt_maps m = { .specs = &usdt_specs, .ips = &usdt_ips,
				     .ip_cache = &usdt_ip_cache, .have_cookie = usdt_have_cookie };

	if (!usdt_args(ctx, &m, a, n))
		return true;
	__sync_fetch_and_add(&p->arg_errors, 1);
	return false;
}

/* `id` as the probe says: an event records its low byte (the kinds tell what is out of
 * range) */
static __always_inline struct infl_op op_new(__u8 probe, __u64 arg, __u64 id, __u64 bytes,
					    __u32 tid)
{
	return (struct infl_op){ .probe = probe, .arg = arg, .id = id, .bytes = bytes, .tid = tid };
}


/* After a locked-form hit: hits queued meanwhile (its own, or others' it saw after its
 * release) are applied by map_combine, which a tail call enters. */
static __always_inline void combine_after(void *ctx, struct infl_proc *p, __u32 pid)
{
	__u32 zero = 0;
	struct lock_carry *c;

	if (map_queue_empty(p))
		return;
	c = bpf_map_lookup_elem(&lock_carry, &zero);
	if (c)
		combine_call(ctx, c, pid, p->gen, CARRY_COMBINE);
}

/*
 * A locked-form hit once its handler's map operations are done: its section under the lock,
 * or the queue (`o`, `old_o`: the records the handler found). A record found stale sends the
 * hit through the queue, whose holder looks the records up again.
 */
static __always_inline int hit_locked(void *ctx, struct infl_proc *p, __u32 pid,
				      struct infl_op *op, struct infl_owner *o,
				      struct infl_owner *old_o)
{
	enum lock_outcome r = lock_or_defer(p, pid, op);
	int rc, why;

	if (r == LOCKED) {
		/* a free of a buffer its owner holds, whose owner the handler did not find: the
		 * thread's own earlier hits may still have been queued then, the one that makes
		 * the owner's record among them; the holder of the queue looks again */
		if (!o && op->probe == INFL_PROBE_FREE && op->kind == FK_FOUND &&
		    !(op->prev.flags & INFL_BUF_UNSTAGED))
			rc = SECTION_STALE;
		else
			rc = section_of(p, op, o, old_o);
		if (rc != SECTION_STALE) {
			section_forget(p, op, rc);
			lock_map_release(&locks, pid);
			combine_after(ctx, p, pid);
			return 0;
		}
		lock_map_release(&locks, pid);
		why = map_queue_push(p, pid, op);
		if (why == DEFER_QUEUED) {
			combine_after(ctx, p, pid);
			return 0;
		}
		deferred_count_wait(p, why);
		r = WAIT_MORE; /* lock_wait_more tries the queue, or relooks under the lock */
	}
	if (r == WAIT_MORE) {
		wait_more(ctx, p, pid, op);
		return 0;
	}
	combine_after(ctx, p, pid);
	return 0;
}

/*
 * The handlers. The atomic form: its owner held (hit_owner), then its accounting, whose
 * map operations come in their place among its steps (acct_alloc). The locked form: map
 * operations first, outside the lock (a buffer's insert or delete decides who owns it when
 * threads race), then the section, or the queue.
 */

/*
 * An alloc, from the contract's probe (a[]: buf, class, bytes, owner) or from libcuda's
 * return (`flags`: INFL_BUF_CUDA, and the class one of the tracer's own). One path for both,
 * so that a device buffer is counted, moved and peaked exactly as a program's buffer is.
 */
static __always_inline int alloc_apply(void *ctx, struct infl_proc *p, __u32 pid, __u32 tid,
				       const __u64 *a, __u32 flags, const enum acct_mode m)
{
	struct infl_owner *o = NULL, *old_o = NULL;
	struct infl_op op;

	op = op_new(INFL_PROBE_ALLOC, a[0], a[1], a[2], tid);
	op.owner = a[3];
	op.kind = AK_NEW;
	op.flags = flags;
	if (a[1] >= (flags & INFL_BUF_CUDA ? INFL_CLASSES : INFL_MAX_CLASSES)) {
		op.kind = AK_BAD_CLASS;
		WRITE_ONCE(p->bad_class_seen, a[1]);
		if (m == ACCT_ATOMIC)
			return hit_refused(p, pid, &op, RF_BAD_CLASS);
		return hit_locked(ctx, p, pid, &op, NULL, NULL);
	}
	if (m == ACCT_ATOMIC) {
		if (op.owner)
			o = hit_owner(p, pid, &op, op.owner, 1, true);
		if (!o)
			op.flags |= INFL_BUF_UNSTAGED;
		hit_alloc(p, pid, &op, o);
		/* the buffer it replaced, after it (a call of its own: one frame at a time) */
		if (op.flags & OPF_REPLACED)
			hit_replaced(p, pid, &op);
		return 0;
	}
	if (op.owner) {
		struct infl_owner_key ok = { .pid = pid, .gen = p->gen, .owner = op.owner };

		o = owner_get(&ok);
	}
	if (!o)
		op.flags |= INFL_BUF_UNSTAGED;
	{
		struct hit_env env;

		hit_env_init(&env, pid);
		buf_publish(&env, p, &op);
	}
	if ((op.flags & OPF_REPLACED) && !(op.prev.flags & INFL_BUF_UNSTAGED))
		old_o = owner_lookup(pid, p->gen, op.prev.owner);
	return hit_locked(ctx, p, pid, &op, o, old_o);
}

static __always_inline int handle_alloc(struct pt_regs *ctx, const enum acct_mode m)
{
	struct infl_proc *p;
	__u32 pid, tid;
	__u64 a[4];

	p = proc_current(&pid, &tid, m);
	if (!p || !probe_args(ctx, p, a, 4))
		return 0;
	thread_names_owner(p, tid, a[3]);
	return alloc_apply(ctx, p, pid, tid, a, 0, m);
}

/* A free, from the contract's probe (a[]: buf, class, bytes) or from libcuda's entry
 * (`flags` as for alloc_apply; the class is where a free of an unknown buffer is counted). */
static __always_inline int free_apply(void *ctx, struct infl_proc *p, __u32 pid, __u32 tid,
				      const __u64 *a, __u32 flags, const enum acct_mode m)
{
	struct infl_buf_key bk = {};
	struct infl_owner *o = NULL;
	struct infl_buf *b;
	struct infl_op op;

	op = op_new(INFL_PROBE_FREE, a[0], a[1], a[2], tid);
	op.kind = FK_UNKNOWN;
	op.flags = flags;
	if (a[1] >= (flags & INFL_BUF_CUDA ? INFL_CLASSES : INFL_MAX_CLASSES)) {
		op.flags |= OPF_BAD_CLASS;
		WRITE_ONCE(p->bad_class_seen, a[1]);
	}
	bk = (struct infl_buf_key){ .pid = pid, .space = buf_space(flags), .gen = p->gen,
				    .buf = op.arg };
	b = bpf_map_lookup_elem(&bufs, &bk);
	if (b) {
		op.prev = *b;
		/* the delete decides who owns the free if two threads race on one buffer */
		if (!bpf_map_delete_elem(&bufs, &bk))
			op.kind = FK_FOUND;
	}
	if (op.kind == FK_FOUND && !(op.prev.flags & INFL_BUF_UNSTAGED)) {
		if (m == ACCT_ATOMIC)
			o = hit_owner(p, pid, &op, op.prev.owner, 0, false);
		else
			o = owner_lookup(pid, p->gen, op.prev.owner);
	}
	if (m == ACCT_ATOMIC)
		return hit_free(p, pid, &op, o);
	return hit_locked(ctx, p, pid, &op, o, NULL);
}

static __always_inline int handle_free(struct pt_regs *ctx, const enum acct_mode m)
{
	struct infl_proc *p;
	__u32 pid, tid;
	__u64 a[4];

	p = proc_current(&pid, &tid, m);
	if (!p || !probe_args(ctx, p, a, 3))
		return 0;
	return free_apply(ctx, p, pid, tid, a, 0, m);
}

static __always_inline int handle_stage(struct pt_regs *ctx, const enum acct_mode m)
{
	struct infl_owner *o = NULL;
	struct infl_proc *p;
	struct infl_op op;
	__u32 pid, tid;
	__u64 a[4];

	p = proc_current(&pid, &tid, m);
	if (!p || !probe_args(ctx, p, a, 2))
		return 0;
	if (a[0]) /* owner 0 has no stage: the event is refused, and names no one */
		thread_names_owner(p, tid, a[0]);
	op = op_new(INFL_PROBE_STAGE, a[0], a[1], 0, tid);
	op.kind = SK_MOVE;
	if (a[1] >= INFL_MAX_STAGES) {
		op.kind = SK_BAD_STAGE;
		WRITE_ONCE(p->bad_stage_seen, a[1]);
	} else if (!op.arg) {
		op.kind = SK_OWNER0; /* owner 0 is "no owner": it has no stage to enter */
	} else if (m == ACCT_ATOMIC) {
		o = hit_owner(p, pid, &op, op.arg, 0, true);
		if (!o)
			op.kind = SK_MAP_FULL;
	} else {
		struct infl_owner_key ok = { .pid = pid, .gen = p->gen, .owner = op.arg };

		o = owner_get(&ok);
		if (!o)
			op.kind = SK_MAP_FULL;
	}
	if (m == ACCT_LOCKED)
		return hit_locked(ctx, p, pid, &op, o, NULL);
	if (op.kind == SK_MOVE)
		return hit_stage(p, pid, &op, o);
	return hit_refused(p, pid, &op, op.kind == SK_BAD_STAGE ? RF_BAD_STAGE :
				   op.kind == SK_OWNER0	   ? RF_OWNER0 :
				   op.flags & OPF_OWNER_LOST ? RF_OWNER_LOST : RF_OWNER_FULL);
}

/* A program in both forms: `name` (the atomic form) and `name`_nocas (the locked form); the
 * loader loads one (attach/programs.c) */
#define ACCT_FORMS(sec, name, handler)                                                         \
	SEC(sec)                                                                               \
	int name(struct pt_regs *ctx)                                                          \
	{                                                                                      \
		return handler(ctx, ACCT_ATOMIC);                                              \
	}                                                                                      \
	SEC(sec)                                                                               \
	int name##_nocas(struct pt_regs *ctx)                                                  \
	{                                                                                      \
		return handler(ctx, ACCT_LOCKED);                                              \
	}

ACCT_FORMS("usdt", on_buf_alloc, handle_alloc)
ACCT_FORMS("usdt", on_buf_free, handle_free)
ACCT_FORMS("usdt", on_stage, handle_stage)
/* --- libcuda's memory calls ------------------------------------------------------------------ */

/*
 * The driver API's allocations and frees, attached by function name in the libcuda a traced
 * process maps (attach/cuda.c): one entry program per function (its arguments differ) and
 * one return program for all. An allocation is accounted at its return, when the CUresult
 * says it succeeded and the pointer or handle is in the out-argument the entry saved; a free
 * at its entry, before the driver can hand the address out again (accounted at the return, a
 * free could be applied after another thread's alloc of the same address). A free the driver
 * then refuses is counted as failed, its buffer gone from the totals all the same.
 */

/* A call of a process we trace, or (-b) of a process of a binary we attached. */
static __always_inline bool cuda_wanted(__u32 pid)
{
	if (traced_set)
		return pid_maybe_traced(pid);
	/* -b: libcuda is attached for every process on the host, and a process of the binary
	 * may call it before its first contract event made its record */
	if (bpf_map_lookup_elem(&procs, &pid))
		return true;
	return image_attached_before((struct task_struct *)bpf_get_current_task(), ~0ull);
}

static __always_inline int cuda_entry(__u64 out, __u64 bytes, __u64 pitch, __u32 cls,
				      __u32 kind, __u32 flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct cuda_thread *t, c = { .out = out, .bytes = bytes, .pitch = pitch, .cls = cls,
				     .flags = flags, .kind = kind, .pending = 1 };

	if (READ_ONCE(stopped) || !cuda_wanted(id >> 32))
		return 0;
	/* a call nested in another (the driver calling its own entry points) replaces it: its
	 * return consumes it, and the outer return finds none pending, so one allocation is
	 * counted once */
	t = map_lookup_or_init(&cuda_threads, &tid, &c);
	if (!t)
		return 0; /* the map is full: the thread's calls are not seen */
	t->out = out;
	t->bytes = bytes;
	t->pitch = pitch;
	t->cls = cls;
	t->flags = flags;
	t->kind = kind;
	t->pending = 1;
	return 0;
}

static __always_inline int handle_cuda_ret(struct pt_regs *ctx, const enum acct_mode m)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), pid, flags;
	struct cuda_thread *t = bpf_map_lookup_elem(&cuda_threads, &tid);
	int rc = (int)PT_REGS_RC(ctx); /* CUresult, an enum: 0 is CUDA_SUCCESS */
	__u64 a[4] = {}, ptr = 0, pitch = 1;
	struct infl_proc *p;

	if (!t || !t->pending)
		return 0;
	/* the call's fields are read from the element, not from a copy: only this thread
	 * writes it, and a copy took 6.1's combined stack of the program past 512 bytes */
	t->pending = 0;
	p = proc_current(&pid, &tid, m);
	if (!p)
		return 0;
	if (rc) {
		__sync_fetch_and_add(&p->cuda_failed, 1);
		return 0;
	}
	if (t->kind == CC_FREE)
		return 0;
	if (bpf_probe_read_user(&ptr, sizeof(ptr), (const void *)t->out) ||
	    (t->kind == CC_PITCH &&
	     bpf_probe_read_user(&pitch, sizeof(pitch), (const void *)t->pitch))) {
		__sync_fetch_and_add(&p->arg_errors, 1);
		return 0;
	}
	a[0] = ptr;
	a[1] = t->cls;
	a[2] = t->bytes * (t->kind == CC_PITCH ? pitch : 1);
	a[3] = t->gen == p->gen ? t->owner : 0; /* the owner the thread last named, here */
	flags = t->flags;
	return alloc_apply(ctx, p, pid, tid, a, flags, m);
}

static __always_inline int handle_cuda_free(void *ctx, __u64 ptr, __u32 cls, __u32 flags,
					    const enum acct_mode m)
{
	__u64 a[4] = { ptr, cls, 0, 0 };
	struct infl_proc *p;
	__u32 pid, tid;

	cuda_entry(0, 0, 0, cls, CC_FREE, flags); /* its return counts a failure */
	if (!ptr || !cuda_wanted(bpf_get_current_pid_tgid() >> 32))
		return 0; /* freeing nothing frees nothing */
	p = proc_current(&pid, &tid, m);
	if (!p)
		return 0;
	return free_apply(ctx, p, pid, tid, a, flags, m);
}

#define CUDA_DEV INFL_CLS_CUDA_DEVICE
#define CUDA_PTR INFL_BUF_CUDA
#define CUDA_HANDLE (INFL_BUF_CUDA | INFL_BUF_HANDLE)

/* CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) */
SEC("uprobe")
int BPF_KPROBE(on_cu_mem_alloc, void *dptr, __u64 bytes)
{
	return cuda_entry((__u64)dptr, bytes, 0, CUDA_DEV, CC_ALLOC, CUDA_PTR);
}

/* cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
 * unsigned int element_size): pitch x height bytes */
SEC("uprobe")
int BPF_KPROBE(on_cu_mem_alloc_pitch, void *dptr, void *pitch, __u64 width, __u64 height)
{
	return cuda_entry((__u64)dptr, height, (__u64)pitch, CUDA_DEV, CC_PITCH, CUDA_PTR);
}

/* cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) */
SEC("uprobe")
int BPF_KPROBE(on_cu_mem_alloc_managed, void *dptr, __u64 bytes)
{
	return cuda_entry((__u64)dptr, bytes, 0, INFL_CLS_CUDA_MANAGED, CC_ALLOC, CUDA_PTR);
}

/* cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream), and
 * cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream) */
SEC("uprobe")
int BPF_KPROBE(on_cu_mem_alloc_async, void *dptr, __u64 bytes)
{
	return cuda_entry((__u64)dptr, bytes, 0, CUDA_DEV, CC_ALLOC, CUDA_PTR);
}

/* cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags), and
 * cuMemAllocHost_v2(void **pp, size_t bytesize) */
SEC("uprobe")
int BPF_KPROBE(on_cu_mem_host_alloc, void *pp, __u64 bytes)
{
	return cuda_entry((__u64)pp, bytes, 0, INFL_CLS_CUDA_HOST, CC_ALLOC, CUDA_PTR);
}

/* cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
 * const CUmemAllocationProp *prop, unsigned long long flags): the buffer is the handle */
SEC("uprobe")
int BPF_KPROBE(on_cu_mem_create, void *handle, __u64 bytes)
{
	return cuda_entry((__u64)handle, bytes, 0, CUDA_DEV, CC_ALLOC, CUDA_HANDLE);
}

ACCT_FORMS("uretprobe", on_cu_ret, handle_cuda_ret)

/* the frees, accounted at their entry: one program per form */
#define CUDA_FREE_PROG(name, cls, flags)                                                       \
	SEC("uprobe")                                                                          \
	int BPF_KPROBE(name, __u64 ptr)                                                        \
	{                                                                                      \
		return handle_cuda_free(ctx, ptr, cls, flags, ACCT_ATOMIC);                         \
	}                                                                                      \
	SEC("uprobe")                                                                          \
	int BPF_KPROBE(name##_nocas, __u64 ptr)                                                \
	{                                                                                      \
		return handle_cuda_free(ctx, ptr, cls, flags, ACCT_LOCKED);                         \
	}
/* cuMemFree_v2(CUdeviceptr), cuMemFreeAsync(CUdeviceptr, CUstream): device or managed; a
 * free of a pointer never seen is counted as device memory */
CUDA_FREE_PROG(on_cu_mem_free, CUDA_DEV, CUDA_PTR)
/* cuMemFreeHost(void *) */
CUDA_FREE_PROG(on_cu_mem_free_host, INFL_CLS_CUDA_HOST, CUDA_PTR)
/* cuMemRelease(CUmemGenericAllocationHandle) */
CUDA_FREE_PROG(on_cu_mem_release, CUDA_DEV, CUDA_HANDLE)

/* --- RSS ----------------------------------------------------------------------------------- */

/*
 * Without a lock, in both forms: RSS member `member` of the process is now `size` bytes.
 * Each field is one aligned store; two CPUs updating one process's RSS at once may leave
 * rss_total a moment behind one of them, never torn. The peak is a compare-and-swap maximum where the
 * kernel has cmpxchg; on 5.10 and 5.11 two simultaneous new peaks may keep the smaller.
 * Returns the new total.
 */
static __always_inline __u64 rss_update(struct infl_proc *p, __u32 member, long size, __u64 now,
					const enum acct_mode m)
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
	if (m == ACCT_ATOMIC) {
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
	WRITE_ONCE(p->tracked_at_rss_peak, infl_acct_bytes(READ_ONCE(p->acct)));
	return total;
}

/*
 * Record mode: an RSS change of a step or more becomes an event. Its time and order are
 * taken while no probe hit is between its place and its end, so that it sits between the
 * accounting events around it in both: hits_done read first, the order's count last, as the
 * loader copies a record. The tracepoint never waits, though: when a hit is in flight, this
 * change is not recorded, and the next one (or the next snapshot) carries the value. A
 * compare-and-swap on rss_emitted lets one of two CPUs emit a step (before 5.12 both may).
 */
static __always_inline void rss_emit(struct infl_proc *p, __u32 pid, __u64 total,
				     const enum acct_mode m)
{
	struct infl_event *ev;
	__u64 last = READ_ONCE(p->rss_emitted), now, done, tracked;
	void *ring;

	if (total - last < RSS_EVENT_STEP && last - total < RSS_EVENT_STEP)
		return;
	done = READ_ONCE(p->hits_done);
	barrier();
	now = bpf_ktime_get_ns();
	tracked = READ_ONCE(p->tracked_at_rss_peak);
	barrier();
	if (infl_acct_seq_lo(READ_ONCE(p->acct)) != ((__u32)done & INFL_ACCT_SEQ_MASK))
		return; /* a hit is in flight */
	if (m == ACCT_ATOMIC) {
		if (__sync_val_compare_and_swap(&p->rss_emitted, last, total) != last)
			return; /* another CPU emitted this step */
	} else {
		/* no cmpxchg before 5.12: two CPUs may emit one step, each a true reading */
		WRITE_ONCE(p->rss_emitted, total);
	}
	ring = event_ring();
	ev = ring ? bpf_ringbuf_reserve(ring, sizeof(*ev), 0) : NULL;
	if (!ev) {
		__sync_fetch_and_add(&p->ring_drops, 1);
		return;
	}
	/* not an accounting event: its seq is the accounting order it follows */
	event_fill(ev, done, now, pid, (__u32)bpf_get_current_pid_tgid(), INFL_EV_RSS, 0, 0,
		   INFL_SLOT_NONE, total, tracked, 0);
	bpf_ringbuf_submit(ev, ring_flags(ring, true));
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
static __always_inline int handle_rss(struct mm_struct *mm, int member, const enum acct_mode m,
				      const enum rss_layout_kind rl)
{
	struct infl_proc *p;
	__u64 total;
	long pages;
	__u32 pid;

	if (member < 0 || member >= INFL_RSS__COUNT)
		return 0;
	/* the common case on a host: a process nobody traces, faulting its own pages */
	if (rss_of_untraced(mm))
		return 0;
	p = rss_proc(mm, &pid, rl);
	if (!p)
		return 0;
	pages = mm_rss_pages(mm, member, rl);
	total = rss_update(p, member, pages << page_shift, bpf_ktime_get_ns(), m);
	if (record_events)
		rss_emit(p, pid, total, m);
	return 0;
}

/* one program per form and mm_struct layout; the loader loads one */
#define RSS_PROG(name, m, rl)                                                                 \
	SEC("tp_btf/rss_stat")                                                                 \
	int BPF_PROG(name, struct mm_struct *mm, int member)                                   \
	{                                                                                      \
		return handle_rss(mm, member, m, rl);                                         \
	}
RSS_PROG(on_rss_stat, ACCT_ATOMIC, RL_PERCPU)
RSS_PROG(on_rss_stat_pre62, ACCT_ATOMIC, RL_PRE62)
RSS_PROG(on_rss_stat_nocas, ACCT_LOCKED, RL_PERCPU)
RSS_PROG(on_rss_stat_nocas_pre62, ACCT_LOCKED, RL_PRE62)

/* --- the process's life --------------------------------------------------------------------- */

/*
 * An image ended (exit, or exec): it is no more than its final record. The record goes to
 * the loader through the control ring and leaves `procs`, so that a reused pid (or the new
 * image) starts afresh; what it left in `bufs` and `owners` is keyed by its gen, where no
 * later record of the pid will look, and the loader removes it. When the control ring is
 * full the record stays, marked exited, until the loader sweeps it (session.c).
 * No lock, in either form: no other thread of the image is left to race with.
 */
static __always_inline void image_end(struct infl_proc *p, __u32 pid, __u32 type, __u64 now,
				      const enum acct_mode m)
{
	struct infl_event *ev;
	struct infl_ctl *c;
	__u64 mm = p->rss_mm;
	void *ring;

	p->exit_ns = now;
	p->exited = 1;
	if (type == INFL_CTL_EXEC)
		p->flags |= INFL_PROC_EXEC;
	/* The locked form: hits still queued behind the lock (a combiner stops at the kernel's
	 * limit of tail calls, and the image's last hits may leave some) are applied now, no
	 * other thread being left to hold the lock; what still cannot be is counted. */
	if (m == ACCT_LOCKED && p->defer_tail != p->defer_head && lock_map_try(&locks, pid)) {
		map_queue_drain(pid);
		lock_map_release(&locks, pid);
	}
	p->lock_timeouts += p->defer_tail - p->defer_head;
	p->defer_head = p->defer_tail;
	infl_proc_derive(p);
	pid_mark(pid, 0); /* an exec's new image marks it again (proc_create) */
	if (mm)
		bpf_map_delete_elem(&mm_pids, &mm);
	map_queue_release(pid, p->gen);
	if (p->seq && record_events) {
		ring = event_ring();
		ev = ring ? bpf_ringbuf_reserve(ring, sizeof(*ev), 0) : NULL;
		if (ev) {
			event_fill(ev, p->seq, now, pid, (__u32)bpf_get_current_pid_tgid(), INFL_EV_EXIT,
				   0, 0, INFL_SLOT_NONE, p->total_bytes, p->total_bufs, 0);
			bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
		} else {
			__sync_fetch_and_add(&p->ring_drops, 1);
		}
	}
	if (!p->seq && !p->arg_errors && !p->lock_timeouts && !p->missed_events &&
	    !p->contention_lost) {
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

/* The end of a process: its last thread's exit. */
static __always_inline int handle_exit(struct task_struct *task, const enum acct_mode m)
{
	__u32 pid = BPF_CORE_READ(task, tgid);
	struct infl_proc *p;

	/* the whole process is gone only when its last thread exits (live is decremented
	 * before the tracepoint fires, on every kernel since 2.6) */
	thread_forget(pid, BPF_CORE_READ(task, pid)); /* every thread's exit */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p || READ_ONCE(p->exited))
		return 0;
	image_end(p, pid, INFL_CTL_EXIT, bpf_ktime_get_ns(), m);
	return 0;
}

/*
 * exec replaced a traced process's image: the old one ends here, with whatever it still
 * held (gone with its address space, not leaked), and the pid stays traced as a new image:
 * the probes of a binary already attached fire from its first instruction; for another
 * binary the loader is told (INFL_CTL_EXEC) and attaches if it carries the contract.
 */
static __always_inline int handle_exec(struct task_struct *task, struct linux_binprm *bprm,
				       const enum acct_mode m)
{
	__u32 pid = BPF_CORE_READ(task, tgid), flags = INFL_PROC_EXEC_BORN;
	struct infl_image_key k = {
		.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
	};
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);
	__u64 now = bpf_ktime_get_ns();
	__u32 ppid;

	if (!p || READ_ONCE(p->exited))
		return 0;
	ppid = p->ppid;
	thread_forget(pid, BPF_CORE_READ(task, pid)); /* what it named was the old image's */
	image_end(p, pid, INFL_CTL_EXEC, now, m);
	if (bpf_map_lookup_elem(&images, &k))
		flags |= INFL_PROC_FROM_START;
	if (!proc_create(pid, task, flags, ppid))
		proc_denied(task, pid);
	return 0;
}

/* one program per form: the locked form's applies what its image still queued */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	return handle_exit(task, ACCT_ATOMIC);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit_nocas, struct task_struct *task)
{
	return handle_exit(task, ACCT_LOCKED);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_process_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	return handle_exec(task, bprm, ACCT_ATOMIC);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_process_exec_nocas, struct task_struct *task, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	return handle_exec(task, bprm, ACCT_LOCKED);
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

/* --- the OOM killer's victims among the traced processes (oom.bpf.h) ----------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_OOM_MAX);
	__type(key, __u32); /* the traced pid (tgid) */
	__type(value, struct infl_oom_kill);
} oom_kills SEC(".maps");

SEC("raw_tp/mark_victim")
int on_oom_victim(struct bpf_raw_tracepoint_args *ctx)
{
	struct infl_oom_kill k = { 0 };
	struct infl_proc *p;
	__u32 tgid, tid;

	oom_victim_of(ctx->args[0], &tgid, &tid);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0; /* not a process we trace */
	k.ns = bpf_ktime_get_ns();
	k.tid = tid;
	/* read while probe hits go on: a snapshot of the instant, not an update */
	k.seq = READ_ONCE(p->hits_done);
	k.tracked_bytes = infl_acct_bytes(READ_ONCE(p->acct));
	k.tracked_bufs = infl_cells_count(p->cur);
	k.rss_bytes = p->rss_total;
	bpf_map_update_elem(&oom_kills, &tgid, &k, BPF_ANY);
	return 0;
}


