// SPDX-License-Identifier: BSD-2-Clause
/*
 * A probe hit's accounting without a lock (bpf/acct.bpf.h states the protocol; hit.bpf.h
 * accounts the hits, owners.bpf.h keeps the owner records), compiled unchanged for user space
 * and run by real threads that are preempted at every shared access (model_kernel.c: a yield,
 * a spin, a sleep as long as a descheduled vCPU's), against an independent sequential replay
 * of the same probe hits in the order of the places they took:
 *
 * - the places are 1..N, each taken once, in each thread's own order and in every order of
 *   real time (a hit that returned before another began took its place first);
 * - once every hit ended, the record (after infl_proc_derive) is the replay's: cells, totals,
 *   owners per slot, lifetime totals, anomalies, probe counts, the peak's bytes and place;
 *   every hit's event says what the replay did with it; and where each thread has owners of
 *   its own, nothing was given up (contention_lost, dwell_lost). An owner's life follows
 *   its own order (acct.bpf.h): where hits on one owner were in flight at once (counted:
 *   owner_races) or a hit gave its owner up (counted: contention_lost), what depends on
 *   owners' lives is checked for what must hold whatever their order (what each class
 *   holds, owners that add up, records that hold exactly their live buffers);
 * - the peak's composition is the replay's at the peak's place when peak_fuzz is 0, and
 *   peak_fuzz is never 0 when it is not;
 * - a reader copying the record front to back while hits run accepts a copy only when it is
 *   whole (infl_proc_whole), and every copy it accepts is consistent;
 * - owner records retire, are reaped and their elements reused for other keys while other
 *   threads still hold pointers to them, and no hit writes into a record not its owner's:
 *   every record left has its key's identity, no reference, no DOOMED mark, and exactly the
 *   replay's held words and slot, and is claimed (or void, holding nothing), one side of an
 *   owner at most; every buffer record is the replay's buffer;
 * - written schedules for the interleavings the protocol names: an add to a held word
 *   racing a stage move, a reference taken on a record reaped (and reused) since its lookup
 *   and a reaper that finds another key in what it looked up, a reaper stalled between its
 *   mark and its delete while its owner comes back (its second side's record), both sides
 *   of an owner made at once, a terminal stage while another hit holds the owner, a reap
 *   ring shared by programs on one CPU, two peak offers racing while a third hit holds the
 *   capture.
 *
 * The program side is inflight.bpf.c's atomic form (alloc_apply, free_apply, handle_stage
 * with m == ACCT_ATOMIC, and hit_owner, hit_alloc, hit_replaced, hit_free, hit_stage,
 * hit_refused, hit_retired), every hit recorded so that its place is known.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "model_kernel.h"

#if defined(__x86_64__)
#define __TARGET_ARCH_x86 1 /* user space on x86-64 has the kernel's memory order (TSO) */
#endif
#include "hit.bpf.h"
#include "owners.bpf.h"

#define MODEL_PID 4242
#define MAX_THREADS 8
#define MAX_TIDS 16 /* the scenarios' threads, and the written schedules' actors */
#define MAX_PROCS 2
#define ENTRY_STAGE 0
#define WORK_STAGE 1
#define DONE_STAGE 4
/* A record's count of places starts this far below the count field's wrap, so that every run
 * wraps it: the 64-bit numbers (acct_seq, infl_seq_unwrap) and the peak's order of places
 * (acct_before) are taken across the wrap. */
#define SEQ_BASE (((__u64)1 << INFL_ACCT_SEQ_BITS) - 3000)
#define BUF_ENTRIES 16384

_Static_assert(sizeof(struct infl_proc) % 8 == 0, "a record is copied in 8-byte words");

/* --- the program side, as inflight.bpf.c's atomic form ------------------------------------ */

static struct model_map procs, bufs, owners, owner_reap;
static __u64 owners_reaped, owners_unreaped;
static const __u16 entry_stage_mask = 1u << ENTRY_STAGE, terminal_stage_mask = 1u << DONE_STAGE;
static const struct infl_owner new_owner = {
	.state = (__u64)INFL_SLOT_NONE << INFL_OS_SLOT_SHIFT,
	.held_count = { [0 ... INFL_CLASSES - 1] = (__u64)INFL_SLOT_NONE << INFL_HELD_SLOT_SHIFT },
	.held_bytes = { [0 ... INFL_CLASSES - 1] = (__u64)INFL_SLOT_NONE << INFL_HELD_SLOT_SHIFT },
};

/* A probe hit as the program fires it: its probe and its arguments (alloc: buf, class, bytes,
 * owner; free: buf, class, bytes; stage: owner, stage). */
struct input {
	__u8 probe; /* enum infl_probe, or INPUT_BARRIER */
	__u64 a[4];
};
#define INPUT_BARRIER 0xff /* no hit: the scenario's threads wait for each other */

/* A place taken: by which hit, and what the kernel recorded for it. */
struct logged {
	__u64 seq;	  /* the place's 64-bit number (the event's: acct_seq) */
	struct input in;  /* the probe hit it is a place of */
	__u32 tid, op;	  /* its thread, and its index in the thread's hits */
	__u8 part;	  /* 0: the hit's own place; 1: the buffer a dup alloc replaced */
	__u8 type, flags; /* the event */
};

struct tlog {
	struct logged *e;
	size_t n, cap;
};

static struct tlog logs[MAX_TIDS]; /* each thread's places, in its own order */
/* references owner_take gave back on a record not the one it looked up (DOOMED, another key's
 * or nobody's yet): a pointer it held to an element reaped, or reused, since its lookup */
static __u64 given_back;
/* hits that found no record of their owner to hold on every look (HOLD_LOST): of the
 * contention_lost, those the owner records' protocol gave up */
static __u64 holds_lost;
static __thread struct {
	const struct input *in;
	__u32 tid, op;
} firing;

static _Noreturn void out_of_memory(void)
{
	CHECK(0, "memory for the model's run");
	exit(1);
}

/* every hit's event: its place, into its thread's log */
static void hit_event(struct infl_proc *p, const struct infl_event *ev)
{
	struct tlog *l = &logs[firing.tid];

	(void)p;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->e = realloc(l->e, l->cap * sizeof(*l->e));
		if (!l->e)
			out_of_memory();
	}
	l->e[l->n++] = (struct logged){
		.seq = ev->seq, .in = *firing.in, .tid = firing.tid, .op = firing.op,
		.part = firing.in->probe == INFL_PROBE_ALLOC && ev->type == INFL_EV_FREE,
		.type = ev->type, .flags = ev->flags,
	};
}

static bool hit_from_start(struct infl_proc *p)
{
	return READ_ONCE(p->flags) & INFL_PROC_FROM_START;
}

static void hit_env_init(struct hit_env *env)
{
	env->bufs = &bufs;
	env->pid = bpf_get_current_pid_tgid() >> 32;
	env->entry_mask = entry_stage_mask;
	env->terminal_mask = terminal_stage_mask;
	env->recording = true; /* every hit's place known (hit_event) */
}

static void owner_maps_init(struct owner_maps *om)
{
	om->owners = &owners;
	om->procs = &procs;
	om->reap = &owner_reap;
	om->fresh = &new_owner;
	om->reaped = &owners_reaped;
	om->unreaped = &owners_unreaped;
	om->terminal_mask = terminal_stage_mask;
}

static void hit_retired(struct infl_owner *o)
{
	struct owner_maps om;

	owner_maps_init(&om);
	owner_retired(&om, o);
}

static struct infl_owner *hit_owner(struct infl_proc *p, __u32 pid, struct infl_op *op,
				    __u64 owner, __u64 nheld, bool create)
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
		why = owner_hold_slow(&om, &k, nheld, create, &raced);
		if (why == HOLD_OK && !(o = bpf_map_lookup_elem(&owners, &k)))
			why = HOLD_LOST;
	}
	if (why == HOLD_LOST)
		__atomic_fetch_add(&holds_lost, 1, __ATOMIC_RELAXED);
	if (why == HOLD_LOST || (why == HOLD_NONE && !create))
		op->flags |= OPF_OWNER_LOST;
	if (o && raced)
		__sync_fetch_and_add(&p->owner_races, 1);
	return o;
}

static void hit_replaced(struct infl_proc *p, struct infl_op *op)
{
	struct infl_owner *o = NULL;
	struct hit_env env;

	hit_env_init(&env);
	if (!(op->prev.flags & INFL_BUF_UNSTAGED))
		o = hit_owner(p, env.pid, op, op->prev.owner, 0, false);
	if (acct_replaced(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
}

static void hit_alloc(struct infl_proc *p, struct infl_op *op, struct infl_owner *o)
{
	struct hit_env env;

	hit_env_init(&env);
	if (acct_alloc(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
}

static void hit_free(struct infl_proc *p, struct infl_op *op, struct infl_owner *o)
{
	struct hit_env env;

	hit_env_init(&env);
	if (acct_free(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
}

static void hit_stage(struct infl_proc *p, struct infl_op *op, struct infl_owner *o)
{
	struct hit_env env;

	hit_env_init(&env);
	if (acct_stage(&env, p, op, o, ACCT_ATOMIC))
		hit_retired(o);
}

enum refusal { RF_BAD_CLASS, RF_BAD_STAGE, RF_OWNER0, RF_OWNER_FULL, RF_OWNER_LOST };

static void hit_refused(struct infl_proc *p, struct infl_op *op, int why)
{
	__u8 type = op->probe == INFL_PROBE_STAGE ? INFL_EV_STAGE : INFL_EV_ALLOC;
	const enum acct_mode m = ACCT_ATOMIC;
	struct hit_env env;

	hit_env_init(&env);
	if (why == RF_BAD_CLASS)
		acct_refused(&env, p, op, &p->bad_class, type, INFL_EVF_REJECTED, op->owner, m);
	else if (why == RF_BAD_STAGE)
		acct_refused(&env, p, op, &p->bad_stage, type, INFL_EVF_REJECTED, 0, m);
	else if (why == RF_OWNER0)
		acct_refused(&env, p, op, &p->stage_owner0, type, INFL_EVF_REJECTED, 0, m);
	else if (why == RF_OWNER_FULL)
		acct_refused(&env, p, op, &p->owner_map_full, type, INFL_EVF_UNTRACKED, 0, m);
	else
		acct_refused(&env, p, op, &p->contention_lost, type, INFL_EVF_UNTRACKED, 0, m);
}

static struct infl_op op_new(__u8 probe, __u64 arg, __u64 id, __u64 bytes)
{
	return (struct infl_op){ .probe = probe, .arg = arg, .id = id, .bytes = bytes,
				 .tid = (__u32)bpf_get_current_pid_tgid() };
}

static void alloc_apply(struct infl_proc *p, __u32 pid, const __u64 *a)
{
	struct infl_owner *o = NULL;
	struct infl_op op;

	op = op_new(INFL_PROBE_ALLOC, a[0], a[1], a[2]);
	op.owner = a[3];
	op.kind = AK_NEW;
	op.flags = 0;
	if (a[1] >= INFL_MAX_CLASSES) {
		op.kind = AK_BAD_CLASS;
		WRITE_ONCE(p->bad_class_seen, a[1]);
		hit_refused(p, &op, RF_BAD_CLASS);
		return;
	}
	if (op.owner)
		o = hit_owner(p, pid, &op, op.owner, 1, true);
	if (!o)
		op.flags |= INFL_BUF_UNSTAGED;
	hit_alloc(p, &op, o);
	if (op.flags & OPF_REPLACED)
		hit_replaced(p, &op);
}

static void free_apply(struct infl_proc *p, __u32 pid, const __u64 *a)
{
	struct infl_buf_key bk = {};
	struct infl_owner *o = NULL;
	struct infl_buf *b;
	struct infl_op op;

	op = op_new(INFL_PROBE_FREE, a[0], a[1], a[2]);
	op.kind = FK_UNKNOWN;
	op.flags = 0;
	if (a[1] >= INFL_MAX_CLASSES) {
		op.flags |= OPF_BAD_CLASS;
		WRITE_ONCE(p->bad_class_seen, a[1]);
	}
	bk = (struct infl_buf_key){ .pid = pid, .space = buf_space(0), .gen = p->gen,
				    .buf = op.arg };
	b = bpf_map_lookup_elem(&bufs, &bk);
	if (b) {
		op.prev = *b;
		if (!bpf_map_delete_elem(&bufs, &bk))
			op.kind = FK_FOUND;
	}
	if (op.kind == FK_FOUND && !(op.prev.flags & INFL_BUF_UNSTAGED))
		o = hit_owner(p, pid, &op, op.prev.owner, 0, false);
	hit_free(p, &op, o);
}

static void stage_apply(struct infl_proc *p, __u32 pid, const __u64 *a)
{
	struct infl_owner *o = NULL;
	struct infl_op op;

	op = op_new(INFL_PROBE_STAGE, a[0], a[1], 0);
	op.kind = SK_MOVE;
	if (a[1] >= INFL_MAX_STAGES) {
		op.kind = SK_BAD_STAGE;
		WRITE_ONCE(p->bad_stage_seen, a[1]);
	} else if (!op.arg) {
		op.kind = SK_OWNER0;
	} else {
		o = hit_owner(p, pid, &op, op.arg, 0, true);
		if (!o)
			op.kind = SK_MAP_FULL;
	}
	if (op.kind == SK_MOVE) {
		hit_stage(p, &op, o);
		return;
	}
	hit_refused(p, &op, op.kind == SK_BAD_STAGE ? RF_BAD_STAGE :
			    op.kind == SK_OWNER0    ? RF_OWNER0 :
			    op.flags & OPF_OWNER_LOST ? RF_OWNER_LOST : RF_OWNER_FULL);
}

/* One probe hit of the calling thread's process (model_thread_init), logged as thread
 * `tid`'s hit number `op`. */
static void fire(const struct input *in, __u32 tid, __u32 op)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct infl_proc *p = bpf_map_lookup_elem(&procs, &pid);

	if (!p)
		return;
	/* the only other look at the process map is owner_giveback's */
	model_tally(&procs, MA_LOOKUP);
	firing.in = in;
	firing.tid = tid;
	firing.op = op;
	if (in->probe == INFL_PROBE_ALLOC)
		alloc_apply(p, pid, in->a);
	else if (in->probe == INFL_PROBE_FREE)
		free_apply(p, pid, in->a);
	else if (in->probe == INFL_PROBE_STAGE)
		stage_apply(p, pid, in->a);
	__atomic_fetch_add(&given_back, model_tallied(), __ATOMIC_RELAXED);
	model_tally(NULL, 0);
}

/* --- the world a run starts from ------------------------------------------------------------ */

static __u64 gens; /* each process image its own gen, run after run */
static __u64 proc_gen[MAX_PROCS];
static struct infl_proc fresh_proc;

static void world_init(unsigned nprocs, __u32 owner_entries, __u64 tick_ns)
{
	static bool made;

	if (made) {
		model_map_free(&procs);
		model_map_free(&bufs);
		model_map_free(&owners);
		model_map_free(&owner_reap);
	}
	made = true;
	model_map_init(&procs, MODEL_HASH, sizeof(__u32), sizeof(struct infl_proc), 8);
	model_map_init(&bufs, MODEL_HASH, sizeof(struct infl_buf_key), sizeof(struct infl_buf),
		       BUF_ENTRIES);
	model_map_init(&owners, MODEL_HASH, sizeof(struct infl_owner_key),
		       sizeof(struct infl_owner), owner_entries);
	model_map_init(&owner_reap, MODEL_PERCPU_ARRAY, sizeof(__u32),
		       sizeof(struct owner_reap_ring), 1);
	owners_reaped = owners_unreaped = given_back = holds_lost = 0;
	model_clock_set(1000000000ull, tick_ns);
	for (unsigned i = 0; i < nprocs; i++) {
		__u32 pid = MODEL_PID + i;

		memset(&fresh_proc, 0, sizeof(fresh_proc));
		fresh_proc.gen = proc_gen[i] = ++gens;
		fresh_proc.flags = INFL_PROC_FLAGS_SET | INFL_PROC_FROM_START;
		fresh_proc.hits_done = SEQ_BASE;
		fresh_proc.acct = (SEQ_BASE & INFL_ACCT_SEQ_MASK) << INFL_ACCT_BYTES_BITS;
		bpf_map_update_elem(&procs, &pid, &fresh_proc, BPF_NOEXIST);
	}
	for (int t = 0; t < MAX_TIDS; t++)
		logs[t].n = 0;
}

static struct infl_proc *proc_of(__u32 pid)
{
	return bpf_map_lookup_elem(&procs, &pid);
}

/* --- the replay: the same hits, one after another, in the order of their places ------------- */

struct r_buf {
	bool used, live, unstaged;
	__u64 id, owner, bytes;
	__u32 cls;
};

struct r_owner {
	bool used, live;
	__u64 id;
	__u32 slot;
	__u64 count[INFL_CLASSES], bytes[INFL_CLASSES];
	/* what its live buffers add up to (r_holdings): its held words, whatever its life */
	__u64 held_count[INFL_CLASSES], held_bytes[INFL_CLASSES];
};

/* differences found, the first said */
struct diffs {
	__u64 n;
	char first[240];
};

static void __attribute__((format(printf, 2, 3))) diff_note(struct diffs *d, const char *fmt, ...)
{
	va_list ap;

	if (d->n++)
		return;
	va_start(ap, fmt);
	vsnprintf(d->first, sizeof(d->first), fmt, ap);
	va_end(ap);
}

struct replay {
	__u32 pid;
	/* owners' lives in the place order: their retirements ordered by the program, or no hit
	 * in flight on an owner while another was (owner_races); and no hit's owner given up */
	bool owner_lives;
	bool inexact; /* hits that gave an owner up (contention_lost): its holding is off */
	struct infl_proc st; /* what the record must say once every hit ended */
	struct infl_cell at_peak[INFL_CLASSES][INFL_SLOTS];
	__u64 at_peak_owners[INFL_SLOTS], at_peak_bufs;
	__u64 dwell; /* moves out of a stage: dwell_count, or dwell_lost */
	struct r_buf *bufs;
	struct r_owner *owners;
	size_t cap; /* of each table: a power of two, at least twice the ids */
	struct r_buf pending[MAX_TIDS]; /* a dup alloc's replaced buffer, until its place */
	bool has_pending[MAX_TIDS];
	struct diffs events; /* events that say another thing than the replay did */
};

static size_t id_hash(__u64 id, size_t cap)
{
	id ^= id >> 31;
	id *= 0x9e3779b97f4a7c15ull;
	return (size_t)(id ^ id >> 29) & (cap - 1);
}

static struct r_buf *r_buf_of(struct replay *r, __u64 id)
{
	size_t i = id_hash(id, r->cap);

	while (r->bufs[i].used && r->bufs[i].id != id)
		i = (i + 1) & (r->cap - 1);
	if (!r->bufs[i].used) {
		r->bufs[i].used = true;
		r->bufs[i].id = id;
	}
	return &r->bufs[i];
}

/* the replay's buffer or owner `id`, NULL when it never had one */
static struct r_buf *r_buf_find(struct replay *r, __u64 id)
{
	size_t i = id_hash(id, r->cap);

	while (r->bufs[i].used && r->bufs[i].id != id)
		i = (i + 1) & (r->cap - 1);
	return r->bufs[i].used ? &r->bufs[i] : NULL;
}

static struct r_owner *r_owner_find(struct replay *r, __u64 id)
{
	size_t i = id_hash(id, r->cap);

	while (r->owners[i].used && r->owners[i].id != id)
		i = (i + 1) & (r->cap - 1);
	return r->owners[i].used ? &r->owners[i] : NULL;
}

static struct r_owner *r_owner_of(struct replay *r, __u64 id)
{
	size_t i = id_hash(id, r->cap);

	while (r->owners[i].used && r->owners[i].id != id)
		i = (i + 1) & (r->cap - 1);
	if (!r->owners[i].used) {
		r->owners[i].used = true;
		r->owners[i].id = id;
	}
	return &r->owners[i];
}

/* the owner, counted in the no-stage slot if it was not live */
static struct r_owner *r_admit(struct replay *r, __u64 id)
{
	struct r_owner *o = r_owner_of(r, id);

	if (!o->live) {
		memset(o->count, 0, sizeof(o->count));
		memset(o->bytes, 0, sizeof(o->bytes));
		o->live = true;
		o->slot = INFL_SLOT_NONE;
		r->st.owners[INFL_SLOT_NONE]++;
	}
	return o;
}

static void r_retire_if_done(struct replay *r, struct r_owner *o)
{
	if (!o || !o->live || o->slot >= INFL_MAX_STAGES ||
	    !(terminal_stage_mask & (1u << o->slot)))
		return;
	for (int c = 0; c < INFL_CLASSES; c++)
		if (o->count[c])
			return;
	r->st.owners[o->slot]--;
	r->st.owners_done++;
	o->live = false;
}

/* a buffer in (sign 1) or out (-1): in its owner's slot, or the no-stage one */
static struct r_owner *r_take(struct replay *r, const struct r_buf *b, int sign)
{
	struct r_owner *o = b->unstaged ? NULL : r_owner_of(r, b->owner);
	__u32 slot = INFL_SLOT_NONE;

	if (o && o->live) {
		slot = o->slot;
		o->count[b->cls] += sign;
		o->bytes[b->cls] += sign * b->bytes;
	}
	r->st.cur[b->cls][slot].count += sign;
	r->st.cur[b->cls][slot].bytes += sign * b->bytes;
	r->st.total_bufs += sign;
	r->st.total_bytes += sign * b->bytes;
	return o;
}

#define EVF_SAID                                                                               \
	(INFL_EVF_UNMATCHED | INFL_EVF_REJECTED | INFL_EVF_UNTRACKED | INFL_EVF_DUP |          \
	 INFL_EVF_UNSTAGED | INFL_EVF_DOUBLE | INFL_EVF_DROPPED)

static void r_event(struct replay *r, const struct logged *e, __u8 type, __u8 flags)
{
	__u8 said = EVF_SAID;

	/* a stage unmatched or not: what the owner's life was at it */
	if (!r->owner_lives && e->in.probe == INFL_PROBE_STAGE)
		said &= ~INFL_EVF_UNMATCHED;
	/* a hit whose owner was given up, counted: its buffer in no stage, its stage untracked */
	if (r->inexact)
		said &= ~(INFL_EVF_UNSTAGED | INFL_EVF_UNTRACKED);
	if (e->type != type || (e->flags & said) != (flags & said))
		diff_note(&r->events, "place %llu (thread %u, hit %u, probe %u): event type %u "
			  "flags %#x, the replay's type %u flags %#x", (unsigned long long)e->seq,
			  e->tid, e->op, e->in.probe, e->type, e->flags & EVF_SAID, type, flags);
}

static void r_alloc(struct replay *r, const struct logged *e)
{
	__u64 id = e->in.a[0], cls = e->in.a[1], bytes = e->in.a[2], owner = e->in.a[3];
	struct r_buf *b, old;
	bool dup;

	if (e->part) {
		/* the buffer the alloc replaced, out at a place of its own after the alloc's */
		if (!r->has_pending[e->tid]) {
			r_event(r, e, INFL_EV_ALLOC, 0);
			return;
		}
		r->has_pending[e->tid] = false;
		old = r->pending[e->tid];
		r->st.dup_alloc++;
		r_retire_if_done(r, r_take(r, &old, -1));
		r_event(r, e, INFL_EV_FREE, INFL_EVF_DUP);
		return;
	}
	r->st.events[INFL_PROBE_ALLOC]++;
	if (cls >= INFL_MAX_CLASSES) {
		r->st.bad_class++;
		r_event(r, e, INFL_EV_ALLOC, INFL_EVF_REJECTED);
		return;
	}
	if (owner)
		r_admit(r, owner);
	b = r_buf_of(r, id);
	dup = b->live;
	if (dup) {
		r->pending[e->tid] = *b;
		r->has_pending[e->tid] = true;
	}
	b->live = true;
	b->owner = owner;
	b->bytes = bytes;
	b->cls = cls;
	b->unstaged = !owner;
	r_take(r, b, 1);
	r->st.allocated[cls].count++;
	r->st.allocated[cls].bytes += bytes;
	r_event(r, e, INFL_EV_ALLOC, dup ? INFL_EVF_DUP : 0);
}

static void r_free(struct replay *r, const struct logged *e)
{
	__u64 cls = e->in.a[1];
	struct r_buf *b = r_buf_of(r, e->in.a[0]);

	r->st.events[INFL_PROBE_FREE]++;
	if (cls >= INFL_MAX_CLASSES)
		r->st.bad_class++;
	if (!b->live) {
		if (cls >= INFL_MAX_CLASSES) {
			r_event(r, e, INFL_EV_FREE, INFL_EVF_REJECTED);
			return;
		}
		r->st.double_free++; /* traced from its start: never live, or no more */
		r_event(r, e, INFL_EV_FREE, INFL_EVF_UNMATCHED | INFL_EVF_DOUBLE);
		return;
	}
	b->live = false;
	r->st.freed[b->cls].count++;
	r->st.freed[b->cls].bytes += b->bytes;
	r_retire_if_done(r, r_take(r, b, -1));
	r_event(r, e, INFL_EV_FREE, 0);
}

static void r_stage(struct replay *r, const struct logged *e)
{
	__u64 owner = e->in.a[0], stage = e->in.a[1];
	struct r_owner *o;
	__u32 from;
	__u8 flags = 0;

	r->st.events[INFL_PROBE_STAGE]++;
	if (stage >= INFL_MAX_STAGES || !owner) {
		if (stage >= INFL_MAX_STAGES)
			r->st.bad_stage++;
		else
			r->st.stage_owner0++;
		r_event(r, e, INFL_EV_STAGE, INFL_EVF_REJECTED);
		return;
	}
	o = r_admit(r, owner);
	from = o->slot;
	if (from == INFL_SLOT_NONE) {
		/* its first stage: an entry stage starts it, any other began before the trace */
		if (entry_stage_mask & (1u << stage)) {
			r->st.owners_started++;
		} else {
			r->st.unmatched_stage[stage]++;
			flags = INFL_EVF_UNMATCHED;
		}
	} else {
		r->st.dwell_count[from]++;
		r->dwell++;
	}
	for (int c = 0; c < INFL_CLASSES; c++) {
		r->st.cur[c][from].count -= o->count[c];
		r->st.cur[c][from].bytes -= o->bytes[c];
		r->st.cur[c][stage].count += o->count[c];
		r->st.cur[c][stage].bytes += o->bytes[c];
	}
	r->st.owners[from]--;
	r->st.owners[stage]++;
	o->slot = stage;
	r_retire_if_done(r, o);
	r_event(r, e, INFL_EV_STAGE, flags);
}

/* a diagnostic line for differences found */
static void say(const char *name, const struct diffs *d)
{
	if (d->n)
		printf("# %s: %s\n", name, d->first);
}

static int by_seq(const void *a, const void *b)
{
	const struct logged *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Every place of process `pid`, from every thread's log, in place order. */
static struct logged *places_of(__u32 pid, const __u32 *pid_of_tid, size_t *n)
{
	struct logged *all;
	size_t k = 0;

	*n = 0;
	for (int t = 0; t < MAX_TIDS; t++)
		if (pid_of_tid[t] == pid)
			*n += logs[t].n;
	all = malloc((*n + 1) * sizeof(*all));
	if (!all)
		out_of_memory();
	for (int t = 0; t < MAX_TIDS; t++)
		if (pid_of_tid[t] == pid && logs[t].n) {
			memcpy(all + k, logs[t].e, logs[t].n * sizeof(*all));
			k += logs[t].n;
		}
	qsort(all, *n, sizeof(*all), by_seq);
	return all;
}

static void replay_run(struct replay *r, __u32 pid, const struct logged *pl, size_t n,
		       bool owner_lives, bool inexact)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->owner_lives = owner_lives;
	r->inexact = inexact;
	r->cap = 64;
	while (r->cap < 2 * n + 2)
		r->cap <<= 1;
	r->bufs = calloc(r->cap, sizeof(*r->bufs));
	r->owners = calloc(r->cap, sizeof(*r->owners));
	if (!r->bufs || !r->owners)
		out_of_memory();
	r->st.hits_done = SEQ_BASE;
	for (size_t i = 0; i < n; i++) {
		const struct logged *e = &pl[i];

		r->st.seq = e->seq;
		if (e->in.probe == INFL_PROBE_ALLOC)
			r_alloc(r, e);
		else if (e->in.probe == INFL_PROBE_FREE)
			r_free(r, e);
		else
			r_stage(r, e);
		r->st.hits_done++;
		/* the peak: the first place the total stood this high */
		if (r->st.total_bytes > r->st.peak_bytes) {
			r->st.peak_bytes = r->st.total_bytes;
			r->st.peak_seq = e->seq;
			memcpy(r->at_peak, r->st.cur, sizeof(r->at_peak));
			memcpy(r->at_peak_owners, r->st.owners, sizeof(r->at_peak_owners));
			r->at_peak_bufs = r->st.total_bufs;
		}
	}
	r->st.seq = r->st.hits_done;
	for (size_t i = 0; i < r->cap; i++) {
		const struct r_buf *b = &r->bufs[i];
		struct r_owner *o;

		if (!b->used || !b->live || b->unstaged)
			continue;
		o = r_owner_of(r, b->owner);
		o->held_count[b->cls]++;
		o->held_bytes[b->cls] += b->bytes;
	}
	for (int t = 0; t < MAX_TIDS; t++)
		if (r->has_pending[t])
			diff_note(&r->events, "thread %d: a replaced buffer never counted out", t);
}

static void replay_free(struct replay *r)
{
	free(r->bufs);
	free(r->owners);
}

/* --- comparing the record with the replay ---------------------------------------------------- */

static void cmp(struct diffs *d, const char *what, int i, int j, __u64 got, __u64 want)
{
	if (got == want)
		return;
	if (i < 0)
		diff_note(d, "%s: got %lld, want %lld", what, (long long)got, (long long)want);
	else if (j < 0)
		diff_note(d, "%s[%d]: got %lld, want %lld", what, i, (long long)got,
			  (long long)want);
	else
		diff_note(d, "%s[%d][%d]: got %lld, want %lld", what, i, j, (long long)got,
			  (long long)want);
}

static void cmp_cells(struct diffs *d, const char *what, const struct infl_cell *got,
		      const struct infl_cell *want, int n, int m)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++) {
			char w[64];

			snprintf(w, sizeof(w), "%s count", what);
			cmp(d, w, i, m > 1 ? j : -1, got[i * m + j].count, want[i * m + j].count);
			snprintf(w, sizeof(w), "%s bytes", what);
			cmp(d, w, i, m > 1 ? j : -1, got[i * m + j].bytes, want[i * m + j].bytes);
		}
}

/* a record's cells added up over the slots: what a class holds, whatever stage holds it */
static void class_sums(const struct infl_cell (*cells)[INFL_SLOTS], struct infl_cell *sums)
{
	for (int c = 0; c < INFL_CLASSES; c++) {
		sums[c] = (struct infl_cell){ 0 };
		for (int s = 0; s < INFL_SLOTS; s++) {
			sums[c].count += cells[c][s].count;
			sums[c].bytes += cells[c][s].bytes;
		}
	}
}

/*
 * The record `k` (derived) against the replay: every field the hits change, and the anomalies
 * that must be 0 (`exact`: contention_lost and dwell_lost too; else the dwells add up). What
 * depends on owners' lives (the slots of cells, owners per slot, owners started and done,
 * unmatched stages, dwells) only where the replay has them in the place order
 * (r->owner_lives); else what a class holds over all slots, and owners that add up: every
 * owner with a stage was started, or unmatched, once, and is done or counted in a stage.
 */
static void compare_record(struct diffs *d, const struct infl_proc *k, const struct replay *r,
			   bool exact)
{
	const struct infl_proc *w = &r->st;
	struct infl_cell got[INFL_CLASSES], want[INFL_CLASSES];
	__u64 dwell = 0, lives = k->owners_started, staged = k->owners_done;

	cmp(d, "hits_done", -1, -1, k->hits_done, w->hits_done);
	cmp(d, "seq", -1, -1, k->seq, w->seq);
	class_sums(k->cur, got);
	class_sums(w->cur, want);
	cmp_cells(d, "class", got, want, INFL_CLASSES, 1);
	cmp(d, "total_bytes", -1, -1, k->total_bytes, w->total_bytes);
	cmp(d, "total_bufs", -1, -1, k->total_bufs, w->total_bufs);
	cmp_cells(d, "allocated", k->allocated, w->allocated, INFL_CLASSES, 1);
	cmp_cells(d, "freed", k->freed, w->freed, INFL_CLASSES, 1);
	cmp_cells(d, "unmatched_free", k->unmatched_free, w->unmatched_free, INFL_CLASSES, 1);
	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		cmp(d, "events", i, -1, k->events[i], w->events[i]);
	cmp(d, "dup_alloc", -1, -1, k->dup_alloc, w->dup_alloc);
	cmp(d, "double_free", -1, -1, k->double_free, w->double_free);
	cmp(d, "bad_class", -1, -1, k->bad_class, w->bad_class);
	cmp(d, "bad_stage", -1, -1, k->bad_stage, w->bad_stage);
	cmp(d, "stage_owner0", -1, -1, k->stage_owner0, w->stage_owner0);
	cmp(d, "buf_map_full", -1, -1, k->buf_map_full, 0);
	cmp(d, "untracked_free", -1, -1, k->untracked_free, 0);
	cmp(d, "untracked_allocs", -1, -1, k->untracked_allocs, 0);
	cmp(d, "owner_map_full", -1, -1, k->owner_map_full, 0);
	cmp(d, "peak_bytes", -1, -1, k->peak_bytes, w->peak_bytes);
	cmp(d, "peak_seq", -1, -1, k->peak_seq, w->peak_seq);
	if (exact) {
		cmp(d, "contention_lost", -1, -1, k->contention_lost, 0);
		cmp(d, "dwell_lost", -1, -1, k->dwell_lost, 0);
	}
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		lives += k->unmatched_stage[s];
		staged += k->owners[s];
		dwell += k->dwell_count[s];
	}
	cmp(d, "owners started or unmatched - done - in a stage", -1, -1, lives - staged, 0);
	if (!r->owner_lives)
		return;
	cmp_cells(d, "cur", &k->cur[0][0], &w->cur[0][0], INFL_CLASSES, INFL_SLOTS);
	for (int s = 0; s < INFL_SLOTS; s++)
		cmp(d, "owners", s, -1, k->owners[s], w->owners[s]);
	cmp(d, "owners_started", -1, -1, k->owners_started, w->owners_started);
	cmp(d, "owners_done", -1, -1, k->owners_done, w->owners_done);
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		cmp(d, "unmatched_stage", s, -1, k->unmatched_stage[s], w->unmatched_stage[s]);
		if (!k->dwell_lost)
			cmp(d, "dwell_count", s, -1, k->dwell_count[s], w->dwell_count[s]);
	}
	cmp(d, "dwell_count + dwell_lost", -1, -1, dwell + k->dwell_lost, r->dwell);
}

/* The peak's composition against the replay's at the peak's place (where owners' lives
 * differ from it: what each class held). */
static void compare_peak(struct diffs *d, const struct infl_proc *k, const struct replay *r)
{
	struct infl_cell got[INFL_CLASSES], want[INFL_CLASSES];

	class_sums(k->peak, got);
	class_sums(r->at_peak, want);
	cmp_cells(d, "peak class", got, want, INFL_CLASSES, 1);
	cmp(d, "peak_bufs", -1, -1, k->peak_bufs, r->at_peak_bufs);
	if (!r->owner_lives)
		return;
	cmp_cells(d, "peak", &k->peak[0][0], &r->at_peak[0][0], INFL_CLASSES, INFL_SLOTS);
	for (int s = 0; s < INFL_SLOTS; s++)
		cmp(d, "peak_owners", s, -1, k->peak_owners[s], r->at_peak_owners[s]);
}

static __u32 os_nheld(__u64 s)
{
	return (__u32)(s & INFL_OS_NHELD_MASK);
}

static __u32 os_refs(__u64 s)
{
	return (__u32)((s & INFL_OS_REFS_MASK) >> INFL_OS_REFS_SHIFT);
}

static bool holds_any(const struct r_owner *o)
{
	for (int c = 0; c < INFL_CLASSES; c++)
		if (o->held_count[c])
			return true;
	return false;
}

/*
 * Every owner record left in the map, once every hit ended, against the replays: its
 * identity is its key's (a hit that wrote into an element reused for another key shows
 * here, or in the record's counts), no reference is left, nothing is DOOMED (the reaper
 * deletes what it marks, or takes the mark back), its held words are exactly the live
 * buffers it owns (unless a hit gave its owner up: inexact), the nonzero ones settled to its
 * slot, and its state counts them; every owner of a live buffer has its record. Where the
 * replay has owners' lives (owner_lives):
 * a live owner's record is counted in the replay's slot, a retired one is not counted, and
 * every live owner has its record. Returns the records looked at.
 */
static __u64 check_owner_records(struct diffs *d, struct replay *rs, unsigned nreplays)
{
	__u64 records = 0, live = 0, matched = 0;

	for (unsigned i = 0; i < nreplays; i++)
		for (size_t j = 0; j < rs[i].cap; j++) {
			const struct r_owner *ro = &rs[i].owners[j];

			if (!rs[i].inexact)
				live += ro->used && (rs[i].owner_lives ? ro->live : holds_any(ro));
		}
	for (__u32 i = 0; i < owners.max_entries; i++) {
		struct infl_owner_key *k;
		struct infl_owner *o;
		struct replay *r = NULL;
		struct r_owner *ro = NULL;
		__u64 s, nheld = 0;

		if (!model_map_element(&owners, i, (void **)&k, (void **)&o))
			continue;
		records++;
		s = o->state;
		for (unsigned j = 0; j < nreplays; j++)
			if (rs[j].pid == k->pid && proc_gen[j] == k->gen)
				r = &rs[j];
		if (!r) {
			diff_note(d, "owner record of pid %u gen %llu: no such process", k->pid,
				  (unsigned long long)k->gen);
			continue;
		}
		if (os_refs(s) || (s & INFL_OS_DOOMED)) {
			diff_note(d, "owner %llu: state %#llx: %u references left%s",
				  (unsigned long long)k->owner, (unsigned long long)s, os_refs(s),
				  s & INFL_OS_DOOMED ? ", DOOMED under its key" : "");
			continue;
		}
		if (o->id && (o->id != k->owner || o->id_gen != k->gen || o->id_pid != k->pid ||
			      o->id_side != k->side)) {
			diff_note(d, "the record under owner %llu's key (side %u) is owner %llu's "
				  "(gen %llu, pid %u, side %u)", (unsigned long long)k->owner,
				  k->side, (unsigned long long)o->id,
				  (unsigned long long)o->id_gen, o->id_pid, o->id_side);
			continue;
		}
		/* a void record (never the owner's, or not any more) is retired and holds
		 * nothing; every other one was claimed, and only one side of an owner is */
		if (s & INFL_OS_VOID) {
			for (int c = 0; c < INFL_CLASSES; c++)
				nheld += (o->held_count[c] | o->held_bytes[c]) &
					 INFL_HELD_VALUE_MASK;
			if (nheld || os_nheld(s) || (s & INFL_OS_ADMITTED) ||
			    !(s & INFL_OS_RETIRED))
				diff_note(d, "owner %llu side %u: void, state %#llx, held "
					  "words %llu", (unsigned long long)k->owner, k->side,
					  (unsigned long long)s, (unsigned long long)nheld);
			continue;
		}
		if (!(s & INFL_OS_CLAIMED)) {
			diff_note(d, "owner %llu side %u: a record left that no hit claimed, state "
				  "%#llx", (unsigned long long)k->owner, k->side,
				  (unsigned long long)s);
			continue;
		}
		{
			struct infl_owner_key other = *k;
			struct infl_owner *o2;

			other.side ^= 1;
			o2 = bpf_map_lookup_elem(&owners, &other);
			if (o2 && k->side == 0 &&
			    (o2->state & (INFL_OS_CLAIMED | INFL_OS_VOID)) == INFL_OS_CLAIMED)
				diff_note(d, "owner %llu: both sides claimed (states %#llx, %#llx)",
					  (unsigned long long)k->owner, (unsigned long long)s,
					  (unsigned long long)o2->state);
		}
		ro = r_owner_find(r, k->owner);
		if (!r->inexact && ro && (r->owner_lives ? ro->live : holds_any(ro)))
			matched++;
		if (r->owner_lives && ro && ro->live &&
		    (!o->id || !(s & INFL_OS_ADMITTED) || (s & INFL_OS_RETIRED) ||
		     infl_os_slot(s) != ro->slot))
			diff_note(d, "owner %llu: state %#llx (id %llu), the replay's: live in "
				  "slot %u", (unsigned long long)k->owner, (unsigned long long)s,
				  (unsigned long long)o->id, ro->slot);
		if (r->owner_lives && !(ro && ro->live) && (s & INFL_OS_ADMITTED))
			diff_note(d, "owner %llu: state %#llx: counted, the replay's is done",
				  (unsigned long long)k->owner, (unsigned long long)s);
		for (int c = 0; c < INFL_CLASSES; c++) {
			__u64 hc = o->held_count[c] & INFL_HELD_VALUE_MASK;
			__u64 hb = o->held_bytes[c] & INFL_HELD_VALUE_MASK;
			__u64 want_c = ro ? ro->held_count[c] : 0;
			__u64 want_b = ro ? ro->held_bytes[c] : 0;

			nheld += hc;
			if (!r->inexact && (hc != (want_c & INFL_HELD_VALUE_MASK) ||
					    hb != (want_b & INFL_HELD_VALUE_MASK)))
				diff_note(d, "owner %llu class %d: holds %llu buffers, %llu "
					  "bytes; its live buffers %llu, %llu",
					  (unsigned long long)k->owner, c, (unsigned long long)hc,
					  (unsigned long long)hb, (unsigned long long)want_c,
					  (unsigned long long)want_b);
			/* a word's slot is where its value counts: one holding nothing may lag (an
			 * owner taken up again in the no-stage slot settles it at its next add) */
			if ((s & INFL_OS_ADMITTED) &&
			    ((hc && held_slot(o->held_count[c]) != infl_os_slot(s)) ||
			     (hb && held_slot(o->held_bytes[c]) != infl_os_slot(s))))
				diff_note(d, "owner %llu class %d: held words in slots %u and "
					  "%u, the owner in %u", (unsigned long long)k->owner, c,
					  held_slot(o->held_count[c]), held_slot(o->held_bytes[c]),
					  infl_os_slot(s));
		}
		if (os_nheld(s) != (nheld & INFL_OS_NHELD_MASK))
			diff_note(d, "owner %llu: state %#llx says %u held, its words %llu",
				  (unsigned long long)k->owner, (unsigned long long)s, os_nheld(s),
				  (unsigned long long)nheld);
	}
	if (matched != live)
		diff_note(d, "%llu owners live (or holding buffers) in the replay, %llu of them "
			  "with a record", (unsigned long long)live, (unsigned long long)matched);
	return records;
}

/* Every buffer record left against the replays' live buffers. */
static void check_buf_records(struct diffs *d, struct replay *rs, unsigned nreplays)
{
	__u64 live = 0, matched = 0;

	for (unsigned i = 0; i < nreplays; i++)
		for (size_t j = 0; j < rs[i].cap; j++)
			live += rs[i].bufs[j].used && rs[i].bufs[j].live;
	for (__u32 i = 0; i < bufs.max_entries; i++) {
		struct infl_buf_key *k;
		struct infl_buf *b;
		struct r_buf *rb = NULL;

		if (!model_map_element(&bufs, i, (void **)&k, (void **)&b))
			continue;
		for (unsigned j = 0; j < nreplays && !rb; j++)
			if (rs[j].pid == k->pid && proc_gen[j] == k->gen)
				rb = r_buf_find(&rs[j], k->buf);
		if (!rb || !rb->live || rb->cls != b->cls || rb->bytes != b->bytes ||
		    rb->owner != b->owner || rb->unstaged != !!(b->flags & INFL_BUF_UNSTAGED)) {
			diff_note(d, "buffer %#llx of pid %u: class %u, %llu bytes, owner %llu; "
				  "the replay's %s", (unsigned long long)k->buf, k->pid, b->cls,
				  (unsigned long long)b->bytes, (unsigned long long)b->owner,
				  rb && rb->live ? "another" : "not live");
			continue;
		}
		matched++;
	}
	if (matched != live)
		diff_note(d, "%llu buffers live in the replay, %llu with a record",
			  (unsigned long long)live, (unsigned long long)matched);
}

/* What a run's processes were checked for, added up over a scenario's runs. */
struct verdict {
	__u64 hits, places, runs;
	__u64 bad_places, own_order, real_order;
	struct diffs record, events, peak, owner_recs, buf_recs;
	__u64 contention_lost, dwell_lost;
	__u64 records, fuzz_records, fuzz_unknown, fuzz_off;
	__u64 owner_races, own_lives; /* records whose owners' lives are not the replay's */
	__u64 owner_records;
};

/*
 * Process pid's places (its threads' logs) replayed and compared with its record; `started`
 * and `returned` give the real time of each thread's hits (NULL: not kept). `owners_ordered`:
 * the program orders every owner's retirement after the other hits on it, so that the
 * owners' lives are the place order's even where hits on one owner were in flight at once.
 * Elsewhere they are where no such race was counted (owner_races: an owner's life follows
 * its own order, acct.bpf.h). Where a hit gave its owner up (contention_lost: the record says
 * it is inexact) they are not either. The replay is left in `r` for the record checks.
 */
static void verify_process(struct verdict *v, struct replay *r, unsigned pi,
			   const __u32 *pid_of_tid, __u64 *const *started, __u64 *const *returned,
			   bool exact, bool owners_ordered)
{
	__u32 pid = MODEL_PID + pi;
	struct infl_proc k = *proc_of(pid);
	struct logged *pl;
	size_t n;
	__u64 min_ret = ~0ull;

	pl = places_of(pid, pid_of_tid, &n);
	v->places += n;
	for (size_t i = 0; i < n; i++)
		v->bad_places += pl[i].seq != SEQ_BASE + 1 + i;
	for (int t = 0; t < MAX_TIDS; t++)
		for (size_t i = 1; pid_of_tid[t] == pid && i < logs[t].n; i++)
			v->own_order += logs[t].e[i].seq <= logs[t].e[i - 1].seq;
	/* real time: no place after one of a hit that began after this one returned */
	for (size_t i = n; started && i-- > 0;) {
		__u32 t = pl[i].tid, op = pl[i].op;

		if (started[t][op] > min_ret)
			v->real_order++;
		if (returned[t][op] < min_ret)
			min_ret = returned[t][op];
	}
	replay_run(r, pid, pl, n, (owners_ordered || !k.owner_races) && !k.contention_lost,
		   k.contention_lost != 0);
	v->owner_races += k.owner_races;
	v->own_lives += !r->owner_lives;
	infl_proc_derive(&k);
	compare_record(&v->record, &k, r, exact);
	v->events.n += r->events.n;
	if (r->events.n && v->events.n == r->events.n)
		memcpy(v->events.first, r->events.first, sizeof(v->events.first));
	v->contention_lost += k.contention_lost;
	v->dwell_lost += k.dwell_lost;
	v->records++;
	if (k.peak_fuzz) {
		struct diffs off = {};

		/* said inexact: how often it was */
		compare_peak(&off, &k, r);
		v->fuzz_records++;
		v->fuzz_unknown += k.peak_fuzz == INFL_PEAK_FUZZ_UNKNOWN;
		v->fuzz_off += off.n != 0;
	} else {
		compare_peak(&v->peak, &k, r);
	}
	free(pl);
}

/* --- a reader: the loader's copy of a record, made while hits run --------------------------- */

struct reading {
	atomic_int *running;
	unsigned nprocs;
	__u64 accepted, rejected;
	struct diffs bad;
};

/* front to back, one 8-byte word at a time, as the kernel's lookup copies a map value */
static void copy_record(struct infl_proc *dst, const struct infl_proc *src)
{
	const volatile __u64 *s = (const volatile __u64 *)src;
	__u64 *d = (__u64 *)dst;

	for (size_t i = 0; i < sizeof(*src) / 8; i++)
		d[i] = s[i];
}

/* what a whole copy must say: its cells add up to its totals, none below zero, its counts
 * agree with each other */
static void check_copy(struct diffs *d, struct infl_proc *c)
{
	__u64 bytes = 0, bufs_n = 0, allocs = 0, frees = 0, owners_n = 0, events = 0;

	infl_proc_derive(c);
	for (int i = 0; i < INFL_CLASSES; i++) {
		for (int s = 0; s < INFL_SLOTS; s++) {
			if ((__s64)c->cur[i][s].count < 0 || (__s64)c->cur[i][s].bytes < 0)
				diff_note(d, "cur[%d][%d] below zero: %lld, %lld", i, s,
					  (long long)c->cur[i][s].count,
					  (long long)c->cur[i][s].bytes);
			bytes += c->cur[i][s].bytes;
			bufs_n += c->cur[i][s].count;
		}
		allocs += c->allocated[i].count;
		frees += c->freed[i].count;
	}
	for (int s = 0; s < INFL_SLOTS; s++) {
		if ((__s64)c->owners[s] < 0)
			diff_note(d, "owners[%d] below zero: %lld", s, (long long)c->owners[s]);
		owners_n += c->owners[s];
	}
	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		events += c->events[i];
	if (bytes != c->total_bytes)
		diff_note(d, "cells hold %llu bytes, the total says %llu",
			  (unsigned long long)bytes, (unsigned long long)c->total_bytes);
	if (bufs_n != c->total_bufs || allocs - frees - c->dup_alloc != c->total_bufs)
		diff_note(d, "cells hold %llu buffers, %llu allocated - %llu freed - %llu "
			  "replaced, total_bufs %llu", (unsigned long long)bufs_n,
			  (unsigned long long)allocs, (unsigned long long)frees,
			  (unsigned long long)c->dup_alloc, (unsigned long long)c->total_bufs);
	if (owners_n > owners.max_entries)
		diff_note(d, "%llu owners counted, more than records can be",
			  (unsigned long long)owners_n);
	/* every hit counts its probe once; a dup's second place counts none */
	if (events + c->dup_alloc != c->hits_done - SEQ_BASE)
		diff_note(d, "%llu hits counted by probe, %llu replaced, %llu ended",
			  (unsigned long long)events, (unsigned long long)c->dup_alloc,
			  (unsigned long long)(c->hits_done - SEQ_BASE));
}

static struct infl_proc copy_buf[MAX_PROCS];

static void *reader(void *arg)
{
	struct reading *rd = arg;

	for (unsigned i = 0; atomic_load(rd->running) > 0; i++) {
		struct infl_proc *c = &copy_buf[i % rd->nprocs];

		copy_record(c, proc_of(MODEL_PID + i % rd->nprocs));
		if (infl_proc_whole(c)) {
			rd->accepted++;
			check_copy(&rd->bad, c);
		} else {
			rd->rejected++;
		}
		sched_yield();
	}
	return NULL;
}

/* --- the scenarios ------------------------------------------------------------------------- */

enum script_kind {
	SCRIPT_OWN,    /* each round an owner of its own: born, alloc, work, free, done */
	SCRIPT_RANDOM, /* dup allocs, double frees, bad ids, owner 0, stages in any order */
	SCRIPT_PHASES, /* an owner all threads fill and empty, retired once they are done */
	SCRIPT_CHURN,  /* two owners all threads share, retired while others still use them */
};

struct scenario {
	const char *name;
	unsigned threads, procs, cpus, runs, rounds;
	enum script_kind script;
	struct model_sched sched;
	unsigned stall_in, stall_us; /* thread 0 is also off its CPU this long, at times */
	__u32 owner_entries;
	__u64 tick_ns; /* the clock's advance at each read: OWNER_REAP_GRACE_NS / tick reads */
	bool exact;    /* nothing given up: no owner, no reap ring, shared by threads */
	bool ordered;  /* every owner's retirement ordered after the other hits on it */
	bool reaps;    /* records must be reaped, and their elements reused for other keys */
};

struct worker {
	pthread_t th;
	__u32 pid, tid;
	unsigned cpu, seed;
	struct input *ops;
	size_t n;
	__u64 *started, *returned;
	struct model_sched sched;
	bool own_sched;
};

static pthread_barrier_t start_line, phase_line;
static atomic_ullong real_time; /* one tick at each hit's start and return */

static __u64 mix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct input op_alloc(__u64 buf, __u64 cls, __u64 bytes, __u64 owner)
{
	return (struct input){ INFL_PROBE_ALLOC, { buf, cls, bytes, owner } };
}

static struct input op_free(__u64 buf, __u64 cls, __u64 bytes)
{
	return (struct input){ INFL_PROBE_FREE, { buf, cls, bytes, 0 } };
}

static struct input op_stage(__u64 owner, __u64 stage)
{
	return (struct input){ INFL_PROBE_STAGE, { owner, stage, 0, 0 } };
}

/*
 * A random hit of thread t (+1), from the random bits y: an alloc, a free or a stage, of its
 * own RANDOM_BUFS buffer ids and three owners (or owner 0), so that allocs of live buffers
 * (dups) and frees of dead ones (double frees) are frequent; one in 40 has an id out of
 * range. No other thread names them: two threads' hits on one buffer at once are in no
 * order the program made (a free looks its buffer up before its place), and the order of
 * places says nothing of them. `cls`: the class each buffer id was last allocated with.
 */
#define RANDOM_BUFS 6
static struct input random_op(__u64 t, __u64 y, __u64 *cls)
{
	__u64 k = y % RANDOM_BUFS, id = t << 32 | (0x200 + k), c, stage;
	__u64 owner = (y >> 8) % 8 < 7 ? t << 32 | (1 + (y >> 12) % 3) : 0;
	unsigned what = (y >> 20) % 100;
	bool bad = (y >> 28) % 40 == 0;

	if (what < 45) {
		c = bad ? INFL_MAX_CLASSES + (y >> 34) % 200 : (y >> 34) % INFL_MAX_CLASSES;
		if (!bad)
			cls[k] = c;
		return op_alloc(id, c, 1 + (y >> 42) % (1u << 20), owner);
	}
	if (what < 80)
		return op_free(id, bad ? INFL_MAX_CLASSES + (y >> 34) % 200 : cls[k], 4096);
	stage = bad ? INFL_MAX_STAGES + (y >> 34) % 100 : (y >> 34) % 6;
	return op_stage(owner, stage);
}

/* Thread w's hits: `li` its index among its process's threads. */
static void make_script(struct worker *w, const struct scenario *s, unsigned li, bool solo_peak,
			__u64 seed)
{
	size_t cap = (size_t)s->rounds * 12 + 8, n = 0;
	__u64 t = w->tid + 1;
	struct input *ops = calloc(cap, sizeof(*ops));
	__u64 slot_cls[RANDOM_BUFS] = {};

	if (!ops)
		out_of_memory();
	for (unsigned r = 0; r < s->rounds; r++) {
		__u64 x = mix(&seed), own = t << 32 | (r + 1), buf = t << 32 | 0x100;
		__u64 cls = x % INFL_MAX_CLASSES, bytes = 4096 * (1 + (x >> 8) % 16);

		switch (s->script) {
		case SCRIPT_OWN:
			ops[n++] = op_stage(own, ENTRY_STAGE);
			ops[n++] = op_alloc(buf, cls, bytes, own);
			ops[n++] = op_stage(own, WORK_STAGE);
			ops[n++] = op_free(buf, cls, bytes);
			ops[n++] = op_stage(own, DONE_STAGE);
			break;
		case SCRIPT_CHURN:
			own = 1 + (r & 1);
			ops[n++] = op_stage(own, ENTRY_STAGE);
			ops[n++] = op_alloc(buf, cls, bytes, own);
			ops[n++] = op_stage(own, WORK_STAGE);
			ops[n++] = op_free(buf, cls, bytes);
			ops[n++] = op_stage(own, DONE_STAGE);
			break;
		case SCRIPT_PHASES:
			/* owner 1 is everyone's, and retires once every other hit on it ended
			 * (the barrier): its retirement is in the program's order. Each thread's
			 * own owner retires at its round's end, thread 0's at the next round's
			 * start, where that retirement reaps owner 1's record while the others
			 * take it up again */
			if (li == 0 && r > 0)
				ops[n++] = op_stage(t << 32 | r, DONE_STAGE);
			if (li == 1)
				ops[n++] = op_stage(1, ENTRY_STAGE);
			ops[n++] = op_stage(own, ENTRY_STAGE);
			ops[n++] = op_alloc(buf, cls, bytes, 1);
			ops[n++] = op_alloc(buf + 1, (cls + 1) % INFL_MAX_CLASSES, bytes / 2, own);
			ops[n++] = op_stage(own, WORK_STAGE);
			ops[n++] = op_free(buf, cls, bytes);
			ops[n++] = op_free(buf + 1, 0, 0);
			if (li != 0)
				ops[n++] = op_stage(own, DONE_STAGE);
			ops[n++] = (struct input){ .probe = INPUT_BARRIER };
			if (li == 0)
				ops[n++] = op_stage(1, DONE_STAGE);
			ops[n++] = (struct input){ .probe = INPUT_BARRIER };
			if (li == 0 && r + 1 == s->rounds)
				ops[n++] = op_stage(own, DONE_STAGE);
			break;
		case SCRIPT_RANDOM:
			for (int i = 0; i < 5; i++)
				ops[n++] = random_op(t, mix(&seed), slot_cls);
			break;
		}
	}
	if (solo_peak) {
		/* the last peak made alone in its process: copied exactly (peak_fuzz 0), so that
		 * its composition is compared with the replay's, whatever the run left there */
		__u64 big = t << 32 | 0xfffff;

		ops[n++] = (struct input){ .probe = INPUT_BARRIER };
		if (li == 0) {
			ops[n++] = op_stage(big, ENTRY_STAGE);
			ops[n++] = op_alloc(big, 1, 1ull << 40, big);
			ops[n++] = op_free(big, 1, 1ull << 40);
			ops[n++] = op_stage(big, DONE_STAGE);
		}
	}
	w->ops = ops;
	w->n = n;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	model_thread_init(w->pid, w->tid, w->seed);
	model_thread_cpu(w->cpu);
	model_sched_thread(w->own_sched ? &w->sched : NULL);
	pthread_barrier_wait(&start_line);
	for (size_t i = 0; i < w->n; i++) {
		if (w->ops[i].probe == INPUT_BARRIER) {
			pthread_barrier_wait(&phase_line);
			continue;
		}
		w->started[i] = atomic_fetch_add(&real_time, 1);
		fire(&w->ops[i], w->tid, (__u32)i);
		w->returned[i] = atomic_fetch_add(&real_time, 1);
	}
	model_sched_thread(NULL);
	return NULL;
}

struct scenario_totals {
	__u64 accepted, rejected, fuzz_records, records, reaped, reused_other;
};

static struct scenario_totals totals;

static void run_scenario(const struct scenario *s, unsigned seed)
{
	struct worker w[MAX_THREADS];
	__u32 pid_of_tid[MAX_TIDS] = {};
	__u64 *started[MAX_TIDS] = {}, *returned[MAX_TIDS] = {};
	struct replay r[MAX_PROCS];
	struct verdict v = {};
	struct reading rd = {};
	atomic_int running;
	pthread_t rth;
	__u64 reaped = 0, reused_other = 0, unreaped = 0, stale = 0, lost_holds = 0;
	struct timespec t0, t1;
	const char *n = s->name;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* a scenario of reaps runs on past its runs, up to four times as many, until a hit held
	 * a stale pointer: how often a record goes under a lookup depends on the host's load */
	for (unsigned run = 0;
	     run < s->runs || (s->reaps && !(reaped && reused_other && stale) && run < 4 * s->runs);
	     run++) {
		world_init(s->procs, s->owner_entries, s->tick_ns);
		model_sched_set(&(struct model_sched){ 0 });
		for (unsigned t = 0; t < s->threads; t++) {
			unsigned pi = t % s->procs;

			w[t] = (struct worker){ .pid = MODEL_PID + pi, .tid = t, .cpu = t % s->cpus,
						.seed = seed * 1000 + run * 16 + t };
			pid_of_tid[t] = w[t].pid;
			make_script(&w[t], s, t / s->procs, run & 1,
				    (__u64)seed << 40 | (__u64)run << 20 | t);
			w[t].started = calloc(w[t].n, sizeof(__u64));
			w[t].returned = calloc(w[t].n, sizeof(__u64));
			if (!w[t].started || !w[t].returned)
				out_of_memory();
			started[t] = w[t].started;
			returned[t] = w[t].returned;
			if (t == 0 && s->stall_in) {
				w[t].sched = s->sched;
				w[t].sched.sleep_in = s->stall_in;
				w[t].sched.sleep_us = s->stall_us;
				w[t].own_sched = true;
			}
		}
		for (unsigned t = s->threads; t < MAX_TIDS; t++)
			pid_of_tid[t] = 0;
		pthread_barrier_init(&start_line, NULL, s->threads);
		pthread_barrier_init(&phase_line, NULL, s->threads);
		model_sched_set(&s->sched);
		atomic_store(&running, (int)s->threads);
		rd.running = &running;
		rd.nprocs = s->procs;
		pthread_create(&rth, NULL, reader, &rd);
		for (unsigned t = 0; t < s->threads; t++)
			pthread_create(&w[t].th, NULL, work, &w[t]);
		for (unsigned t = 0; t < s->threads; t++) {
			pthread_join(w[t].th, NULL);
			atomic_fetch_sub(&running, 1);
		}
		pthread_join(rth, NULL);
		model_sched_set(&(struct model_sched){ 0 });
		pthread_barrier_destroy(&start_line);
		pthread_barrier_destroy(&phase_line);

		v.runs++;
		for (unsigned t = 0; t < s->threads; t++)
			for (size_t i = 0; i < w[t].n; i++)
				v.hits += w[t].ops[i].probe != INPUT_BARRIER;
		for (unsigned pi = 0; pi < s->procs; pi++) {
			struct infl_proc c;

			verify_process(&v, &r[pi], pi, pid_of_tid, started, returned, s->exact,
				       s->ordered);
			/* the copy once every hit ended: whole */
			copy_record(&c, proc_of(MODEL_PID + pi));
			if (!infl_proc_whole(&c))
				diff_note(&rd.bad, "the record is not whole once every hit ended");
		}
		v.owner_records += check_owner_records(&v.owner_recs, r, s->procs);
		check_buf_records(&v.buf_recs, r, s->procs);
		reaped += owners_reaped;
		stale += given_back;
		lost_holds += holds_lost;
		unreaped += owners_unreaped;
		reused_other += owners.reused_other_key;
		for (unsigned pi = 0; pi < s->procs; pi++)
			replay_free(&r[pi]);
		for (unsigned t = 0; t < s->threads; t++) {
			free(w[t].ops);
			free(w[t].started);
			free(w[t].returned);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	CHECK_EQ_U64(v.bad_places, 0, "%s: places 1..N, each taken once (%llu hits, %llu places, "
		     "%llu runs)", n, (unsigned long long)v.hits, (unsigned long long)v.places,
		     (unsigned long long)v.runs);
	CHECK(v.own_order == 0 && v.real_order == 0,
	      "%s: each thread's hits in its own order (%llu not), and every hit that returned "
	      "before another began placed first (%llu not)", n, (unsigned long long)v.own_order,
	      (unsigned long long)v.real_order);
	if (!CHECK_EQ_U64(v.record.n, 0, "%s: the record is the replay's in place order (owners' "
			  "lives not the replay's in %llu of %llu records: %llu owner races, or an "
			  "owner given up)", n,
			  (unsigned long long)v.own_lives, (unsigned long long)v.records,
			  (unsigned long long)v.owner_races))
		say(n, &v.record);
	if (!CHECK_EQ_U64(v.events.n, 0, "%s: every hit's event says what the replay did", n))
		say(n, &v.events);
	if (s->exact)
		CHECK(v.contention_lost == 0 && v.dwell_lost == 0,
		      "%s: nothing given up (contention_lost %llu, dwell_lost %llu)", n,
		      (unsigned long long)v.contention_lost, (unsigned long long)v.dwell_lost);
	if (!CHECK_EQ_U64(v.peak.n, 0, "%s: the peak's composition is the replay's whenever "
			  "peak_fuzz is 0 (not 0 in %llu of %llu records: %llu unknown, %llu off)",
			  n, (unsigned long long)v.fuzz_records, (unsigned long long)v.records,
			  (unsigned long long)v.fuzz_unknown, (unsigned long long)v.fuzz_off))
		say(n, &v.peak);
	if (!CHECK_EQ_U64(rd.bad.n, 0, "%s: every whole copy consistent (%llu accepted, %llu "
			  "rejected)", n, (unsigned long long)rd.accepted,
			  (unsigned long long)rd.rejected))
		say(n, &rd.bad);
	if (!CHECK_EQ_U64(v.owner_recs.n, 0, "%s: every owner record its key's, with the replay's "
			  "slot and held words (%llu records)", n,
			  (unsigned long long)v.owner_records))
		say(n, &v.owner_recs);
	if (!CHECK_EQ_U64(v.buf_recs.n, 0, "%s: every buffer record the replay's live buffer", n))
		say(n, &v.buf_recs);
	if (s->reaps)
		CHECK(reaped > 0 && reused_other > 0 && stale > 0 && !unreaped,
		      "%s: records reaped (%llu), their elements reused for other keys (%llu) "
		      "while hits held stale pointers (%llu references given back), none left "
		      "unqueued (%llu)", n, (unsigned long long)reaped,
		      (unsigned long long)reused_other, (unsigned long long)stale,
		      (unsigned long long)unreaped);
	printf("# %s: %llu hits, %llu places, fuzz > 0 in %llu of %llu records, contention_lost "
	       "%llu (owners given up %llu), dwell_lost %llu, copies %llu accepted %llu rejected, "
	       "%llu records reaped, %llu reused for another key, %llu stale references given "
	       "back, %.1f s\n", n,
	       (unsigned long long)v.hits, (unsigned long long)v.places,
	       (unsigned long long)v.fuzz_records, (unsigned long long)v.records,
	       (unsigned long long)v.contention_lost, (unsigned long long)lost_holds,
	       (unsigned long long)v.dwell_lost,
	       (unsigned long long)rd.accepted,
	       (unsigned long long)rd.rejected, (unsigned long long)reaped,
	       (unsigned long long)reused_other, (unsigned long long)stale,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	totals.accepted += rd.accepted;
	totals.rejected += rd.rejected;
	totals.fuzz_records += v.fuzz_records;
	totals.records += v.records;
	totals.reaped += reaped;
	totals.reused_other += reused_other;
}

/* --- written schedules ----------------------------------------------------------------------- */

/*
 * An actor: a thread of its own that fires its hits when the director (the main thread)
 * lets it, up to a stop: right before its nth access of some kinds (MA_*) to one word. One
 * actor runs at a time, so that the interleaving is the one written.
 */
struct actor {
	pthread_t th;
	__u32 tid;
	unsigned cpu;
	struct input ops[4];
	unsigned nops;
	const void *addr;
	unsigned kinds, nth;
	bool stopped, done;
	sem_t go, back;
};

static void actor_arm(struct actor *a);

static void actor_stop(void *arg)
{
	struct actor *a = arg;

	a->stopped = true;
	sem_post(&a->back);
	sem_wait(&a->go);
	actor_arm(a);
}

static void actor_arm(struct actor *a)
{
	a->stopped = false;
	model_watch(a->addr, a->kinds, a->nth, actor_stop, a);
}

static void *actor_main(void *arg)
{
	struct actor *a = arg;

	model_thread_init(MODEL_PID, a->tid, a->tid);
	model_thread_cpu(a->cpu);
	sem_wait(&a->go);
	actor_arm(a);
	for (unsigned i = 0; i < a->nops; i++)
		fire(&a->ops[i], a->tid, i);
	model_watch(NULL, 0, 0, NULL, NULL);
	a->done = true;
	sem_post(&a->back);
	return NULL;
}

static struct actor actors[MAX_TIDS];

/* actor `tid` on `cpu`, with its `nops` hits (1 or 2); it waits for the director */
static struct actor *actor_new(__u32 tid, unsigned cpu, unsigned nops, struct input op1,
			       struct input op2)
{
	struct actor *a = &actors[tid];

	*a = (struct actor){ .tid = tid, .cpu = cpu, .nops = nops };
	a->ops[0] = op1;
	a->ops[1] = op2;
	sem_init(&a->go, 0, 0);
	sem_init(&a->back, 0, 0);
	pthread_create(&a->th, NULL, actor_main, a);
	return a;
}

/* the actor runs until right before its nth access of `kinds` to `addr` (addr NULL, kinds 0:
 * its nth point, whatever it touches); false when it ended first (the schedule did not
 * happen as written) */
static bool run_to(struct actor *a, const void *addr, unsigned kinds, unsigned nth)
{
	if (a->done)
		return false;
	a->addr = addr;
	a->kinds = kinds;
	a->nth = nth;
	sem_post(&a->go);
	sem_wait(&a->back);
	return a->stopped && !a->done;
}

/* the actor runs to its end */
static void run_out(struct actor *a)
{
	run_to(a, NULL, 0, 0);
	pthread_join(a->th, NULL);
	sem_destroy(&a->go);
	sem_destroy(&a->back);
}

/* a hit fired by the director itself, as thread `tid` on `cpu` (a setup's) */
static void fire_as(__u32 tid, unsigned cpu, struct input in)
{
	static __u32 n;

	model_thread_init(MODEL_PID, tid, tid);
	model_thread_cpu(cpu);
	fire(&in, tid, n++);
}

/* a fresh world whose clock hardly moves by itself: the schedules move it past a grace */
static void schedule_begin(void)
{
	world_init(1, 64, 1);
}

/* owner's record: side 0's, or side 1's where side 0 has none or one being removed */
static struct infl_owner *owner_rec(__u64 owner)
{
	struct infl_owner_key k = { .pid = MODEL_PID, .gen = proc_gen[0], .owner = owner };
	struct infl_owner *o = bpf_map_lookup_elem(&owners, &k);

	if (o && !(o->state & (INFL_OS_DOOMED | INFL_OS_VOID)))
		return o;
	k.side = 1;
	return bpf_map_lookup_elem(&owners, &k) ?: o;
}

/* the schedule's process against its replay, and the records left; `ordered`: as
 * verify_process's owners_ordered (the schedule's owners' lives are the place order's);
 * `exact`: nothing given up (contention_lost, dwell_lost 0) */
static void schedule_verify(const char *name, bool written, bool ordered, bool exact)
{
	__u32 pid_of_tid[MAX_TIDS];
	struct verdict v = {};
	struct replay r;

	for (int t = 0; t < MAX_TIDS; t++)
		pid_of_tid[t] = MODEL_PID;
	CHECK(written, "%s: the schedule ran as written", name);
	verify_process(&v, &r, 0, pid_of_tid, NULL, NULL, exact, ordered);
	check_owner_records(&v.owner_recs, &r, 1);
	check_buf_records(&v.buf_recs, &r, 1);
	if (!CHECK(!v.bad_places && !v.own_order && !v.record.n && !v.events.n && !v.peak.n,
		   "%s: the record is the replay's (%llu places)", name,
		   (unsigned long long)v.places)) {
		say(name, &v.record);
		say(name, &v.events);
		say(name, &v.peak);
	}
	if (!CHECK(!v.owner_recs.n && !v.buf_recs.n,
		   "%s: every owner and buffer record its key's, the replay's", name)) {
		say(name, &v.owner_recs);
		say(name, &v.buf_recs);
	}
	replay_free(&r);
}

static void schedule_end(const char *name, bool written, bool ordered)
{
	schedule_verify(name, written, ordered, true);
}

/* The owner 7 in the work stage with one buffer of class 2: an alloc of another (A) and a
 * move to stage 2 (B), interleaved as `order` says. */
static void schedule_add_and_move(const char *name, int order)
{
	struct infl_proc *p;
	struct infl_owner *o;
	struct actor *a, *b;
	bool ok = true;

	schedule_begin();
	p = proc_of(MODEL_PID);
	fire_as(0, 0, op_stage(7, ENTRY_STAGE));
	fire_as(0, 0, op_alloc(0x100, 2, 1000, 7));
	fire_as(0, 0, op_stage(7, WORK_STAGE));
	o = owner_rec(7);
	a = actor_new(1, 1, 1, op_alloc(0x200, 2, 500, 7), (struct input){ 0 });
	b = actor_new(2, 2, 1, op_stage(7, 2), (struct input){ 0 });
	switch (order) {
	case 0:
		/* A's settles saw slot 1; B's swap says 2, its settle not made; A's add lands in
		 * slot 1's cells, and B's settle takes it along */
		ok &= run_to(a, &o->held_count[2], MA_RMW, 1);
		ok &= run_to(b, &o->classes, MA_READ, 1);
		run_out(a);
		ok &= p->cur[2][WORK_STAGE].count == 2 && held_slot(o->held_count[2]) == WORK_STAGE;
		run_out(b);
		break;
	case 1:
		/* the same add, after B's move and settle: it sees the word in slot 2 */
		ok &= run_to(a, &o->held_count[2], MA_RMW, 1);
		run_out(b);
		ok &= held_slot(o->held_count[2]) == 2;
		run_out(a);
		break;
	case 2:
		/* A's add between B's settle's read of the word and its swap: the swap fails, and
		 * its next try moves the add along */
		ok &= run_to(a, &o->held_count[2], MA_RMW, 1);
		ok &= run_to(b, &o->held_count[2], MA_CAS, 1);
		run_out(a);
		run_out(b);
		break;
	case 3:
		/* B's swap made, its settle not: A's settle sees the new slot and makes it first */
		ok &= run_to(b, &o->classes, MA_READ, 1);
		run_out(a);
		ok &= held_slot(o->held_count[2]) == 2 && p->cur[2][2].count == 2;
		run_out(b);
		break;
	}
	CHECK(p->cur[2][2].count == 2 && p->cur[2][2].bytes == 1500 &&
	      !p->cur[2][WORK_STAGE].count && !p->cur[2][WORK_STAGE].bytes &&
	      held_slot(o->held_count[2]) == 2 && held_slot(o->held_bytes[2]) == 2,
	      "%s: both buffers in stage 2's cell, the held words there", name);
	schedule_end(name, ok, true);
}

/*
 * Owner 5 in the work stage, holding nothing. A moves it to its terminal stage. B, another
 * hit of owner 5 (a stage to the entry stage, or an alloc), holds its reference from before
 * A's place, and takes its own place after A's. In place order A retires the owner and B
 * starts it again (the replay, and the recording's replay in the loader); where the owner's
 * own order is another (an alloc's buffer counted held from before its place), the race is
 * counted (owner_races) and the rest is the replay's.
 */
static void schedule_done_while_held(const char *name, bool alloc)
{
	struct infl_proc *p;
	struct actor *a, *b;
	bool ok = true;

	schedule_begin();
	p = proc_of(MODEL_PID);
	fire_as(0, 0, op_stage(5, ENTRY_STAGE));
	fire_as(0, 0, op_stage(5, WORK_STAGE));
	a = actor_new(1, 1, 1, op_stage(5, DONE_STAGE), (struct input){ 0 });
	b = actor_new(2, 2, 1, alloc ? op_alloc(0x500, 6, 4096, 5) : op_stage(5, ENTRY_STAGE),
		      (struct input){ 0 });
	ok &= run_to(b, &p->acct, MA_RMW, 1); /* B holds owner 5; its place not taken */
	run_out(a);
	run_out(b);
	CHECK((p->owners_done == 1 && p->owners_started == 2) || p->owner_races,
	      "%s: owner 5 retired at A's place and started again at B's (owners_done %llu, "
	      "owners_started %llu), or its own order another, counted (owner_races %llu)", name,
	      (unsigned long long)p->owners_done, (unsigned long long)p->owners_started,
	      (unsigned long long)p->owner_races);
	schedule_end(name, ok, false);
}

/*
 * Owner 11's record retired long ago and queued on CPU 1's ring; an alloc of it (A, on CPU 0)
 * looked the record up. A retirement on CPU 1 (B: owner 13's) reaps it: DOOMED, deleted. The
 * element goes to the next insert, owner 12's (C, on CPU 2). `order` says when A's reference
 * and its giving back come.
 */
static void schedule_reaped_under_hold(const char *name, int order)
{
	struct infl_owner *e, *o12, *o11;
	struct actor *a, *b, *c;
	bool ok = true;
	__u64 s;

	schedule_begin();
	fire_as(0, 1, op_stage(11, ENTRY_STAGE));
	fire_as(0, 1, op_stage(11, DONE_STAGE));
	fire_as(0, 1, op_stage(13, ENTRY_STAGE));
	model_clock_advance(2 * OWNER_REAP_GRACE_NS);
	e = owner_rec(11);
	a = actor_new(1, 0, 1, op_alloc(0x300, 1, 100, 11), (struct input){ 0 });
	b = actor_new(2, 1, 1, op_stage(13, DONE_STAGE), (struct input){ 0 });
	c = actor_new(3, 2, 2, op_stage(12, ENTRY_STAGE), op_stage(12, WORK_STAGE));
	ok &= run_to(a, &e->state, MA_RMW, 1); /* A's lookup made, its reference not */
	switch (order) {
	case 0:
		/* reaped and reused for owner 12, claimed, before A's reference: A finds another
		 * key in it, gives the reference back and looks again */
		run_out(b);
		run_out(c);
		run_out(a);
		break;
	case 1:
		/* reaped, then A's reference on the freed element (DOOMED); the element reused
		 * for owner 12 before A gives its reference back (A stopped at the point right
		 * after its reference) */
		run_out(b);
		ok &= run_to(a, NULL, 0, 1);
		s = e->state;
		ok &= (s & INFL_OS_DOOMED) && os_refs(s) == 1;
		run_out(c);
		run_out(a);
		break;
	case 2:
		/* reaped, reused for owner 12 but not claimed yet (C stopped before its own
		 * reference): A finds no key in it, and its key not leading there */
		run_out(b);
		ok &= run_to(c, &e->state, MA_RMW, 1);
		run_out(a);
		run_out(c);
		break;
	case 3:
		/* reaped, and C stopped half-way through its insert's copy: the new record's
		 * state written, its key words still owner 11's. A's reference lands on the new
		 * state and its key check passes, but a record nobody counted yet must also be
		 * the one its key leads to: A gives the reference back, stops before it looks
		 * again (its key's bucket is C's until the insert ends) */
		run_out(b);
		ok &= run_to(c, &e->id_pid, MA_WRITE, 1);
		ok &= (e->state & ~INFL_OS_REFS_MASK) == new_owner.state && e->id == 11;
		ok &= run_to(a, &owners, MA_LOOKUP, 1);
		run_out(c);
		run_out(a);
		break;
	}
	o12 = owner_rec(12);
	o11 = owner_rec(11);
	ok &= owners_reaped == 1 && o12 == e && o11 && o11 != e;
	s = o12 ? o12->state : 0;
	CHECK(o12 && os_refs(s) == 0 && os_nheld(s) == 0 && (s & INFL_OS_ADMITTED) &&
	      !(s & (INFL_OS_RETIRED | INFL_OS_DOOMED)) && infl_os_slot(s) == WORK_STAGE,
	      "%s: owner 12's record (the reused element) untouched by A: state %#llx", name,
	      (unsigned long long)s);
	s = o11 ? o11->state : 0;
	CHECK(o11 && os_refs(s) == 0 && os_nheld(s) == 1 && (s & INFL_OS_ADMITTED) &&
	      infl_os_slot(s) == INFL_SLOT_NONE,
	      "%s: owner 11 made anew by A, holding its buffer: state %#llx", name,
	      (unsigned long long)s);
	fire_as(0, 2, op_stage(12, DONE_STAGE)); /* owner 12 goes on: it retires */
	schedule_end(name, ok, true);
}

/*
 * Owner 11's key queued on two CPUs' rings (it retired, was taken up again within its grace,
 * retired again). The reaper on CPU 2 (R2) looked the key up and saw owner 11 in it, and
 * stops right before its mark; the one on CPU 1 (R1) reaps it; owner 12 is made in the
 * element (on CPU 3) and goes through the same moves, retiring twice, so that its state is
 * the one R2 read; its grace passes (but for RR_SIDE1). R2's mark then succeeds on owner
 * 12's record, and R2 finds another key in it. Before it takes its mark back, `order`:
 *   RR_GIVEN_BACK_UNDER: a stage of owner 12 (Z) takes a reference, sees DOOMED, gives its
 *     reference back under the mark and stops before it looks again;
 *   RR_GIVEN_BACK_AFTER: Z stops right after its reference, and looks at the state only
 *     once the mark is taken back (no mark left to tell it that its reference is there to
 *     give back);
 *   RR_OWN_REAPER: owner 12's own reaper (L, CPU 3, whose ring holds its key twice) finds
 *     the record DOOMED and leaves it, its ring entries spent: R2, taking its mark back,
 *     must reap it for L by the key the element carries;
 *   RR_SIDE1: Z runs whole under the mark: it makes and claims owner 12's side-1 record.
 *     Owner 12's grace is not over, so R2, taking its mark back, does not reap it: the
 *     record it leaves must be taken up by no hit again (VOID), or owner 12 would live in
 *     two records.
 */
enum reaper_race { RR_GIVEN_BACK_UNDER, RR_GIVEN_BACK_AFTER, RR_OWN_REAPER, RR_SIDE1 };

static void schedule_reaper_restores(const char *name, enum reaper_race order)
{
	struct actor *r1, *r2, *c, *c2, *z;
	struct infl_owner *e;
	bool ok = true;
	__u64 s;

	schedule_begin();
	fire_as(0, 1, op_stage(11, ENTRY_STAGE));
	fire_as(0, 1, op_stage(11, DONE_STAGE));
	fire_as(0, 2, op_stage(11, ENTRY_STAGE));
	fire_as(0, 2, op_stage(11, DONE_STAGE));
	fire_as(0, 1, op_stage(13, ENTRY_STAGE));
	fire_as(0, 2, op_stage(14, ENTRY_STAGE));
	fire_as(0, 3, op_stage(16, ENTRY_STAGE));
	model_clock_advance(2 * OWNER_REAP_GRACE_NS);
	e = owner_rec(11);
	r1 = actor_new(1, 1, 1, op_stage(13, DONE_STAGE), (struct input){ 0 });
	r2 = actor_new(2, 2, 1, op_stage(14, DONE_STAGE), (struct input){ 0 });
	c = actor_new(3, 3, 2, op_stage(12, ENTRY_STAGE), op_stage(12, DONE_STAGE));
	c2 = actor_new(5, 3, 2, op_stage(12, ENTRY_STAGE), op_stage(12, DONE_STAGE));
	if (order == RR_OWN_REAPER)
		z = actor_new(4, 3, 1, op_stage(16, DONE_STAGE), (struct input){ 0 });
	else
		z = actor_new(4, 0, 1, op_stage(12, WORK_STAGE), (struct input){ 0 });
	ok &= run_to(r2, &e->state, MA_CAS, 1); /* R2 saw owner 11's record: about to mark */
	run_out(r1);				/* reaped */
	run_out(c);				/* owner 12 in the element, retired */
	run_out(c2);				/* and again: the state R2 read */
	ok &= owner_rec(12) == e;
	if (order != RR_SIDE1)
		model_clock_advance(2 * OWNER_REAP_GRACE_NS);
	ok &= run_to(r2, &e->id, MA_READ, 1);	/* R2 marked it DOOMED: whose is it now? */
	if (order == RR_SIDE1) {
		run_out(z); /* side 1 made and claimed, owner 12 in the work stage there */
		run_out(r2);
		s = e->state;
		CHECK((s & INFL_OS_VOID) && !(s & INFL_OS_DOOMED) && os_refs(s) == 0 &&
			      owner_rec(12) && owner_rec(12) != e,
		      "%s: the record R2 leaves is void, owner 12 on side 1 (state %#llx)", name,
		      (unsigned long long)s);
		fire_as(0, 0, op_stage(12, ENTRY_STAGE));
		CHECK(proc_of(MODEL_PID)->contention_lost == 0 && owner_rec(12) != e,
		      "%s: owner 12's next stage on side 1 (contention_lost %llu)", name,
		      (unsigned long long)proc_of(MODEL_PID)->contention_lost);
		schedule_end(name, ok, true);
		return;
	}
	if (order == RR_OWN_REAPER) {
		run_out(z); /* L reaps owner 12's key twice: DOOMED, left */
		ok &= owner_rec(12) == e;
		run_out(r2); /* R2 finds owner 12 in it: takes the mark back, reaps it for L */
		CHECK(!owner_rec(12) && owners_reaped == 2,
		      "%s: owner 12's record, retired and its grace over, reaped (%s; %llu reaped)",
		      name, owner_rec(12) ? "still there" : "gone",
		      (unsigned long long)owners_reaped);
		schedule_end(name, ok, true);
		return;
	}
	if (order == RR_GIVEN_BACK_UNDER)
		ok &= run_to(z, &e->state, MA_RMW, 2); /* Z's reference saw DOOMED, went */
	else
		ok &= run_to(z, &e->state, MA_READ, 1); /* Z's reference saw DOOMED */
	run_out(r2);				 /* R2 finds owner 12 in it: takes the mark back */
	run_out(z);
	s = owner_rec(12) ? owner_rec(12)->state : INFL_OS_DOOMED;
	CHECK(!(s & INFL_OS_DOOMED) && os_refs(s) == 0,
	      "%s: owner 12's record is not left DOOMED: state %#llx", name,
	      (unsigned long long)s);
	/* owner 12 again, later: it must be held, not lost */
	fire_as(0, 0, op_stage(12, ENTRY_STAGE));
	CHECK(proc_of(MODEL_PID)->contention_lost == 0,
	      "%s: later stages of owner 12 are accounted (contention_lost %llu)", name,
	      (unsigned long long)proc_of(MODEL_PID)->contention_lost);
	schedule_end(name, ok, true);
}

/* Owner 11 retired long ago, its key queued on CPU 1's ring, and R, on CPU 1, about to retire
 * owner 13 and reap owner 11's record */
static struct actor *reaper_of_11(void)
{
	fire_as(0, 1, op_stage(11, ENTRY_STAGE));
	fire_as(0, 1, op_stage(11, DONE_STAGE));
	fire_as(0, 1, op_stage(13, ENTRY_STAGE));
	model_clock_advance(2 * OWNER_REAP_GRACE_NS);
	return actor_new(1, 1, 1, op_stage(13, DONE_STAGE), (struct input){ 0 });
}

/*
 * Owner 11's record retired long ago and queued on CPU 1's ring; its reaper (R, retiring
 * owner 13 on CPU 1) marks it DOOMED and stops right before its delete, as a reaper does
 * whose vCPU the host stalls there, or which PREEMPT_RT preempts. Owner 11 comes back
 * meanwhile: an alloc of it (A, CPU 0) can neither finish the delete (a late one by R would
 * remove the record made after it) nor wait for R. It makes the owner's record under side
 * 1's key and claims it: nothing given up, the buffer held by owner 11. R's delete then
 * removes side 0's record and nothing else, and the owner's later hits find side 1's:
 * it moves, and retires with its last buffer's free.
 */
static void schedule_reaper_stalled(const char *name)
{
	struct infl_owner_key k1 = { .pid = MODEL_PID, .side = 1, .owner = 11 };
	struct infl_owner *o0, *o1;
	struct infl_proc *p;
	struct actor *r, *a;
	bool ok = true;
	__u32 c = 1;
	__u64 s;

	schedule_begin();
	p = proc_of(MODEL_PID);
	k1.gen = proc_gen[0];
	r = reaper_of_11();
	a = actor_new(2, 0, 1, op_alloc(0x300, c, 100, 11), (struct input){ 0 });
	ok &= run_to(r, &owners, MA_DELETE, 1); /* R marked owner 11's record, its delete next */
	o0 = owner_rec(11);
	ok &= o0 && (o0->state & INFL_OS_DOOMED);
	run_out(a);
	o1 = bpf_map_lookup_elem(&owners, &k1);
	s = o1 ? o1->state : 0;
	ok &= logs[2].n == 1 && !(logs[2].e[0].flags & INFL_EVF_UNSTAGED);
	CHECK(p->contention_lost == 0 && o1 && o1 != o0 && (s & INFL_OS_CLAIMED) &&
		      os_nheld(s) == 1 && os_refs(s) == 0 &&
		      (o1->held_bytes[c] & INFL_HELD_VALUE_MASK) == 100,
	      "%s: the alloc made side 1's record and holds its buffer there, nothing given up "
	      "(contention_lost %llu, side 1 %s, state %#llx)", name,
	      (unsigned long long)p->contention_lost, o1 ? "made" : "absent",
	      (unsigned long long)s);
	run_out(r);
	ok &= owners_reaped == 1 && owner_rec(11) == o1;
	fire_as(0, 0, op_stage(11, ENTRY_STAGE));
	fire_as(0, 0, op_stage(11, DONE_STAGE));
	fire_as(0, 0, op_free(0x300, c, 100));
	CHECK(p->contention_lost == 0 && p->owners_done == 3 && owner_rec(11) == o1 &&
		      (o1->state & INFL_OS_RETIRED),
	      "%s: the owner's later hits found side 1's record, and it retired (contention_lost "
	      "%llu, owners_done %llu)", name, (unsigned long long)p->contention_lost,
	      (unsigned long long)p->owners_done);
	schedule_end(name, ok, true);
}

/*
 * The two sides made at once. Owner 11's side-0 record is being removed (its reaper R, on
 * CPU 1, stopped before its delete). H2, a stage of it (CPU 0), saw that record DOOMED and
 * stops before it looks at side 1; H3, an alloc of it (CPU 2), saw the same and stops right
 * before it makes side 1. R deletes. H1, another stage (CPU 3), finds neither side, makes
 * side 0, looks at side 1 (still absent) and stops before its claim. H3 makes side 1. H2
 * then finds side 1 unclaimed, with a look at side 0 that came before its reference: it
 * must look at side 0 again (H1's record, made since) and not claim side 1. Every hit ends
 * on side 0's record, side 1's is void, and nothing is given up.
 */
static void schedule_sides_at_once(const char *name)
{
	struct infl_owner_key k1 = { .pid = MODEL_PID, .side = 1, .owner = 11 };
	struct actor *r, *h1, *h2, *h3;
	struct infl_owner *e, *o1;
	struct infl_proc *p;
	bool ok = true;
	__u64 s;

	schedule_begin();
	p = proc_of(MODEL_PID);
	k1.gen = proc_gen[0];
	r = reaper_of_11();
	e = owner_rec(11);
	h2 = actor_new(2, 0, 1, op_stage(11, WORK_STAGE), (struct input){ 0 });
	h3 = actor_new(3, 2, 1, op_alloc(0x300, 1, 100, 11), (struct input){ 0 });
	h1 = actor_new(4, 3, 1, op_stage(11, ENTRY_STAGE), (struct input){ 0 });
	ok &= run_to(r, &owners, MA_DELETE, 1);	   /* side 0 DOOMED, its delete next */
	ok &= run_to(h2, &owners, MA_LOOKUP, 2);   /* H2 saw it, side 1's look next */
	ok &= run_to(h3, &owners, MA_UPDATE, 1);   /* H3 saw it twice: makes side 1 next */
	run_out(r);				   /* deleted */
	ok &= run_to(h1, &e->state, MA_CAS, 1);	   /* H1 made side 0 (the element again) */
	ok &= owner_rec(11) == e && !bpf_map_lookup_elem(&owners, &k1);
	ok &= run_to(h3, &owners, MA_LOOKUP, 2);   /* H3 made side 1 */
	o1 = bpf_map_lookup_elem(&owners, &k1);
	ok &= o1 && !(o1->state & INFL_OS_CLAIMED);
	run_out(h2);
	run_out(h1);
	run_out(h3);
	o1 = bpf_map_lookup_elem(&owners, &k1);
	s = e->state;
	CHECK(p->contention_lost == 0 && owner_rec(11) == e && (s & INFL_OS_CLAIMED) &&
		      !(s & INFL_OS_VOID) && os_nheld(s) == 1 &&
		      (!o1 || (o1->state & INFL_OS_VOID)),
	      "%s: every hit on side 0's record, side 1's void (contention_lost %llu, side 0 "
	      "state %#llx, side 1 %#llx)", name, (unsigned long long)p->contention_lost,
	      (unsigned long long)s, (unsigned long long)(o1 ? o1->state : 0));
	fire_as(0, 0, op_free(0x300, 1, 100));
	schedule_end(name, ok, false);
}

/*
 * CPU 1's ring shared by three programs (PREEMPT_RT: one preempted, the others run on its
 * CPU). A retires owner 21 and reads the ring's tail; before it reads the head (its `nth`
 * read of it: 1, whether the ring is full; 2, its push's room), B retires owner 22 (pushed
 * at that tail, and the ring's oldest reaped) and, once B's grace is over, C retires owner
 * 23 and reaps B's: the head is past the tail A read.
 */
static void schedule_ring_room(const char *name, unsigned nth)
{
	struct owner_reap_ring *ring;
	struct actor *a, *b, *c;
	__u32 zero = 0;
	bool ok = true;

	schedule_begin();
	fire_as(0, 1, op_stage(20, ENTRY_STAGE));
	fire_as(0, 1, op_stage(20, DONE_STAGE)); /* the ring's oldest */
	fire_as(0, 1, op_stage(21, ENTRY_STAGE));
	fire_as(0, 1, op_stage(22, ENTRY_STAGE));
	fire_as(0, 1, op_stage(23, ENTRY_STAGE));
	model_clock_advance(2 * OWNER_REAP_GRACE_NS);
	ring = bpf_map_lookup_elem(&owner_reap, &zero); /* the director's CPU is 1 */
	a = actor_new(1, 1, 1, op_stage(21, DONE_STAGE), (struct input){ 0 });
	b = actor_new(2, 1, 1, op_stage(22, DONE_STAGE), (struct input){ 0 });
	c = actor_new(3, 1, 1, op_stage(23, DONE_STAGE), (struct input){ 0 });
	ok &= run_to(a, &ring->head, MA_READ, nth); /* A read the tail */
	run_out(b);
	model_clock_advance(2 * OWNER_REAP_GRACE_NS);
	run_out(c);
	ok &= READ_ONCE(ring->head) == READ_ONCE(ring->tail) - 1;
	run_out(a);
	CHECK(owners_unreaped == 0 && ring->tail == 4,
	      "%s: A's key queued, not counted as finding no room (unreaped %llu, tail %llu)",
	      name, (unsigned long long)owners_unreaped, (unsigned long long)ring->tail);
	CHECK(owners_reaped == 2 && owner_rec(23),
	      "%s: owners 20 and 22 reaped, 23 kept for its grace (%llu reaped, 23's record %s)",
	      name, (unsigned long long)owners_reaped, owner_rec(23) ? "kept" : "gone");
	schedule_end(name, ok, true);
}

/*
 * The peak's capture held by H (its copy made, stopped before it reads acct for its fuzz)
 * while P and Q, whose places raise the bytes, offer their peaks; `order` says how their
 * offers race. H, once it releases the capture, copies again for the newest peak.
 */
static void schedule_peak_offers(const char *name, int order)
{
	struct infl_proc *p;
	struct actor *h, *pp, *q, *f = NULL;
	bool ok = true;

	schedule_begin();
	p = proc_of(MODEL_PID);
	fire_as(0, 0, op_alloc(0x400, 3, 100, 0));
	h = actor_new(1, 1, 1, op_alloc(0x401, 3, 150, 0), (struct input){ 0 });
	pp = actor_new(2, 2, 1, op_alloc(0x402, 4, 200, 0), (struct input){ 0 });
	q = actor_new(3, 3, 1, op_alloc(0x403, 5, order == 2 ? 100 : 300, 0), (struct input){ 0 });
	if (order == 2)
		f = actor_new(4, 4, 1, op_free(0x400, 3, 100), (struct input){ 0 });
	ok &= run_to(h, &p->acct, MA_READ, 1); /* H holds peak_cap, its copy made */
	switch (order) {
	case 0:
		/* P read H's peak and stops before its swap; Q's offer wins, finds the capture
		 * held and leaves it; P's swap fails, and P's is no peak any more */
		ok &= run_to(pp, &p->peak_acct, MA_CAS, 1);
		run_out(q);
		run_out(pp);
		break;
	case 1:
		/* both read H's peak; P's swap first, then Q's fails and tries again, higher */
		ok &= run_to(pp, &p->peak_acct, MA_CAS, 1);
		ok &= run_to(q, &p->peak_acct, MA_CAS, 1);
		run_out(pp);
		run_out(q);
		break;
	case 2:
		/* P's place makes 450 bytes; a free, and Q's place makes 450 again; Q's swap
		 * first, then P's, whose equal bytes at an earlier place are the peak */
		ok &= run_to(pp, &p->peak_acct, MA_CAS, 1);
		run_out(f);
		run_out(q);
		run_out(pp);
		break;
	}
	run_out(h);
	infl_proc_derive(p);
	if (order == 2)
		CHECK(p->peak_bytes == 450 && p->peak_fuzz &&
		      p->peak_fuzz != INFL_PEAK_FUZZ_UNKNOWN,
		      "%s: the peak is P's 450 bytes, its composition copied after two more places "
		      "and said so (fuzz %llu)", name, (unsigned long long)p->peak_fuzz);
	else
		CHECK(p->peak_bytes == 750 && p->peak_cap_acct == p->peak_acct && !p->peak_fuzz,
		      "%s: the peak is Q's 750 bytes, copied exactly by H after its release (fuzz "
		      "%llu)", name, (unsigned long long)p->peak_fuzz);
	schedule_end(name, ok, true);
}

/* One thread's total at its peak again and again, past half the count's field of places: the
 * peak stays the first place that made it, however the low bits of a later one compare with
 * it (the field wraps). */
static void schedule_peak_wrap(const char *name)
{
	struct infl_proc *p;
	__u64 first;

	schedule_begin();
	p = proc_of(MODEL_PID);
	fire_as(0, 0, op_alloc(0x400, 3, 100, 0));
	first = p->peak_acct;
	fire_as(0, 0, op_free(0x400, 3, 100));
	for (unsigned i = 0; i < (1u << (INFL_ACCT_SEQ_BITS - 1)) / 2 + 16; i++) {
		fire_as(0, 0, op_alloc(0x400, 3, 100, 0));
		fire_as(0, 0, op_free(0x400, 3, 100));
	}
	CHECK(p->peak_acct == first, "%s: the peak is the first place at 100 bytes (place %u, "
	      "now %u)", name, infl_acct_seq_lo(first), infl_acct_seq_lo(p->peak_acct));
	schedule_end(name, true, true);
}

static void written_schedules(void)
{
	model_sched_set(&(struct model_sched){ 0 });
	schedule_add_and_move("an add before a move's settle", 0);
	schedule_add_and_move("an add after a move's settle", 1);
	schedule_add_and_move("an add between a settle's read and its swap", 2);
	schedule_add_and_move("an add that settles a move's word first", 3);
	schedule_reaped_under_hold("a hold whose record was reaped and reused, claimed", 0);
	schedule_reaped_under_hold("a hold whose record was reaped and reused, not claimed", 2);
	schedule_reaped_under_hold("a reference on a reaped record, given back after its reuse",
				   1);
	schedule_reaped_under_hold("a hold whose record's element is being copied for another "
				   "key", 3);
	schedule_reaper_restores("a reaper that finds another key races a hold, given back "
				 "under the mark", RR_GIVEN_BACK_UNDER);
	schedule_reaper_restores("a reaper that finds another key races a hold, given back "
				 "after the mark", RR_GIVEN_BACK_AFTER);
	schedule_reaper_restores("a reaper that finds another key, whose own reaper came under "
				 "its mark", RR_OWN_REAPER);
	schedule_reaper_restores("a reaper that finds another key while that key's owner makes "
				 "its side-1 record", RR_SIDE1);
	schedule_reaper_stalled("a reaper stalled between its mark and its delete while its "
				"owner comes back");
	schedule_sides_at_once("both sides of an owner made at once, one look before its "
			       "reference");
	schedule_done_while_held("a terminal stage while a stage of its owner holds it", false);
	schedule_done_while_held("a terminal stage while an alloc of its owner holds it", true);
	schedule_ring_room("a full ring's check that straddles two retirements on its CPU", 1);
	schedule_ring_room("a push whose room check straddles two retirements on its CPU", 2);
	schedule_peak_offers("two peak offers while the capture is held, the later first", 0);
	schedule_peak_offers("two peak offers while the capture is held, the earlier first", 1);
	schedule_peak_offers("equal peaks while the capture is held", 2);
	schedule_peak_wrap("the peak's total again, half the count's field of places later");
}

int main(int argc, char **argv)
{
	const struct model_sched busy = { .yield_in = 8, .spin_in = 64 };
	/* the same, and often off the CPU between a lookup and what follows it */
	const struct model_sched stale = { .yield_in = 8, .spin_in = 64, .lookup_sleep_in = 4,
					   .lookup_us = 100 };
	/* the clock: a retired record's grace over after 200 reads (about 40 owners' rounds),
	 * or after one, so that records are reaped while others still look them up */
	const __u64 slow = OWNER_REAP_GRACE_NS / 200, fast = OWNER_REAP_GRACE_NS;
	const struct scenario scenarios[] = {
		{ .name = "2 threads, an owner each round", .threads = 2, .procs = 1, .cpus = 2,
		  .runs = 2, .rounds = 5000, .script = SCRIPT_OWN, .sched = busy,
		  .owner_entries = 4096, .tick_ns = slow, .exact = true, .ordered = true },
		{ .name = "8 threads, an owner each round", .threads = 8, .procs = 1, .cpus = 8,
		  .runs = 2, .rounds = 1250, .script = SCRIPT_OWN, .sched = busy,
		  .owner_entries = 4096, .tick_ns = slow, .exact = true, .ordered = true },
		{ .name = "8 threads, random scripts", .threads = 8, .procs = 1, .cpus = 8,
		  .runs = 2, .rounds = 1250, .script = SCRIPT_RANDOM, .sched = busy,
		  .owner_entries = 4096, .tick_ns = slow, .exact = true, .ordered = true },
		{ .name = "8 threads, one off its CPU up to 20 ms at times", .threads = 8,
		  .procs = 1, .cpus = 8, .runs = 2, .rounds = 800, .script = SCRIPT_RANDOM,
		  .sched = busy, .stall_in = 3000, .stall_us = 20000, .owner_entries = 4096,
		  .tick_ns = slow, .exact = true, .ordered = true },
		{ .name = "8 threads of 2 processes, a shared owner in phases, 64 records",
		  .threads = 8, .procs = 2, .cpus = 8, .runs = 2, .rounds = 400,
		  .script = SCRIPT_PHASES, .sched = stale, .owner_entries = 64, .tick_ns = fast,
		  .ordered = true, .reaps = true },
		{ .name = "8 threads on 2 CPUs, a shared owner in phases, 64 records",
		  .threads = 8, .procs = 1, .cpus = 2, .runs = 2, .rounds = 400,
		  .script = SCRIPT_PHASES, .sched = stale, .owner_entries = 64, .tick_ns = fast,
		  .ordered = true, .reaps = true },
		{ .name = "2 threads sharing two owners (churn)", .threads = 2, .procs = 1,
		  .cpus = 2, .runs = 2, .rounds = 5000, .script = SCRIPT_CHURN, .sched = busy,
		  .owner_entries = 4096, .tick_ns = slow },
		{ .name = "8 threads sharing two owners (churn)", .threads = 8, .procs = 1,
		  .cpus = 8, .runs = 2, .rounds = 1250, .script = SCRIPT_CHURN, .sched = busy,
		  .owner_entries = 4096, .tick_ns = slow },
	};
	unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : (unsigned)time(NULL);

	printf("# seed %u (run again with it: %s %u)\n", seed, argv[0], seed);
	written_schedules();
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario(&scenarios[i], seed + (unsigned)i);
	CHECK(totals.accepted > 0, "readers accepted whole copies while hits ran (%llu of %llu)",
	      (unsigned long long)totals.accepted,
	      (unsigned long long)(totals.accepted + totals.rejected));
	printf("# all scenarios: peak_fuzz > 0 in %llu of %llu records, %llu records reaped, "
	       "%llu elements reused for another key\n", (unsigned long long)totals.fuzz_records,
	       (unsigned long long)totals.records, (unsigned long long)totals.reaped,
	       (unsigned long long)totals.reused_other);
	return check_done();
}

