// SPDX-License-Identifier: BSD-2-Clause
/*
 * The recording format: a scripted recording read back field for field; every truncation
 * and every single-bit flip refused with an error (never a crash, never a silent success);
 * the output file created without following symlinks and not world-writable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "check.h"
#include "model/timeline.h"
#include "recording/rec_format.h"
#include "recording/rec_reader.h"
#include "recording/rec_writer.h"
#include "scenario.h"

static unsigned char *file_bytes(int fd, size_t *len)
{
	struct stat st;
	unsigned char *p;

	fstat(fd, &st);
	*len = st.st_size;
	p = malloc(*len + 1);
	pread(fd, p, *len, 0);
	return p;
}

static void test_field_table(void)
{
	unsigned char covered[sizeof(struct infl_proc)] = { 0 };
	size_t holes = 0, twice = 0;

	for (size_t f = 0; f < rec_nfields; f++)
		for (size_t b = 0; b < rec_fields[f].elem_size * rec_fields[f].nelems; b++)
			if (covered[rec_fields[f].offset + b]++)
				twice++;
	/* the order's words, the copy's flag, the locked form's queue ends and the padding that
	 * lays the record on lines are mechanism, not counters */
	memset(covered + offsetof(struct infl_proc, peak_cap), 1, 4);
	memset(covered + offsetof(struct infl_proc, hits_done), 1, 8);
	memset(covered + offsetof(struct infl_proc, defer_tail), 1, 8);
	memset(covered + offsetof(struct infl_proc, defer_head), 1, 8);
	memset(covered + offsetof(struct infl_proc, peak_cap_acct), 1, 8);
	memset(covered + offsetof(struct infl_proc, peak_time_acct), 1, 8);
	memset(covered + offsetof(struct infl_proc, peak_time_ns), 1, 8);
	memset(covered + offsetof(struct infl_proc, peak_acct), 1, 8);
	memset(covered + offsetof(struct infl_proc, acct), 1, 8);
	memset(covered + offsetof(struct infl_proc, pad_a), 1, 4);
	memset(covered + offsetof(struct infl_proc, pad_c), 1, 4);
	memset(covered + offsetof(struct infl_proc, pad_line), 1,
	       sizeof(((struct infl_proc *)0)->pad_line));
	for (size_t b = 0; b < sizeof(covered); b++)
		holes += !covered[b];
	CHECK(!holes && !twice, "the tag table covers every counter of struct infl_proc once "
	      "(%zu bytes uncovered, %zu twice): a new field needs a new tag", holes, twice);
}

static unsigned char *scenario_bytes(struct script *s, unsigned opts, size_t *len)
{
	FILE *tmp = tmpfile();
	struct rec_writer *w;
	unsigned char *p;

	rec_writer__from_fd(fileno(tmp), &w);
	scenario_write(s, w, opts);
	CHECK(rec_writer__close(w) == 0, "the writer reports no error");
	p = file_bytes(fileno(tmp), len);
	fclose(tmp);
	return p;
}

struct seen {
	__u64 n, first_ts, first_bytes, last_type;
	__u64 snap_total, snap_owners3, snap_abc;
	int nsnap;
};

static void see_event(void *ctx, const struct infl_event *ev)
{
	struct seen *s = ctx;

	if (!s->n++) {
		s->first_ts = ev->ts_ns;
		s->first_bytes = ev->arg1;
	}
	s->last_type = ev->type;
}

static void see_snapshot(void *ctx, __u64 mono, __u32 pid, const struct infl_proc *st)
{
	struct seen *s = ctx;
	__u64 abc = 0;

	(void)mono;
	(void)pid;
	for (int sl = 0; sl < INFL_SLOTS; sl++)
		abc += st->cur[2][sl].bytes;
	if (++s->nsnap == 2) {
		s->snap_total = st->total_bytes;
		s->snap_owners3 = st->owners[3];
		s->snap_abc = abc;
	}
}

static const struct rec_visitor seen_visitor = { .event = see_event, .snapshot = see_snapshot };

static void test_roundtrip(void)
{
	struct seen seen = { 0 };
	struct rec_stream *rs;
	struct rec_item it;
	__u64 streamed = 0;
	static struct script s;
	char err[REC_ERR_LEN];
	struct recording *r;
	size_t len;
	unsigned char *d = scenario_bytes(&s, 0, &len);
	struct infl_proc a, b;

	CHECK(recording__read_mem(d, len, 0, &r, err) == 0, "the scenario reads back (%s)", err);
	if (!r)
		return;
	CHECK_EQ_U64(r->format_major, REC_FORMAT_MAJOR, "format major");
	CHECK(!strcmp(r->host, "testhost"), "host");
	CHECK(r->argc == 2 && !strcmp(r->argv[1], "--scripted"), "argv");
	CHECK(!strcmp(r->cmdline, "prover --scripted"), "command line joined: '%s'", r->cmdline);
	CHECK(!strcmp(r->binary, "/usr/bin/prover"), "binary");
	CHECK_EQ_U64(r->target_pid, SCENARIO_PID, "target pid");
	CHECK_EQ_U64(r->start_mono_ns, SCRIPT_T0, "start, monotonic");
	CHECK_EQ_U64(r->start_wall_ns, 1700000000000000000ull, "start, wall clock");
	CHECK_EQ_U64(r->interval_ns, 100000000, "snapshot interval");
	CHECK(!strcmp(r->names.cls[2], "abc") && !strcmp(r->names.stage[3], "chan_send") &&
	      !strcmp(r->names.provider, "prover"), "class and stage names");
	CHECK_EQ_U64(r->names.cls_declared, 0x1ff, "nine classes declared");
	CHECK_EQ_U64(r->names.terminal_mask, 1u << 8, "done is terminal");
	CHECK_EQ_U64(r->names.entry_mask, 3, "parse and wait_permit are entry stages");
	/* every probe event, 3 RSS events and the exit event */
	CHECK_EQ_U64(r->nevents, s.st.seq + 4, "every event read back");
	CHECK(recording__scan(r, &seen_visitor, &seen, err) == 0, "a second walk (%s)", err);
	CHECK_EQ_U64(seen.n, s.st.seq + 4, "the visitor sees every event");
	CHECK_EQ_U64(seen.first_ts, SCRIPT_T0, "first event's time");
	CHECK_EQ_U64(seen.first_bytes, 1000, "first event's size");
	CHECK_EQ_U64(seen.last_type, INFL_EV_EXIT, "last event is the exit");
	CHECK_EQ_U64(r->nsnaps, 2, "two snapshots");
	CHECK_EQ_U64(seen.snap_total, 1800, "snapshot at 199 ms: 1800 bytes tracked");
	CHECK_EQ_U64(seen.snap_owners3, 2, "snapshot at 199 ms: two owners in chan_send");
	CHECK_EQ_U64(seen.snap_abc, 600, "snapshot at 199 ms: abc 600 bytes");
	CHECK_EQ_U64(r->nrss, 2, "two statm samples");
	CHECK(r->nranges == 1 && r->ranges[0].pid == SCENARIO_PID &&
	      r->ranges[0].events == s.st.seq + 4, "one process's range, with its events");
	CHECK(rec_stream__open(r, SCENARIO_PID, &rs) == 0, "a stream of the process");
	while (rec_stream__next(rs, &it) == 1)
		streamed += !it.is_rss;
	rec_stream__free(rs);
	CHECK_EQ_U64(streamed, s.st.seq + 4, "the stream gives every event again");
	CHECK(r->has_end && r->nfinals == 1, "the end record with one process");
	CHECK_EQ_U64(r->exit_status, 0, "exit status");
	a = s.st;
	b = r->finals[0].st;
	a.peak_cap = b.peak_cap = 0;
	a.hits_done = b.hits_done = a.defer_tail = b.defer_tail = 0;
	a.defer_head = b.defer_head = a.peak_cap_acct = b.peak_cap_acct = 0;
	a.peak_acct = b.peak_acct = a.acct = b.acct = 0;
	a.peak_time_acct = b.peak_time_acct = a.peak_time_ns = b.peak_time_ns = 0;
	CHECK(!memcmp(&a, &b, sizeof(a)), "final counters read back byte for byte");
	CHECK_EQ_U64(b.peak_bytes, SCENARIO_PEAK, "final peak");
	CHECK_EQ_U64(b.unmatched_free[4].bytes, 50, "unmatched free of input");
	recording__free(r);
	free(d);
}

static void test_truncations_and_flips(void)
{
	static struct script s;
	char err[REC_ERR_LEN];
	struct recording *r;
	size_t len, silent = 0, partial_ok = 0, boundaries = 0, flips_ok = 0;
	int ret;
	unsigned char *d = scenario_bytes(&s, 0, &len);
	size_t off;

	for (size_t cut = 0; cut < len; cut++) {
		err[0] = 0;
		if (recording__read_mem(d, cut, 0, &r, err) == 0 || !err[0]) {
			silent++;
			recording__free(r);
		}
	}
	CHECK(!silent, "every one of %zu truncations refused with a message (%zu not)", len,
	      silent);
	/* record boundaries: --partial reads the complete records before the cut */
	for (off = REC_PREAMBLE_LEN; off < len;) {
		__u32 plen = d[off + 4] | d[off + 5] << 8 | d[off + 6] << 16 | d[off + 7] << 24;

		off += REC_FRAME_HEAD + plen + REC_FRAME_TAIL;
		if (off >= len)
			break;
		boundaries++;
		if (recording__read_mem(d, off, REC_READ_PARTIAL, &r, err) == 0) {
			partial_ok += !r->has_end;
			recording__free(r);
		}
	}
	CHECK(boundaries > 5 && partial_ok == boundaries, "a cut at each of %zu record "
	      "boundaries reads with REC_READ_PARTIAL (%zu did)", boundaries, partial_ok);
	recording__read_mem(d, len - 3, 0, &r, err);
	CHECK(strstr(err, "truncated") != NULL, "a cut mid-record says truncated: %s", err);
	/* a disk that filled up mid-record: every complete record before it is kept */
	{
		size_t kept = 0, cuts = 0;

		for (size_t cut = REC_PREAMBLE_LEN + 40; cut < len; cut += 7) {
			if (recording__read_mem(d, cut, REC_READ_PARTIAL, &r, err) == 0) {
				kept += r->cut || r->data_end == cut;
				cuts++;
				recording__free(r);
			}
		}
		CHECK(cuts > 10 && kept == cuts, "with REC_READ_PARTIAL a cut anywhere after the "
		      "header keeps the records before it (%zu of %zu)", kept, cuts);
		recording__read_mem(d, len - 3, REC_READ_PARTIAL, &r, err);
		CHECK(r && r->cut && strstr(r->cut_why, "truncated") && r->nevents == s.st.seq + 4,
		      "... and says what it set aside: %s", r ? r->cut_why : err);
		recording__free(r);
	}
	for (size_t i = 0; i < len; i++) {
		if (i == 10 || i == 11)
			continue; /* the minor version: any minor of major 1 reads */
		for (int bit = 0; bit < 8; bit++) {
			d[i] ^= 1u << bit;
			if (recording__read_mem(d, len, 0, &r, err) == 0) {
				flips_ok++;
				recording__free(r);
			}
			d[i] ^= 1u << bit;
		}
	}
	CHECK(!flips_ok, "every single-bit flip in %zu bytes refused (%zu read)", len, flips_ok);
	d[8] = 2;
	ret = recording__read_mem(d, len, 0, &r, err);
	CHECK(ret == -EPROTO && strstr(err, "format version 2."), "an unknown major version is refused: %s",
	      err);
	d[8] = 1;
	memcpy(d, "INFLREX\n", 8);
	ret = recording__read_mem(d, len, 0, &r, err);
	CHECK(ret == -EBADMSG && strstr(err, "magic"), "a foreign file is refused: %s", err);
	free(d);
}

/* A record of a type this reader does not know and a state field it does not know are
 * skipped: a newer minor version's additions. */
static void test_forward_compat(void)
{
	FILE *tmp = tmpfile();
	struct rec_writer *w;
	struct recording *r;
	char err[REC_ERR_LEN];
	static struct script s;
	unsigned char rec[8 + 3 + 4], *d;
	size_t len;
	__u32 crc;

	rec_writer__from_fd(fileno(tmp), &w);
	scenario_write(&s, w, 0);
	rec_writer__close(w);
	d = file_bytes(fileno(tmp), &len);
	fclose(tmp);
	/* insert an unknown record (type 99, payload 3 bytes) right after the header */
	{
		__u32 hlen = d[20] | d[21] << 8 | d[22] << 16 | d[23] << 24;
		size_t at = REC_PREAMBLE_LEN + REC_FRAME_HEAD + hlen + REC_FRAME_TAIL;
		unsigned char *n = malloc(len + sizeof(rec));

		memcpy(rec, (unsigned char[]){ 99, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3 }, 11);
		crc = rec_format__crc32(0, rec, 11);
		for (int i = 0; i < 4; i++)
			rec[11 + i] = crc >> (8 * i);
		memcpy(n, d, at);
		memcpy(n + at, rec, sizeof(rec));
		memcpy(n + at + sizeof(rec), d + at, len - at);
		int ret = recording__read_mem(n, len + sizeof(rec), 0, &r, err);

		CHECK(ret == 0 && r->nevents == s.st.seq + 4, "an unknown record type is skipped "
		      "(%s)", err);
		recording__free(r);
		free(n);
	}
	free(d);
}

static void test_create_policy(void)
{
	char dir[] = "/tmp/inflight-rec-XXXXXX", path[256], link[256], target[256];
	struct rec_writer *w;
	struct stat st;
	mode_t old = umask(022);
	int fd;

	mkdtemp(dir);
	snprintf(path, sizeof(path), "%s/a.rec", dir);
	snprintf(link, sizeof(link), "%s/link.rec", dir);
	snprintf(target, sizeof(target), "%s/precious", dir);
	CHECK(rec_writer__create(path, 0, &w) == 0, "creates a new file");
	rec_writer__close(w);
	stat(path, &st);
	CHECK_EQ_U64(st.st_mode & 0777, 0640, "mode 0640: not world-readable nor writable");
	CHECK(rec_writer__create(path, 0, &w) == -EEXIST, "an existing file is not overwritten");
	CHECK(rec_writer__create(path, REC_W_FORCE, &w) == 0, "--force replaces it");
	rec_writer__close(w);
	fd = open(target, O_CREAT | O_WRONLY, 0600);
	write(fd, "keep", 4);
	close(fd);
	symlink(target, link);
	CHECK(rec_writer__create(link, 0, &w) == -ELOOP, "a symlink is not followed (ELOOP: it says so)");
	CHECK(rec_writer__create(link, REC_W_FORCE, &w) == 0 && lstat(link, &st) == 0 &&
	      S_ISREG(st.st_mode), "--force replaces the symlink itself");
	rec_writer__close(w);
	stat(target, &st);
	CHECK_EQ_U64(st.st_size, 4, "the symlink's target is untouched");
	unlink(path);
	unlink(link);
	unlink(target);
	rmdir(dir);
	umask(old);
}

/* Hostile strings from a crafted recording: names outside [A-Za-z0-9_.-] are refused;
 * comm, argv, host, binary and tool are kept as they are (every output escapes them,
 * tests/t_record_render.sh; JSON keeps them exactly). */
static void test_hostile_strings(void)
{
	char path[] = "/tmp/test_rec_hostile.XXXXXX";
	char *argv[] = { "prover", "--x\n\x1b[2Jowned", NULL };
	struct infl_names n;
	struct rec_writer *w;
	struct recording *r = NULL;
	char err[REC_ERR_LEN];
	int fd, ret;

	for (int bad = 0; bad < 2; bad++) {
		struct rec_header_info h = {
			.names = &n, .host = "h\x1b]0;title\x07", .argc = 2, .argv = argv,
			.binary = "/bin/\xff\xfe", .mode = 2, .target_pid = 7, .tool = "t\x9b" "31m",
		};

		script_prover_names(&n);
		if (bad)
			strcpy(n.cls[2], "a;b\x1b");
		strcpy(path, "/tmp/test_rec_hostile.XXXXXX");
		fd = mkstemp(path);
		rec_writer__from_fd(fd, &w);
		rec_writer__header(w, &h);
		rec_writer__proc(w, 7, 1, "comm\x1b[31m", "prover\r\nfake line", 0, NULL);
		rec_writer__close(w);
		close(fd);
		ret = recording__read_file(path, REC_READ_PARTIAL, &r, err);
		unlink(path);
		if (bad) {
			CHECK(ret == -EBADMSG &&
			      strstr(err, "class 2: a name outside the contract's [A-Za-z0-9_.:-]"),
			      "a class name outside the contract's characters is refused: %s", err);
			continue;
		}
		CHECK(ret == 0 && r, "a recording with hostile strings reads (%s)", err);
		if (!r)
			continue;
		CHECK(!strcmp(r->host, "h\x1b]0;title\x07") && !strcmp(r->argv[1], argv[1]) &&
		      !strcmp(r->binary, "/bin/\xff\xfe") && !strcmp(r->tool, "t\x9b" "31m"),
		      "host, argv, binary and tool kept byte for byte");
		CHECK(r->nprocs == 1 && !strcmp(r->procs[0].comm, "comm\x1b[31m") &&
		      !strcmp(r->procs[0].cmdline, "prover\r\nfake line"),
		      "comm and cmdline kept byte for byte");
		recording__free(r);
		r = NULL;
	}
}

/* A PROC record's words (1.2), and a 1.1 recording's PROC, which has none, still read. */
static void test_proc_words(void)
{
	char *argv[] = { "prover", "--pw", "10 12", NULL };
	struct rec_header_info h = { .host = "h", .binary = "/bin/prover", .mode = 1,
				     .tool = "t" };
	struct infl_names n;
	FILE *tmp = tmpfile();
	struct rec_writer *w;
	struct recording *r = NULL;
	char err[REC_ERR_LEN];
	unsigned char *d;
	size_t len, at = REC_PREAMBLE_LEN;
	int ret;

	script_prover_names(&n);
	h.names = &n;
	rec_writer__from_fd(fileno(tmp), &w);
	rec_writer__header(w, &h);
	rec_writer__proc(w, 7, 1, "prover", "prover --pw 10 12", 3, argv);
	rec_writer__close(w);
	d = file_bytes(fileno(tmp), &len);
	fclose(tmp);
	CHECK_EQ_U64(d[10] | d[11] << 8, REC_FORMAT_MINOR, "written as format 1.%d",
		     REC_FORMAT_MINOR);
	/* (no END record: read as a recording cut short) */
	ret = recording__read_mem(d, len, REC_READ_PARTIAL, &r, err);
	CHECK(ret == 0 && r->nprocs == 1 && r->procs[0].argc == 3 &&
	      !strcmp(r->procs[0].argv[2], "10 12") && !r->procs[0].argv[3],
	      "1.2: the words read back, a word with a space whole (%s)", err);
	recording__free(r);
	/* the same as 1.1 wrote it: minor 1, the PROC payload without its words */
	while (at + REC_FRAME_HEAD <= len && (d[at] | d[at + 1] << 8) != REC_PROC)
		at += REC_FRAME_HEAD + (d[at + 4] | d[at + 5] << 8 | d[at + 6] << 16) + REC_FRAME_TAIL;
	if (CHECK(at + REC_FRAME_HEAD < len, "the PROC record is found")) {
		__u32 plen = d[at + 4] | d[at + 5] << 8 | d[at + 6] << 16, crc;
		size_t words = 1 + 7 + 5 + 6; /* the count, then "prover", "--pw", "10 12" */

		memmove(d + at + REC_FRAME_HEAD + plen - words, d + at + REC_FRAME_HEAD + plen,
			len - (at + REC_FRAME_HEAD + plen));
		len -= words;
		plen -= words;
		d[at + 4] = plen & 0xff;
		d[at + 5] = plen >> 8 & 0xff;
		d[at + 6] = plen >> 16 & 0xff;
		crc = rec_format__crc32(0, d + at, REC_FRAME_HEAD + plen);
		for (int i = 0; i < 4; i++)
			d[at + REC_FRAME_HEAD + plen + i] = crc >> (8 * i);
		d[10] = 1;
		ret = recording__read_mem(d, len, REC_READ_PARTIAL, &r, err);
		CHECK(ret == 0 && r && r->nprocs == 1 && !r->procs[0].argv &&
		      !r->procs[0].argc && !strcmp(r->procs[0].cmdline, "prover --pw 10 12"),
		      "1.1: a PROC without words reads, its command line kept (%s)", err);
		recording__free(r);
	}
	free(d);
}

/* 1.3, a flight recorder's dump: DUMP and START read back, the carried state replayed as
 * the window's start (no probe hits, no seq gap, the kernel's figures matched), and a START
 * that claims more carried events than came before it refused. */
static void dump_write(struct rec_writer *w, __u64 start_seq, __u64 bufs)
{
	struct infl_names n;
	struct rec_header_info h = { .host = "h", .binary = "/bin/prover", .mode = 1,
				     .tool = "t", .start_mono_ns = 1000 };
	struct rec_dump_info d = { .trigger = "oom", .detail = "pid 7 chosen", .trigger_ns = 1500,
				   .window_ns = 1000, .ring_ns = 60, .after_ns = 2, .evicted_events = 40,
				   .number = 3, .refused = 1 };
	struct infl_event ev[] = {
		{ .ts_ns = 1000, .seq = 39, .pid = 7, .type = INFL_EV_ALLOC, .id = 2,
		  .flags = REC_EVF_CARRIED, .from_slot = INFL_SLOT_NONE, .arg0 = 0x10, .arg1 = 300,
		  .arg2 = 5 },
		{ .ts_ns = 1000, .seq = 40, .pid = 7, .type = INFL_EV_STAGE, .id = 2,
		  .flags = REC_EVF_CARRIED, .from_slot = INFL_SLOT_NONE, .arg0 = 5 },
		{ .ts_ns = 1200, .seq = 41, .pid = 7, .type = INFL_EV_ALLOC, .id = 1,
		  .from_slot = INFL_SLOT_NONE, .arg0 = 0x20, .arg1 = 700 },
	};
	static struct infl_proc st;
	__u32 pid = 7;
	struct rec_end_info e = { .mono_ns = 2000, .exit_status = -1, .nprocs = 1, .pids = &pid,
				  .procs = &st };

	script_prover_names(&n);
	h.names = &n;
	memset(&st, 0, sizeof(st));
	st.seq = 41;
	st.cur[2][2] = (struct infl_cell){ 1, 300 };
	st.cur[1][INFL_SLOT_NONE] = (struct infl_cell){ 1, 700 };
	st.owners[2] = 1;
	st.total_bytes = 1000;
	st.total_bufs = 2;
	st.peak_bytes = 1000;
	st.peak_bufs = 2;
	st.peak_seq = 41;
	st.peak_ns = 1200;
	st.peak[2][2] = st.cur[2][2];
	st.peak[1][INFL_SLOT_NONE] = st.cur[1][INFL_SLOT_NONE];
	st.peak_owners[2] = 1;
	st.owners_started = 9; /* the process's lifetime: not the window's */
	rec_writer__header(w, &h);
	rec_writer__dump(w, &d);
	rec_writer__proc(w, 7, 1000, "prover", "prover", 0, NULL);
	rec_writer__start(w, 1000, 7, start_seq, bufs, 1);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		rec_writer__event(w, &ev[i]);
	rec_writer__end(w, &e);
}

static void test_dump_records(void)
{
	FILE *tmp = tmpfile();
	struct rec_writer *w;
	struct recording *r = NULL;
	struct timeline *tl = NULL;
	char err[REC_ERR_LEN], what[160];
	unsigned char *d;
	size_t len;
	int ret;

	rec_writer__from_fd(fileno(tmp), &w);
	dump_write(w, 40, 1);
	rec_writer__close(w);
	d = file_bytes(fileno(tmp), &len);
	fclose(tmp);
	ret = recording__read_mem(d, len, 0, &r, err);
	if (CHECK(ret == 0, "a dump reads (%s)", err)) {
		CHECK(r->has_dump && !strcmp(r->dump.trigger, "oom") &&
		      !strcmp(r->dump.detail, "pid 7 chosen") && r->dump.trigger_ns == 1500 &&
		      r->dump.window_ns == 1000 && r->dump.evicted_events == 40 &&
		      r->dump.number == 3 && r->dump.refused == 1, "DUMP: every field back");
		CHECK(r->nstarts == 1 && recording__start(r, 7) &&
		      recording__start(r, 7)->seq == 40 && recording__start(r, 7)->bufs == 1 &&
		      recording__start(r, 7)->owners == 1 && !recording__start(r, 8),
		      "START: every field back");
		ret = timeline__build(r, &tl, err);
	}
	if (CHECK(ret == 0 && tl, "its timeline builds (%s)", err)) {
		const struct tl_proc *p = timeline__proc(tl, 7);

		CHECK(p && p->window_seq == 40 && p->carried_bufs == 1 && p->carried_owners == 1,
		      "the carried state is counted as such");
		CHECK(p && p->events[INFL_EV_ALLOC] == 1 && p->events[INFL_EV_STAGE] == 0 &&
		      !p->seq_gaps && !p->diverged && p->started == 0,
		      "carried events are no probe hits, and leave no seq gap");
		CHECK(p && p->final.cur[2][2].bytes == 300 && p->final.owners[2] == 1 &&
		      p->peak_bytes == 1000 && p->peak_seq == 41,
		      "the carried owner holds its buffer in its stage; the peak is the window's");
		CHECK(p && !timeline__check(p, what, sizeof(what)),
		      "the window matches the kernel's counters (%s)", what);
	}
	timeline__free(tl);
	recording__free(r);
	free(d);
	/* more carried events than events before the start: corrupt */
	tmp = tmpfile();
	rec_writer__from_fd(fileno(tmp), &w);
	dump_write(w, 1, 1);
	rec_writer__close(w);
	d = file_bytes(fileno(tmp), &len);
	fclose(tmp);
	r = NULL;
	ret = recording__read_mem(d, len, 0, &r, err);
	CHECK(ret == -EBADMSG && strstr(err, "2 carried events after event 1"),
	      "a START that cannot be is refused (%s)", err);
	recording__free(r);
	free(d);
}

/*
 * 1.4: names qualified by their image. The header keeps what a 1.3 reader takes (the name
 * after the qualifier); the NAMES record that follows, and a later one, hold the qualified
 * names, and the last one holds.
 */
static void test_qualified_names(void)
{
	struct rec_header_info h = { .host = "h", .binary = "/bin/app", .mode = 1, .tool = "t" };
	struct recording *r = NULL;
	struct infl_names n, later;
	FILE *tmp = tmpfile();
	struct rec_writer *w;
	char err[REC_ERR_LEN];
	unsigned char *d;
	size_t len, at = REC_PREAMBLE_LEN;
	int ret, names = 0;

	names__init(&n);
	n.contract_version = 1;
	snprintf(n.cls[0], sizeof(n.cls[0]), "input");
	snprintf(n.cls[3], sizeof(n.cls[3]), "libgpu.so:kbuf");
	n.cls_declared = 1 | 8;
	later = n;
	snprintf(later.cls[5], sizeof(later.cls[5]), "libaux.so:kbuf");
	later.cls_declared |= 32;
	h.names = &n;
	rec_writer__from_fd(fileno(tmp), &w);
	rec_writer__header(w, &h);
	rec_writer__names(w, &later);
	rec_writer__close(w);
	d = file_bytes(fileno(tmp), &len);
	fclose(tmp);
	while (at + REC_FRAME_HEAD <= len) {
		__u32 plen = d[at + 4] | d[at + 5] << 8 | d[at + 6] << 16;

		if ((d[at] | d[at + 1] << 8) == REC_HEADER)
			CHECK(!memmem(d + at, plen + REC_FRAME_HEAD, "libgpu.so:", 10) &&
				      memmem(d + at, plen + REC_FRAME_HEAD, "kbuf", 4),
			      "the header holds the name a 1.3 reader takes (kbuf)");
		names += (d[at] | d[at + 1] << 8) == REC_NAMES;
		at += REC_FRAME_HEAD + plen + REC_FRAME_TAIL;
	}
	CHECK_EQ_U64(names, 2, "a NAMES record after the header, and the later one");
	ret = recording__read_mem(d, len, REC_READ_PARTIAL, &r, err);
	CHECK(ret == 0 && !strcmp(r->names.cls[3], "libgpu.so:kbuf") &&
		      !strcmp(r->names.cls[5], "libaux.so:kbuf") && r->names.cls_declared == 41,
	      "read back: the last NAMES record's qualified names (%s)", err);
	recording__free(r);
	free(d);
}

int main(void)
{
	test_dump_records();
	test_qualified_names();
	test_proc_words();
	test_field_table();
	test_roundtrip();
	test_truncations_and_flips();
	test_forward_compat();
	test_hostile_strings();
	test_create_policy();
	return check_done();
}
