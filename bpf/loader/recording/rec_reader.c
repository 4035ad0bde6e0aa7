// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reads recordings. Every read goes through a bounds-checked cursor; a failed check sets
 * one error message (the first) and makes every later read return zero, so the parsers stay
 * linear and a corrupt file can never walk them out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "util/errors.h"
#include "recording/rec_format.h"
#include "recording/rec_reader.h"
#include "util/sanitize.h"

#define MAX_FILE_BYTES (4ull << 30) /* a recording larger than this is refused, not read */

struct cur {
	const unsigned char *p;
	size_t len, off;
	bool bad;
	char *err;     /* REC_ERR_LEN bytes */
	size_t at;     /* file offset of p[0], for messages */
	size_t record; /* record number, for messages */
};

static bool corrupt(struct cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool corrupt(struct cur *c, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (c->bad)
		return false;
	c->bad = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, REC_ERR_LEN, "corrupt record %zu at offset %zu: %s", c->record,
		 c->at + c->off, what);
	return false;
}

static bool need(struct cur *c, size_t n)
{
	if (c->bad)
		return false;
	if (c->len - c->off < n)
		return corrupt(c, "field runs past the end of its record");
	return true;
}

static __u64 get_le(struct cur *c, int bytes)
{
	__u64 v = 0;

	if (!need(c, bytes))
		return 0;
	for (int i = 0; i < bytes; i++)
		v |= (__u64)c->p[c->off + i] << (8 * i);
	c->off += bytes;
	return v;
}

static __u64 get_varint(struct cur *c)
{
	__u64 v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		__u8 b;

		if (!need(c, 1))
			return 0;
		b = c->p[c->off++];
		if (shift == 63 && b > 1)
			break;
		v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	corrupt(c, "varint longer than 64 bits");
	return 0;
}

static __u64 get_max(struct cur *c, __u64 max, const char *what)
{
	__u64 v = get_varint(c);

	if (v > max) {
		corrupt(c, "%s %llu out of range (max %llu)", what, (unsigned long long)v,
			(unsigned long long)max);
		return 0;
	}
	return v;
}

/* A string field as a new NUL-terminated copy (NUL bytes inside are refused). */
static char *get_str(struct cur *c, const char *what)
{
	size_t n = get_max(c, REC_MAX_STR, what);
	char *s;

	if (!need(c, n))
		return NULL;
	if (memchr(c->p + c->off, 0, n)) {
		corrupt(c, "%s contains a NUL byte", what);
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		corrupt(c, "out of memory");
		return NULL;
	}
	memcpy(s, c->p + c->off, n);
	s[n] = 0;
	c->off += n;
	return s;
}

/* A string field into a fixed array; `empty_ok` says whether "" is a valid value. */
static void str_into(struct cur *c, char *dst, size_t cap, bool empty_ok, const char *what)
{
	char *s = get_str(c, what);

	if (!s)
		return;
	if (strlen(s) >= cap || (!s[0] && !empty_ok))
		corrupt(c, "%s '%.40s' is empty or longer than %zu bytes", what, s, cap - 1);
	else
		strcpy(dst, s);
	free(s);
}

/* Appends one zeroed element to a growable array; NULL (and the cursor corrupt) on ENOMEM. */
static void *grow(struct cur *c, void **arr, size_t *n, size_t *cap, size_t elem)
{
	if (c->bad)
		return NULL;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *p = realloc(*arr, ncap * elem);

		if (!p) {
			corrupt(c, "out of memory");
			return NULL;
		}
		*arr = p;
		*cap = ncap;
	}
	memset((char *)*arr + *n * elem, 0, elem);
	return (char *)*arr + (*n)++ * elem;
}

struct caps {
	size_t procs, events, snaps, rss, lost;
};

static void parse_header(struct cur *c, struct recording *r)
{
	struct infl_names *n = &r->names;
	__u64 count, id;
	size_t len;

	names__init(n);
	n->contract_version = get_max(c, 0xffff, "contract version");
	str_into(c, n->provider, sizeof(n->provider), true, "provider");
	if (!c->bad && n->provider[0] && !san_name_ok(n->provider))
		corrupt(c, "a provider name outside the contract's [A-Za-z0-9_.-]");
	count = get_max(c, INFL_MAX_CLASSES, "class count");
	for (__u64 i = 0; i < count && !c->bad; i++) {
		id = get_max(c, INFL_MAX_CLASSES - 1, "class id");
		if (n->cls_declared & (1u << id))
			corrupt(c, "class %llu named twice", (unsigned long long)id);
		str_into(c, n->cls[id], sizeof(n->cls[id]), false, "class name");
		if (!c->bad && !san_name_ok(n->cls[id]))
			corrupt(c, "class %llu: a name outside the contract's [A-Za-z0-9_.-]",
				(unsigned long long)id);
		n->cls_declared |= 1u << id;
	}
	count = get_max(c, INFL_MAX_STAGES, "stage count");
	for (__u64 i = 0; i < count && !c->bad; i++) {
		id = get_max(c, INFL_MAX_STAGES - 1, "stage id");
		if (n->stage_declared & (1u << id))
			corrupt(c, "stage %llu named twice", (unsigned long long)id);
		str_into(c, n->stage[id], sizeof(n->stage[id]), false, "stage name");
		if (!c->bad && !san_name_ok(n->stage[id]))
			corrupt(c, "stage %llu: a name outside the contract's [A-Za-z0-9_.-]",
				(unsigned long long)id);
		n->stage_declared |= 1u << id;
	}
	n->entry_mask = get_max(c, 0xffff, "entry stage mask");
	n->terminal_mask = get_max(c, 0xffff, "terminal stage mask");
	if (n->entry_mask & n->terminal_mask)
		corrupt(c, "a stage is both entry and terminal");
	r->host = get_str(c, "host");
	r->argc = get_max(c, REC_MAX_ARGS, "argument count");
	r->argv = calloc(r->argc + 1, sizeof(*r->argv));
	if (!r->argv) {
		corrupt(c, "out of memory");
		return;
	}
	len = 1;
	for (int i = 0; i < r->argc && !c->bad; i++) {
		r->argv[i] = get_str(c, "argument");
		len += r->argv[i] ? strlen(r->argv[i]) + 1 : 0;
	}
	r->cmdline = calloc(1, len);
	for (int i = 0; r->cmdline && i < r->argc && r->argv[i]; i++) {
		if (i)
			strcat(r->cmdline, " ");
		strcat(r->cmdline, r->argv[i]);
	}
	r->binary = get_str(c, "binary");
	r->mode = get_max(c, 2, "attach mode");
	r->target_pid = get_max(c, 0xffffffffu, "target pid");
	r->start_wall_ns = get_varint(c);
	r->start_mono_ns = get_varint(c);
	r->interval_ns = get_varint(c);
	r->tool = get_str(c, "tool");
	if (!c->bad && (!r->host || !r->cmdline || !r->binary || !r->tool))
		corrupt(c, "out of memory");
}

static void parse_proc(struct cur *c, struct recording *r, struct caps *cap)
{
	struct rec_proc_info *p = grow(c, (void **)&r->procs, &r->nprocs, &cap->procs,
				       sizeof(*p));

	if (!p)
		return;
	p->pid = get_max(c, 0xffffffffu, "pid");
	p->mono_ns = get_varint(c);
	p->comm = get_str(c, "comm");
	p->cmdline = get_str(c, "cmdline");
}

static __s64 unzigzag(__u64 v)
{
	return (__s64)(v >> 1) ^ -(__s64)(v & 1);
}

static void parse_events(struct cur *c, struct recording *r, struct caps *cap)
{
	/* the smallest encoded event is 11 bytes: a count above len/11 is a lie */
	__u64 count = get_max(c, (c->len - c->off) / 11, "event count");
	__u64 ts = get_varint(c);

	if (!count && !c->bad)
		corrupt(c, "empty event chunk");
	for (__u64 i = 0; i < count && !c->bad; i++) {
		struct infl_event *ev = grow(c, (void **)&r->events, &r->nevents, &cap->events,
					     sizeof(*ev));

		if (!ev)
			return;
		ev->type = get_le(c, 1);
		ev->id = get_le(c, 1);
		ev->flags = get_le(c, 1);
		ev->from_slot = get_le(c, 1);
		ts += unzigzag(get_varint(c));
		ev->ts_ns = ts;
		ev->seq = get_varint(c);
		ev->pid = get_max(c, 0xffffffffu, "pid");
		ev->tid = get_max(c, 0xffffffffu, "tid");
		ev->arg0 = get_varint(c);
		ev->arg1 = get_varint(c);
		ev->arg2 = get_varint(c);
		if (ev->type > INFL_EV_EXIT)
			corrupt(c, "event type %u unknown", ev->type);
		else if (ev->from_slot >= INFL_SLOTS)
			corrupt(c, "event slot %u out of range", ev->from_slot);
		/* rejected events carry the id the program passed; all others a valid one */
		else if (!(ev->flags & INFL_EVF_REJECTED) &&
			 ((ev->type == INFL_EV_STAGE && ev->id >= INFL_MAX_STAGES) ||
			  (ev->type <= INFL_EV_FREE && ev->id >= INFL_MAX_CLASSES)))
			corrupt(c, "event id %u out of range", ev->id);
	}
}

/* The process-state encoding of REC_SNAPSHOT and REC_END into `st`. */
static void parse_state(struct cur *c, struct infl_proc *st)
{
	__u64 count = get_max(c, (c->len - c->off) / 3, "field count");

	memset(st, 0, sizeof(*st));
	for (__u64 i = 0; i < count && !c->bad; i++) {
		__u64 tag = get_varint(c), idx = get_varint(c), v = get_varint(c);
		const struct rec_field *rf = NULL;

		for (size_t f = 0; f < rec_nfields; f++)
			if (rec_fields[f].tag == tag)
				rf = &rec_fields[f];
		if (c->bad || !rf)
			continue; /* a field of a newer minor version */
		if (idx >= rf->nelems) {
			corrupt(c, "field %llu index %llu out of range", (unsigned long long)tag,
				(unsigned long long)idx);
			return;
		}
		if (rf->elem_size == 4) {
			__u32 v32 = v;

			if (v32 != v)
				corrupt(c, "field %llu value too large", (unsigned long long)tag);
			memcpy((char *)st + rf->offset + 4 * idx, &v32, 4);
		} else {
			memcpy((char *)st + rf->offset + 8 * idx, &v, 8);
		}
	}
}

static void parse_snapshot(struct cur *c, struct recording *r, struct caps *cap,
			   struct infl_proc *scratch)
{
	struct rec_snap *s = grow(c, (void **)&r->snaps, &r->nsnaps, &cap->snaps, sizeof(*s));

	if (!s)
		return;
	s->mono_ns = get_varint(c);
	s->pid = get_max(c, 0xffffffffu, "pid");
	parse_state(c, scratch);
	s->seq = scratch->seq;
	s->total_bytes = scratch->total_bytes;
	s->total_bufs = scratch->total_bufs;
	s->peak_bytes = scratch->peak_bytes;
	s->ring_drops = scratch->ring_drops;
	s->rss_total = scratch->rss_total;
	memcpy(s->owners, scratch->owners, sizeof(s->owners));
	for (int cl = 0; cl < INFL_MAX_CLASSES; cl++)
		for (int sl = 0; sl < INFL_SLOTS; sl++)
			s->class_bytes[cl] += scratch->cur[cl][sl].bytes;
}

static void parse_rss(struct cur *c, struct recording *r, struct caps *cap)
{
	struct rec_rss *s = grow(c, (void **)&r->rss, &r->nrss, &cap->rss, sizeof(*s));

	if (!s)
		return;
	s->mono_ns = get_varint(c);
	s->pid = get_max(c, 0xffffffffu, "pid");
	s->source = get_max(c, REC_RSS_KERNEL, "rss source");
	s->bytes = get_varint(c);
}

static void parse_lost(struct cur *c, struct recording *r, struct caps *cap)
{
	struct rec_lost *l = grow(c, (void **)&r->lost, &r->nlost, &cap->lost, sizeof(*l));

	if (!l)
		return;
	l->mono_ns = get_varint(c);
	l->pid = get_max(c, 0xffffffffu, "pid");
	l->kind = get_max(c, REC_LOST_USER, "lost kind");
	l->count = get_varint(c);
}

static void parse_end(struct cur *c, struct recording *r)
{
	__u64 n;

	r->end_mono_ns = get_varint(c);
	r->end_wall_ns = get_varint(c);
	r->exit_status = unzigzag(get_varint(c));
	r->end_events = get_varint(c);
	r->end_user_lost = get_varint(c);
	/* every process costs at least two bytes (pid, field count) */
	n = get_max(c, (c->len - c->off) / 2, "process count");
	if (c->bad)
		return;
	r->finals = calloc(n ? n : 1, sizeof(*r->finals));
	if (!r->finals) {
		corrupt(c, "out of memory");
		return;
	}
	for (__u64 i = 0; i < n && !c->bad; i++) {
		r->finals[i].pid = get_max(c, 0xffffffffu, "pid");
		parse_state(c, &r->finals[i].st);
		r->nfinals++;
	}
	r->has_end = !c->bad;
}

static int parse(const unsigned char *d, size_t len, unsigned flags, struct recording *r,
		 char *err)
{
	struct infl_proc *scratch = NULL;
	struct caps cap = { 0 };
	size_t off = REC_PREAMBLE_LEN;
	unsigned major, minor;
	bool seen_header = false;

	if (len < REC_PREAMBLE_LEN || memcmp(d, REC_MAGIC, REC_MAGIC_LEN)) {
		snprintf(err, REC_ERR_LEN, "not an inflight recording (bad magic)");
		return -EBADMSG;
	}
	major = d[8] | d[9] << 8;
	minor = d[10] | d[11] << 8;
	if (major != REC_FORMAT_MAJOR) {
		snprintf(err, REC_ERR_LEN, "format version %u.%u; this inflight reads %u.x",
			 major, minor, REC_FORMAT_MAJOR);
		return -EPROTO;
	}
	if (d[12] || d[13] || d[14] || d[15]) {
		snprintf(err, REC_ERR_LEN, "corrupt preamble: reserved bytes are not zero");
		return -EBADMSG;
	}
	r->format_major = major;
	r->format_minor = minor;
	r->file_bytes = len;
	scratch = malloc(sizeof(*scratch));
	if (!scratch) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	while (off < len) {
		struct cur c = { .err = err, .record = r->nrecords + 1 };
		size_t left = len - off;
		__u32 type, plen, crc;

		if (left < REC_FRAME_HEAD + REC_FRAME_TAIL) {
			snprintf(err, REC_ERR_LEN, "truncated: %zu stray bytes after record %zu "
				 "at offset %zu", left, r->nrecords, off);
			goto bad;
		}
		type = d[off] | d[off + 1] << 8;
		plen = (__u32)d[off + 4] | (__u32)d[off + 5] << 8 | (__u32)d[off + 6] << 16 |
		       (__u32)d[off + 7] << 24;
		if (d[off + 2] || d[off + 3] || plen > REC_MAX_PAYLOAD) {
			snprintf(err, REC_ERR_LEN, "corrupt record %zu at offset %zu: bad frame "
				 "(type %u, length %u)", c.record, off, type, plen);
			goto bad;
		}
		if (left - REC_FRAME_HEAD - REC_FRAME_TAIL < plen) {
			snprintf(err, REC_ERR_LEN, "truncated: record %zu at offset %zu needs %u "
				 "bytes, %zu left", c.record, off,
				 plen + REC_FRAME_HEAD + REC_FRAME_TAIL, left);
			goto bad;
		}
		crc = d[off + 8 + plen] | d[off + 9 + plen] << 8 | d[off + 10 + plen] << 16 |
		      (__u32)d[off + 11 + plen] << 24;
		if (!(flags & REC_READ_NO_CRC) &&
		    crc != rec_crc32(0, d + off, REC_FRAME_HEAD + plen)) {
			snprintf(err, REC_ERR_LEN, "corrupt record %zu at offset %zu: checksum "
				 "mismatch", c.record, off);
			goto bad;
		}
		c.p = d + off + REC_FRAME_HEAD;
		c.len = plen;
		c.at = off + REC_FRAME_HEAD;
		if (!seen_header && type != REC_HEADER) {
			corrupt(&c, "the first record is not a header");
		} else if (r->has_end) {
			corrupt(&c, "record after the end record");
		} else {
			switch (type) {
			case REC_HEADER:
				if (seen_header)
					corrupt(&c, "a second header");
				else
					parse_header(&c, r);
				seen_header = true;
				break;
			case REC_PROC:
				parse_proc(&c, r, &cap);
				break;
			case REC_EVENTS:
				parse_events(&c, r, &cap);
				break;
			case REC_SNAPSHOT:
				parse_snapshot(&c, r, &cap, scratch);
				break;
			case REC_RSS:
				parse_rss(&c, r, &cap);
				break;
			case REC_LOST:
				parse_lost(&c, r, &cap);
				break;
			case REC_END:
				parse_end(&c, r);
				break;
			default:
				break; /* a record type of a newer minor version */
			}
		}
		if (c.bad)
			goto bad;
		r->nrecords++;
		off += REC_FRAME_HEAD + plen + REC_FRAME_TAIL;
	}
	if (!seen_header) {
		snprintf(err, REC_ERR_LEN, "truncated: no header record");
		goto bad;
	}
	if (!r->has_end && !(flags & REC_READ_PARTIAL)) {
		snprintf(err, REC_ERR_LEN, "truncated: no end record after %zu records (the "
			 "recording was interrupted)", r->nrecords);
		goto bad;
	}
	free(scratch);
	return 0;
bad:
	free(scratch);
	return -EBADMSG;
}

void recording__free(struct recording *r)
{
	if (!r)
		return;
	free(r->host);
	for (int i = 0; r->argv && i < r->argc; i++)
		free(r->argv[i]);
	free(r->argv);
	free(r->cmdline);
	free(r->binary);
	free(r->tool);
	for (size_t i = 0; i < r->nprocs; i++) {
		free(r->procs[i].comm);
		free(r->procs[i].cmdline);
	}
	free(r->procs);
	free(r->events);
	free(r->snaps);
	free(r->rss);
	free(r->lost);
	free(r->finals);
	free(r);
}

int rec_read_mem(const void *data, size_t len, unsigned flags, struct recording **out,
		 char err[REC_ERR_LEN])
{
	struct recording *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	err[0] = 0;
	if (!r) {
		snprintf(err, REC_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	r->exit_status = -1;
	ret = parse(data, len, flags, r, err);
	if (ret) {
		recording__free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int rec_read_file(const char *path, unsigned flags, struct recording **out,
		  char err[REC_ERR_LEN])
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, ret;

	*out = NULL;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, REC_ERR_LEN, "%s", strerror(errno));
		return ret;
	}
	for (;;) {
		ssize_t k;

		if (len == cap) {
			unsigned char *p;

			if (cap >= MAX_FILE_BYTES) {
				snprintf(err, REC_ERR_LEN, "larger than %llu GiB",
					 MAX_FILE_BYTES >> 30);
				ret = -EFBIG;
				goto out;
			}
			cap = cap ? cap * 2 : 1 << 20;
			p = realloc(buf, cap);
			if (!p) {
				snprintf(err, REC_ERR_LEN, "out of memory");
				ret = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ret = -errno;
			snprintf(err, REC_ERR_LEN, "%s", strerror(errno));
			goto out;
		}
		if (!k)
			break;
		len += k;
	}
	ret = rec_read_mem(buf, len, flags, out, err);
out:
	free(buf);
	close(fd);
	return ret;
}

int rec_open_or_complain(const char *path, unsigned flags, struct recording **out)
{
	char err[REC_ERR_LEN];
	int ret = rec_read_file(path, flags, out, err);

	if (!ret)
		return 0;
	return infl_err(EXIT_BAD_FILE,
			ret == -EBADMSG && strstr(err, "interrupted")
				? "add --partial to read the complete records of a cut recording"
			: ret == -EACCES || ret == -EPERM
				? "recordings are created mode 0640: read it as its owner or a "
				  "member of its group"
			: ret == -ENOENT ? "check the path (inflight record -o FILE makes one)"
			: ret == -EISDIR ? "give a recording file, not a directory"
			: ret == -EBADMSG && strstr(err, "magic")
				? "not a recording of `inflight record`"
				: NULL,
			"cannot read recording %s: %s", path, err);
}

const struct infl_proc *recording__final(const struct recording *r, __u32 pid)
{
	for (size_t i = 0; i < r->nfinals; i++)
		if (r->finals[i].pid == pid)
			return &r->finals[i].st;
	return NULL;
}
