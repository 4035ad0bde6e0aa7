// SPDX-License-Identifier: BSD-2-Clause
/* Decoders of a record's fields. recording/rec_decode.h */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/sanitize.h"
#include "recording/rec_decode.h"
#include "recording/rec_format.h"
#include "recording/rec_reader.h"

bool dec__corrupt(struct cur *c, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (c->bad)
		return false;
	c->bad = true;
	if (!c->err)
		return false;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, REC_ERR_LEN, "corrupt record %zu at offset %llu: %s", c->record,
		 (unsigned long long)(c->at + c->off), what);
	return false;
}

bool dec__need(struct cur *c, size_t n)
{
	if (c->bad)
		return false;
	if (c->len - c->off < n)
		return dec__corrupt(c, "field runs past the end of its record");
	return true;
}

__u64 dec__le(struct cur *c, int bytes)
{
	__u64 v = 0;

	if (!dec__need(c, bytes))
		return 0;
	for (int i = 0; i < bytes; i++)
		v |= (__u64)c->p[c->off + i] << (8 * i);
	c->off += bytes;
	return v;
}

__u64 dec__varint(struct cur *c)
{
	__u64 v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		__u8 b;

		if (!dec__need(c, 1))
			return 0;
		b = c->p[c->off++];
		if (shift == 63 && b > 1)
			break;
		v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	dec__corrupt(c, "varint longer than 64 bits");
	return 0;
}

__u64 dec__max(struct cur *c, __u64 max, const char *what)
{
	__u64 v = dec__varint(c);

	if (v > max) {
		dec__corrupt(c, "%s %llu out of range (max %llu)", what, (unsigned long long)v,
			    (unsigned long long)max);
		return 0;
	}
	return v;
}

char *dec__str(struct cur *c, const char *what)
{
	size_t n = dec__max(c, REC_MAX_STR, what);
	char *s;

	if (!dec__need(c, n))
		return NULL;
	if (memchr(c->p + c->off, 0, n)) {
		dec__corrupt(c, "%s contains a NUL byte", what);
		return NULL;
	}
	/* kept as it is: every output escapes it (util/sanitize.h), JSON losslessly */
	s = malloc(n + 1);
	if (s) {
		memcpy(s, c->p + c->off, n);
		s[n] = 0;
	}
	if (!s) {
		dec__corrupt(c, "out of memory");
		return NULL;
	}
	c->off += n;
	return s;
}

void dec__name(struct cur *c, char *dst, size_t cap, bool empty_ok, const char *what)
{
	size_t n = dec__max(c, REC_MAX_STR, what);
	char raw[64];

	if (!dec__need(c, n))
		return;
	if (n >= cap || n >= sizeof(raw) || (!n && !empty_ok)) {
		dec__corrupt(c, "%s: a name of %zu bytes (1 to %zu)", what, n, cap - 1);
		return;
	}
	memcpy(raw, c->p + c->off, n);
	raw[n] = 0;
	if (n && (memchr(raw, 0, n) || !san_name_ok(raw))) {
		dec__corrupt(c, "%s: a name outside the contract's [A-Za-z0-9_.:-]", what);
		return;
	}
	strcpy(dst, raw);
	c->off += n;
}

__s64 dec__unzigzag(__u64 v)
{
	return (__s64)(v >> 1) ^ -(__s64)(v & 1);
}

__u64 dec__event_count(struct cur *c, __u64 *ts)
{
	/* the smallest encoded event is 11 bytes: a count above len/11 is a lie */
	__u64 count = dec__max(c, (c->len - c->off) / 11, "event count");

	*ts = dec__varint(c);
	if (!count && !c->bad)
		dec__corrupt(c, "empty event chunk");
	return c->bad ? 0 : count;
}

bool dec__event(struct cur *c, __u64 *ts, struct infl_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = dec__le(c, 1);
	ev->id = dec__le(c, 1);
	ev->flags = dec__le(c, 1);
	ev->from_slot = dec__le(c, 1);
	*ts += dec__unzigzag(dec__varint(c));
	ev->ts_ns = *ts;
	ev->seq = dec__varint(c);
	ev->pid = dec__max(c, 0xffffffffu, "pid");
	ev->tid = dec__max(c, 0xffffffffu, "tid");
	ev->arg0 = dec__varint(c);
	ev->arg1 = dec__varint(c);
	ev->arg2 = dec__varint(c);
	if (c->bad)
		return false;
	if (ev->type > INFL_EV_EXIT)
		return dec__corrupt(c, "event type %u unknown", ev->type);
	if (ev->from_slot >= INFL_SLOTS)
		return dec__corrupt(c, "event slot %u out of range", ev->from_slot);
	/* rejected events carry the id the program passed; all others a valid one */
	if (!(ev->flags & INFL_EVF_REJECTED) &&
	    ((ev->type == INFL_EV_STAGE && ev->id >= INFL_MAX_STAGES) ||
	     (ev->type <= INFL_EV_FREE && ev->id >= INFL_CLASSES)))
		return dec__corrupt(c, "event id %u out of range", ev->id);
	return true;
}

void dec__events(struct cur *c, void (*fn)(void *ctx, const struct infl_event *ev), void *ctx)
{
	__u64 ts, count = dec__event_count(c, &ts);

	for (__u64 i = 0; i < count && !c->bad; i++) {
		struct infl_event ev;

		if (dec__event(c, &ts, &ev) && fn)
			fn(ctx, &ev);
	}
}

void dec__state(struct cur *c, struct infl_proc *st)
{
	__u64 count = dec__max(c, (c->len - c->off) / 3, "field count");

	memset(st, 0, sizeof(*st));
	for (__u64 i = 0; i < count && !c->bad; i++) {
		__u64 tag = dec__varint(c), idx = dec__varint(c), v = dec__varint(c);
		const struct rec_field *rf = NULL;

		for (size_t f = 0; f < rec_nfields; f++)
			if (rec_fields[f].tag == tag)
				rf = &rec_fields[f];
		if (c->bad || !rf)
			continue; /* a field of a newer minor version */
		if (idx >= rf->nelems) {
			dec__corrupt(c, "field %llu index %llu out of range", (unsigned long long)tag,
				    (unsigned long long)idx);
			return;
		}
		if (rf->elem_size == 4) {
			__u32 v32 = v;

			if (v32 != v)
				dec__corrupt(c, "field %llu value too large", (unsigned long long)tag);
			memcpy((char *)st + rf->offset + 4 * idx, &v32, 4);
		} else {
			memcpy((char *)st + rf->offset + 8 * idx, &v, 8);
		}
	}
}
