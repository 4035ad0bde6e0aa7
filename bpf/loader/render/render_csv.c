// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format csv`: the timeline, one row per process and step. Columns: pid, time_s
 * (the step's end, seconds since the first probe event), tracked_bytes (at the step's end), max_bytes
 * (within the step), rss_bytes, then bytes per class, owners per stage and bytes per stage
 * for every class and stage that appears in the recording.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "contract/names.h"
#include "render/render.h"

int render__csv(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	const struct infl_names *nm = &tl->rec->names;
	__u64 step = o->step_ns ? o->step_ns : render__auto_step(tl, 1000);
	__u32 classes = 0, slots = 0;
	size_t n;
	const struct tl_proc **procs = render__procs(tl, o, &n);

	if (!procs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		classes |= tl_proc__used_classes(procs[i]);
		slots |= tl_proc__used_slots(procs[i]);
	}
	fprintf(f, "pid,time_s,tracked_bytes,max_bytes,rss_bytes");
	for (unsigned c = 0; c < INFL_CLASSES; c++)
		if (classes & (1u << c))
			fprintf(f, ",bytes_%s", names__cls(nm, c));
	for (unsigned s = 0; s < INFL_SLOTS; s++)
		if (slots & (1u << s))
			fprintf(f, ",owners_%s", names__stage(nm, s));
	for (unsigned s = 0; s < INFL_SLOTS; s++)
		if (slots & (1u << s))
			fprintf(f, ",bytes_in_%s", names__stage(nm, s));
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		struct tl_cursor c;
		struct tl_sample smp;

		if (tl_cursor__init(&c, procs[i])) {
			free(procs);
			return -ENOMEM;
		}
		/* one row at least; a clock saturated at its end (render__next_t) ends them */
		for (__u64 t = tl->t0, first = 1; first || t < procs[i]->t_end;
		     t = render__next_t(t, step), first = 0) {
			const struct tl_state *st;

			tl_cursor__sample(&c, t, step, &smp);
			st = smp.at_end;
			fprintf(f, "%u,%.9g,%" PRIu64 ",%" PRIu64 ",%" PRIu64, procs[i]->pid,
				render__t(tl, t + step), (uint64_t)st->total_bytes,
				(uint64_t)smp.max_bytes,
				(uint64_t)tl_cursor__rss_at(&c, t + step - 1));
			for (unsigned cl = 0; cl < INFL_CLASSES; cl++)
				if (classes & (1u << cl))
					fprintf(f, ",%" PRIu64,
						(uint64_t)tl_state__class_bytes(st, cl));
			for (unsigned s = 0; s < INFL_SLOTS; s++)
				if (slots & (1u << s))
					fprintf(f, ",%" PRIu64, (uint64_t)st->owners[s]);
			for (unsigned s = 0; s < INFL_SLOTS; s++)
				if (slots & (1u << s))
					fprintf(f, ",%" PRIu64,
						(uint64_t)tl_state__slot_bytes(st, s));
			fputc('\n', f);
		}
		tl_cursor__free(&c);
	}
	free(procs);
	return render__finish(f);
}
