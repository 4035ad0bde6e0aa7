// SPDX-License-Identifier: BSD-2-Clause
/*
 * Writes a large synthetic recording of a prover-like run, for the offline memory benchmark
 * (bench/offline_memory.sh) and the streaming tests: proof jobs of 10 partitions going
 * parse/wait_permit -> synth -> chan_send -> gpu_queue -> gpu -> finalize -> done, with
 * their buffers (abc x3, aux, input, density, pending; c1_data per job; one srs), kernel
 * RSS events, a snapshot every 100 ms of simulated time and the final counters. The kernel's
 * accounting is modelled exactly (cells, owners, peak with its composition, dwell), so
 * `inflight report` must find the replay equal to the final counters.
 *
 * Usage: rec_gen OUT SIZE [PID]     SIZE in bytes, with an optional K, M or G suffix: the
 *        file is written until it is at least that large (then the run ends cleanly).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rec_script.h"
#include "../../probes/prover_ids.h"

#define PW 12		/* partitions synthesized at once */
#define PARTS 10	/* partitions per proof job */
#define MS 1000000ull
#define SNAP_NS (100 * MS)

struct gen {
	struct rec_writer *w;
	__u32 pid;
	struct infl_proc st;
	struct infl_names names;
	__u64 now, next_snap;
	__u64 next_buf;
};

/* a work item of the model and what it holds */
struct item {
	__u64 owner, t;	  /* its next step is due at t */
	__u32 slot;
	__u64 entered;
	int step;
	__u64 bufs[8];
	__u32 cls[8];
	__u64 bytes[8];
	int nbufs;
	struct infl_cell held[INFL_MAX_CLASSES];
	int job; /* a proof job (parse -> assemble -> done) rather than a partition */
};

static void emit(struct gen *g, __u8 type, __u8 id, __u8 flags, __u8 slot, __u64 a0, __u64 a1,
		 __u64 a2)
{
	struct infl_event ev = {
		.ts_ns = g->now, .seq = g->st.seq, .pid = g->pid, .tid = g->pid, .type = type,
		.id = id, .flags = flags, .from_slot = slot, .arg0 = a0, .arg1 = a1, .arg2 = a2,
	};

	rec_writer__event(g->w, &ev);
}

static void account(struct gen *g, int probe)
{
	g->st.seq++;
	if (!g->st.first_ns)
		g->st.first_ns = g->now;
	g->st.last_ns = g->now;
	g->st.events[probe]++;
}

static void alloc(struct gen *g, struct item *it, __u32 cls, __u64 bytes)
{
	__u8 flags = 0;
	__u32 slot = it ? it->slot : INFL_SLOT_NONE;
	__u64 buf = g->next_buf++ * 64;

	account(g, INFL_PROBE_ALLOC);
	if (it) {
		it->bufs[it->nbufs] = buf;
		it->cls[it->nbufs] = cls;
		it->bytes[it->nbufs++] = bytes;
		it->held[cls].count++;
		it->held[cls].bytes += bytes;
	}
	g->st.cur[cls][slot].count++;
	g->st.cur[cls][slot].bytes += bytes;
	g->st.total_bufs++;
	g->st.total_bytes += bytes;
	if (g->st.total_bytes > g->st.peak_bytes) {
		g->st.peak_bytes = g->st.total_bytes;
		g->st.peak_bufs = g->st.total_bufs;
		g->st.peak_ns = g->now;
		g->st.peak_seq = g->st.seq;
		memcpy(g->st.peak, g->st.cur, sizeof(g->st.peak));
		memcpy(g->st.peak_owners, g->st.owners, sizeof(g->st.peak_owners));
		flags |= INFL_EVF_NEW_PEAK;
	}
	emit(g, INFL_EV_ALLOC, cls, flags, slot, buf, bytes, it ? it->owner : 0);
	/* an RSS event now and then, as rss_stat would send past its step */
	if (g->st.seq % 64 == 0) {
		__u64 rss = g->st.total_bytes + (48ull << 20);

		g->st.rss_total = rss;
		g->st.rss[1] = rss;
		if (rss > g->st.rss_peak) {
			g->st.rss_peak = rss;
			g->st.rss_peak_ns = g->now;
			g->st.tracked_at_rss_peak = g->st.total_bytes;
		}
		g->st.rss_emitted = rss;
		emit(g, INFL_EV_RSS, 0, 0, INFL_SLOT_NONE, rss, g->st.tracked_at_rss_peak, 0);
	}
}

/* frees the item's buffers [from, its count) of the given classes (all when cls_mask 0) */
static void free_bufs(struct gen *g, struct item *it, __u32 cls_mask)
{
	for (int i = 0; i < it->nbufs;) {
		__u32 c = it->cls[i];

		if (cls_mask && !(cls_mask & (1u << c))) {
			i++;
			continue;
		}
		account(g, INFL_PROBE_FREE);
		g->st.cur[c][it->slot].count--;
		g->st.cur[c][it->slot].bytes -= it->bytes[i];
		g->st.total_bufs--;
		g->st.total_bytes -= it->bytes[i];
		it->held[c].count--;
		it->held[c].bytes -= it->bytes[i];
		emit(g, INFL_EV_FREE, c, 0, it->slot, it->bufs[i], it->bytes[i], it->owner);
		it->nbufs--;
		it->bufs[i] = it->bufs[it->nbufs];
		it->cls[i] = it->cls[it->nbufs];
		it->bytes[i] = it->bytes[it->nbufs];
	}
}

/* returns 1 when the item retired (terminal stage, holding nothing) */
static int stage(struct gen *g, struct item *it, __u32 to)
{
	__u32 from = it->slot;

	account(g, INFL_PROBE_STAGE);
	if (from == INFL_SLOT_NONE) {
		g->st.owners[INFL_SLOT_NONE]++;
		g->st.owners_started++;
	} else {
		__u64 us = (g->now - it->entered) / 1000;
		int b = 0;

		while (b < INFL_HIST_SLOTS - 1 && us >> (b + 1))
			b++;
		g->st.dwell_hist[from][b]++;
		g->st.dwell_sum_ns[from] += g->now - it->entered;
		g->st.dwell_count[from]++;
	}
	for (int c = 0; c < INFL_MAX_CLASSES; c++) {
		g->st.cur[c][from].count -= it->held[c].count;
		g->st.cur[c][from].bytes -= it->held[c].bytes;
		g->st.cur[c][to].count += it->held[c].count;
		g->st.cur[c][to].bytes += it->held[c].bytes;
	}
	g->st.owners[from]--;
	g->st.owners[to]++;
	it->slot = to;
	it->entered = g->now;
	emit(g, INFL_EV_STAGE, to, 0, from, it->owner, 0, 0);
	if (to == STAGE_done && !it->nbufs) {
		g->st.owners[to]--;
		g->st.owners_done++;
		return 1;
	}
	return 0;
}

/* one step of a partition; returns the delay to its next step, 0 when done */
static __u64 part_step(struct gen *g, struct item *it, __u64 k)
{
	switch (it->step++) {
	case 0:
		stage(g, it, STAGE_wait_permit);
		return MS / 2;
	case 1:
		stage(g, it, STAGE_synth);
		alloc(g, it, CLS_abc, 4 << 20);
		alloc(g, it, CLS_abc, 4 << 20);
		alloc(g, it, CLS_abc, 4 << 20);
		alloc(g, it, CLS_aux, 1300 << 10);
		alloc(g, it, CLS_input, 2624);
		alloc(g, it, CLS_density, 62 << 10);
		return 6 * MS;
	case 2:
		stage(g, it, STAGE_chan_send);
		return MS / 4 + (k % 29) * MS; /* waiting for room in the channel */
	case 3:
		stage(g, it, STAGE_gpu_queue);
		return MS / 5;
	case 4:
		stage(g, it, STAGE_gpu);
		alloc(g, it, CLS_pending, 1 << 20);
		return 2 * MS;
	case 5:
		free_bufs(g, it, 1u << CLS_abc);
		stage(g, it, STAGE_finalize);
		return MS;
	default:
		free_bufs(g, it, 0);
		stage(g, it, STAGE_done);
		return 0;
	}
}

static __u64 job_step(struct gen *g, struct item *it)
{
	switch (it->step++) {
	case 0:
		stage(g, it, STAGE_parse);
		alloc(g, it, CLS_c1_data, 310 << 10);
		return MS;
	case 1:
		stage(g, it, STAGE_assemble);
		return PARTS * 3 * MS;
	default:
		free_bufs(g, it, 0);
		stage(g, it, STAGE_done);
		return 0;
	}
}

/* a min-heap of items by their due time */
struct heap {
	struct item *v[256];
	int n;
};

static void heap_push(struct heap *h, struct item *it)
{
	int i = h->n++;

	while (i && h->v[(i - 1) / 2]->t > it->t) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = it;
}

static struct item *heap_pop(struct heap *h)
{
	struct item *top = h->v[0], *last = h->v[--h->n];
	int i = 0;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1]->t < h->v[c]->t)
			c++;
		if (h->v[c]->t >= last->t)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

static void snapshot(struct gen *g)
{
	while (g->now >= g->next_snap) {
		rec_writer__snapshot(g->w, g->next_snap, g->pid, &g->st);
		rec_writer__rss(g->w, g->next_snap, g->pid, 1, g->st.rss_total);
		rec_writer__rss(g->w, g->next_snap, g->pid, 0, g->st.rss_total + 4096);
		g->next_snap += SNAP_NS;
	}
}

static __u64 parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*end == 'K' || *end == 'k')
		v *= 1024;
	else if (*end == 'M' || *end == 'm')
		v *= 1 << 20;
	else if (*end == 'G' || *end == 'g')
		v *= 1 << 30;
	return (__u64)v;
}

int main(int argc, char **argv)
{
	static struct gen g;
	static struct item pool[256];
	struct item *freelist[256];
	struct heap h = { .n = 0 };
	char *cmd[] = { "prover", "--pw", "12", "--synthetic", NULL };
	struct rec_header_info hi = { 0 };
	struct rec_end_info e = { 0 };
	__u64 size, k = 0, jobs = 0;
	int nfree = 0, err;

	if (argc < 3) {
		fprintf(stderr, "usage: rec_gen OUT SIZE [PID]\n");
		return 2;
	}
	size = parse_size(argv[2]);
	g.pid = argc > 3 ? (__u32)atoi(argv[3]) : 5000;
	err = rec_writer__create(argv[1], REC_W_FORCE, &g.w);
	if (err) {
		fprintf(stderr, "rec_gen: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	script_prover_names(&g.names);
	hi = (struct rec_header_info){
		.names = &g.names, .host = "genhost", .argc = 4, .argv = cmd,
		.binary = "/usr/bin/prover", .mode = 2, .target_pid = g.pid,
		.start_wall_ns = 1700000000000000000ull, .start_mono_ns = SCRIPT_T0,
		.interval_ns = SNAP_NS, .tool = "inflight rec_gen",
	};
	rec_writer__header(g.w, &hi);
	rec_writer__proc(g.w, g.pid, SCRIPT_T0, "prover", "prover --pw 12 --synthetic", 4,
			 (char *const[]){ "prover", "--pw", "12", "--synthetic" });
	g.now = SCRIPT_T0 + MS;
	g.next_buf = 1;
	g.next_snap = SCRIPT_T0 + SNAP_NS;
	alloc(&g, NULL, CLS_srs, 6 << 20);
	for (int i = 0; i < 256; i++)
		freelist[nfree++] = &pool[i];
	/* a proof job every 15 ms, its partitions spread over the next 10 ms */
	for (__u64 next_job = g.now; rec_writer__bytes(g.w) < size || h.n;) {
		struct item *it;
		__u64 d;

		if (rec_writer__bytes(g.w) < size && nfree >= PARTS + 1 &&
		    (!h.n || h.v[0]->t >= next_job)) {
			for (int p = 0; p <= PARTS; p++) {
				it = freelist[--nfree];
				memset(it, 0, sizeof(*it));
				it->slot = INFL_SLOT_NONE;
				it->job = p == 0;
				it->owner = (jobs << 8) | (p ? 0x10 + p : 0);
				it->t = next_job + (p ? (__u64)p * MS : 0);
				heap_push(&h, it);
			}
			jobs++;
			next_job += 15 * MS;
			continue;
		}
		it = heap_pop(&h);
		if (it->t > g.now)
			g.now = it->t;
		snapshot(&g);
		d = it->job ? job_step(&g, it) : part_step(&g, it, k++);
		if (d) {
			it->t = g.now + d;
			heap_push(&h, it);
		} else {
			freelist[nfree++] = it;
		}
	}
	/* the srs goes last; then the process exits */
	g.now += MS;
	account(&g, INFL_PROBE_FREE);
	g.st.cur[CLS_srs][INFL_SLOT_NONE].count--;
	g.st.cur[CLS_srs][INFL_SLOT_NONE].bytes -= 6 << 20;
	g.st.total_bufs--;
	g.st.total_bytes -= 6 << 20;
	emit(&g, INFL_EV_FREE, CLS_srs, 0, INFL_SLOT_NONE, 64, 6 << 20, 0);
	g.now += MS;
	g.st.exited = 1;
	g.st.exit_ns = g.now;
	emit(&g, INFL_EV_EXIT, 0, 0, INFL_SLOT_NONE, g.st.total_bytes, g.st.total_bufs, 0);
	e = (struct rec_end_info){
		.mono_ns = g.now + MS, .wall_ns = 1700000000000000000ull + (g.now + MS - SCRIPT_T0),
		.exit_status = 0, .events = rec_writer__events(g.w), .nprocs = 1,
		.pids = &g.pid, .procs = &g.st,
	};
	rec_writer__end(g.w, &e);
	err = rec_writer__close(g.w);
	if (err) {
		fprintf(stderr, "rec_gen: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	fprintf(stderr, "rec_gen: %llu proof jobs, %llu events, peak %llu bytes\n",
		(unsigned long long)jobs, (unsigned long long)e.events,
		(unsigned long long)g.st.peak_bytes);
	return 0;
}
