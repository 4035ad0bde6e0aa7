/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the kernel side (inflight.bpf.c) and the loader share: limits, map keys and values,
 * and the event record of the ring buffer. Fixed-width fields only.
 */
#ifndef INFLIGHT_H
#define INFLIGHT_H

#define INFL__STR(x) #x
#define INFL__XSTR(x) INFL__STR(x)

#define INFL_MAX_CLASSES 16 /* contract: class ids < 16 */
/*
 * Classes the tracer itself accounts (libcuda's memory calls), in slots of their own past the
 * contract's: a program's class ids stay < 16 (and a probe saying 16 is still a bad class),
 * while every per-class array below is INFL_CLASSES wide. Their names are the loader's
 * (contract/names.c), never a program's note.
 */
#define INFL_CLS_CUDA_DEVICE 16	 /* cuMemAlloc*, cuMemCreate: device memory */
#define INFL_CLS_CUDA_HOST 17	 /* cuMemHostAlloc, cuMemAllocHost: pinned host memory */
#define INFL_CLS_CUDA_MANAGED 18 /* cuMemAllocManaged: unified memory */
#define INFL_CUDA_CLASSES 3
#define INFL_CLASSES (INFL_MAX_CLASSES + INFL_CUDA_CLASSES)
#define INFL_MAX_STAGES 16  /* contract: stage ids < 16 */
/* one extra stage slot for buffers with no owner (owner 0) or whose owner has no stage yet */
#define INFL_SLOT_NONE INFL_MAX_STAGES
#define INFL_SLOTS (INFL_MAX_STAGES + 1)
#define INFL_HIST_SLOTS 32 /* log2 buckets of dwell time in microseconds */

/*
 * The contract's probes, the one table: enum suffix, probe name, argument count. The
 * loader's contract check, its attach and every output that counts events per probe use it.
 */
#define INFL_PROBES(X)                                                                         \
	X(ALLOC, buf_alloc, 4)                                                                 \
	X(FREE, buf_free, 3)                                                                   \
	X(STAGE, stage, 2)

enum infl_probe {
#define INFL__PROBE_ENUM(id, name, nargs) INFL_PROBE_##id,
	INFL_PROBES(INFL__PROBE_ENUM)
#undef INFL__PROBE_ENUM
	INFL_PROBE__COUNT,
};

/*
 * Every anomaly the kernel side counts per process, the one table. Columns: the infl_proc
 * field (also its JSON key and its Prometheus `reason` label); its kind: DROPPED (an event
 * that should have changed what is in flight, or the recording, and did not), REJECTED (an
 * event refused for an id out of range), VIOLATION (a contract violation, applied anyway)
 * or WAITED (a probe hit that waited on another thread of its process, accounted all the
 * same: what tracing cost the program, never a loss);
 * whether a non-zero count makes the process's totals inexact; then how text output says a
 * count of it, the count first so that it never reads as an id ("2 events with a class id
 * >= 16"): the noun the count counts, one and many, and what was wrong with them.
 * A new anomaly is one line here (and a tag in the recording format, which a test enforces).
 */
#define INFL_ANOMALIES(X)                                                                      \
	X(bad_class, REJECTED, 0, "event", "events", "with a class id >= 16")                  \
	X(bad_stage, REJECTED, 0, "event", "events", "with a stage id >= 16")                  \
	X(stage_owner0, REJECTED, 0, "stage event", "stage events", "of owner 0")              \
	X(dup_alloc, VIOLATION, 0, "alloc", "allocs", "of a live buffer")                      \
	X(double_free, VIOLATION, 0, "free", "frees", "of a buffer not live")                  \
	X(buf_map_full, DROPPED, 1, "buffer", "buffers",                                       \
	  "not tracked: the buffer map was full")                                              \
	X(untracked_free, DROPPED, 1, "free", "frees",                                         \
	  "of a buffer a full map or a lock timeout dropped")                                  \
	X(owner_map_full, DROPPED, 1, "owner", "owners",                                       \
	  "not tracked: the owner map was full")                                               \
	X(ring_drops, DROPPED, 0, "event", "events", "dropped: the ring buffer was full")      \
	X(lock_timeouts, DROPPED, 1, "update", "updates",                                      \
	  "skipped: the lock stayed held (lock timeouts)")                                     \
	X(slot_waits, WAITED, 0, "probe hit", "probe hits",                                    \
	  "waited for room: the queue behind the lock was full")                               \
	X(pool_waits, WAITED, 0, "probe hit", "probe hits",                                    \
	  "waited for the lock: the pool had no queue memory free")                            \
	X(contention_lost, DROPPED, 1, "update", "updates",                                   \
	  "not applied in full: other threads won every retry at a shared word")              \
	X(dwell_lost, DROPPED, 0, "stage dwell", "stage dwells",                               \
	  "not measured: two threads moved one owner at once")                                 \
	X(owner_races, VIOLATION, 0, "probe hit", "probe hits",                                \
	  "on an owner while another thread's hit on it was in flight")                        \
	X(arg_errors, DROPPED, 1, "event", "events",                                           \
	  "with probe arguments that could not be read")                                       \
	X(missed_events, DROPPED, 1, "event", "events", "before the process got a slot")       \
	X(cuda_failed, REJECTED, 0, "CUDA memory call", "CUDA memory calls",                   \
	  "failed (a CUresult not 0)")

/*
 * Default sizes of the kernel maps: the BPF side declares its maps with them, the loader's
 * --max-bufs, --max-owners and --max-procs default to them.
 */
#define INFL_DEFAULT_MAX_BUFS 65536 /* plain numbers: --help prints them */
#define INFL_DEFAULT_MAX_OWNERS 16384
#define INFL_DEFAULT_MAX_PROCS 64

/* kmem:rss_stat members (include/linux/mm_types_task.h order) */
enum infl_rss_member {
	INFL_RSS_FILE = 0,
	INFL_RSS_ANON = 1,
	INFL_RSS_SWAP = 2,
	INFL_RSS_SHMEM = 3,
	INFL_RSS__COUNT = 4,
};

struct infl_cell {
	__u64 count; /* live buffers */
	__u64 bytes; /* their bytes */
};

/* infl_proc.flags */
#define INFL_PROC_FROM_START (1u << 0) /* traced from its first instruction: no late attach */
#define INFL_PROC_FORKED (1u << 1)     /* a child of a traced process (fork followed) */
#define INFL_PROC_EXEC (1u << 2)       /* this image ended by exec (the pid lives on) */
#define INFL_PROC_EXEC_BORN (1u << 3)  /* this image began with an exec of a traced process */

/* Before 5.17 (no cmpxchg, no bpf_loop) a process's accounting runs under a lock, and a probe
 * hit that finds it held is pushed into a BPF queue map of INFL_DEFER_SLOTS for its holder
 * (inflight.bpf.c, "the lock form"): 16 of them at most, a process draws one when its lock is
 * first found held and gives it back when its image ends. Deep enough to hold what every
 * other thread of a process fires while the lock's holder is off its CPU. */
#define INFL_DEFER_SLOTS 16384
#define INFL_DEFER_MAX_QUEUES 16
#define INFL_DEFER_QUEUES(max_procs)                                                           \
	((max_procs) < INFL_DEFER_MAX_QUEUES ? (max_procs) : INFL_DEFER_MAX_QUEUES)

/*
 * The accounting order of a process: one 64-bit word, `acct`, holds the number of probe hits
 * that took their place (the high INFL_ACCT_SEQ_BITS bits, modulo their size) and the bytes
 * in flight (the low INFL_ACCT_BYTES_BITS bits, 16 TiB). A hit takes its place and changes
 * the bytes in one fetch-and-add (bpf/acct.bpf.h), so the total after every hit of that order
 * is known exactly, and with it the peak. The loader reads the 64-bit count from hits_done
 * (infl_seq_unwrap).
 */
#define INFL_ACCT_SEQ_BITS 20
#define INFL_ACCT_BYTES_BITS 44
#define INFL_ACCT_SEQ_ONE (1ull << INFL_ACCT_BYTES_BITS)
#define INFL_ACCT_BYTES_MASK (INFL_ACCT_SEQ_ONE - 1)
#define INFL_ACCT_SEQ_MASK ((1u << INFL_ACCT_SEQ_BITS) - 1)

static inline __u64 infl_acct_bytes(__u64 acct)
{
	return acct & INFL_ACCT_BYTES_MASK;
}

static inline __u32 infl_acct_seq_lo(__u64 acct)
{
	return (__u32)(acct >> INFL_ACCT_BYTES_BITS);
}

/* The 64-bit number whose low INFL_ACCT_SEQ_BITS bits are `lo`, nearest to `ref` (a count
 * within half the field of it: hits_done, read while at most that many hits are in flight) */
static inline __u64 infl_seq_unwrap(__u32 lo, __u64 ref)
{
	__u32 d = (lo - (__u32)ref) & INFL_ACCT_SEQ_MASK;

	if (d & (1u << (INFL_ACCT_SEQ_BITS - 1)))
		return ref - ((1u << INFL_ACCT_SEQ_BITS) - d);
	return ref + d;
}

/* infl_proc.peak_fuzz when the peak's composition was not captured for the peak itself (the
 * capture was busy when it was set and the image ended first): its value is still exact */
#define INFL_PEAK_FUZZ_UNKNOWN (~0ull)

/*
 * Where the record lies in memory decides how many cache lines a probe hit takes from
 * another CPU (each ~75 ns on a 2-vCPU Intel VM). The kernel's hash map keeps its elements
 * one after another, each its header (struct htab_elem, 48 bytes from 5.10 to 6.18), its key
 * rounded to 8 bytes, then the value: a record starts 56 bytes into its element. Sized 8
 * bytes over a multiple of 64, every element of `procs` starts on a line, and so does the
 * record's byte 8 (hits_done, the line every hit ends on) and its last 64 bytes (the words
 * every hit writes at its place). Unpadded, the record's lines fell differently for each
 * process, the place and the probe counts often on two. A kernel that lays its elements
 * out otherwise counts the same, with more lines passing.
 */
#define INFL_PROC_VALUE_AT 56
#define INFL_PROC_PAD_WORDS 5

/*
 * Per traced process image (key: tgid; `gen` tells two images of one tgid apart).
 *
 * Probe hits change it without a lock where the kernel has BPF atomics (bpf/acct.bpf.h: each
 * hit takes its place in `acct` by one fetch-and-add, then applies its counts by atomic adds,
 * then adds 1 to hits_done); before 5.17 the same steps run under a lock (inflight.bpf.c).
 * The RSS fields (rss..rss_mm) are written by the tracepoint without either, each one an
 * aligned 8-byte store.
 * Readers copy it without stopping the probes: a copy made front to back is whole when its
 * hits_done (read first) equals the count in its acct (read last): no hit was between its
 * place and its end when the copy began, and none took a place before it ended.
 * seq, total_bytes, peak_bytes, total_bufs and dwell_count are not written by the hits:
 * the loader derives them from hits_done, acct, peak_acct, cur and dwell_hist (the final
 * record's are derived by the kernel at the end); peak_bufs is summed from peak by the hit
 * that copies it. A word a hit need not write is a cache line fewer passing between CPUs.
 */
struct infl_proc {
	/* on the line of the map's key, which every lookup reads: a word no hit writes */
	__u64 gen;	   /* when this record was created (ns): keys bufs/owners with the pid */
	/* a line of the words a hit ends on: hits_done (the first word hits write), what the
	 * hit reads just before it (acct_peak_again) and the words of a new peak */
	__u64 hits_done;   /* hits whose accounting is complete */
	/* hits that may be in peak[][] although after the peak, or missing from it although
	 * before it, because they were in flight while it was copied: 0, it is exact;
	 * INFL_PEAK_FUZZ_UNKNOWN: it was captured for an earlier peak */
	__u64 peak_fuzz;
	__u64 peak_cap_acct; /* the peak (a value of acct) that peak[][] was captured for */
	__u64 peak_seq;	     /* the event that set the peak */
	/* the time of the peak of value peak_time_acct, written by its hit before it copies (a
	 * hit that copies another's peak takes the time from here) */
	__u64 peak_time_acct;
	__u64 peak_time_ns;
	__u64 peak_ns;
	__u32 peak_cap;	     /* 1 while a hit copies the peak's composition (acct.bpf.h) */
	__u32 pad_a;
	/* a line hits read at their start and write once or never */
	__u32 exited;	   /* 1 once the image ended: the last thread exited, or an exec */
	__u32 flags;	   /* INFL_PROC_* */
	__u64 first_ns;	   /* first event (bpf_ktime_get_ns) */
	__u64 start_ns;	   /* when the process started (task start_time, CLOCK_MONOTONIC) */
	__u64 exit_ns;	   /* when the process exited, 0 while alive */
	__u64 seq;	   /* events accounted so far (derived) */
	__u64 total_bytes; /* sum of cur[][].bytes (derived from acct) */
	__u64 peak_bytes;  /* exact high-water mark of total_bytes (derived from peak_acct) */
	__u32 ppid;	   /* the traced parent it was forked from, 0 when none */
	__u32 pad_c;
	__u64 peak_bufs;
	/* before 5.17, the queue map behind the lock: pushes, and hits applied from it */
	__u64 defer_tail;
	__u64 defer_head;
	struct infl_cell cur[INFL_CLASSES][INFL_SLOTS];
	struct infl_cell peak[INFL_CLASSES][INFL_SLOTS]; /* composition at peak_ns */
	__u64 owners[INFL_SLOTS];			     /* live owners per stage */
	__u64 peak_owners[INFL_SLOTS];			     /* ... at peak_ns */
	__u64 dwell_hist[INFL_MAX_STAGES][INFL_HIST_SLOTS];
	__u64 dwell_sum_ns[INFL_MAX_STAGES];
	__u64 dwell_count[INFL_MAX_STAGES]; /* each dwell_hist row summed (derived) */
	/* late attach: events about buffers/owners created before the tracer attached */
	struct infl_cell unmatched_free[INFL_CLASSES]; /* frees of unknown buffers */
	__u64 unmatched_stage[INFL_MAX_STAGES];		   /* unknown owner seen at non-entry stage */
	/* contract violations and drops, never silent: one counter per INFL_ANOMALIES row */
#define INFL__ANOMALY_FIELD(field, ...) __u64 field;
	INFL_ANOMALIES(INFL__ANOMALY_FIELD)
#undef INFL__ANOMALY_FIELD
	/* RSS from kmem:rss_stat, bytes */
	__u64 rss[INFL_RSS__COUNT];
	__u64 rss_total;
	__u64 rss_peak;
	__u64 rss_peak_ns;
	__u64 tracked_at_rss_peak; /* total_bytes when rss_peak was set */
	__u64 rss_emitted;	   /* rss_total last written to the ring buffer */
	__u64 rss_mm;		   /* the mm_struct RSS was last read from (mm_pids key) */
	/* lifetime totals per class: every alloc and free accounted since tracing began */
	struct infl_cell allocated[INFL_CLASSES];
	struct infl_cell freed[INFL_CLASSES];
	__u64 untracked_allocs; /* allocs not in the buffer map (map full, lock timeout) */
	/* the class and stage id of the latest event refused for its id (bad_class, bad_stage),
	 * as the probe passed it; INFL_ID_REFUSED | id: an id its image does not declare whose
	 * slot another image holds (bpf/usdt_spec.h). Written by the hit, one aligned store. */
	__u64 bad_class_seen;
	__u64 bad_stage_seen;
	__u64 total_bufs; /* sum of cur[][].count (derived, like seq) */
	__u64 pad_line[INFL_PROC_PAD_WORDS]; /* the last 64 bytes a line: INFL_PROC_VALUE_AT */
	/* the words every hit writes, on one line (INFL_PROC_VALUE_AT): the clock's last
	 * reading, the probe counts, the peak, the owner counts and the order */
	__u64 last_ns; /* latest event that read the clock (stage, peak, recorded) */
	__u64 events[INFL_PROBE__COUNT]; /* probe hits accounted */
	__u64 peak_acct;      /* the greatest acct's bytes (and its count), by compare-and-swap */
	__u64 owners_started; /* owners first seen at an entry stage */
	__u64 owners_done;    /* owners that reached a terminal stage holding nothing */
	__u64 acct;	      /* the accounting order and the bytes in flight: keep it last */
};

_Static_assert((INFL_PROC_VALUE_AT + sizeof(struct infl_proc)) % 64 == 0,
	       "struct infl_proc: set INFL_PROC_PAD_WORDS so that elements are whole lines");
_Static_assert(sizeof(struct infl_proc) - __builtin_offsetof(struct infl_proc, last_ns) <= 64 &&
		       __builtin_offsetof(struct infl_proc, hits_done) == 8,
	       "struct infl_proc: the words every hit writes fit its last line");

/* infl_proc.flags bits set by the first hit, which any hit may compute before it is set */
#define INFL_PROC_FLAGS_SET (1u << 31)

/* The buffers a composition holds (total_bufs, peak_bufs): its cells' counts summed, so that
 * no hit writes a word more for them. */
static inline __u64 infl_cells_count(const struct infl_cell c[INFL_CLASSES][INFL_SLOTS])
{
	__u64 n = 0;

	for (int i = 0; i < INFL_CLASSES; i++)
		for (int s = 0; s < INFL_SLOTS; s++)
			n += c[i][s].count;
	return n;
}

/* A copy of a record is whole when no probe hit was between its place and its end while it
 * was made: the count of places in acct (read last) equals hits_done (read first). */
static inline int infl_proc_whole(const struct infl_proc *p)
{
	return infl_acct_seq_lo(p->acct) == ((__u32)p->hits_done & INFL_ACCT_SEQ_MASK);
}

/* The fields a reader derives from the order (see struct infl_proc): the kernel in an ended
 * image's final record, the loader in every copy it makes. A copy that is not whole says
 * the places taken, hits in flight among them. */
static inline void infl_proc_derive(struct infl_proc *p)
{
	__u64 acct = p->acct, peak = p->peak_acct;

	p->total_bufs = infl_cells_count(p->cur);
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		p->dwell_count[s] = 0;
		for (int b = 0; b < INFL_HIST_SLOTS; b++)
			p->dwell_count[s] += p->dwell_hist[s][b];
	}
	p->seq = infl_seq_unwrap(infl_acct_seq_lo(acct), p->hits_done);
	p->total_bytes = infl_acct_bytes(acct);
	p->peak_bytes = infl_acct_bytes(peak);
	if (peak != p->peak_cap_acct) {
		/* the copy was busy when the last peak was set: its value is exact, its
		 * composition still the earlier peak's (or, while hits are in flight, still
		 * to be copied) */
		p->peak_fuzz = INFL_PEAK_FUZZ_UNKNOWN;
		p->peak_seq = infl_seq_unwrap(infl_acct_seq_lo(peak), p->hits_done);
	}
}

/*
 * Who a process image is, as the kernel saw it when its record was made (inflight.bpf.c:
 * ident_note): its comm and the first INFL_IDENT_ARGS bytes of its command line (the words,
 * each ending in a NUL), so that an image that ends before the loader reads /proc is still
 * named. Keyed by pid and gen; the loader removes an image's entry when it forgets the image.
 */
#define INFL_IDENT_ARGS 512

struct infl_ident_key {
	__u32 pid;
	__u32 pad;
	__u64 gen;
};

struct infl_ident {
	char comm[16];
	__u32 args_len; /* bytes of args read, 0 when unreadable */
	__u32 pad;
	char args[INFL_IDENT_ARGS];
};

/* The images map's key: a binary the loader attached to, as the kernel names its file (the
 * device as struct super_block's s_dev encodes it, MKDEV; the inode). */
struct infl_image_key {
	__u64 dev;
	__u64 ino;
};

/* Keys of a process's buffers and owners: the pid and its record's gen, so that a pid reused
 * while an exited process's entries are still being removed never meets them. */
struct infl_buf_key {
	__u32 pid;
	__u32 space; /* INFL_SPACE_*: whose ids `buf` is */
	__u64 gen;
	__u64 buf;
};

/* A program's buffer ids, libcuda's pointers and its VMM handles are three name spaces: a
 * device pointer equal to some buffer id of the program is another buffer. */
#define INFL_SPACE_CONTRACT 0
#define INFL_SPACE_CUDA_PTR 1
#define INFL_SPACE_CUDA_HANDLE 2

#define INFL_BUF_UNSTAGED (1u << 0) /* accounted in INFL_SLOT_NONE: owner 0 or owner untracked */
#define INFL_BUF_CUDA (1u << 1)	    /* libcuda's: its key is in a CUDA space */
#define INFL_BUF_HANDLE (1u << 2)   /* with CUDA: a VMM handle (cuMemCreate), not a pointer */

struct infl_buf {
	__u64 bytes;
	__u64 owner;
	__u32 cls;
	__u32 flags; /* INFL_BUF_* */
};

struct infl_owner_key {
	__u32 pid;
	__u32 side; /* 0, or 1 while side 0's record is being removed (owners.bpf.h) */
	__u64 gen;
	__u64 owner;
};

/*
 * An owner's record. `state` and the held words change by atomic operations (bpf/acct.bpf.h
 * says how and why; INFL_OS_* its fields); the record is removed only once its owner retired
 * and stayed so (the sweep, inflight.bpf.c), never under a hit that holds a reference.
 */
struct infl_owner {
	/* Its key's owner and gen from its first use on (0: not yet claimed): a pointer found
	 * by a lookup is checked against them once a reference holds the record in place */
	__u64 id;
	__u64 id_gen;
	__u32 id_pid;	   /* ... and pid: whose process's counts a reference given back touches */
	__u32 id_side;	   /* ... and its key's side */
	__u64 state;	   /* INFL_OS_*: slot, flags, references, moves, buffers held */
	/* when it entered its slot: the time of its move number n in [n % 2], written by the
	 * move before its compare-and-swap, with n | INFL_ENTERED_VALID in entered_move[n % 2]
	 * (0 while written) */
	__u64 entered_ns[2];
	__u32 entered_move[2];
	__u32 classes;	   /* bit c: held_count[c] and held_bytes[c] are in use */
	__u32 pad2;
	__u64 retired_ns;  /* when it last retired */
	/* its buffers by class, each word INFL_HELD_*: the slot of cur[][] the value is
	 * counted in, and the value */
	__u64 held_count[INFL_CLASSES];
	__u64 held_bytes[INFL_CLASSES];
};

/* infl_owner.state, low bits first */
#define INFL_OS_NHELD_BITS 24 /* buffers it holds, and allocs of it in flight */
#define INFL_OS_NHELD_MASK ((1ull << INFL_OS_NHELD_BITS) - 1)
#define INFL_OS_MOVES_SHIFT 24 /* its stage moves so far, modulo 2^20 */
#define INFL_OS_MOVES_MASK ((__u64)INFL_ACCT_SEQ_MASK << INFL_OS_MOVES_SHIFT)
#define INFL_OS_REFS_SHIFT 44 /* hits working on it now (1023 at most) */
#define INFL_OS_REF (1ull << INFL_OS_REFS_SHIFT)
#define INFL_OS_REFS_MASK (0x3ffull << INFL_OS_REFS_SHIFT)
#define INFL_OS_CLAIMED (1ull << 54) /* the owner's record (owners.bpf.h: owner_hold_round) */
#define INFL_OS_VOID (1ull << 55)    /* never (again) the owner's: retired, taken up by no hit */
#define INFL_OS_ADMITTED (1ull << 56) /* counted in owners[slot] */
#define INFL_OS_RETIRED (1ull << 57)  /* done (terminal, holding nothing): counted nowhere */
#define INFL_OS_DOOMED (1ull << 58)   /* retired and being removed: look it up again */
#define INFL_OS_SLOT_SHIFT 59	      /* its slot (a stage, or INFL_SLOT_NONE) */
#define INFL_ENTERED_VALID (1u << 31)
/* infl_owner.held_*: the slot in the top bits, like the state's */
#define INFL_HELD_SLOT_SHIFT 59
#define INFL_HELD_VALUE_MASK ((1ull << INFL_HELD_SLOT_SHIFT) - 1)
_Static_assert(INFL_SLOTS <= 32, "a slot fits the state's and the held words' 5 bits");

static inline __u32 infl_os_slot(__u64 state)
{
	return (__u32)(state >> INFL_OS_SLOT_SHIFT);
}

enum infl_event_type {
	INFL_EV_ALLOC = 0,
	INFL_EV_FREE = 1,
	INFL_EV_STAGE = 2,
	INFL_EV_RSS = 3,  /* arg0 = rss total bytes */
	INFL_EV_EXIT = 4, /* process exited */
};

/* flags on an event: how the kernel accounted it */
#define INFL_EVF_UNMATCHED (1u << 0) /* free of an unknown buffer / stage of unknown owner */
#define INFL_EVF_REJECTED (1u << 1)  /* bad class or stage id */
#define INFL_EVF_UNTRACKED (1u << 2) /* map full: not accounted at all */
#define INFL_EVF_DUP (1u << 3)	     /* alloc of a live buffer; on a free: the buffer such an
				      * alloc replaced, its place right after the alloc's */
#define INFL_EVF_NEW_PEAK (1u << 4)  /* this event set a new peak */
#define INFL_EVF_UNSTAGED (1u << 5)  /* owner map full: the buffer counts, in no stage */
#define INFL_EVF_DOUBLE (1u << 6)    /* with UNMATCHED: a free of a buffer not live in a
				      * process traced from its start (double free) */
#define INFL_EVF_DROPPED (1u << 7)   /* with UNMATCHED: a free of a buffer whose alloc was
				      * not tracked (map full, lock timeout) */

/* Ring buffer record (record mode), 56 bytes. */
struct infl_event {
	__u64 ts_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 seq;   /* per-process accounting order (infl_proc.seq after this event) */
	__u32 pid;
	__u32 tid;
	__u8 type;  /* enum infl_event_type */
	__u8 id;    /* class (alloc/free) or stage (stage) */
	__u8 flags; /* INFL_EVF_* */
	__u8 from_slot; /* stage: the owner's previous slot; alloc/free: the owner's slot */
	__u32 pad;
	__u64 arg0; /* alloc/free: buf; stage: owner; rss: bytes */
	__u64 arg1; /* alloc/free: bytes */
	__u64 arg2; /* alloc: owner */
};

/* A probe hit's work done by its handler's map operations: what accounting it needs. Before
 * 5.17 it is queued when its process's lock is held (inflight.bpf.c), INFL_DEFER_SLOTS of
 * them a process. */
struct infl_op {
	__u64 gen;   /* queue: the image it belongs to */
	__u64 arg;   /* alloc, free: the buffer; stage: the owner */
	__u64 bytes; /* alloc, free: the bytes the probe says */
	__u64 owner; /* alloc: the owner */
	struct infl_buf prev; /* alloc (a dup): the record replaced; free: the record removed */
	__u32 tid;   /* the thread that hit the probe (recorded events) */
	__u8 probe;  /* enum infl_probe */
	__u8 kind;   /* enum alloc_kind, free_kind, stage_kind (inflight.bpf.c) */
	__u8 id;     /* alloc, free: the class the probe says; stage: the stage */
	__u8 flags;  /* alloc: the new record's INFL_BUF_*; free: its class out of range */
};

/*
 * The control ring (`ctl`): what the loader must act on at once. EXIT and EXEC carry the
 * image's final record: the kernel has already removed it from `procs`, so a reused pid
 * starts afresh; the loader keeps the record for every output and removes what the image
 * left in `bufs` and `owners`. EXEC also means: the pid now runs another image, which the
 * loader may need to attach to.
 */
enum infl_ctl_type {
	INFL_CTL_EXIT = 1, /* the process's last thread exited */
	INFL_CTL_EXEC = 2, /* the process replaced its image */
};

struct infl_ctl {
	__u32 type; /* enum infl_ctl_type */
	__u32 pid;
	__u64 ts_ns;
	struct infl_proc final; /* the ended image's record */
};

#endif /* INFLIGHT_H */
