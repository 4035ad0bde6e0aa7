// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format chrome`: Chrome Trace Event JSON (the object form, one event per line)
 * for Perfetto, chrome://tracing and speedscope. Per traced process:
 *   - counter tracks ("C"): bytes by class, bytes by stage, owners by stage, rss;
 *   - one lane per owner's life: an async slice ("b"/"e", id "PID.LIFE") named after the
 *     owner, with its stage slices nested inside (async because lanes overlap in time);
 *   - one thread per stage ("X" slices "N in STAGE" while N owners are in it): speedscope
 *     reads only synchronous slices, so this is what it shows; Perfetto shows both;
 *   - the peak as an instant event; process_name and thread_name metadata.
 * Timestamps are microseconds after the recording's start.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "render/render.h"

#define STAGE_TID_BASE 100 /* tid of the lane of stage s: STAGE_TID_BASE + s */

/* the separator before each event: none before the first (one trace at a time) */
static bool first_event;

static void ev_begin(FILE *f)
{
	fputs(first_event ? "\n" : ",\n", f);
	first_event = false;
}

static double us(const struct timeline *tl, __u64 ns)
{
	return ns > tl->t0 ? (ns - tl->t0) / 1e3 : 0;
}

static void meta(FILE *f, const char *what, __u32 pid, __u32 tid, const char *name)
{
	ev_begin(f);
	fprintf(f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
		what, pid, tid);
	fmt_json_str(f, name);
	fputs("}}", f);
}

struct counters {
	__u64 cls[INFL_MAX_CLASSES], slot_bytes[INFL_SLOTS], owners[INFL_SLOTS];
	bool emitted;
};

static void emit_counters(FILE *f, const struct timeline *tl, const struct tl_proc *p,
			  const struct tl_state *st, __u64 ts, struct counters *last, __u32 classes,
			  __u32 slots)
{
	const struct infl_names *nm = &tl->rec->names;
	struct counters now = { .emitted = true };
	bool first;

	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++)
		now.cls[c] = tl_state__class_bytes(st, c);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		now.slot_bytes[s] = tl_state__slot_bytes(st, s);
		now.owners[s] = st->owners[s];
	}
	if (last->emitted && !memcmp(now.cls, last->cls, sizeof(now.cls)) &&
	    !memcmp(now.slot_bytes, last->slot_bytes, sizeof(now.slot_bytes)) &&
	    !memcmp(now.owners, last->owners, sizeof(now.owners)))
		return;
	if (!last->emitted || memcmp(now.cls, last->cls, sizeof(now.cls))) {
		ev_begin(f);
		fprintf(f, "{\"ph\":\"C\",\"name\":\"bytes by class\",\"pid\":%u,\"tid\":0,"
			"\"ts\":%.3f,\"args\":{", p->pid, us(tl, ts));
		first = true;
		for (unsigned c = 0; c < INFL_MAX_CLASSES; c++) {
			if (!(classes & (1u << c)))
				continue;
			fprintf(f, "%s", first ? "" : ",");
			fmt_json_str(f, names__cls(nm, c));
			fprintf(f, ":%" PRIu64, (uint64_t)now.cls[c]);
			first = false;
		}
		fputs("}}", f);
	}
	if (!last->emitted || memcmp(now.slot_bytes, last->slot_bytes, sizeof(now.slot_bytes)) ||
	    memcmp(now.owners, last->owners, sizeof(now.owners))) {
		static const char *const what[2] = { "bytes by stage", "owners by stage" };

		for (int k = 0; k < 2; k++) {
			const __u64 *v = k ? now.owners : now.slot_bytes;

			ev_begin(f);
			fprintf(f, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%u,\"tid\":0,"
				"\"ts\":%.3f,\"args\":{", what[k], p->pid, us(tl, ts));
			first = true;
			for (unsigned s = 0; s < INFL_SLOTS; s++) {
				if (!(slots & (1u << s)))
					continue;
				fprintf(f, "%s", first ? "" : ",");
				fmt_json_str(f, names__stage(nm, s));
				fprintf(f, ":%" PRIu64, (uint64_t)v[s]);
				first = false;
			}
			fputs("}}", f);
		}
	}
	*last = now;
}

/* "N in STAGE" slices on the stage's thread, one per run of a constant non-zero count */
struct stage_lane {
	__u64 since;
	__u64 count;
};

static void lane_flush(FILE *f, const struct timeline *tl, const struct tl_proc *p,
		       unsigned s, struct stage_lane *l, __u64 ts)
{
	if (l->count && ts > l->since) {
		char name[64];

		snprintf(name, sizeof(name), "%" PRIu64 " in %s", (uint64_t)l->count,
			 names__stage(&tl->rec->names, s));
		ev_begin(f);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"stage\",\"name\":");
		fmt_json_str(f, name);
		fprintf(f, ",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"owners\":%"
			PRIu64 "}}", p->pid, STAGE_TID_BASE + s, us(tl, l->since),
			(ts - l->since) / 1e3, (uint64_t)l->count);
	}
	l->since = ts;
}

static int counters_and_lanes(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	__u32 classes = render_used_classes(p), slots = render_used_slots(p);
	struct stage_lane lanes[INFL_MAX_STAGES] = { 0 };
	struct counters last = { 0 };
	struct tl_cursor c;
	size_t r = 0;

	if (tl_cursor__init(&c, p))
		return -ENOMEM;
	emit_counters(f, tl, p, c.st, tl->t0, &last, classes, slots);
	while (tl_cursor__next_ts(&c) != UINT64_MAX) {
		__u64 ts = tl_cursor__next_ts(&c);

		/* every event of one instant, then one sample: no spikes that never were */
		tl_cursor__until(&c, ts);
		emit_counters(f, tl, p, c.st, ts, &last, classes, slots);
		for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
			if (c.st->owners[s] == lanes[s].count)
				continue;
			lane_flush(f, tl, p, s, &lanes[s], ts);
			lanes[s].count = c.st->owners[s];
		}
	}
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++)
		lane_flush(f, tl, p, s, &lanes[s], p->t_end);
	tl_cursor__free(&c);
	for (r = 0; r < p->nrss; r++) {
		ev_begin(f);
		fprintf(f, "{\"ph\":\"C\",\"name\":\"rss\",\"pid\":%u,\"tid\":0,\"ts\":%.3f,"
			"\"args\":{\"rss\":%" PRIu64 "}}", p->pid, us(tl, p->rss[r].ts),
			(uint64_t)p->rss[r].bytes);
	}
	return 0;
}

static void async(FILE *f, const struct timeline *tl, const struct tl_proc *p, const char *ph,
		  const char *name, size_t life, __u64 ts, const char *args)
{
	ev_begin(f);
	fprintf(f, "{\"ph\":\"%s\",\"cat\":\"owner\",\"name\":", ph);
	fmt_json_str(f, name);
	fprintf(f, ",\"id\":\"%u.%zu\",\"pid\":%u,\"tid\":0,\"ts\":%.3f%s%s%s}", p->pid, life,
		p->pid, us(tl, ts), args ? ",\"args\":{" : "", args ? args : "", args ? "}" : "");
}

static void owner_lanes(FILE *f, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;

	for (size_t l = 0; l < p->nlives; l++) {
		const struct tl_life *life = &p->lives[l];
		char name[96], args[128];

		snprintf(name, sizeof(name), "owner 0x%" PRIx64 " (%s)", (uint64_t)life->owner,
			 life->kind < INFL_SLOT_NONE ? names__stage(nm, life->kind) : "no stage");
		snprintf(args, sizeof(args), "\"owner\":\"0x%" PRIx64 "\",\"retired\":%s,"
			 "\"born_before_recording\":%s", (uint64_t)life->owner,
			 life->retired ? "true" : "false", life->born_early ? "true" : "false");
		async(f, tl, p, "b", name, l, life->t0, args);
		for (__u32 k = 0; k < life->nslices; k++) {
			const struct tl_slice *s = &p->slices[life->first_slice + k];

			snprintf(args, sizeof(args), "\"owner\":\"0x%" PRIx64 "\",\"open\":%s",
				 (uint64_t)life->owner, s->open ? "true" : "false");
			async(f, tl, p, "b", names__stage(nm, s->stage), l, s->t0, args);
			async(f, tl, p, "e", names__stage(nm, s->stage), l, s->t1, NULL);
		}
		async(f, tl, p, "e", name, l, life->t1, NULL);
	}
}

int render_chrome(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct recording *r = tl->rec;
	size_t n;
	const struct tl_proc **procs = render_procs(tl, o, &n);
	int err = 0;

	if (!procs)
		return -ENOMEM;
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":", f);
	fmt_json_str(f, r->tool);
	fputs(",\"command\":", f);
	fmt_json_str(f, r->cmdline);
	fputs(",\"host\":", f);
	fmt_json_str(f, r->host);
	fputs(",\"recording\":", f);
	fmt_json_str(f, o->source ? o->source : "");
	fputs("},\n\"traceEvents\":[", f);
	first_event = true;
	for (size_t i = 0; i < n && !err; i++) {
		const struct tl_proc *p = procs[i];
		char name[160], b[FMT_LEN];

		/* viewers add the pid themselves */
		meta(f, "process_name", p->pid, 0, p->comm[0] ? p->comm : "process");
		meta(f, "thread_name", p->pid, 0, "owners and counters");
		for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
			if (!(render_used_slots(p) & (1u << s)))
				continue;
			snprintf(name, sizeof(name), "stage %s", names__stage(&r->names, s));
			meta(f, "thread_name", p->pid, STAGE_TID_BASE + s, name);
		}
		err = counters_and_lanes(f, tl, p);
		owner_lanes(f, tl, p);
		if (p->peak_bytes) {
			ev_begin(f);
			fprintf(f, "{\"ph\":\"i\",\"s\":\"p\",\"name\":\"peak %s\",\"pid\":%u,"
				"\"tid\":0,\"ts\":%.3f,\"args\":{\"bytes\":%" PRIu64 "}}",
				fmt_bytes(b, p->peak_bytes), p->pid, us(tl, p->peak_ts),
				(uint64_t)p->peak_bytes);
		}
	}
	fputs("\n]}\n", f);
	free(procs);
	return err ? err : render_finish(f);
}
