// SPDX-License-Identifier: BSD-2-Clause
/* The scripted kernel model of rec_script.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "rec_script.h"
#include "../../probes/prover_ids.h"

__u64 script_ns(double ms)
{
	return SCRIPT_T0 + (__u64)(ms * 1e6 + 0.5);
}

void script_prover_names(struct infl_names *n)
{
	names__init(n);
	n->contract_version = 1;
	strcpy(n->provider, "prover");
#define CLS(id, name)                                                                          \
	strcpy(n->cls[id], #name);                                                             \
	n->cls_declared |= 1u << id;
#define STG(id, name, flag)                                                                    \
	strcpy(n->stage[id], #name);                                                           \
	n->stage_declared |= 1u << id;                                                         \
	if (!strcmp(#flag, "terminal"))                                                        \
		n->terminal_mask |= 1u << id;
	PROVER_CLASSES(CLS)
	PROVER_STAGES(STG)
#undef CLS
#undef STG
	n->entry_mask = (1u << STAGE_parse) | (1u << STAGE_wait_permit);
}

void script_begin_as(struct script *s, struct rec_writer *w, __u32 pid,
		     const struct infl_names *names, const char *host, char *const *argv,
		     const char *comm, const char *cmdline)
{
	int argc = 0;
	struct rec_header_info h = {
		.names = names, .host = host, .argv = argv,
		.binary = "/usr/bin/prover", .mode = 2, .target_pid = pid,
		.start_wall_ns = 1700000000000000000ull, .start_mono_ns = SCRIPT_T0,
		.interval_ns = 100000000, .tool = "inflight test",
	};

	while (argv[argc])
		argc++;
	h.argc = argc;
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->pid = pid;
	s->names = *names;
	rec_writer__header(w, &h);
	rec_writer__proc(w, pid, SCRIPT_T0, comm, cmdline, 0, NULL);
}

void script_begin(struct script *s, struct rec_writer *w, __u32 pid,
		  const struct infl_names *names)
{
	char *argv[] = { "prover", "--scripted", NULL };

	script_begin_as(s, w, pid, names, "testhost", argv, "prover", "prover --scripted");
}

static void emit(struct script *s, __u64 now, __u8 type, __u8 id, __u8 flags, __u8 slot,
		 __u64 a0, __u64 a1, __u64 a2)
{
	struct infl_event ev = {
		.ts_ns = now, .seq = s->st.seq, .pid = s->pid, .tid = s->pid + 1, .type = type,
		.id = id, .flags = flags, .from_slot = slot, .arg0 = a0, .arg1 = a1, .arg2 = a2,
	};

	if (s->drop_next) {
		s->drop_next--;
		s->st.ring_drops++;
		return;
	}
	rec_writer__event(s->w, &ev);
}

/* A place in the process's order; `probe` the hit's, or -1 (no probe hit) */
static __u64 account(struct script *s, double ms, int probe)
{
	__u64 now = script_ns(ms);

	s->st.seq++;
	if (!s->st.first_ns)
		s->st.first_ns = now;
	s->st.last_ns = now;
	if (probe >= 0)
		s->st.events[probe]++;
	return now;
}

static struct script_owner *owner_find(struct script *s, __u64 owner)
{
	for (int i = 0; i < s->nowners; i++)
		if (s->owners[i].owner == owner)
			return &s->owners[i];
	return NULL;
}

static void owner_drop(struct script *s, struct script_owner *o)
{
	*o = s->owners[--s->nowners];
}

static int retire(struct script *s, struct script_owner *o)
{
	if (o->slot >= INFL_MAX_STAGES || !(s->names.terminal_mask & (1u << o->slot)))
		return 0;
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (o->held[c].count)
			return 0;
	s->st.owners[o->slot]--;
	s->st.owners_done++;
	owner_drop(s, o);
	return 1;
}

static void peak(struct script *s, __u64 now, __u8 *flags)
{
	if (s->st.total_bytes <= s->st.peak_bytes)
		return;
	s->st.peak_bytes = s->st.total_bytes;
	s->st.peak_bufs = s->st.total_bufs;
	s->st.peak_ns = now;
	s->st.peak_seq = s->st.seq;
	memcpy(s->st.peak, s->st.cur, sizeof(s->st.peak));
	memcpy(s->st.peak_owners, s->st.owners, sizeof(s->st.peak_owners));
	*flags |= INFL_EVF_NEW_PEAK;
}

/* A buffer's counts out of its cell and its owner's holding; its owner (NULL: none) and
 * the slot its bytes were counted in. */
static struct script_owner *count_out(struct script *s, const struct script_buf *rec,
				      __u32 *slot)
{
	struct script_owner *o = rec->staged ? owner_find(s, rec->owner) : NULL;

	*slot = o ? o->slot : INFL_SLOT_NONE;
	s->st.cur[rec->cls][*slot].count--;
	s->st.cur[rec->cls][*slot].bytes -= rec->bytes;
	s->st.total_bufs--;
	s->st.total_bytes -= rec->bytes;
	if (o) {
		o->held[rec->cls].count--;
		o->held[rec->cls].bytes -= rec->bytes;
	}
	return o;
}

/* The buffer a double alloc replaced, out at a place of its own (1.6): a free with
 * INFL_EVF_DUP, no probe hit. */
static void replaced_out(struct script *s, double ms, const struct script_buf *old)
{
	__u64 now = account(s, ms, -1);
	struct script_owner *o;
	__u32 slot;

	o = count_out(s, old, &slot);
	s->st.dup_alloc++;
	emit(s, now, INFL_EV_FREE, old->cls, INFL_EVF_DUP, slot, old->buf, old->bytes,
	     old->owner);
	if (o)
		retire(s, o);
}

void script_replaced(struct script *s, double ms)
{
	struct script_buf old;

	if (!s->nreplaced)
		return;
	old = s->replaced[0];
	memmove(s->replaced, s->replaced + 1, --s->nreplaced * sizeof(s->replaced[0]));
	replaced_out(s, ms, &old);
}

void script_alloc(struct script *s, double ms, __u64 buf, __u32 cls, __u64 bytes, __u64 owner)
{
	__u64 now = account(s, ms, INFL_PROBE_ALLOC);
	struct script_owner *o = NULL;
	struct script_buf *b, old = { 0 };
	__u8 flags = 0;
	__u32 slot;
	int i;

	for (i = 0; i < s->nbufs && s->bufs[i].buf != buf; i++)
		;
	b = &s->bufs[i];
	if (i == s->nbufs) {
		s->nbufs++;
	} else {
		/* a double alloc: the kernel's record of the id is this one from here on */
		old = *b;
		flags |= INFL_EVF_DUP;
		if (s->dup_v15) {
			/* its owner then stayed, even done and holding nothing more */
			count_out(s, &old, &slot);
			s->st.dup_alloc++;
		}
	}
	if (owner) {
		o = owner_find(s, owner);
		if (!o) {
			o = &s->owners[s->nowners++];
			memset(o, 0, sizeof(*o));
			o->owner = owner;
			o->slot = INFL_SLOT_NONE;
			o->entered = now;
			s->st.owners[INFL_SLOT_NONE]++;
		}
	}
	slot = o ? o->slot : INFL_SLOT_NONE;
	*b = (struct script_buf){ buf, bytes, owner, cls, o != NULL };
	if (o) {
		o->held[cls].count++;
		o->held[cls].bytes += bytes;
	}
	s->st.cur[cls][slot].count++;
	s->st.cur[cls][slot].bytes += bytes;
	s->st.total_bufs++;
	s->st.total_bytes += bytes;
	peak(s, now, &flags);
	emit(s, now, INFL_EV_ALLOC, cls, flags, slot, buf, bytes, owner);
	if (!(flags & INFL_EVF_DUP) || s->dup_v15)
		return;
	if (!s->defer_dup)
		replaced_out(s, ms, &old);
	else if (s->nreplaced < (int)(sizeof(s->replaced) / sizeof(s->replaced[0])))
		s->replaced[s->nreplaced++] = old;
}

void script_free(struct script *s, double ms, __u64 buf, __u32 cls, __u64 bytes)
{
	__u64 now = account(s, ms, INFL_PROBE_FREE);
	struct script_owner *o = NULL;
	struct script_buf rec;
	__u32 slot;
	int i;

	for (i = 0; i < s->nbufs && s->bufs[i].buf != buf; i++)
		;
	if (i == s->nbufs) {
		/* the kernel's three kinds (inflight.bpf.c: free_unmatched) */
		__u8 flags = INFL_EVF_UNMATCHED;

		if (s->st.untracked_allocs > s->st.untracked_free) {
			s->st.untracked_free++;
			flags |= INFL_EVF_DROPPED;
		} else if (s->st.flags & INFL_PROC_FROM_START) {
			s->st.double_free++;
			flags |= INFL_EVF_DOUBLE;
		} else {
			s->st.unmatched_free[cls].count++;
			s->st.unmatched_free[cls].bytes += bytes;
		}
		emit(s, now, INFL_EV_FREE, cls, flags, INFL_SLOT_NONE, buf, bytes, 0);
		return;
	}
	rec = s->bufs[i];
	s->bufs[i] = s->bufs[--s->nbufs];
	o = count_out(s, &rec, &slot);
	emit(s, now, INFL_EV_FREE, rec.cls, 0, slot, buf, rec.bytes, rec.owner);
	if (o)
		retire(s, o);
}

void script_stage(struct script *s, double ms, __u64 owner, __u32 stage)
{
	__u64 now = account(s, ms, INFL_PROBE_STAGE);
	struct script_owner *o = owner_find(s, owner);
	__u8 flags = 0;
	__u32 from;

	if (!o) {
		o = &s->owners[s->nowners++];
		memset(o, 0, sizeof(*o));
		o->owner = owner;
		o->slot = INFL_SLOT_NONE;
		s->st.owners[INFL_SLOT_NONE]++;
		if (s->names.entry_mask & (1u << stage)) {
			s->st.owners_started++;
		} else {
			s->st.unmatched_stage[stage]++;
			flags = INFL_EVF_UNMATCHED;
		}
	}
	from = o->slot;
	if (from < INFL_MAX_STAGES) {
		__u64 us = (now - o->entered) / 1000;
		int b = 0;

		while (us >> (b + 1))
			b++;
		s->st.dwell_hist[from][b]++;
		s->st.dwell_sum_ns[from] += now - o->entered;
		s->st.dwell_count[from]++;
	}
	for (int c = 0; c < INFL_MAX_CLASSES; c++) {
		s->st.cur[c][from].count -= o->held[c].count;
		s->st.cur[c][from].bytes -= o->held[c].bytes;
		s->st.cur[c][stage].count += o->held[c].count;
		s->st.cur[c][stage].bytes += o->held[c].bytes;
	}
	s->st.owners[from]--;
	s->st.owners[stage]++;
	o->slot = stage;
	o->entered = now;
	emit(s, now, INFL_EV_STAGE, stage, flags, from, owner, 0, 0);
	retire(s, o);
}

void script_rss(struct script *s, double ms, __u64 bytes)
{
	struct infl_event ev = {
		.ts_ns = script_ns(ms), .seq = s->st.seq, .pid = s->pid, .tid = s->pid,
		.type = INFL_EV_RSS, .from_slot = INFL_SLOT_NONE, .arg0 = bytes,
	};

	s->st.rss_total = bytes;
	if (bytes > s->st.rss_peak) {
		s->st.rss_peak = bytes;
		s->st.rss_peak_ns = ev.ts_ns;
	}
	rec_writer__event(s->w, &ev);
}

void script_snapshot(struct script *s, double ms)
{
	rec_writer__snapshot(s->w, script_ns(ms), s->pid, &s->st);
	rec_writer__rss(s->w, script_ns(ms), s->pid, 0, s->st.rss_total + 4096);
}

void script_end(struct script *s, double ms, int exited)
{
	__u64 now = script_ns(ms);
	struct rec_end_info e = {
		.mono_ns = now, .wall_ns = 1700000000000000000ull + (now - SCRIPT_T0),
		.exit_status = exited ? 0 : -1, .events = rec_writer__events(s->w),
		.nprocs = 1, .pids = &s->pid, .procs = &s->st,
	};

	if (exited) {
		s->st.exited = 1;
		s->st.exit_ns = now;
		emit(s, now, INFL_EV_EXIT, 0, 0, INFL_SLOT_NONE, s->st.total_bytes,
		     s->st.total_bufs, 0);
	}
	if (s->st.ring_drops)
		rec_writer__lost(s->w, now, s->pid, 0, s->st.ring_drops);
	e.events = rec_writer__events(s->w);
	rec_writer__end(s->w, &e);
}

int script_set_minor(int fd, unsigned minor)
{
	unsigned char v[2] = { minor & 0xff, minor >> 8 };

	return pwrite(fd, v, 2, 10) == 2 ? 0 : -errno;
}
