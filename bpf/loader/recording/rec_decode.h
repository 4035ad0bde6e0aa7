/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal to the reader: the bounds-checked cursor over one record's payload and the
 * decoders of its fields. A failed check sets one error message (the first) and makes every
 * later read return zero, so the parsers stay linear and a corrupt record can never walk
 * them out of bounds.
 */
#ifndef INFLIGHT_REC_DECODE_H
#define INFLIGHT_REC_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "inflight.h"

struct cur {
	const unsigned char *p;
	size_t len, off;
	bool bad;
	char *err;     /* REC_ERR_LEN bytes, or NULL: no message wanted */
	__u64 at;      /* file offset of p[0], for messages */
	size_t record; /* record number, for messages */
};

bool dec__corrupt(struct cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool dec__need(struct cur *c, size_t n);
__u64 dec__le(struct cur *c, int bytes);
__u64 dec__varint(struct cur *c);
__u64 dec__max(struct cur *c, __u64 max, const char *what);
/* A string field as a new NUL-terminated copy, as it is (outputs escape it); NUL bytes
 * inside are refused. */
char *dec__str(struct cur *c, const char *what);
/* A name field (provider, class, stage) into a fixed array: [A-Za-z0-9_.:-], 1-31 bytes
 * (`empty_ok`: "" too). */
void dec__name(struct cur *c, char *dst, size_t cap, bool empty_ok, const char *what);
/* An EVENTS record: its count and base time, then one event at a time (false: corrupt). */
__u64 dec__event_count(struct cur *c, __u64 *ts);
bool dec__event(struct cur *c, __u64 *ts, struct infl_event *ev);
/* The events of an EVENTS record: count, then calls fn for each decoded event. */
void dec__events(struct cur *c, void (*fn)(void *ctx, const struct infl_event *ev), void *ctx);
/* The process-state encoding of SNAPSHOT and END records into `st`. */
void dec__state(struct cur *c, struct infl_proc *st);
__s64 dec__unzigzag(__u64 v);

#endif /* INFLIGHT_REC_DECODE_H */
