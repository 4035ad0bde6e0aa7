// SPDX-License-Identifier: BSD-2-Clause
/*
 * The floor for a BPF tracer on the contract's probes: programs that do nothing (empty_*),
 * programs that only fetch every argument the way libbpf's USDT support does (args_*), and
 * programs that make one atomic add to shared or per-CPU state (shared_*, percpu_*), so that
 * the cost of a probe hit can be split into the uprobe itself, argument fetching, sharing
 * and what a tracer does with them; and an empty kmem:rss_stat program, the floor of inflight's
 * RSS handler.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

/*
 * What keeps the compiler from dropping a fetch: the fetched value compared with one no hit
 * passes, and stored only then. Not a store on every hit: a word both threads write would
 * pass its line between the CPUs on every hit of the 2-thread rows, a cost of sharing that is
 * not the fetch's (the shared_* programs measure that on purpose).
 */
__u64 sink;
#define SINK_NEVER 0x5eed5eed5eed5eedull

static __always_inline void keep(__u64 v)
{
	if (v == SINK_NEVER)
		sink = v;
}

SEC("usdt")
int empty_alloc(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int empty_free(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int empty_stage(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int BPF_USDT(args_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	keep(buf ^ cls ^ bytes ^ owner);
	return 0;
}

SEC("usdt")
int BPF_USDT(args_free, __u64 buf, __u32 cls, __u64 bytes)
{
	keep(buf ^ cls ^ bytes);
	return 0;
}

SEC("usdt")
int BPF_USDT(args_stage, __u64 owner, __u32 stage)
{
	keep(owner ^ stage);
	return 0;
}

/*
 * What the least shared state costs a hit: one atomic add to a word every thread of the
 * process shares (shared_*: the floor of any exact design with one serialization word, a
 * total or a lock), against one to this CPU's own word (percpu_*: what per-CPU counters
 * cost, which give no exact peak). With two threads on two CPUs the difference is the
 * cache line passed back and forth.
 */
__u64 shared_word;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu_word SEC(".maps");

static __always_inline int shared_add(void)
{
	__sync_fetch_and_add(&shared_word, 1);
	return 0;
}

static __always_inline int percpu_add(void)
{
	__u32 zero = 0;
	__u64 *w = bpf_map_lookup_elem(&percpu_word, &zero);

	if (w)
		*w += 1;
	return 0;
}

SEC("usdt")
int shared_alloc(struct pt_regs *ctx) { return shared_add(); }
SEC("usdt")
int shared_free(struct pt_regs *ctx) { return shared_add(); }
SEC("usdt")
int shared_stage(struct pt_regs *ctx) { return shared_add(); }
SEC("usdt")
int percpu_alloc(struct pt_regs *ctx) { return percpu_add(); }
SEC("usdt")
int percpu_free(struct pt_regs *ctx) { return percpu_add(); }
SEC("usdt")
int percpu_stage(struct pt_regs *ctx) { return percpu_add(); }

/*
 * What keeping a record per live buffer costs a hit, two ways (usdt_empty -h, -t): the
 * arguments fetched as args_* does, then the record inserted at an alloc and found and
 * removed at a free (a stage does nothing more), keyed as inflight keys it (pid, name
 * space, image gen, buffer id).
 *   hbuf_*  a BPF hash map, inflight's design: an insert (BPF_NOEXIST) at an alloc, a
 *           lookup and a delete at a free (the delete decides who frees it).
 *   tbuf_*  an open-addressing table in a BPF array (its lookups are inlined by the JIT):
 *           a slot is claimed by compare-and-swap on its state word, which carries a
 *           version so that a free that read a slot's key cannot take it once another
 *           buffer has it; a key lives in the TBUF_WINDOW slots from its hash on, and
 *           slots never go back to empty, so a search stops at the first empty one. A
 *           measurement of the alternative, not a tracer: capacity is whatever the
 *           windows allow (half full with windows of 8, a fill to BENCH_BUFS live finds
 *           some window all taken; the bench's loop keeps a few buffers live).
 */
struct bench_buf_key {
	__u32 pid;
	__u32 space;
	__u64 gen;
	__u64 buf;
};

struct bench_buf {
	__u64 bytes;
	__u64 owner;
	__u32 cls;
	__u32 flags;
};

#define BENCH_BUFS 65536
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BENCH_BUFS);
	__type(key, struct bench_buf_key);
	__type(value, struct bench_buf);
} hbufs SEC(".maps");

/* a slot: its state, the key, the record (64 bytes: one cache line) */
struct tbuf_slot {
	__u64 state; /* TBUF_* kind in the low 2 bits, the version above */
	struct bench_buf_key key;
	struct bench_buf rec;
	__u64 pad;
};

#define TBUF_SLOTS (2 * BENCH_BUFS)
#define TBUF_WINDOW 8
#define TBUF_EMPTY 0
#define TBUF_BUSY 1
#define TBUF_LIVE 2
#define TBUF_DEAD 3
#define TBUF_KIND(s) ((s) & 3)
#define TBUF_NEXT(s, kind) ((((s) >> 2) + 1) << 2 | (kind))

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TBUF_SLOTS);
	__type(key, __u32);
	__type(value, struct tbuf_slot);
} tbufs SEC(".maps");

/* an insert refused (no room in the map or the window, its id live: a dup, or, in the
 * table, its slot taken by another thread first: not tried again), a free not found (its
 * alloc fired while the three programs attached). The loop's ids are fresh: each round of
 * a pipe has a new owner, whose number is in its buffers' ids, so the table fills with
 * removed slots, which a search steps over. Read by hand (bpftool map dump), not by the
 * bench. */
__u64 hbuf_lost, tbuf_lost;

static __always_inline struct bench_buf_key bench_key(__u64 buf)
{
	return (struct bench_buf_key){ .pid = bpf_get_current_pid_tgid() >> 32, .gen = 1,
				       .buf = buf };
}

static __always_inline __u32 tbuf_hash(const struct bench_buf_key *k)
{
	return (__u32)(((k->buf ^ k->gen ^ ((__u64)k->pid << 32 | k->space)) *
			0x9E3779B97F4A7C15ull) >> 32);
}

static __always_inline bool tbuf_is(const struct tbuf_slot *t, const struct bench_buf_key *k)
{
	return t->key.buf == k->buf && t->key.gen == k->gen && t->key.pid == k->pid &&
	       t->key.space == k->space;
}

/* the i-th slot of the window from hash h */
static __always_inline struct tbuf_slot *tbuf_at(__u32 h, int i)
{
	__u32 idx = (h + i) & (TBUF_SLOTS - 1);

	return bpf_map_lookup_elem(&tbufs, &idx);
}

static __always_inline int tbuf_insert(const struct bench_buf_key *k, const struct bench_buf *r)
{
	struct tbuf_slot *t, *cand = NULL;
	__u32 h = tbuf_hash(k);
	__u64 s, cs = 0;

	for (int i = 0; i < TBUF_WINDOW; i++) {
		t = tbuf_at(h, i);
		if (!t)
			break;
		s = READ_ONCE(t->state);
		if (TBUF_KIND(s) == TBUF_LIVE && tbuf_is(t, k))
			return 1; /* a dup: inflight counts the old one out */
		if (!cand && (TBUF_KIND(s) == TBUF_EMPTY || TBUF_KIND(s) == TBUF_DEAD)) {
			cand = t;
			cs = s;
		}
		if (TBUF_KIND(s) == TBUF_EMPTY)
			break;
	}
	if (!cand || __sync_val_compare_and_swap(&cand->state, cs, TBUF_NEXT(cs, TBUF_BUSY)) != cs)
		return -1;
	cand->key = *k;
	cand->rec = *r;
	WRITE_ONCE(cand->state, TBUF_NEXT(cs, TBUF_LIVE)); /* after the key (x86 TSO) */
	return 0;
}

static __always_inline int tbuf_remove(const struct bench_buf_key *k, struct bench_buf *r)
{
	__u32 h = tbuf_hash(k);
	struct tbuf_slot *t;
	__u64 s;

	for (int i = 0; i < TBUF_WINDOW; i++) {
		t = tbuf_at(h, i);
		if (!t)
			break;
		s = READ_ONCE(t->state);
		if (TBUF_KIND(s) == TBUF_EMPTY)
			break;
		if (TBUF_KIND(s) != TBUF_LIVE || !tbuf_is(t, k))
			continue;
		*r = t->rec;
		if (__sync_val_compare_and_swap(&t->state, s, TBUF_NEXT(s, TBUF_DEAD)) == s)
			return 0;
	}
	return -1;
}

SEC("usdt")
int BPF_USDT(hbuf_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	struct bench_buf_key k = bench_key(buf);
	struct bench_buf r = { .bytes = bytes, .owner = owner, .cls = cls };

	if (bpf_map_update_elem(&hbufs, &k, &r, BPF_NOEXIST))
		__sync_fetch_and_add(&hbuf_lost, 1);
	return 0;
}

/* a free's record found and removed (its fields into r): -1 when it is not there */
static __always_inline int hbuf_take(const struct bench_buf_key *k, struct bench_buf *r)
{
	struct bench_buf *b = bpf_map_lookup_elem(&hbufs, k);

	if (!b) {
		__sync_fetch_and_add(&hbuf_lost, 1);
		return -1;
	}
	*r = *b;
	if (bpf_map_delete_elem(&hbufs, k))
		__sync_fetch_and_add(&hbuf_lost, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(hbuf_free, __u64 buf, __u32 cls, __u64 bytes)
{
	struct bench_buf_key k = bench_key(buf);
	struct bench_buf r;

	if (!hbuf_take(&k, &r))
		keep(r.bytes ^ cls ^ bytes);
	return 0;
}

SEC("usdt")
int BPF_USDT(tbuf_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	struct bench_buf_key k = bench_key(buf);
	struct bench_buf r = { .bytes = bytes, .owner = owner, .cls = cls };

	if (tbuf_insert(&k, &r))
		__sync_fetch_and_add(&tbuf_lost, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(tbuf_free, __u64 buf, __u32 cls, __u64 bytes)
{
	struct bench_buf_key k = bench_key(buf);
	struct bench_buf r;

	if (tbuf_remove(&k, &r)) {
		__sync_fetch_and_add(&tbuf_lost, 1);
		return 0;
	}
	keep(r.bytes ^ cls ^ bytes);
	return 0;
}

/* the stage probe of both: the argument fetch alone */
SEC("usdt")
int BPF_USDT(hbuf_stage, __u64 owner, __u32 stage)
{
	keep(owner ^ stage);
	return 0;
}

SEC("usdt")
int BPF_USDT(tbuf_stage, __u64 owner, __u32 stage)
{
	keep(owner ^ stage);
	return 0;
}

/*
 * What finding the process's record costs a hit, two ways (usdt_empty -H, -A): the arguments
 * fetched as args_* does, then the record of the current process found and one word of it
 * added to, as every inflight hit does first.
 *   hproc_*  a BPF hash map keyed by the pid, inflight's `procs` (made at the first hit)
 *   aproc_*  an array indexed by a slot (here the pid's low bits): the JIT inlines the
 *            lookup, while a hash map's is a chain of kernel calls (the hash, the bucket's
 *            walk, the key's compare), each paying for its return on a host with return
 *            mitigations
 * Records as large as inflight's (16 KiB), so that each sits on pages of its own.
 */
struct bench_proc {
	__u64 hits;
	__u64 rest[2047];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct bench_proc);
} hprocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct bench_proc);
} aprocs SEC(".maps");

/* a record the size of bench_proc, zeroed: the hash map's first insert copies it */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_proc);
} proc_zero SEC(".maps");

/* the current process's record in hprocs, made at its first hit */
static __always_inline struct bench_proc *hproc_find(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	struct bench_proc *p = bpf_map_lookup_elem(&hprocs, &pid), *z;

	if (p)
		return p;
	z = bpf_map_lookup_elem(&proc_zero, &zero);
	if (z)
		bpf_map_update_elem(&hprocs, &pid, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&hprocs, &pid);
}

static __always_inline int hproc_hit(__u64 args)
{
	struct bench_proc *p = hproc_find();

	if (p)
		__sync_fetch_and_add(&p->hits, args | 1);
	return 0;
}

static __always_inline int aproc_hit(__u64 args)
{
	__u32 slot = (bpf_get_current_pid_tgid() >> 32) & 63;
	struct bench_proc *p = bpf_map_lookup_elem(&aprocs, &slot);

	if (p)
		__sync_fetch_and_add(&p->hits, args | 1);
	return 0;
}

/* a configuration's three contract programs, each handing `hit` its fetched arguments */
#define ARGS_PROGS(name, hit)                                                                  \
	SEC("usdt")                                                                            \
	int BPF_USDT(name##_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)             \
	{                                                                                      \
		return hit(buf ^ cls ^ bytes ^ owner);                                         \
	}                                                                                      \
	SEC("usdt")                                                                            \
	int BPF_USDT(name##_free, __u64 buf, __u32 cls, __u64 bytes)                           \
	{                                                                                      \
		return hit(buf ^ cls ^ bytes);                                                 \
	}                                                                                      \
	SEC("usdt")                                                                            \
	int BPF_USDT(name##_stage, __u64 owner, __u32 stage)                                   \
	{                                                                                      \
		return hit(owner ^ stage);                                                     \
	}

ARGS_PROGS(hproc, hproc_hit)
ARGS_PROGS(aproc, aproc_hit)

/*
 * What a hit would cost in a design that applies its accounting later (plog_*): the
 * arguments, the process's record found by hash (as hproc_*), a place taken in it by one
 * fetch-and-add (the serialization word, which gives the exact total and the peak's value),
 * and the op (its place and arguments, 32 bytes) into the next slot of this CPU's log, which
 * a single drainer would apply in place order, with no atomic operation and no contention.
 * The drainer is not built: this prices the hit's side alone (docs/architecture.md, "Next").
 */
struct plog_op {
	__u64 place;
	__u64 a0, a1, a2;
};

#define PLOG_SLOTS 512

struct plog {
	__u64 next;
	struct plog_op ops[PLOG_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct plog);
} plogs SEC(".maps");

static __always_inline int plog_hit(__u64 a0, __u64 a1, __u64 a2)
{
	struct bench_proc *p = hproc_find();
	__u32 zero = 0;
	struct plog *l = bpf_map_lookup_elem(&plogs, &zero);
	struct plog_op *op;

	if (!p || !l)
		return 0;
	op = &l->ops[l->next++ & (PLOG_SLOTS - 1)];
	op->place = __sync_fetch_and_add(&p->hits, 1);
	op->a0 = a0;
	op->a1 = a1;
	op->a2 = a2;
	return 0;
}

SEC("usdt")
int BPF_USDT(plog_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	return plog_hit(buf, (__u64)cls << 32 | (owner & 0xffffffff), bytes);
}

SEC("usdt")
int BPF_USDT(plog_free, __u64 buf, __u32 cls, __u64 bytes)
{
	return plog_hit(buf, cls, bytes);
}

SEC("usdt")
int BPF_USDT(plog_stage, __u64 owner, __u32 stage)
{
	return plog_hit(owner, stage, 0);
}

/*
 * What writing a hit's event out costs, apart from accounting it: the arguments, and an
 * event of inflight's size (56 bytes, a 64-byte record with the ring's header) into a ring
 * buffer without a wake-up, which usdt_empty's own loop reads (ring_*). No clock: inflight's
 * recording reads it besides.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} ring SEC(".maps");

struct ring_event {
	__u64 w[7];
};

static __always_inline int ring_hit(__u64 args)
{
	struct ring_event e = { .w = { args, args + 1, args + 2 } };

	bpf_ringbuf_output(&ring, &e, sizeof(e), BPF_RB_NO_WAKEUP);
	return 0;
}

ARGS_PROGS(ring, ring_hit)

/*
 * The least any exact design does a hit, whatever its accounting (least_*): what section 1
 * compares with the targets, to say how much of them the semantics alone take. The
 * arguments; the process's record found and a place taken in it by one
 * fetch-and-add (the serialization word that an exact total and peak need); an owner's
 * record, which a stage must find to move what the owner holds and an alloc and a free must
 * find to change it; and a record per live buffer, which a free must find because it does
 * not say its owner (and a late attach must know which buffers it saw made). Nothing is
 * counted: no cell, no peak, no lifetime total, no dwell time, no reference taken on an
 * owner. An owner's record is made at its first event and removed at its first stage after
 * it held buffers and holds none (the bench's pipeline: the last).
 *   least_*         live accounting's least
 *   least_record_*  the same, and what recording adds at least: the clock and a 56-byte
 *                   event into a ring buffer without a wake-up (read as -R reads it)
 */
struct least_owner_key {
	__u32 pid;
	__u32 pad;
	__u64 owner;
};

struct least_owner {
	__u64 held;
	__u32 stage;
	__u32 held_once;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct least_owner_key);
	__type(value, struct least_owner);
} lowners SEC(".maps");

/* the place: the process's record found by its slot (the cheaper way here, aproc_*), one
 * fetch-and-add on it */
static __always_inline int least_place(__u32 pid)
{
	__u32 slot = pid & 63;
	struct bench_proc *p = bpf_map_lookup_elem(&aprocs, &slot);

	if (!p)
		return -1;
	__sync_fetch_and_add(&p->hits, 1);
	return 0;
}

static __always_inline struct least_owner *least_owner_find(const struct least_owner_key *k,
							     bool make)
{
	struct least_owner *o = bpf_map_lookup_elem(&lowners, k), fresh = {};

	if (o || !make)
		return o;
	bpf_map_update_elem(&lowners, k, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&lowners, k);
}

/* the pid read once a hit, as inflight reads it */
static __always_inline int least_alloc_apply(__u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct bench_buf_key k = { .pid = pid, .gen = 1, .buf = buf };
	struct least_owner_key ok = { .pid = pid, .owner = owner };
	struct bench_buf r = { .bytes = bytes, .owner = owner, .cls = cls };
	struct least_owner *o;

	if (least_place(pid) || !(o = least_owner_find(&ok, true)))
		return 0;
	if (bpf_map_update_elem(&hbufs, &k, &r, BPF_NOEXIST))
		__sync_fetch_and_add(&hbuf_lost, 1);
	__sync_fetch_and_add(&o->held, 1);
	o->held_once = 1;
	return 0;
}

static __always_inline int least_free_apply(__u64 buf, __u32 cls, __u64 bytes)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct bench_buf_key k = { .pid = pid, .gen = 1, .buf = buf };
	struct least_owner_key ok = { .pid = pid };
	struct least_owner *o;
	struct bench_buf r;

	if (least_place(pid) || hbuf_take(&k, &r))
		return 0;
	ok.owner = r.owner;
	o = least_owner_find(&ok, false);
	if (o)
		__sync_fetch_and_sub(&o->held, 1);
	keep(r.bytes ^ cls ^ bytes);
	return 0;
}

static __always_inline int least_stage_apply(__u64 owner, __u32 stage)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct least_owner_key ok = { .pid = pid, .owner = owner };
	struct least_owner *o;

	if (least_place(pid) || !(o = least_owner_find(&ok, true)))
		return 0;
	if (o->held_once && !READ_ONCE(o->held)) {
		bpf_map_delete_elem(&lowners, &ok);
		return 0;
	}
	o->stage = stage;
	return 0;
}

/* recording's least on top: the clock, and the event into the ring */
static __always_inline void least_event(__u64 a0, __u64 a1, __u64 a2)
{
	struct ring_event e = { .w = { bpf_ktime_get_ns(), a0, a1, a2 } };

	bpf_ringbuf_output(&ring, &e, sizeof(e), BPF_RB_NO_WAKEUP);
}

SEC("usdt")
int BPF_USDT(least_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	return least_alloc_apply(buf, cls, bytes, owner);
}

SEC("usdt")
int BPF_USDT(least_free, __u64 buf, __u32 cls, __u64 bytes)
{
	return least_free_apply(buf, cls, bytes);
}

SEC("usdt")
int BPF_USDT(least_stage, __u64 owner, __u32 stage)
{
	return least_stage_apply(owner, stage);
}

SEC("usdt")
int BPF_USDT(least_record_alloc, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	least_event(buf, (__u64)cls << 32 | (owner & 0xffffffff), bytes);
	return least_alloc_apply(buf, cls, bytes, owner);
}

SEC("usdt")
int BPF_USDT(least_record_free, __u64 buf, __u32 cls, __u64 bytes)
{
	least_event(buf, cls, bytes);
	return least_free_apply(buf, cls, bytes);
}

SEC("usdt")
int BPF_USDT(least_record_stage, __u64 owner, __u32 stage)
{
	least_event(owner, stage, 0);
	return least_stage_apply(owner, stage);
}

/* the floor of a kmem:rss_stat handler, for the RSS breakdown (usdt_empty -r) */
SEC("tp_btf/rss_stat")
int empty_rss(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
