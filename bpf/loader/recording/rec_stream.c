// SPDX-License-Identifier: BSD-2-Clause
/*
 * A second pass over one process's part of a recording (rec_reader.h): its events and RSS
 * records in file order, decoded one at a time, so that nothing but the record being read
 * is held. The file was checked by recording__scan(); the frames are checked again (lengths only)
 * in case it changed since.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "recording/rec_decode.h"
#include "recording/rec_format.h"
#include "recording/rec_reader.h"
#include "recording/rec_source.h"

struct rec_stream {
	const struct recording *r;
	__u32 pid;
	struct rec_rd rd;
	__u64 pos, end; /* the next record, the end of the part to read */
	/* the EVENTS record being read */
	struct cur c;
	__u64 left, ts;
	unsigned char *copy; /* its payload: the reader's buffer moves on refills */
	size_t copy_cap;
};

int rec_stream__open(const struct recording *r, __u32 pid, struct rec_stream **out)
{
	const struct rec_range *rg = pid ? recording__range(r, pid) : NULL;
	struct rec_stream *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->r = r;
	s->pid = pid;
	rec_rd__init(&s->rd, r->src);
	s->pos = rg ? rg->first : r->header_end;
	s->end = rg ? rg->end : pid ? s->pos : r->data_end;
	if (s->end > r->data_end)
		s->end = r->data_end;
	*out = s;
	return 0;
}

void rec_stream__free(struct rec_stream *s)
{
	if (!s)
		return;
	rec_rd__free(&s->rd);
	free(s->copy);
	free(s);
}

/* The next frame of the part; 1, 0 at its end, or -errno. */
static int next_frame(struct rec_stream *s, __u32 *type, const unsigned char **payload,
		      __u32 *len)
{
	const unsigned char *p;
	long long got;

	if (s->pos >= s->end)
		return 0;
	got = rec_rd__get(&s->rd, s->pos, REC_FRAME_HEAD, &p);
	if (got < 0)
		return (int)got;
	if (got < REC_FRAME_HEAD)
		return -EBADMSG;
	*type = p[0] | p[1] << 8;
	*len = (__u32)p[4] | (__u32)p[5] << 8 | (__u32)p[6] << 16 | (__u32)p[7] << 24;
	if (*len > REC_MAX_PAYLOAD || s->pos + REC_FRAME_HEAD + *len + REC_FRAME_TAIL > s->end)
		return -EBADMSG;
	got = rec_rd__get(&s->rd, s->pos, REC_FRAME_HEAD + *len, &p);
	if (got < 0)
		return (int)got;
	if (got < REC_FRAME_HEAD + *len)
		return -EBADMSG;
	*payload = p + REC_FRAME_HEAD;
	s->pos += REC_FRAME_HEAD + *len + REC_FRAME_TAIL;
	return 1;
}

int rec_stream__next(struct rec_stream *s, struct rec_item *it)
{
	for (;;) {
		const unsigned char *payload = NULL;
		__u32 type = 0, len = 0;
		int k;

		while (s->left) {
			s->left--;
			if (!dec__event(&s->c, &s->ts, &it->ev))
				return -EBADMSG;
			if (!s->pid || it->ev.pid == s->pid) {
				it->is_rss = false;
				return 1;
			}
		}
		k = next_frame(s, &type, &payload, &len);
		if (k <= 0)
			return k;
		if (type == REC_EVENTS) {
			if (len > s->copy_cap) {
				unsigned char *n = realloc(s->copy, len);

				if (!n)
					return -ENOMEM;
				s->copy = n;
				s->copy_cap = len;
			}
			memcpy(s->copy, payload, len);
			s->c = (struct cur){ .p = s->copy, .len = len };
			s->left = dec__event_count(&s->c, &s->ts);
			if (s->c.bad)
				return -EBADMSG;
		} else if (type == REC_RSS) {
			struct cur c = { .p = payload, .len = len };

			it->rss.mono_ns = dec__varint(&c);
			it->rss.pid = dec__max(&c, 0xffffffffu, "pid");
			it->rss.source = dec__max(&c, REC_RSS_KERNEL, "rss source");
			it->rss.bytes = dec__varint(&c);
			if (c.bad)
				return -EBADMSG;
			if (!s->pid || it->rss.pid == s->pid) {
				it->is_rss = true;
				return 1;
			}
		}
	}
}
