// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reads recordings: the preamble and header at open, then one checked walk over the records
 * (recording__scan) that hands their contents to a visitor and keeps only per-process facts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/errors.h"
#include "recording/rec_decode.h"
#include "recording/rec_format.h"
#include "recording/rec_reader.h"
#include "recording/rec_source.h"
#include "util/grow.h"

static bool preamble_ok(const unsigned char *pre, size_t n)
{
	return n >= REC_MAGIC_LEN && !memcmp(pre, REC_MAGIC, REC_MAGIC_LEN);
}

/* "not an inflight recording" with what the file starts with (like hexdump -C's column) */
static void bad_magic(char *err, const unsigned char *pre, size_t n)
{
	char shown[9] = { 0 };

	if (!n) {
		snprintf(err, REC_ERR_LEN, "not an inflight recording: the file is empty");
		return;
	}
	for (size_t i = 0; i < n && i < 8; i++)
		shown[i] = pre[i] >= 0x20 && pre[i] < 0x7f && pre[i] != '"' && pre[i] != '\\' ?
			   (char)pre[i] : '.';
	snprintf(err, REC_ERR_LEN, "not an inflight recording (bad magic: it starts with "
		 "\"%s\", not \"INFLREC\")", shown);
}

/* The names part of the header, and of a NAMES record (1.4). */
static void parse_names(struct cur *c, struct infl_names *n)
{
	__u64 count, id;
	char what[32];

	names__init(n);
	n->contract_version = dec__max(c, 0xffff, "contract version");
	dec__name(c, n->provider, sizeof(n->provider), true, "the provider");
	count = dec__max(c, INFL_MAX_CLASSES, "class count");
	for (__u64 i = 0; i < count && !c->bad; i++) {
		id = dec__max(c, INFL_MAX_CLASSES - 1, "class id");
		if (n->cls_declared & (1u << id))
			dec__corrupt(c, "class %llu named twice", (unsigned long long)id);
		snprintf(what, sizeof(what), "class %llu", (unsigned long long)id);
		dec__name(c, n->cls[id], sizeof(n->cls[id]), false, what);
		n->cls_declared |= 1u << id;
	}
	count = dec__max(c, INFL_MAX_STAGES, "stage count");
	for (__u64 i = 0; i < count && !c->bad; i++) {
		id = dec__max(c, INFL_MAX_STAGES - 1, "stage id");
		if (n->stage_declared & (1u << id))
			dec__corrupt(c, "stage %llu named twice", (unsigned long long)id);
		snprintf(what, sizeof(what), "stage %llu", (unsigned long long)id);
		dec__name(c, n->stage[id], sizeof(n->stage[id]), false, what);
		n->stage_declared |= 1u << id;
	}
	n->entry_mask = dec__max(c, 0xffff, "entry stage mask");
	n->terminal_mask = dec__max(c, 0xffff, "terminal stage mask");
	if (n->entry_mask & n->terminal_mask)
		dec__corrupt(c, "a stage is both entry and terminal");
}

static void parse_header(struct cur *c, struct recording *r)
{
	size_t len;

	parse_names(c, &r->names);
	r->host = dec__str(c, "host");
	r->argc = dec__max(c, REC_MAX_ARGS, "argument count");
	r->argv = calloc(r->argc + 1, sizeof(*r->argv));
	if (!r->argv) {
		dec__corrupt(c, "out of memory");
		return;
	}
	len = 1;
	for (int i = 0; i < r->argc && !c->bad; i++) {
		r->argv[i] = dec__str(c, "argument");
		len += r->argv[i] ? strlen(r->argv[i]) + 1 : 0;
	}
	r->cmdline = calloc(1, len);
	for (int i = 0; r->cmdline && i < r->argc && r->argv[i]; i++) {
		if (i)
			strcat(r->cmdline, " ");
		strcat(r->cmdline, r->argv[i]);
	}
	r->binary = dec__str(c, "binary");
	r->mode = dec__max(c, 2, "attach mode");
	r->target_pid = dec__max(c, 0xffffffffu, "target pid");
	r->start_wall_ns = dec__varint(c);
	r->start_mono_ns = dec__varint(c);
	r->interval_ns = dec__varint(c);
	r->tool = dec__str(c, "tool");
	if (!c->bad && (!r->host || !r->cmdline || !r->binary || !r->tool))
		dec__corrupt(c, "out of memory");
}

/* ---- the walk ---- */

struct frame {
	__u32 type, len;
	const unsigned char *payload;
};

/* Reads the frame at pos: 1 and the frame, 0 at the end of the file, -EBADMSG (err says
 * why: truncated or corrupt) or -errno. */
static int read_frame(struct rec_rd *rd, __u64 pos, size_t record, bool crc_check,
		      struct frame *fr, char *err)
{
	const unsigned char *p;
	long long got = rec_rd__get(rd, pos, REC_FRAME_HEAD, &p);
	__u32 crc;

	if (got < 0) {
		snprintf(err, REC_ERR_LEN, "read error at offset %llu: %s",
			 (unsigned long long)pos, strerror((int)-got));
		return (int)got;
	}
	if (!got)
		return 0;
	if (got < REC_FRAME_HEAD + 0) {
		snprintf(err, REC_ERR_LEN, "truncated: %lld stray bytes after record %zu at "
			 "offset %llu", got, record - 1, (unsigned long long)pos);
		return -EBADMSG;
	}
	fr->type = p[0] | p[1] << 8;
	fr->len = (__u32)p[4] | (__u32)p[5] << 8 | (__u32)p[6] << 16 | (__u32)p[7] << 24;
	if (p[2] || p[3] || fr->len > REC_MAX_PAYLOAD) {
		snprintf(err, REC_ERR_LEN, "corrupt record %zu at offset %llu: bad frame (type "
			 "%u, length %u)", record, (unsigned long long)pos, fr->type, fr->len);
		return -EBADMSG;
	}
	got = rec_rd__get(rd, pos, REC_FRAME_HEAD + fr->len + REC_FRAME_TAIL, &p);
	if (got < 0) {
		snprintf(err, REC_ERR_LEN, "read error at offset %llu: %s",
			 (unsigned long long)pos, strerror((int)-got));
		return (int)got;
	}
	if (got < REC_FRAME_HEAD + fr->len + REC_FRAME_TAIL) {
		snprintf(err, REC_ERR_LEN, "truncated: record %zu at offset %llu needs %u bytes, "
			 "%lld left", record, (unsigned long long)pos,
			 fr->len + REC_FRAME_HEAD + REC_FRAME_TAIL, got);
		return -EBADMSG;
	}
	crc = p[8 + fr->len] | p[9 + fr->len] << 8 | p[10 + fr->len] << 16 |
	      (__u32)p[11 + fr->len] << 24;
	if (crc_check && crc != rec_format__crc32(0, p, REC_FRAME_HEAD + fr->len)) {
		snprintf(err, REC_ERR_LEN, "corrupt record %zu at offset %llu: checksum mismatch",
			 record, (unsigned long long)pos);
		return -EBADMSG;
	}
	fr->payload = p + REC_FRAME_HEAD;
	return 1;
}

struct scan {
	struct recording *r;
	const struct rec_visitor *v;
	void *ctx;
	struct infl_proc *scratch;
	size_t cap_procs, cap_ranges, cap_lost, cap_ooms, cap_starts;
	/* pid -> index in r->ranges (open addressing), and the last one found */
	__u32 *slot_pid, *slot_idx;
	size_t slots;
	size_t last;
	__u64 rec_start, rec_end; /* the record being read */
	bool oom;
};

/* element n of *arr, zeroed, the array grown when full */
static void *grow(void **arr, size_t n, size_t *cap, size_t elem)
{
	char *a = grow_array(*arr, cap, n, elem);

	if (!a)
		return NULL;
	*arr = a;
	memset(a + n * elem, 0, elem);
	return a + n * elem;
}

static size_t pid_hash(__u32 pid, size_t slots)
{
	return (size_t)((pid * 0x9e3779b1u) >> 8) & (slots - 1);
}

/* The range of `pid`, created at its first sight; NULL when out of memory. */
static struct rec_range *range_of(struct scan *s, __u32 pid)
{
	struct recording *r = s->r;
	struct rec_range *rg;
	size_t h;

	if (s->last < r->nranges && r->ranges[s->last].pid == pid)
		return &r->ranges[s->last];
	if ((r->nranges + 1) * 2 > s->slots) {
		size_t n = s->slots ? s->slots * 2 : 64;
		__u32 *sp = calloc(n, sizeof(*sp)), *si = calloc(n, sizeof(*si));

		if (!sp || !si) {
			free(sp);
			free(si);
			return NULL;
		}
		for (size_t i = 0; i < r->nranges; i++) {
			for (h = pid_hash(r->ranges[i].pid, n); si[h]; h = (h + 1) & (n - 1))
				;
			sp[h] = r->ranges[i].pid;
			si[h] = i + 1;
		}
		free(s->slot_pid);
		free(s->slot_idx);
		s->slot_pid = sp;
		s->slot_idx = si;
		s->slots = n;
	}
	for (h = pid_hash(pid, s->slots); s->slot_idx[h]; h = (h + 1) & (s->slots - 1)) {
		if (s->slot_pid[h] == pid) {
			s->last = s->slot_idx[h] - 1;
			return &r->ranges[s->last];
		}
	}
	rg = grow((void **)&r->ranges, r->nranges, &s->cap_ranges, sizeof(*rg));
	if (!rg)
		return NULL;
	rg->pid = pid;
	rg->first = s->rec_start;
	s->slot_pid[h] = pid;
	s->slot_idx[h] = ++r->nranges;
	s->last = r->nranges - 1;
	return rg;
}

static void on_event(void *ctx, const struct infl_event *ev)
{
	struct scan *s = ctx;
	struct rec_range *rg = range_of(s, ev->pid);

	if (!rg) {
		s->oom = true;
		return;
	}
	rg->end = s->rec_end;
	rg->events++;
	s->r->nevents++;
	if (ev->ts_ns > s->r->max_ts)
		s->r->max_ts = ev->ts_ns;
	if (s->v && s->v->event)
		s->v->event(s->ctx, ev);
}

static void parse_proc(struct cur *c, struct scan *s)
{
	struct recording *r = s->r;
	struct rec_proc_info *p = grow((void **)&r->procs, r->nprocs, &s->cap_procs, sizeof(*p));

	if (!p) {
		dec__corrupt(c, "out of memory");
		return;
	}
	r->nprocs++;
	p->pid = dec__max(c, 0xffffffffu, "pid");
	p->mono_ns = dec__varint(c);
	p->comm = dec__str(c, "comm");
	p->cmdline = dec__str(c, "cmdline");
	p->argc = 0;
	p->argv = NULL;
	if (c->bad || c->off == c->len)
		return; /* before 1.2: no words */
	p->argc = dec__max(c, REC_MAX_ARGS, "argument count");
	p->argv = calloc(p->argc + 1, sizeof(*p->argv));
	if (!p->argv) {
		dec__corrupt(c, "out of memory");
		return;
	}
	for (int i = 0; i < p->argc && !c->bad; i++)
		p->argv[i] = dec__str(c, "argument");
}

static void parse_snapshot(struct cur *c, struct scan *s)
{
	__u64 mono = dec__varint(c);
	__u32 pid = dec__max(c, 0xffffffffu, "pid");

	dec__state(c, s->scratch);
	if (c->bad)
		return;
	s->r->nsnaps++;
	if (mono > s->r->max_ts)
		s->r->max_ts = mono;
	if (s->v && s->v->snapshot)
		s->v->snapshot(s->ctx, mono, pid, s->scratch);
}

static void parse_rss(struct cur *c, struct scan *s)
{
	struct rec_rss rss;
	struct rec_range *rg;

	rss.mono_ns = dec__varint(c);
	rss.pid = dec__max(c, 0xffffffffu, "pid");
	rss.source = dec__max(c, REC_RSS_KERNEL, "rss source");
	rss.bytes = dec__varint(c);
	if (c->bad)
		return;
	rg = range_of(s, rss.pid);
	if (!rg) {
		dec__corrupt(c, "out of memory");
		return;
	}
	rg->end = s->rec_end;
	s->r->nrss++;
	if (s->v && s->v->rss)
		s->v->rss(s->ctx, &rss);
}

static void parse_lost(struct cur *c, struct scan *s)
{
	struct recording *r = s->r;
	__u64 mono = dec__varint(c);
	__u32 pid = dec__max(c, 0xffffffffu, "pid");
	__u32 kind = dec__max(c, REC_LOST_USER, "lost kind");
	__u64 count = dec__varint(c);
	struct rec_lost *l = NULL;

	if (c->bad)
		return;
	for (size_t i = 0; i < r->nlost && !l; i++)
		if (r->lost[i].pid == pid && r->lost[i].kind == kind)
			l = &r->lost[i];
	if (!l) {
		l = grow((void **)&r->lost, r->nlost, &s->cap_lost, sizeof(*l));
		if (!l) {
			dec__corrupt(c, "out of memory");
			return;
		}
		r->nlost++;
		l->mono_ns = mono;
		l->pid = pid;
		l->kind = kind;
	}
	l->count += count;
}

static void parse_oom(struct cur *c, struct scan *s)
{
	struct recording *r = s->r;
	struct rec_oom *o = grow((void **)&r->ooms, r->nooms, &s->cap_ooms, sizeof(*o));

	if (!o) {
		dec__corrupt(c, "out of memory");
		return;
	}
	o->k.ns = dec__varint(c);
	o->pid = dec__max(c, 0xffffffffu, "pid");
	o->k.tid = dec__max(c, 0xffffffffu, "tid");
	o->k.seq = dec__varint(c);
	o->k.tracked_bytes = dec__varint(c);
	o->k.tracked_bufs = dec__varint(c);
	o->k.rss_bytes = dec__varint(c);
	if (!c->bad)
		r->nooms++;
}

static void parse_start(struct cur *c, struct scan *s)
{
	struct recording *r = s->r;
	struct rec_start *st = grow((void **)&r->starts, r->nstarts, &s->cap_starts, sizeof(*st));

	if (!st) {
		dec__corrupt(c, "out of memory");
		return;
	}
	st->mono_ns = dec__varint(c);
	st->pid = dec__max(c, 0xffffffffu, "pid");
	st->seq = dec__varint(c);
	st->bufs = dec__varint(c);
	st->owners = dec__varint(c);
	if (!c->bad && st->bufs + st->owners > st->seq)
		dec__corrupt(c, "start of pid %u: %llu carried events after event %llu", st->pid,
			    (unsigned long long)(st->bufs + st->owners),
			    (unsigned long long)st->seq);
	if (!c->bad && recording__start(r, st->pid))
		dec__corrupt(c, "a second start record for pid %u", st->pid);
	if (!c->bad)
		r->nstarts++;
}

static void parse_dump(struct cur *c, struct recording *r)
{
	struct rec_dump *d = &r->dump;

	if (r->has_dump) {
		dec__corrupt(c, "a second dump record");
		return;
	}
	d->trigger = dec__str(c, "trigger");
	d->detail = dec__str(c, "trigger detail");
	d->trigger_ns = dec__varint(c);
	d->window_ns = dec__varint(c);
	d->ring_ns = dec__varint(c);
	d->after_ns = dec__varint(c);
	d->evicted_events = dec__varint(c);
	d->number = dec__varint(c);
	d->refused = dec__varint(c);
	r->has_dump = !c->bad;
}

static void parse_end(struct cur *c, struct recording *r)
{
	__u64 n;

	r->end_mono_ns = dec__varint(c);
	r->end_wall_ns = dec__varint(c);
	r->exit_status = dec__unzigzag(dec__varint(c));
	r->end_events = dec__varint(c);
	r->end_user_lost = dec__varint(c);
	/* every process costs at least two bytes (pid, field count) */
	n = dec__max(c, (c->len - c->off) / 2, "process count");
	if (c->bad)
		return;
	r->finals = calloc(n ? n : 1, sizeof(*r->finals));
	if (!r->finals) {
		dec__corrupt(c, "out of memory");
		return;
	}
	for (__u64 i = 0; i < n && !c->bad; i++) {
		r->finals[i].pid = dec__max(c, 0xffffffffu, "pid");
		dec__state(c, &r->finals[i].st);
		r->nfinals++;
	}
	if (!c->bad && r->end_mono_ns > r->max_ts)
		r->max_ts = r->end_mono_ns;
	r->has_end = !c->bad;
}

static void body_reset(struct recording *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		free(r->procs[i].comm);
		free(r->procs[i].cmdline);
		for (int k = 0; r->procs[i].argv && k < r->procs[i].argc; k++)
			free(r->procs[i].argv[k]);
		free(r->procs[i].argv);
	}
	free(r->procs);
	free(r->ranges);
	free(r->lost);
	free(r->finals);
	free(r->ooms);
	r->ooms = NULL;
	r->nooms = 0;
	free(r->starts);
	r->starts = NULL;
	r->nstarts = 0;
	free(r->dump.trigger);
	free(r->dump.detail);
	memset(&r->dump, 0, sizeof(r->dump));
	r->has_dump = false;
	r->procs = NULL;
	r->ranges = NULL;
	r->lost = NULL;
	r->finals = NULL;
	r->nprocs = r->nranges = r->nlost = r->nfinals = 0;
	r->nevents = r->nsnaps = r->nrss = 0;
	r->max_ts = 0;
	r->has_end = false;
	r->cut = false;
	r->cut_why[0] = 0;
	r->end_mono_ns = r->end_wall_ns = r->end_events = r->end_user_lost = 0;
	r->exit_status = -1;
}

/* One record of the body; false (and err set) when it fails its check. */
static bool body_record(struct scan *s, const struct frame *fr, __u64 pos, char *err)
{
	struct recording *r = s->r;
	struct cur c = { .p = fr->payload, .len = fr->len, .err = err,
			 .at = pos + REC_FRAME_HEAD, .record = r->nrecords + 1 };

	s->rec_start = pos;
	s->rec_end = pos + REC_FRAME_HEAD + fr->len + REC_FRAME_TAIL;
	if (r->has_end) {
		dec__corrupt(&c, "record after the end record");
		return false;
	}
	switch (fr->type) {
	case REC_HEADER:
		dec__corrupt(&c, "a second header");
		break;
	case REC_PROC:
		parse_proc(&c, s);
		break;
	case REC_EVENTS:
		dec__events(&c, on_event, s);
		if (s->oom)
			dec__corrupt(&c, "out of memory");
		break;
	case REC_SNAPSHOT:
		parse_snapshot(&c, s);
		break;
	case REC_RSS:
		parse_rss(&c, s);
		break;
	case REC_LOST:
		parse_lost(&c, s);
		break;
	case REC_END:
		parse_end(&c, r);
		break;
	case REC_OOM:
		parse_oom(&c, s);
		break;
	case REC_START:
		parse_start(&c, s);
		break;
	case REC_DUMP:
		parse_dump(&c, r);
		break;
	case REC_NAMES: {
		struct infl_names n;

		parse_names(&c, &n);
		if (!c.bad)
			r->names = n;
		break;
	}
	default:
		break; /* a record type of a newer minor version */
	}
	return !c.bad;
}

int recording__scan(struct recording *r, const struct rec_visitor *v, void *ctx,
	     char err[REC_ERR_LEN])
{
	struct scan s = { .r = r, .v = v, .ctx = ctx, .last = SIZE_MAX };
	bool partial = r->flags & REC_READ_PARTIAL;
	__u64 pos = r->header_end;
	struct rec_rd rd;
	int ret = 0;

	err[0] = 0;
	body_reset(r);
	r->nrecords = 1;
	s.scratch = malloc(sizeof(*s.scratch));
	if (!s.scratch) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	rec_rd__init(&rd, r->src);
	for (;;) {
		struct frame fr;
		int k = read_frame(&rd, pos, r->nrecords + 1, !(r->flags & REC_READ_NO_CRC), &fr,
				   err);

		if (!k)
			break;
		if (k == 1 && body_record(&s, &fr, pos, err)) {
			pos += REC_FRAME_HEAD + fr.len + REC_FRAME_TAIL;
			r->nrecords++;
			continue;
		}
		ret = k < 0 && k != -EBADMSG ? k : -EBADMSG;
		if (partial && ret == -EBADMSG && !s.oom) {
			/* keep what came before the first bad record; say what was set aside */
			r->cut = true;
			snprintf(r->cut_why, sizeof(r->cut_why), "%s", err);
			err[0] = 0;
			ret = 0;
		}
		break;
	}
	r->data_end = pos;
	if (!ret && !r->has_end && !partial) {
		snprintf(err, REC_ERR_LEN, "truncated: no end record after %zu records (the "
			 "recording was interrupted)", r->nrecords);
		ret = -EBADMSG;
	}
	rec_rd__free(&rd);
	free(s.scratch);
	free(s.slot_pid);
	free(s.slot_idx);
	r->scanned = !ret;
	return ret;
}

/* ---- open ---- */

static int open_common(struct recording *r, const unsigned char *pre, size_t npre,
		       char *err)
{
	unsigned major, minor;
	struct rec_rd rd;
	struct frame fr;
	int k;

	if (!preamble_ok(pre, npre) || npre < REC_PREAMBLE_LEN) {
		if (preamble_ok(pre, npre))
			snprintf(err, REC_ERR_LEN, "truncated: %zu bytes, shorter than the "
				 "preamble", npre);
		else
			bad_magic(err, pre, npre);
		return -EBADMSG;
	}
	major = pre[8] | pre[9] << 8;
	minor = pre[10] | pre[11] << 8;
	if (major != REC_FORMAT_MAJOR) {
		snprintf(err, REC_ERR_LEN, "format version %u.%u; this inflight reads %u.x",
			 major, minor, REC_FORMAT_MAJOR);
		return -EPROTO;
	}
	if (pre[12] || pre[13] || pre[14] || pre[15]) {
		snprintf(err, REC_ERR_LEN, "corrupt preamble: reserved bytes are not zero");
		return -EBADMSG;
	}
	r->format_major = major;
	r->format_minor = minor;
	rec_rd__init(&rd, r->src);
	k = read_frame(&rd, REC_PREAMBLE_LEN, 1, !(r->flags & REC_READ_NO_CRC), &fr, err);
	if (k == 0) {
		snprintf(err, REC_ERR_LEN, "truncated: no header record");
		k = -EBADMSG;
	} else if (k == 1) {
		struct cur c = { .p = fr.payload, .len = fr.len, .err = err,
				 .at = REC_PREAMBLE_LEN + REC_FRAME_HEAD, .record = 1 };

		if (fr.type != REC_HEADER)
			dec__corrupt(&c, "the first record is not a header");
		else
			parse_header(&c, r);
		k = c.bad ? -EBADMSG : 0;
		r->header_end = REC_PREAMBLE_LEN + REC_FRAME_HEAD + fr.len + REC_FRAME_TAIL;
		r->data_end = r->header_end;
		r->nrecords = 1;
	}
	rec_rd__free(&rd);
	return k;
}

static struct recording *recording_new(unsigned flags)
{
	struct recording *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->src = calloc(1, sizeof(*r->src));
	if (!r->src) {
		free(r);
		return NULL;
	}
	r->src->fd = -1;
	r->flags = flags;
	r->exit_status = -1;
	return r;
}

int recording__open_mem(const void *data, size_t len, unsigned flags, struct recording **out,
		 char err[REC_ERR_LEN])
{
	struct recording *r = recording_new(flags);
	unsigned char pre[REC_PREAMBLE_LEN] = { 0 };
	int ret;

	*out = NULL;
	err[0] = 0;
	if (!r) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	rec_src__mem(r->src, data, len);
	memcpy(pre, data, len < sizeof(pre) ? len : sizeof(pre));
	r->file_bytes = len;
	ret = open_common(r, pre, len < sizeof(pre) ? len : sizeof(pre), err);
	if (ret) {
		recording__free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int recording__open_file(const char *path, unsigned flags, struct recording **out,
		  char err[REC_ERR_LEN])
{
	struct recording *r = recording_new(flags);
	unsigned char pre[REC_PREAMBLE_LEN] = { 0 };
	size_t npre = 0;
	int ret;

	*out = NULL;
	err[0] = 0;
	if (!r) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	ret = rec_src__open(path, r->src, pre, &npre, preamble_ok);
	if (ret == -EBADMSG)
		bad_magic(err, pre, npre);
	else if (ret)
		snprintf(err, REC_ERR_LEN, "%s", strerror(-ret));
	if (!ret) {
		r->file_bytes = r->src->len;
		ret = open_common(r, pre, npre, err);
	}
	if (ret) {
		recording__free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int recording__read_file(const char *path, unsigned flags, struct recording **out,
		  char err[REC_ERR_LEN])
{
	int ret = recording__open_file(path, flags, out, err);

	if (!ret)
		ret = recording__scan(*out, NULL, NULL, err);
	if (ret && *out) {
		recording__free(*out);
		*out = NULL;
	}
	return ret;
}

int recording__read_mem(const void *data, size_t len, unsigned flags, struct recording **out,
		 char err[REC_ERR_LEN])
{
	int ret = recording__open_mem(data, len, flags, out, err);

	if (!ret)
		ret = recording__scan(*out, NULL, NULL, err);
	if (ret && *out) {
		recording__free(*out);
		*out = NULL;
	}
	return ret;
}

int recording__complain(const char *path, int ret, const char *err)
{
	const char *hint = NULL;

	switch (ret) {
	case -ENOENT:
		hint = "check the path (inflight record -o FILE makes one)";
		break;
	case -EACCES:
	case -EPERM:
		hint = "recordings are created mode 0640: read it as its owner or a member of its "
		       "group (under sudo, record gives it to the user who ran sudo)";
		break;
	case -EISDIR:
		hint = "give a recording file, not a directory";
		break;
	case -EPROTO:
		hint = "it was written by a newer inflight: read it with that version";
		break;
	case -ENOMEM:
		hint = "free some memory and retry";
		break;
	case -EBADMSG:
		if (strstr(err, "not an inflight recording"))
			hint = "not a recording of `inflight record`";
		else if (strstr(err, "truncated") || strstr(err, "corrupt"))
			hint = "add --partial to read the complete records before this point";
		break;
	default:
		break;
	}
	return infl_err(EXIT_BAD_FILE, hint, "cannot read recording %s: %s", path, err);
}

int recording__open_or_complain(const char *path, unsigned flags, struct recording **out)
{
	char err[REC_ERR_LEN];
	int ret = recording__open_file(path, flags, out, err);

	return ret ? recording__complain(path, ret, err) : 0;
}

void recording__free(struct recording *r)
{
	if (!r)
		return;
	body_reset(r);
	free(r->host);
	for (int i = 0; r->argv && i < r->argc; i++)
		free(r->argv[i]);
	free(r->argv);
	free(r->cmdline);
	free(r->binary);
	free(r->tool);
	if (r->src)
		rec_src__close(r->src);
	free(r->src);
	free(r);
}

const struct infl_proc *recording__final(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nfinals; i++)
		if (r->finals[i].pid == pid)
			return &r->finals[i].st;
	return NULL;
}

const struct rec_oom *recording__oom(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nooms; i++)
		if (r->ooms[i].pid == pid)
			return &r->ooms[i];
	return NULL;
}

const struct rec_start *recording__start(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nstarts; i++)
		if (r->starts[i].pid == pid)
			return &r->starts[i];
	return NULL;
}

bool recording__dup_free(const struct recording *r)
{
	return r->format_minor >= 6;
}

const struct rec_proc_info *recording__proc(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

const struct rec_range *recording__range(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nranges; i++)
		if (r->ranges[i].pid == pid)
			return &r->ranges[i];
	return NULL;
}
