// SPDX-License-Identifier: BSD-2-Clause
/* Writes recordings: the framing, the varint encodings and the event chunks (rec_format.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "recording/rec_format.h"
#include "recording/rec_writer.h"
#include "oom.h"

#define OUT_FLUSH_AT (256u << 10)   /* bytes buffered before a write() */
#define CHUNK_EVENTS 4096	    /* events per REC_EVENTS record at most */
#define CHUNK_BYTES (192u << 10)    /* encoded bytes per REC_EVENTS record at most */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

struct rec_writer {
	int fd;
	bool own_fd;
	bool mem; /* no file: records stay in `out` until rec_writer__take() */
	int err; /* first error, sticky */
	struct wbuf out;     /* framed records not yet written */
	struct wbuf payload; /* the record being built */
	struct wbuf chunk;   /* encoded events of the open chunk */
	__u32 chunk_count;
	__u64 chunk_base_ts, chunk_prev_ts;
	__u64 written;	     /* bytes handed to write() */
	__u64 events;
};

static void wb_reserve(struct wbuf *b, size_t more)
{
	size_t cap;
	unsigned char *p;

	if (b->oom || b->len + more <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void wb_put(struct wbuf *b, const void *src, size_t n)
{
	if (!n)
		return; /* memcpy wants valid pointers even for nothing */
	wb_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void wb_u8(struct wbuf *b, __u8 v)
{
	wb_put(b, &v, 1);
}

static void wb_le(struct wbuf *b, __u64 v, int bytes)
{
	unsigned char tmp[8];

	for (int i = 0; i < bytes; i++)
		tmp[i] = v >> (8 * i);
	wb_put(b, tmp, bytes);
}

/* unsigned LEB128: 7 bits a byte, low groups first, high bit set on all but the last */
static void wb_varint(struct wbuf *b, __u64 v)
{
	unsigned char tmp[10];
	int n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	wb_put(b, tmp, n);
}

static void wb_strn(struct wbuf *b, const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;

	wb_varint(b, n);
	wb_put(b, s, n);
}

static void wb_str(struct wbuf *b, const char *s)
{
	wb_strn(b, s, REC_MAX_STR);
}

static int fail(struct rec_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static int write_all(struct rec_writer *w, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return fail(w, k < 0 ? -errno : -EIO);
		p += k;
		n -= k;
		w->written += k;
	}
	return 0;
}

static int out_drain(struct rec_writer *w)
{
	int err;

	if (w->out.oom)
		return fail(w, -ENOMEM);
	err = write_all(w, w->out.p, w->out.len);
	w->out.len = 0;
	return err;
}

/* Frames the payload built so far as one record of `type`. */
static int emit(struct rec_writer *w, enum rec_type type)
{
	size_t start = w->out.len;

	if (w->err)
		return w->err;
	if (w->payload.oom)
		return fail(w, -ENOMEM);
	if (w->payload.len > REC_MAX_PAYLOAD)
		return fail(w, -E2BIG);
	wb_le(&w->out, type, 2);
	wb_le(&w->out, 0, 2);
	wb_le(&w->out, w->payload.len, 4);
	wb_put(&w->out, w->payload.p, w->payload.len);
	if (w->out.oom)
		return fail(w, -ENOMEM);
	wb_le(&w->out, rec_format__crc32(0, w->out.p + start, w->out.len - start), 4);
	w->payload.len = 0;
	if (!w->mem && w->out.len >= OUT_FLUSH_AT)
		return out_drain(w);
	return w->err;
}

static int chunk_close(struct rec_writer *w)
{
	if (!w->chunk_count)
		return w->err;
	if (w->chunk.oom)
		return fail(w, -ENOMEM);
	wb_varint(&w->payload, w->chunk_count);
	wb_varint(&w->payload, w->chunk_base_ts);
	wb_put(&w->payload, w->chunk.p, w->chunk.len);
	w->chunk.len = 0;
	w->chunk_count = 0;
	return emit(w, REC_EVENTS);
}

static int writer_new(int fd, bool own_fd, struct rec_writer **out)
{
	struct rec_writer *w = calloc(1, sizeof(*w));
	unsigned char pre[REC_PREAMBLE_LEN] = { 0 };

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->own_fd = own_fd;
	memcpy(pre, REC_MAGIC, REC_MAGIC_LEN);
	pre[8] = REC_FORMAT_MAJOR & 0xff;
	pre[9] = REC_FORMAT_MAJOR >> 8;
	pre[10] = REC_FORMAT_MINOR & 0xff;
	pre[11] = REC_FORMAT_MINOR >> 8;
	wb_put(&w->out, pre, sizeof(pre));
	*out = w;
	return 0;
}

int rec_writer__create(const char *path, unsigned flags, struct rec_writer **out)
{
	int fd, err;

	*out = NULL;
	/* a symlink is removed, never followed: unlink() acts on the link itself */
	if ((flags & REC_W_FORCE) && unlink(path) && errno != ENOENT)
		return -errno;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		struct stat st;

		err = -errno;
		/* O_EXCL answers EEXIST for a symlink too: say what it is */
		if (err == -EEXIST && !lstat(path, &st) && S_ISLNK(st.st_mode))
			err = -ELOOP;
		return err;
	}
	err = writer_new(fd, true, out);
	if (err)
		close(fd);
	return err;
}

int rec_writer__from_fd(int fd, struct rec_writer **out)
{
	return writer_new(fd, false, out);
}

/* The part of a qualified name (LABEL:NAME) a reader of 1.3 knows: NAME. */
static const char *local_name(const char *name, bool plain)
{
	const char *colon = plain ? strchr(name, ':') : NULL;

	return colon ? colon + 1 : name;
}

/* The names as the header has them, and REC_NAMES (1.4) with names qualified: `plain`
 * writes only what follows a qualifier, which every 1.x reader takes. */
static void wb_names(struct wbuf *b, const struct infl_names *n, bool plain)
{
	__u32 ncls = 0, nstages = 0;

	wb_varint(b, n ? n->contract_version : 0);
	wb_strn(b, n ? n->provider : "", INFL_NAME_LEN - 1);
	for (int i = 0; n && i < INFL_MAX_CLASSES; i++)
		ncls += !!(n->cls_declared & (1u << i));
	wb_varint(b, ncls);
	for (int i = 0; n && i < INFL_MAX_CLASSES; i++) {
		if (!(n->cls_declared & (1u << i)))
			continue;
		wb_varint(b, i);
		wb_strn(b, local_name(n->cls[i], plain), INFL_NAME_LEN - 1);
	}
	for (int i = 0; n && i < INFL_MAX_STAGES; i++)
		nstages += !!(n->stage_declared & (1u << i));
	wb_varint(b, nstages);
	for (int i = 0; n && i < INFL_MAX_STAGES; i++) {
		if (!(n->stage_declared & (1u << i)))
			continue;
		wb_varint(b, i);
		wb_strn(b, local_name(n->stage[i], plain), INFL_NAME_LEN - 1);
	}
	/* entry and terminal masks apply to declared and undeclared stages alike */
	wb_varint(b, n ? n->entry_mask : 0xffff);
	wb_varint(b, n ? n->terminal_mask : 0);
}

static bool names_qualified(const struct infl_names *n)
{
	for (int i = 0; n && i < INFL_MAX_CLASSES; i++)
		if ((n->cls_declared & (1u << i)) && strchr(n->cls[i], ':'))
			return true;
	for (int i = 0; n && i < INFL_MAX_STAGES; i++)
		if ((n->stage_declared & (1u << i)) && strchr(n->stage[i], ':'))
			return true;
	return false;
}

int rec_writer__names(struct rec_writer *w, const struct infl_names *n)
{
	chunk_close(w);
	wb_names(&w->payload, n, false);
	return emit(w, REC_NAMES);
}

int rec_writer__header(struct rec_writer *w, const struct rec_header_info *h)
{
	const struct infl_names *n = h->names;
	int argc = h->argc < 0 ? 0 : h->argc > REC_MAX_ARGS ? REC_MAX_ARGS : h->argc;

	wb_names(&w->payload, n, true);
	wb_str(&w->payload, h->host);
	wb_varint(&w->payload, argc);
	for (int i = 0; i < argc; i++)
		wb_str(&w->payload, h->argv[i]);
	wb_str(&w->payload, h->binary);
	wb_varint(&w->payload, h->mode);
	wb_varint(&w->payload, h->target_pid);
	wb_varint(&w->payload, h->start_wall_ns);
	wb_varint(&w->payload, h->start_mono_ns);
	wb_varint(&w->payload, h->interval_ns);
	wb_str(&w->payload, h->tool);
	if (emit(w, REC_HEADER))
		return w->err;
	/* several images' classes or stages: the qualified names follow at once */
	return names_qualified(n) ? rec_writer__names(w, n) : 0;
}

int rec_writer__proc(struct rec_writer *w, __u32 pid, __u64 mono_ns, const char *comm,
		     const char *cmdline, int argc, char *const *argv)
{
	argc = argc < 0 ? 0 : argc > REC_MAX_ARGS ? REC_MAX_ARGS : argc;
	chunk_close(w);
	wb_varint(&w->payload, pid);
	wb_varint(&w->payload, mono_ns);
	wb_str(&w->payload, comm);
	wb_str(&w->payload, cmdline);
	/* 1.2: the words themselves, which cmdline's spaces cannot tell apart */
	wb_varint(&w->payload, argc);
	for (int i = 0; i < argc; i++)
		wb_str(&w->payload, argv[i]);
	return emit(w, REC_PROC);
}

static __u64 zigzag(__s64 v)
{
	return ((__u64)v << 1) ^ (__u64)(v >> 63);
}

int rec_writer__event(struct rec_writer *w, const struct infl_event *ev)
{
	struct wbuf *b = &w->chunk;

	if (w->err)
		return w->err;
	if (!w->chunk_count) {
		w->chunk_base_ts = ev->ts_ns;
		w->chunk_prev_ts = ev->ts_ns;
	}
	wb_u8(b, ev->type);
	wb_u8(b, ev->id);
	wb_u8(b, ev->flags);
	wb_u8(b, ev->from_slot);
	/* ring-buffer order is nearly but not exactly time order across CPUs: signed deltas */
	wb_varint(b, zigzag((__s64)(ev->ts_ns - w->chunk_prev_ts)));
	wb_varint(b, ev->seq);
	wb_varint(b, ev->pid);
	wb_varint(b, ev->tid);
	wb_varint(b, ev->arg0);
	wb_varint(b, ev->arg1);
	wb_varint(b, ev->arg2);
	w->chunk_prev_ts = ev->ts_ns;
	w->chunk_count++;
	w->events++;
	if (w->chunk_count >= CHUNK_EVENTS || w->chunk.len >= CHUNK_BYTES)
		return chunk_close(w);
	return b->oom ? fail(w, -ENOMEM) : 0;
}

/* The non-zero fields of `st` as (tag, index, value) triplets, preceded by their number. */
static void put_state(struct wbuf *b, const struct infl_proc *st)
{
	const unsigned char *base = (const unsigned char *)st;
	struct wbuf items = { 0 };
	__u64 n = 0;

	for (size_t f = 0; f < rec_nfields; f++) {
		const struct rec_field *rf = &rec_fields[f];

		for (__u32 i = 0; i < rf->nelems; i++) {
			__u64 v;

			if (rf->elem_size == 4) {
				__u32 v32;

				memcpy(&v32, base + rf->offset + 4 * i, 4);
				v = v32;
			} else {
				memcpy(&v, base + rf->offset + 8 * i, 8);
			}
			if (!v)
				continue;
			wb_varint(&items, rf->tag);
			wb_varint(&items, i);
			wb_varint(&items, v);
			n++;
		}
	}
	wb_varint(b, n);
	wb_put(b, items.p, items.len);
	if (items.oom)
		b->oom = true;
	free(items.p);
}

int rec_writer__snapshot(struct rec_writer *w, __u64 mono_ns, __u32 pid,
			 const struct infl_proc *st)
{
	chunk_close(w);
	wb_varint(&w->payload, mono_ns);
	wb_varint(&w->payload, pid);
	put_state(&w->payload, st);
	return emit(w, REC_SNAPSHOT);
}

int rec_writer__rss(struct rec_writer *w, __u64 mono_ns, __u32 pid, __u32 source, __u64 bytes)
{
	chunk_close(w);
	wb_varint(&w->payload, mono_ns);
	wb_varint(&w->payload, pid);
	wb_varint(&w->payload, source);
	wb_varint(&w->payload, bytes);
	return emit(w, REC_RSS);
}

int rec_writer__lost(struct rec_writer *w, __u64 mono_ns, __u32 pid, __u32 kind, __u64 count)
{
	chunk_close(w);
	wb_varint(&w->payload, mono_ns);
	wb_varint(&w->payload, pid);
	wb_varint(&w->payload, kind);
	wb_varint(&w->payload, count);
	return emit(w, REC_LOST);
}

int rec_writer__oom(struct rec_writer *w, __u32 pid, const struct infl_oom_kill *k)
{
	chunk_close(w);
	wb_varint(&w->payload, k->ns);
	wb_varint(&w->payload, pid);
	wb_varint(&w->payload, k->tid);
	wb_varint(&w->payload, k->seq);
	wb_varint(&w->payload, k->tracked_bytes);
	wb_varint(&w->payload, k->tracked_bufs);
	wb_varint(&w->payload, k->rss_bytes);
	return emit(w, REC_OOM);
}

int rec_writer__end(struct rec_writer *w, const struct rec_end_info *e)
{
	chunk_close(w);
	wb_varint(&w->payload, e->mono_ns);
	wb_varint(&w->payload, e->wall_ns);
	wb_varint(&w->payload, zigzag(e->exit_status));
	wb_varint(&w->payload, e->events);
	wb_varint(&w->payload, e->user_lost);
	wb_varint(&w->payload, e->nprocs);
	for (int i = 0; i < e->nprocs; i++) {
		wb_varint(&w->payload, e->pids[i]);
		put_state(&w->payload, &e->procs[i]);
	}
	return emit(w, REC_END);
}

int rec_writer__flush(struct rec_writer *w)
{
	chunk_close(w);
	if (w->err || w->mem)
		return w->err;
	return out_drain(w);
}

int rec_writer__sync(struct rec_writer *w)
{
	rec_writer__flush(w);
	if (w->err || w->fd < 0)
		return w->err;
	if (fsync(w->fd) && errno != EINVAL && errno != EROFS)
		return fail(w, -errno);
	return 0;
}

int rec_writer__mem(struct rec_writer **out)
{
	struct rec_writer *w = calloc(1, sizeof(*w));

	*out = w;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->mem = true;
	return 0;
}

int rec_writer__take(struct rec_writer *w, void **data, size_t *len)
{
	chunk_close(w);
	*data = NULL;
	*len = 0;
	if (w->err)
		return w->err;
	if (w->out.oom)
		return fail(w, -ENOMEM);
	*data = w->out.p;
	*len = w->out.len;
	w->out = (struct wbuf){ 0 };
	return 0;
}

int rec_writer__raw(struct rec_writer *w, const void *data, size_t len)
{
	chunk_close(w);
	if (w->err)
		return w->err;
	wb_put(&w->out, data, len);
	if (w->out.oom)
		return fail(w, -ENOMEM);
	if (!w->mem && w->out.len >= OUT_FLUSH_AT)
		return out_drain(w);
	return 0;
}

int rec_writer__start(struct rec_writer *w, __u64 mono_ns, __u32 pid, __u64 seq, __u64 bufs,
		      __u64 owners)
{
	chunk_close(w);
	wb_varint(&w->payload, mono_ns);
	wb_varint(&w->payload, pid);
	wb_varint(&w->payload, seq);
	wb_varint(&w->payload, bufs);
	wb_varint(&w->payload, owners);
	return emit(w, REC_START);
}

int rec_writer__dump(struct rec_writer *w, const struct rec_dump_info *d)
{
	chunk_close(w);
	wb_str(&w->payload, d->trigger);
	wb_str(&w->payload, d->detail);
	wb_varint(&w->payload, d->trigger_ns);
	wb_varint(&w->payload, d->window_ns);
	wb_varint(&w->payload, d->ring_ns);
	wb_varint(&w->payload, d->after_ns);
	wb_varint(&w->payload, d->evicted_events);
	wb_varint(&w->payload, d->number);
	wb_varint(&w->payload, d->refused);
	return emit(w, REC_DUMP);
}

int rec_writer__close(struct rec_writer *w)
{
	int err;

	if (!w)
		return 0;
	rec_writer__flush(w);
	if (w->own_fd && close(w->fd) && !w->err)
		w->err = -errno;
	err = w->err;
	free(w->out.p);
	free(w->payload.p);
	free(w->chunk.p);
	free(w);
	return err;
}

__u64 rec_writer__bytes(const struct rec_writer *w)
{
	return w->written + w->out.len;
}

__u64 rec_writer__events(const struct rec_writer *w)
{
	return w->events;
}
