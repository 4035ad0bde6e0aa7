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
 * process happens under one lock in its infl_proc (proc_lock.bpf.h: its two forms). A uprobe
 * handler that finds it held queues its hit for the holder and returns: in a ring where the
 * kernel has cmpxchg and bpf_loop (deferred.bpf.h), in a BPF queue map before 5.17 (below:
 * "the queue behind the lock before 5.17"). Only when the queue is full does it wait, and
 * then it gives up and counts the event in lock_timeouts, which marks the totals inexact.
 * The tracepoint handlers never wait: the RSS fields are written without the lock, and exit
 * and exec run when no other thread of the process is left to race with. A handler's map
 * element creation and deletion happen outside the lock; a queued hit's lookups are
 * repeated by whoever applies it.
 *
 * Every program exists twice, for the two lock forms (suffix _nocas: kernels without BPF
 * cmpxchg or bpf_loop, before 5.17, with the queue map, map_combine and lock_wait_more);
 * the loader loads one set (attach/session.c, from attach/features.c's answers).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "inflight.h"
#include "once.bpf.h"
#include "combining.bpf.h"
#include "deferred.bpf.h"
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
const volatile __u64 events_wake_bytes = 0; /* wake the recorder past this much unread data */
const volatile bool defer_all = false;	   /* tests: every probe hit goes through the queue
					    * (deferred.bpf.h), as if the lock were always held */

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

/* --- the per-process lock's (proc_lock.bpf.h) and the queue behind it (deferred.bpf.h) --- */

/*
 * How long a probe hit waits for the lock or a slot when its queue is full (LK_CAS), or for
 * a process's record that another thread is making, before it gives up (counted). A hit
 * that finds the lock held does not wait: it queues. Its queue is full only when the holder
 * has been away from its CPU for as long as the other threads take to fire 16384 hits: a
 * vCPU the hypervisor descheduled, an interrupt storm, a preempted holder on PREEMPT_RT;
 * milliseconds, not microseconds. So the wait is 10 ms: on this 2-vCPU machine, 2 threads
 * recording flat out gave up 2-78 hits a run (4 runs of 2 M) with a 50 us wait, and none
 * with 10 ms. The waiter spins preemptible where the kernel preempts BPF (6.0+: migration,
 * not preemption, is disabled), so a holder preempted on its CPU gets it back at the
 * waiter's next tick. Measured: bench/ (probe_cost, lock_stall, record_ceiling),
 * docs/bench.md; tested: tests/t_stress_contention.sh.
 */
#define LOCK_WAIT_NS 10000000 /* the default of lock_wait_ns */
/* The wait, set by the loader: LOCK_WAIT_NS, longer only where the tests run on an
 * emulated CPU (TCG), where a microsecond of work takes fifty (session_opts.lock_wait_ns). */
const volatile __u64 lock_wait_ns = LOCK_WAIT_NS;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_DEFAULT_MAX_PROCS); /* resized with procs */
	__type(key, __u32);
	__type(value, __u8);
} locks SEC(".maps");

/* the pool of queue segments (deferred.bpf.h), and where a claim begins to look */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INFL_DEFER_POOL_SEGS); /* resized by the loader (1: no queues) */
	__type(key, __u32);
	__type(value, struct infl_deferred);
} deferred SEC(".maps");
const volatile __u32 deferred_segs = INFL_DEFER_POOL_SEGS; /* deferred's size */
__u64 deferred_next = 0;

/* LK_MAP: a process's queue map (map_queues), by pid */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INFL_DEFER_MAX_QUEUES); /* resized by the loader */
	__type(key, __u32);   /* pid */
	__type(value, __u32); /* its queue in map_queues */
} deferred_of SEC(".maps");

/* probe hits that went through a queue, and that found one full and waited, all processes
 * (the tests) */
__u64 deferred_ops = 0;
__u64 deferred_full = 0;

/* Queues `op` for the holder of p's lock, the current process's (enum defer_result): when it
 * could not, the caller waits for the lock or a slot. A global function: the kernel's
 * verifier checks it once, whatever calls it. */
__noinline int queue_op(struct infl_proc *p, const struct infl_op *op)
{
	struct defer_pool dp = { .pool = &deferred, .next = &deferred_next,
				 .segs = deferred_segs };

	if (!p || !op)
		return DEFER_FULL;
	return deferred_enqueue(&dp, p, op, &deferred_ops);
}

/* templates for new map elements (too big for the 512-byte stack); a record other threads
 * may find before it is filled is not ready until its gen is set (proc_init) */
static const struct infl_proc zero_proc;
static const struct infl_ident zero_ident;
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
 * Fills a record just inserted for `task`, then publishes it: `gen` is stored last, and a
 * record with gen 0 is not ready (proc_wait_ready). Its maker is alone with it: made by a
 * tracepoint, no thread of the process runs yet; made by a probe hit, the others wait for
 * its gen (LK_MAP: for the lock its maker holds).
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
	pid_mark(pid, 1);
	/* the denied key's slot, reused as the ident's key (pid, gen): the probe handlers that
	 * inline this have no stack to spare (6.1: 512 bytes for the program and its calls) */
	dk.start_ns = now;
	ident_note(task, &dk);
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

struct gen_wait {
	struct infl_proc *p;
	__u64 deadline;
};

/* bpf_loop callback: one look at a record being filled, the clock every 64 looks */
static long gen_wait_one(__u32 i, void *ctx)
{
	struct gen_wait *w = ctx;

	if (!w->p || READ_ONCE(w->p->gen))
		return 1;
	return (i & 63) == 63 && bpf_ktime_get_ns() > w->deadline;
}

/* A record another thread may still be filling: with LK_CAS its gen tells when it is ready;
 * with LK_MAP its creator holds the lock until then. The wait is lock_wait_ns at most. */
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
	if (lk == LK_CAS) {
		struct gen_wait w = { .p = p, .deadline = bpf_ktime_get_ns() + lock_wait_ns };

		bpf_loop(LOCK_LOOPS, gen_wait_one, &w, 0);
		if (READ_ONCE(p->gen))
			return p;
		__sync_fetch_and_add(&p->lock_timeouts, 1);
		return NULL;
	}
	if (!lock_map_wait(&locks, pid, lock_wait_ns)) {
			__sync_fetch_and_add(&p->lock_timeouts, 1);
		return NULL;
	}
	proc_lock_release(&locks, p, pid, lk);
	return READ_ONCE(p->gen) ? p : NULL;
}

/* The first probe hit of a process that is not part of a traced set (-b) makes its record. */
static __always_inline struct infl_proc *proc_first_hit(__u32 pid, const enum lock_kind lk)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 flags = 0;
	struct infl_proc *p;

	if (image_attached_before(task, BPF_CORE_READ(task, group_leader, start_time)))
		flags |= INFL_PROC_FROM_START;
	if (lk == LK_MAP && !lock_map_try(&locks, pid))
		return proc_wait_ready(bpf_map_lookup_elem(&procs, &pid), pid, lk);
	if (bpf_map_update_elem(&procs, &pid, &zero_proc, BPF_NOEXIST)) {
		/* EEXIST: another thread made it first; else the map is full */
		if (lk == LK_MAP)
			proc_lock_release(&locks, NULL, pid, lk);
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p)
			proc_denied(task, pid);
		return proc_wait_ready(p, pid, lk);
	}
	p = bpf_map_lookup_elem(&procs, &pid);
	if (p)
		proc_init(p, task, pid, flags, 0, bpf_ktime_get_ns());
	if (lk == LK_MAP)
		proc_lock_release(&locks, NULL, pid, lk);
	return p;
}

/* The same, a call of its own where the queue exists: its locals then stay out of the probe
 * handler's frame, which 6.1 counts with the drain's and the queue's frames (512 bytes in
 * all). The LK_MAP programs, which tail call and run on kernels that refuse a subprogram
 * beside a large frame there, keep it inline. */
static __noinline struct infl_proc *proc_first_hit_cas(__u32 pid)
{
	return proc_first_hit(pid, LK_CAS);
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
	if (lk == LK_CAS)
		return proc_first_hit_cas(pid);
	return proc_first_hit(pid, lk);
}

/* --- events ------------------------------------------------------------------------------ */

/*
 * Under the lock: count the event and give it its order. The clock is read only when
 * something needs it (stage dwell, a recorded event, a new peak, the first event): it is
 * the costliest helper on this path, and most allocs and frees need no time at all.
 * Returns the time, or 0 when it was not read.
 */
static __always_inline __u64 account_event(struct infl_proc *p, __u32 probe, bool timed)
{
	__u64 now = 0;

	p->seq++;
	if (timed || record_events || !p->first_ns) {
		now = bpf_ktime_get_ns();
		if (!p->first_ns)
			p->first_ns = now;
		p->last_ns = now;
	}
	/* clamped where it indexes: 5.10's verifier loses the bound of a value it spilled */
	if (probe < INFL_PROBE__COUNT)
		p->events[CLAMPED(probe, INFL_PROBE__COUNT)]++;
	return now;
}

/* Every recorded event is built here: `seq` is the accounting order it takes (or, for one
 * that is not an accounting event, follows). */
static __always_inline void event_fill(struct infl_event *ev, __u64 seq, __u64 now, __u32 pid,
				       __u32 tid, __u8 type, __u8 id, __u8 flags, __u8 slot,
				       __u64 a0, __u64 a1, __u64 a2)
{
	ev->ts_ns = now;
	ev->seq = seq;
	ev->pid = pid;
	ev->tid = tid;
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
static __always_inline __u64 ring_flags(void *ring)
{
	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= events_wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * Under the lock: a recorded event's record, on the stack, for the thread that hit the
 * probe (`op->tid`: the holder may be applying another thread's queued hit). It is copied
 * into the ring by event_finish: no reservation is held across the lock, and none is tested
 * for NULL twice, which 6.1's verifier cannot follow ("Unreleased reference").
 */
static __always_inline void event_note(struct infl_event *ev, struct infl_proc *p, __u64 now,
				       const struct infl_op *op, __u8 type, __u8 id, __u8 flags,
				       __u8 slot, __u64 a0, __u64 a1, __u64 a2)
{
	if (record_events)
		event_fill(ev, p->seq, now, bpf_get_current_pid_tgid() >> 32, op->tid, type, id, flags,
			   slot, a0, a1, a2);
}

/* This CPU's event ring (uprobes and tracepoints run with migration disabled), or NULL. */
static __always_inline void *event_ring(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&events, &cpu);
}

/* The record into the ring, or its loss counted. */
static __always_inline void event_finish(struct infl_event *ev, struct infl_proc *p)
{
	void *ring;

	if (!record_events)
		return;
	ring = event_ring();
	if (!ring || bpf_ringbuf_output(ring, ev, sizeof(*ev), ring_flags(ring)))
		__sync_fetch_and_add(&p->ring_drops, 1);
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
	for (int c = 0; c < INFL_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++)
			p->peak[c][s] = p->cur[c][s];
	for (int s = 0; s < INFL_SLOTS; s++)
		p->peak_owners[s] = p->owners[s];
	return true;
}

static __always_inline void cell_add(struct infl_proc *p, __u32 cls, __u32 slot, __u64 bytes)
{
	if (cls >= INFL_CLASSES || slot >= INFL_SLOTS)
		return;
	cls = CLAMPED(cls, INFL_CLASSES);
	slot = CLAMPED(slot, INFL_SLOTS);
	p->cur[cls][slot].count++;
	p->cur[cls][slot].bytes += bytes;
	p->total_bufs++;
	p->total_bytes += bytes;
}

static __always_inline void cell_sub(struct infl_proc *p, __u32 cls, __u32 slot, __u64 bytes)
{
	if (cls >= INFL_CLASSES || slot >= INFL_SLOTS)
		return;
	cls = CLAMPED(cls, INFL_CLASSES);
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
	for (int c = 0; c < INFL_CLASSES; c++)
		if (o->held[c].count)
			return false;
	return true;
}

/* An owner in a terminal stage that holds nothing more is done: its record is dead from
 * here (no handler's pointer to it passes owner_current), and the section's caller deletes
 * it before the lock is released. */
static __always_inline bool owner_retire(struct infl_proc *p, struct infl_owner *o)
{
	if (!is_terminal(o->slot) || !holds_nothing(o))
		return false;
	p->owners[o->slot & 0xf]--;
	p->owners_done++;
	WRITE_ONCE(o->id, 0);
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
 * Under the lock: whether a record a handler found outside it is the one of owner `id` of
 * image `gen` that it was then. A record carries its key from its first use under the lock
 * (owner_claim) until its owner retires (owner_retire clears it), and records are deleted
 * only under the lock, right after they retire: a record that passes cannot be deleted, or
 * reused for another key, before the lock is released. One that fails was retired, deleted
 * and maybe reused since the handler found it, or was never used under the lock yet: its
 * hit goes through the queue, whose holder looks the owner up again (apply_relooked).
 */
static __always_inline bool owner_current(const struct infl_owner *o, __u64 id, __u64 gen)
{
	return !o || (READ_ONCE(o->id) == id && READ_ONCE(o->id_gen) == gen);
}

/* Under the lock, a record just looked up by its key: it carries the key from now on. */
static __always_inline void owner_claim(struct infl_owner *o, __u64 id, __u64 gen)
{
	if (o && !o->id) {
		o->id_gen = gen;
		WRITE_ONCE(o->id, id);
	}
}

enum alloc_kind { AK_NEW, AK_DUP, AK_BAD_CLASS, AK_MAP_FULL };
enum free_kind { FK_FOUND, FK_UNKNOWN };
enum stage_kind { SK_MOVE, SK_BAD_STAGE, SK_OWNER0, SK_MAP_FULL };
#define OPF_BAD_CLASS (1u << 7) /* op.flags of a free: the class it says is out of range */

/* The contract probe a hit counts in events[]; INFL_PROBE__COUNT, counted nowhere, for
 * libcuda's calls (not the program's probes) */
static __always_inline __u32 op_probe(const struct infl_op *op)
{
	return op->flags & INFL_BUF_CUDA ? INFL_PROBE__COUNT : op->probe;
}

/* The name space of a buffer's key (inflight.h, INFL_SPACE_*), from its INFL_BUF_* flags */
static __always_inline __u32 buf_space(__u32 flags)
{
	if (flags & INFL_BUF_HANDLE)
		return INFL_SPACE_CUDA_HANDLE;
	return flags & INFL_BUF_CUDA ? INFL_SPACE_CUDA_PTR : INFL_SPACE_CONTRACT;
}

/*
 * The sections: one probe hit accounted, under the lock. Each takes what the hit's map
 * operations found (`op`) and the records they point at, looked up before the lock by the
 * handler, or again by the holder that applies a queued hit (apply_queued).
 */

/* `old`: the buffer's record when it was live already (a dup), updated to the new one */
static __always_inline void section_alloc(struct infl_proc *p, const struct infl_op *op,
					  struct infl_owner *o, struct infl_owner *old_o,
					  struct infl_buf *old, struct infl_event *ev)
{
	__u32 cls = op->id, slot, c;
	__u64 now = account_event(p, op_probe(op), false);
	bool peaked;
	__u8 flags;

	if (op->kind == AK_BAD_CLASS) {
		p->bad_class++;
		event_note(ev, p, now, op, INFL_EV_ALLOC, cls, INFL_EVF_REJECTED, INFL_SLOT_NONE,
			   op->arg, op->bytes, op->owner);
		return;
	}
	if (op->kind == AK_MAP_FULL) {
		p->buf_map_full++;
		__sync_fetch_and_add(&p->untracked_allocs, 1); /* also counted without the lock */
		event_note(ev, p, now, op, INFL_EV_ALLOC, cls, INFL_EVF_UNTRACKED, INFL_SLOT_NONE,
			   op->arg, op->bytes, op->owner);
		return;
	}
	if (op->owner && !o)
		p->owner_map_full++;
	if (op->kind == AK_DUP) {
		/* contract violation: alloc of a live buffer. The new record replaces the old. */
		p->dup_alloc++;
		c = op->prev.cls;
		if (old_o && c < INFL_CLASSES) {
			c = CLAMPED(c, INFL_CLASSES);
			old_o->held[c].count--;
			old_o->held[c].bytes -= op->prev.bytes;
		}
		cell_sub(p, op->prev.cls, old_o ? old_o->slot : INFL_SLOT_NONE, op->prev.bytes);
		if (old)
			*old = (struct infl_buf){ .bytes = op->bytes, .owner = op->owner, .cls = cls,
						  .flags = op->flags };
	}
	if (o)
		owner_admit(p, o, now);
	slot = o ? o->slot : INFL_SLOT_NONE;
	c = CLAMPED(cls, INFL_CLASSES);
	if (o) {
		o->held[c].count++;
		o->held[c].bytes += op->bytes;
	}
	cell_add(p, cls, slot, op->bytes);
	p->allocated[c].count++;
	p->allocated[c].bytes += op->bytes;
	peaked = peak_check(p, now);
	flags = (op->kind == AK_DUP ? INFL_EVF_DUP : 0) | (peaked ? INFL_EVF_NEW_PEAK : 0) |
		(op->owner && !o ? INFL_EVF_UNSTAGED : 0);
	event_note(ev, p, now, op, INFL_EV_ALLOC, cls, flags, slot, op->arg, op->bytes, op->owner);
}

/* A free of a buffer the map does not hold. Which kind it is decides where it is counted;
 * see docs/cli.md ("unmatched events"). Returns the event's flags. */
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
	cls = CLAMPED(cls, INFL_CLASSES); /* late attach: allocated before we were there */
	p->unmatched_free[cls].count++;
	p->unmatched_free[cls].bytes += bytes;
	return INFL_EVF_UNMATCHED;
}

/* `o`: the owner of the buffer removed (op->prev). True when that retired the owner, whose
 * record the caller then deletes. */
static __always_inline bool section_free(struct infl_proc *p, const struct infl_op *op,
					 struct infl_owner *o, struct infl_event *ev)
{
	const struct infl_buf *rec = &op->prev;
	__u64 now = account_event(p, op_probe(op), false);
	bool retired = false, bad_class = op->flags & OPF_BAD_CLASS;
	__u32 slot, c;
	__u8 flags;

	if (op->kind != FK_FOUND) {
		if (bad_class) {
			p->bad_class++;
			flags = INFL_EVF_REJECTED;
		} else {
			flags = free_unmatched(p, op->id, op->bytes);
		}
		event_note(ev, p, now, op, INFL_EV_FREE, op->id, flags, INFL_SLOT_NONE, op->arg,
			   op->bytes, 0);
		return false;
	}
	/* the recorded class and size are authoritative: they are what was added, whatever
	 * the free says (a class id out of range is still counted as one) */
	if (bad_class)
		p->bad_class++;
	slot = o ? o->slot : INFL_SLOT_NONE;
	c = rec->cls;
	c = CLAMPED(c, INFL_CLASSES);
	if (o && o->live) {
		o->held[c].count--;
		o->held[c].bytes -= rec->bytes;
		retired = owner_retire(p, o);
	}
	cell_sub(p, rec->cls, slot, rec->bytes);
	p->freed[c].count++;
	p->freed[c].bytes += rec->bytes;
	event_note(ev, p, now, op, INFL_EV_FREE, rec->cls, 0, slot, op->arg, rec->bytes,
		   rec->owner);
	return retired;
}

/* The time spent in stage `from`, into its histogram. */
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

/* Every buffer the owner holds moves from slot `from` to `stage`. */
static __always_inline void owner_move(struct infl_proc *p, struct infl_owner *o, __u32 from,
				       __u32 stage)
{
	from = from < INFL_MAX_STAGES ? BOUNDED(from, INFL_MAX_STAGES) : INFL_SLOT_NONE;
	for (int c = 0; c < INFL_CLASSES; c++) {
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

/* `o`: the owner's record (NULL: the owner map is full). True when the owner retired. */
static __always_inline bool section_stage(struct infl_proc *p, const struct infl_op *op,
					  struct infl_owner *o, struct infl_event *ev)
{
	__u64 now = account_event(p, INFL_PROBE_STAGE, true), owner = op->arg;
	__u32 stage = op->id, from;
	bool unmatched = false;
	__u8 flags;

	if (op->kind != SK_MOVE || !o) {
		flags = INFL_EVF_REJECTED;
		if (op->kind == SK_BAD_STAGE) {
			p->bad_stage++;
		} else if (op->kind == SK_OWNER0) {
			p->stage_owner0++;
		} else {
			p->owner_map_full++;
			flags = INFL_EVF_UNTRACKED;
		}
		event_note(ev, p, now, op, INFL_EV_STAGE, stage, flags, INFL_SLOT_NONE, owner, 0, 0);
		return false;
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
	event_note(ev, p, now, op, INFL_EV_STAGE, stage, unmatched ? INFL_EVF_UNMATCHED : 0,
		   from < INFL_MAX_STAGES ? from : INFL_SLOT_NONE, owner, 0, 0);
	return owner_retire(p, o);
}

/* --- the queue behind the lock (deferred.bpf.h) --------------------------------------------- */

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

/*
 * Under the lock: one probe hit's section, its recorded event into the ring. `o`, `old_o`,
 * `old`: the records its map operations found (NULL: none). Returns whether the owner was
 * retired, whose record the caller deletes. The pid is the current process's: only its own
 * threads hold its lock.
 */
/* what a section returns */
enum section_rc {
	SECTION_DONE,
	SECTION_RETIRED, /* the owner retired: the caller deletes its record, under the lock */
	SECTION_STALE,	 /* an owner record is not the one its handler found (owner_current):
			  * nothing was done, the hit goes through the queue */
};

static __always_inline int section_of(struct infl_proc *p, const struct infl_op *op,
				      struct infl_owner *o, struct infl_owner *old_o,
				      struct infl_buf *old)
{
	struct infl_event ev;
	int retired = 0;
	__u64 id;

	if (!p || !op)
		return SECTION_DONE;
	id = op->probe == INFL_PROBE_ALLOC ? op->owner :
	     op->probe == INFL_PROBE_FREE  ? op->prev.owner : op->arg;
	if (!owner_current(o, id, p->gen) || !owner_current(old_o, op->prev.owner, p->gen))
		return SECTION_STALE;
	if (op->probe == INFL_PROBE_ALLOC)
		section_alloc(p, op, o, old_o, old, &ev);
	else if (op->probe == INFL_PROBE_FREE)
		retired = section_free(p, op, o, &ev);
	else
		retired = section_stage(p, op, o, &ev);
	event_finish(&ev, p);
	return retired ? SECTION_RETIRED : SECTION_DONE;
}

/* The same, a function of its own for the LK_CAS programs, where the handler, the drain and
 * the combiner all call it: the kernel's verifier checks a global function once (inlined
 * into each, the three programs took 30 times as long to load). Before 5.12 a global
 * function cannot take pointers ("Arg#0 type PTR ... is not supported yet"): the LK_MAP
 * programs, which have no queue, inline it once. */
__noinline int apply_op(struct infl_proc *p, const struct infl_op *op, struct infl_owner *o,
			struct infl_owner *old_o, struct infl_buf *old)
{
	return section_of(p, op, o, old_o, old);
}

static __always_inline int section_run(struct infl_proc *p, const struct infl_op *op,
				       struct infl_owner *o, struct infl_owner *old_o,
				       struct infl_buf *old, const enum lock_kind lk)
{
	if (lk == LK_CAS)
		return apply_op(p, op, o, old_o, old);
	return section_of(p, op, o, old_o, old);
}

/* Under the lock: a hit whose handler did not apply it itself (queued, or carried into
 * lock_wait_more), with the records its handler found looked up again (an owner it created
 * is there: only a section retires one); an owner it retires is removed. */
static __always_inline void apply_relooked(struct infl_proc *p, const struct infl_op *op,
					   const enum lock_kind lk)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_owner *o = NULL, *old_o = NULL;
	struct infl_buf *old = NULL;
	struct infl_owner_key ok = { .pid = pid, .gen = p->gen };

	if (op->probe == INFL_PROBE_ALLOC) {
		if (op->kind == AK_DUP) {
			struct infl_buf_key bk = { .pid = pid, .space = buf_space(op->flags),
						   .gen = ok.gen, .buf = op->arg };

			old = bpf_map_lookup_elem(&bufs, &bk);
			if (!(op->prev.flags & INFL_BUF_UNSTAGED))
				old_o = owner_lookup(pid, ok.gen, op->prev.owner);
		}
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
	owner_claim(o, ok.owner, ok.gen);
	owner_claim(old_o, op->prev.owner, ok.gen);
	/* just claimed: never SECTION_STALE */
	if (section_run(p, op, o, old_o, old, lk) == SECTION_RETIRED)
		bpf_map_delete_elem(&owners, &ok);
}

/* A queued hit: a global function, checked once where the drain and the combiner call it. */
__noinline int apply_queued(struct infl_proc *p, struct infl_op *op)
{
	if (p && op)
		apply_relooked(p, op, LK_CAS);
	return 0;
}

/*
 * LK_MAP, the queue behind the lock (kernels before 5.17): what deferred.bpf.h is where
 * cmpxchg and bpf_loop exist, built from what 5.10 has. The ring and its tickets become a
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
 *   end is what was left (counted as lock_timeouts, as with the ring).
 * - A hit that gets the lock with something queued goes behind it (push, then combine):
 *   what was queued may have happened before it. With nothing queued it applies itself.
 * - Every push is followed by an attempt at the lock (map_combine), and every holder looks
 *   at tail and head after its release, both after a full barrier (the lock is a hash
 *   insert and delete under the bucket's lock): either the pusher gets the lock and drains,
 *   or the holder it failed against sees the push once it released, and drains.
 * - A queue is drawn from a pool of INFL_DEFER_MAX_QUEUES by the first hit that needs one:
 *   a claim is an insert of the queue's index into map_queue_claims that fails if the index
 *   is taken (an atomic test-and-set, like the lock), then the process's name for it in
 *   deferred_of. The image's end gives it back. A queue's next owner drops
 *   what an earlier one left (told apart by gen; counted at that image's end).
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
	mq_4 SEC(".maps"), mq_5 SEC(".maps"), mq_6 SEC(".maps"), mq_7 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, INFL_DEFER_MAX_QUEUES);
	__type(key, __u32);
	__array(values, struct map_queue);
} map_queues SEC(".maps") = {
	.values = { &mq_0, &mq_1, &mq_2, &mq_3, &mq_4, &mq_5, &mq_6, &mq_7 },
};
_Static_assert(INFL_DEFER_MAX_QUEUES == 8, "map_queues: one mq_N for each queue of the pool");

/* the pool's queues in use: index -> the gen of the image that holds it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
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

/* The image's queue, drawn from the pool when it has none yet; NULL when none is free. */
static __always_inline void *map_queue_claim(__u32 pid, __u64 gen)
{
	void *q = map_queue_of(pid, gen);

	if (q || bpf_map_lookup_elem(&deferred_of, &pid))
		return q;
#pragma clang loop unroll(full)
	for (int i = 0; i < INFL_DEFER_MAX_QUEUES; i++) {
		__u32 key = i;

		if (bpf_map_update_elem(&map_queue_claims, &key, &gen, BPF_NOEXIST))
			continue; /* taken, or the pool is smaller */
		if (!bpf_map_update_elem(&deferred_of, &pid, &key, BPF_NOEXIST))
			return bpf_map_lookup_elem(&map_queues, &key);
		/* another thread of the image named its queue first: this one goes back */
		bpf_map_delete_elem(&map_queue_claims, &key);
		return map_queue_of(pid, gen);
	}
	return NULL;
}

/* The image ended: its queue goes back to the pool (what it still holds is counted in
 * lock_timeouts by image_end, and dropped by the next owner). */
static __always_inline void map_queue_release(__u32 pid, __u64 gen)
{
	__u32 *idx = bpf_map_lookup_elem(&deferred_of, &pid);
	__u64 *owner;

	if (!idx)
		return;
	owner = bpf_map_lookup_elem(&map_queue_claims, idx);
	if (owner && *owner == gen)
		bpf_map_delete_elem(&map_queue_claims, idx);
}

/* Queues `op` behind p's lock: enum defer_result (deferred.bpf.h), as the ring's. */
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
	apply_relooked(p, &op, LK_MAP);
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

/* LK_CAS, the queue full: a slot, lock_wait_ns at most (not the lock: the hit's records are
 * to be looked up again, by the queue's holder). A global function: its frame is not the
 * handler's, which 6.1 counts with the drain's and the queue's (512 bytes in all). */
__noinline int queue_op_waiting(struct infl_proc *p, const struct infl_op *op, int why)
{
	if (!p || !op)
		return 0;
	deferred_count_wait(p, why);
	__sync_fetch_and_add(&deferred_full, 1);
	return queue_wait(p, op, lock_wait_ns);
}

/* The one way past the lock for a probe hit: combining.bpf.h's where the queue is a ring
 * (LK_CAS); with the queue map (LK_MAP) the same steps, and the wait in lock_wait_more. */
static __always_inline enum lock_outcome lock_or_defer(struct infl_proc *p, __u32 pid,
						       const struct infl_op *op,
						       const enum lock_kind lk)
{
	int why;

	if (lk == LK_CAS)
		return lock_or_defer_cas(p, pid, op, defer_all, lock_wait_ns, &deferred,
					 &deferred_full);
	/* map_queue_push for queue_op: the queue map's order is the tickets' */
	if (!defer_all && lock_map_look(&locks, pid, LOCK_MAP_LOOKS)) {
		section_begin(p);
		if (map_queue_empty(p))
			return LOCKED;
		proc_unlock(&locks, p, pid, lk);
	}
	why = map_queue_push(p, pid, op);
	if (why == DEFER_QUEUED)
		return DEFERRED;
	deferred_count_wait(p, why);
	__sync_fetch_and_add(&deferred_full, 1);
	return WAIT_MORE;
}

/*
 * LK_MAP, the wait past one round of looks. A round is bounded by what a 5.10 verifier will
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

/* the LK_MAP programs' tail calls, set by the loader where they are loaded */
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
	if (op->kind == AK_NEW) {
		struct infl_buf_key bk = { .pid = pid, .space = buf_space(op->flags),
					   .gen = p->gen, .buf = op->arg };

		bpf_map_delete_elem(&bufs, &bk);
	}
	if (op->kind == AK_NEW || op->kind == AK_MAP_FULL)
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

/* LK_MAP: into map_combine, with the carry's fields set for it (no return when it runs) */
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
	if (lock_map_wait(&locks, pid, 0)) {
		section_begin(p);
		if (!map_queue_empty(p)) {
			/* what is queued may have happened before this hit: it goes behind */
			combine_call(ctx, c, pid, p->gen, CARRY_LOCKED);
			proc_unlock(&locks, p, pid, LK_MAP);
			hit_gave_up(p, &c->op, pid);
			return 0;
		}
		apply_relooked(p, &c->op, LK_MAP);
		proc_unlock(&locks, p, pid, LK_MAP);
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
 * LK_MAP: the queue applied by whoever can take the lock now (the combining of the LK_CAS
 * programs, proc_combine). Entered by a tail call, from a handler after its push or after
 * its release with hits queued (CARRY_COMBINE), or from lock_wait_more holding the lock
 * (CARRY_LOCKED: its carried hit goes behind the queue).
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
		proc_unlock(&locks, p, pid, LK_MAP);
		if (!queued)
			hit_gave_up(p, &c->op, pid);
	}
	for (r = 0; r < COMBINE_ROUNDS; r++) {
		if (map_queue_empty(p) || !lock_map_look(&locks, pid, COMBINE_LOOKS))
			return 0; /* nothing left, or a holder that looks after its release */
		section_begin(p);
		map_queue_drain(pid);
		proc_unlock(&locks, p, pid, LK_MAP);
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

static __always_inline void thread_names_owner(struct infl_proc *p, __u64 owner)
{
	struct cuda_thread t = { .owner = owner, .gen = p->gen };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
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
static __always_inline struct infl_op op_new(__u8 probe, __u64 arg, __u64 id, __u64 bytes)
{
	return (struct infl_op){ .probe = probe, .arg = arg, .id = id, .bytes = bytes,
				 .tid = (__u32)bpf_get_current_pid_tgid() };
}

/* The lock held, a record the hit's handler found stale (owner_current): the lock goes, the
 * hit goes through the queue, where it is applied with its records looked up again. */
static __always_inline enum lock_outcome lock_requeue(struct infl_proc *p, __u32 pid,
						      const struct infl_op *op,
						      const enum lock_kind lk)
{
	int why;

	if (lk == LK_CAS)
		return requeue_cas(p, pid, op);
	proc_unlock(&locks, p, pid, lk);
	why = map_queue_push(p, pid, op);
	if (why == DEFER_QUEUED)
		return DEFERRED;
	deferred_count_wait(p, why);
	return WAIT_MORE; /* lock_wait_more tries the queue, or relooks under the lock */
}

/* After a hit's section and release, or after queueing it (LK_CAS): what others queued
 * meanwhile (combining.bpf.h: combine_queued). */
static __always_inline void proc_combine(struct infl_proc *p, __u32 pid, const enum lock_kind lk)
{
	if (lk == LK_CAS)
		combine_queued(p, pid, &deferred);
}

/* LK_MAP, at a handler's very end: hits queued (its own, or others' it saw after its
 * release) are applied by map_combine, which a tail call enters. */
static __always_inline void combine_after(void *ctx, struct infl_proc *p, __u32 pid,
					  const enum lock_kind lk)
{
	__u32 zero = 0;
	struct lock_carry *c;

	if (lk != LK_MAP || map_queue_empty(p))
		return;
	c = bpf_map_lookup_elem(&lock_carry, &zero);
	if (c)
		combine_call(ctx, c, pid, p->gen, CARRY_COMBINE);
}

/*
 * The handlers: map operations first, outside the lock (a buffer's insert or delete decides
 * who owns it when threads race), then the section, or the queue.
 */
/*
 * An alloc, from the contract's probe (a[]: buf, class, bytes, owner) or from libcuda's
 * return (`flags`: INFL_BUF_CUDA, and the class one of the tracer's own). One path for both,
 * so that a device buffer is counted, moved and peaked exactly as a program's buffer is.
 */
static __always_inline int alloc_apply(void *ctx, struct infl_proc *p, __u32 pid,
				       const __u64 *a, __u32 flags, const enum lock_kind lk)
{
	struct infl_owner *o = NULL, *old_o = NULL;
	struct infl_buf_key bk = {};
	struct infl_buf *old = NULL;
	enum lock_outcome r;
	struct infl_op op;

	op = op_new(INFL_PROBE_ALLOC, a[0], a[1], a[2]);
	op.owner = a[3];
	op.kind = AK_NEW;
	op.flags = flags;
	bk = (struct infl_buf_key){ .pid = pid, .space = buf_space(flags), .gen = p->gen,
				    .buf = op.arg };
	if (a[1] >= (flags & INFL_BUF_CUDA ? INFL_CLASSES : INFL_MAX_CLASSES)) {
		op.kind = AK_BAD_CLASS;
		WRITE_ONCE(p->bad_class_seen, a[1]);
		goto locked;
	}
	if (op.owner) {
		struct infl_owner_key ok = { .pid = pid, .gen = p->gen, .owner = op.owner };

		o = owner_get(&ok);
	}
	if (!o)
		op.flags |= INFL_BUF_UNSTAGED;
	/* the common case first: a new buffer is one insert, no lookup (the record is built
	 * where a dup's predecessor goes, which a new buffer does not have) */
	op.prev = (struct infl_buf){ .bytes = op.bytes, .owner = op.owner, .cls = op.id,
				     .flags = op.flags };
	if (bpf_map_update_elem(&bufs, &bk, &op.prev, BPF_NOEXIST)) {
		old = bpf_map_lookup_elem(&bufs, &bk);
		op.kind = old ? AK_DUP : AK_MAP_FULL;
		if (old) {
			op.prev = *old;
			if (!(op.prev.flags & INFL_BUF_UNSTAGED))
				old_o = owner_lookup(pid, p->gen, op.prev.owner);
		}
	}
locked:
	r = lock_or_defer(p, pid, &op, lk);
	if (r == LOCKED) {
		if (section_run(p, &op, o, old_o, old, lk) != SECTION_STALE) {
			proc_unlock(&locks, p, pid, lk);
			goto applied;
		}
		r = lock_requeue(p, pid, &op, lk);
	}
	if (r == WAIT_MORE) {
		wait_more(ctx, p, pid, &op);
		return 0;
	}
	if (r == GAVE_UP) {
		/* a buffer in the map must be in the totals: take back what was not counted */
		if (op.kind == AK_NEW)
			bpf_map_delete_elem(&bufs, &bk);
		if (op.kind == AK_NEW || op.kind == AK_MAP_FULL)
			__sync_fetch_and_add(&p->untracked_allocs, 1);
		return 0;
	}
applied:
	proc_combine(p, pid, lk);
	combine_after(ctx, p, pid, lk);
	return 0;
}

/*
 * A free's or a stage event's hit once its handler's map operations are done: its section
 * under the lock, or the queue (`o`: the record of owner `owner` the handler found). A
 * retired owner's record is deleted under the lock (owner_current).
 */
static __always_inline int hit_account(void *ctx, struct infl_proc *p, __u32 pid,
				       const struct infl_op *op, struct infl_owner *o,
				       __u64 owner, const enum lock_kind lk)
{
	enum lock_outcome r = lock_or_defer(p, pid, op, lk);
	int rc;

	if (r == LOCKED) {
		/* a free of a buffer its owner holds, whose owner the handler did not find: the
		 * thread's own earlier hits may still have been queued then, the one that makes
		 * the owner's record among them; the holder of the queue looks again */
		if (!o && op->probe == INFL_PROBE_FREE && op->kind == FK_FOUND &&
		    !(op->prev.flags & INFL_BUF_UNSTAGED))
			rc = SECTION_STALE;
		else
			rc = section_run(p, op, o, NULL, NULL, lk);
		if (rc == SECTION_STALE) {
			r = lock_requeue(p, pid, op, lk);
		} else {
			if (rc == SECTION_RETIRED)
				owner_forget(pid, p->gen, owner);
			proc_unlock(&locks, p, pid, lk);
		}
	}
	if (r == WAIT_MORE)
		wait_more(ctx, p, pid, op);
	if (r == GAVE_UP || r == WAIT_MORE)
		return 0;
	proc_combine(p, pid, lk);
	combine_after(ctx, p, pid, lk);
	return 0;
}

static __always_inline int handle_alloc(struct pt_regs *ctx, const enum lock_kind lk)
{
	struct infl_proc *p;
	__u64 a[4];
	__u32 pid;

	p = proc_current(&pid, lk);
	if (!p || !probe_args(ctx, p, a, 4))
		return 0;
	thread_names_owner(p, a[3]);
	return alloc_apply(ctx, p, pid, a, 0, lk);
}

/* A free, from the contract's probe (a[]: buf, class, bytes) or from libcuda's entry
 * (`flags` as for alloc_apply; the class is where a free of an unknown buffer is counted). */
static __always_inline int free_apply(void *ctx, struct infl_proc *p, __u32 pid,
				      const __u64 *a, __u32 flags, const enum lock_kind lk)
{
	struct infl_buf_key bk = {};
	struct infl_owner *o = NULL;
	struct infl_buf *b;
	struct infl_op op;

	op = op_new(INFL_PROBE_FREE, a[0], a[1], a[2]);
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
	if (op.kind == FK_FOUND && !(op.prev.flags & INFL_BUF_UNSTAGED))
		o = owner_lookup(pid, p->gen, op.prev.owner);
	return hit_account(ctx, p, pid, &op, o, op.prev.owner, lk);
}

static __always_inline int handle_free(struct pt_regs *ctx, const enum lock_kind lk)
{
	struct infl_proc *p;
	__u64 a[4];
	__u32 pid;

	p = proc_current(&pid, lk);
	if (!p || !probe_args(ctx, p, a, 3))
		return 0;
	return free_apply(ctx, p, pid, a, 0, lk);
}

static __always_inline int handle_stage(struct pt_regs *ctx, const enum lock_kind lk)
{
	struct infl_owner *o = NULL;
	struct infl_proc *p;
	struct infl_op op;
	__u64 a[4];
	__u32 pid;

	p = proc_current(&pid, lk);
	if (!p || !probe_args(ctx, p, a, 2))
		return 0;
	if (a[0]) /* owner 0 has no stage: the event is refused, and names no one */
		thread_names_owner(p, a[0]);
	op = op_new(INFL_PROBE_STAGE, a[0], a[1], 0);
	op.kind = SK_MOVE;
	if (a[1] >= INFL_MAX_STAGES) {
		op.kind = SK_BAD_STAGE;
		WRITE_ONCE(p->bad_stage_seen, a[1]);
	} else if (!op.arg) {
		op.kind = SK_OWNER0; /* owner 0 is "no owner": it has no stage to enter */
	} else {
		struct infl_owner_key ok = { .pid = pid, .gen = p->gen, .owner = op.arg };

		o = owner_get(&ok);
		if (!o)
			op.kind = SK_MAP_FULL;
	}
	return hit_account(ctx, p, pid, &op, o, op.arg, lk);
}

/* A program in both lock forms: `name` (LK_CAS) and `name`_nocas (LK_MAP); the loader loads
 * one (attach/programs.c) */
#define LOCK_FORMS(sec, name, handler)                                                         \
	SEC(sec)                                                                               \
	int name(struct pt_regs *ctx)                                                          \
	{                                                                                      \
		return handler(ctx, LK_CAS);                                                   \
	}                                                                                      \
	SEC(sec)                                                                               \
	int name##_nocas(struct pt_regs *ctx)                                                  \
	{                                                                                      \
		return handler(ctx, LK_MAP);                                                   \
	}

LOCK_FORMS("usdt", on_buf_alloc, handle_alloc)
LOCK_FORMS("usdt", on_buf_free, handle_free)
LOCK_FORMS("usdt", on_stage, handle_stage)

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

static __always_inline int handle_cuda_ret(struct pt_regs *ctx, const enum lock_kind lk)
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
	p = proc_current(&pid, lk);
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
	return alloc_apply(ctx, p, pid, a, flags, lk);
}

static __always_inline int handle_cuda_free(void *ctx, __u64 ptr, __u32 cls, __u32 flags,
					    const enum lock_kind lk)
{
	__u64 a[4] = { ptr, cls, 0, 0 };
	struct infl_proc *p;
	__u32 pid;

	cuda_entry(0, 0, 0, cls, CC_FREE, flags); /* its return counts a failure */
	if (!ptr || !cuda_wanted(bpf_get_current_pid_tgid() >> 32))
		return 0; /* freeing nothing frees nothing */
	p = proc_current(&pid, lk);
	if (!p)
		return 0;
	return free_apply(ctx, p, pid, a, flags, lk);
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

LOCK_FORMS("uretprobe", on_cu_ret, handle_cuda_ret)

/* the frees, accounted at their entry: one program per lock form */
#define CUDA_FREE_PROG(name, cls, flags)                                                       \
	SEC("uprobe")                                                                          \
	int BPF_KPROBE(name, __u64 ptr)                                                        \
	{                                                                                      \
		return handle_cuda_free(ctx, ptr, cls, flags, LK_CAS);                         \
	}                                                                                      \
	SEC("uprobe")                                                                          \
	int BPF_KPROBE(name##_nocas, __u64 ptr)                                                \
	{                                                                                      \
		return handle_cuda_free(ctx, ptr, cls, flags, LK_MAP);                         \
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
 * taken while no section runs, so that it sits between the accounting events around it in
 * both; the tracepoint never waits, though: when a section runs, this change is not
 * recorded, and the next one (or the next snapshot) carries the value. It does not take
 * the lock, whose release would owe the queue a look: the seqlock words tell that no
 * section ran while it read, and a compare-and-swap on rss_emitted lets one of two CPUs
 * emit a step (before 5.12 both may).
 */
static __always_inline void rss_emit(struct infl_proc *p, __u32 pid, __u64 total,
				     const enum lock_kind lk)
{
	struct infl_event *ev;
	__u64 last = READ_ONCE(p->rss_emitted), now, seq, tracked, end;
	void *ring;

	if (total - last < RSS_EVENT_STEP && last - total < RSS_EVENT_STEP)
		return;
	end = READ_ONCE(p->write_end); /* the seqlock's order: write_end first */
	barrier();
	now = bpf_ktime_get_ns();
	seq = READ_ONCE(p->seq);
	tracked = READ_ONCE(p->tracked_at_rss_peak);
	barrier();
	if (READ_ONCE(p->write_begin) != end)
		return; /* a section ran meanwhile */
	if (lk == LK_CAS) {
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
	/* not an accounting event: seq is the accounting order it follows */
	event_fill(ev, seq, now, pid, (__u32)bpf_get_current_pid_tgid(), INFL_EV_RSS, 0, 0,
		   INFL_SLOT_NONE, total, tracked, 0);
	bpf_ringbuf_submit(ev, ring_flags(ring));
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
	/* the common case on a host: a process nobody traces, faulting its own pages */
	if (rss_of_untraced(mm))
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
	void *ring;

	section_begin(p);
	p->exit_ns = now;
	p->exited = 1;
	if (type == INFL_CTL_EXEC)
		p->flags |= INFL_PROC_EXEC;
	/* hits still queued behind the lock (deferred.bpf.h) have no one left to apply them */
	p->lock_timeouts += p->defer_tail - p->defer_head;
	p->defer_head = p->defer_tail;
	section_end(p);
	pid_mark(pid, 0); /* an exec's new image marks it again (proc_create) */
	if (mm)
		bpf_map_delete_elem(&mm_pids, &mm);
	map_queue_release(pid, p->gen);
	deferred_release(&deferred, p);
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
	thread_forget(pid, BPF_CORE_READ(task, pid)); /* every thread's exit */
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
	/* read without the process lock: a snapshot of the instant, not an update */
	k.seq = p->seq;
	k.tracked_bytes = p->total_bytes;
	k.tracked_bufs = p->total_bufs;
	k.rss_bytes = p->rss_total;
	bpf_map_update_elem(&oom_kills, &tgid, &k, BPF_ANY);
	return 0;
}

