// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format json`: one document with the recording's facts and, per process, the
 * summary (peak and its composition, each class's peak, memory x time and dwell per stage,
 * completions, RSS, late attach, losses, the replay check) and the timeline at the step.
 * Schema: docs/rendering.md.
 */
#include <errno.h>
#include <stdlib.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "render/render.h"

static void recording_facts(struct json *j, const struct timeline *tl,
			    const struct render_opts *o)
{
	const struct recording *r = tl->rec;
	const struct infl_names *nm = &r->names;
	char ver[16];

	snprintf(ver, sizeof(ver), "%u.%u", r->format_major, r->format_minor);
	json_key(j, "recording");
	json_obj(j);
	json_kv_str(j, "file", o->source ? o->source : "");
	json_kv_str(j, "format_version", ver);
	json_kv_u64(j, "contract", nm->contract_version);
	json_kv_str(j, "provider", nm->provider);
	json_kv_str(j, "host", r->host);
	json_kv_str(j, "command", r->cmdline);
	json_kv_str(j, "binary", r->binary);
	json_kv_u64(j, "target_pid", r->target_pid);
	json_kv_u64(j, "start_unix_ns", r->start_wall_ns);
	json_kv_u64(j, "duration_ns", tl->t_end - tl->t0);
	json_kv_u64(j, "snapshot_interval_ns", r->interval_ns);
	json_kv_bool(j, "complete", r->has_end);
	json_kv_str(j, "tool", r->tool);
	json_key(j, "classes");
	json_arr(j);
	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++) {
		if (!(nm->cls_declared & (1u << c)))
			continue;
		json_obj(j);
		json_kv_u64(j, "id", c);
		json_kv_str(j, "name", nm->cls[c]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "stages");
	json_arr(j);
	for (unsigned s = 0; s < INFL_MAX_STAGES; s++) {
		if (!(nm->stage_declared & (1u << s)))
			continue;
		json_obj(j);
		json_kv_u64(j, "id", s);
		json_kv_str(j, "name", nm->stage[s]);
		json_kv_bool(j, "entry", nm->entry_mask & (1u << s));
		json_kv_bool(j, "terminal", nm->terminal_mask & (1u << s));
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void peak(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;

	json_key(j, "peak");
	json_obj(j);
	json_kv_u64(j, "bytes", p->peak_bytes);
	json_kv_u64(j, "buffers", p->peak_bufs);
	json_kv_f64(j, "t_s", render_t(tl, p->peak_ts), 9);
	json_kv_u64(j, "seq", p->peak_seq);
	json_kv_u64(j, "rss_bytes", tl_proc__rss_at(p, p->peak_ts));
	json_key(j, "by_stage");
	json_arr(j);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		__u64 bytes = 0;

		for (unsigned c = 0; c < INFL_MAX_CLASSES; c++)
			bytes += p->peak[c][s].bytes;
		if (!bytes && !p->peak_owners[s])
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(nm, s));
		json_kv_u64(j, "owners", p->peak_owners[s]);
		json_kv_u64(j, "bytes", bytes);
		json_key(j, "classes");
		json_obj(j);
		for (unsigned c = 0; c < INFL_MAX_CLASSES; c++)
			if (p->peak[c][s].bytes)
				json_kv_u64(j, names__cls(nm, c), p->peak[c][s].bytes);
		json_obj_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	json_key(j, "class_peaks");
	json_arr(j);
	for (unsigned c = 0; c < INFL_MAX_CLASSES; c++) {
		if (!p->class_peak[c])
			continue;
		json_obj(j);
		json_kv_str(j, "class", names__cls(nm, c));
		json_kv_u64(j, "bytes", p->class_peak[c]);
		json_kv_f64(j, "t_s", render_t(tl, p->class_peak_ts[c]), 9);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void stages(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	__u32 slots = render_used_slots(p);

	json_key(j, "stages");
	json_arr(j);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		unsigned __int128 bn = render_slot_byte_ns(p, s);
		double dwell = render_mean_dwell_ms(p, s);

		if (!(slots & (1u << s)))
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(nm, s));
		json_kv_u64(j, "byte_ms", (__u64)(bn / 1000000u));
		json_kv_u64(j, "stays", s < INFL_MAX_STAGES ? p->dwell_count[s] : 0);
		json_key(j, "mean_dwell_ms");
		if (dwell < 0)
			json_null(j);
		else
			json_f64(j, dwell, 6);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "completed");
	json_obj(j);
	json_kv_u64(j, "owners", p->retired);
	json_kv_f64(j, "per_minute", render_per_minute(p, p->retired), 3);
	json_kv_f64(j, "active_s", render_active_ns(p) / 1e9, 9);
	json_key(j, "by_first_stage");
	json_obj(j);
	for (unsigned k = 0; k < INFL_SLOTS; k++)
		if (p->retired_by_kind[k])
			json_kv_u64(j, names__stage(nm, k), p->retired_by_kind[k]);
	json_obj_end(j);
	json_obj_end(j);
}

static void notes(struct json *j, const struct tl_proc *p)
{
	char what[160];
	__u64 live = 0;

	for (size_t l = 0; l < p->nlives; l++)
		live += !p->lives[l].retired;
	json_key(j, "rss");
	json_obj(j);
	json_kv_u64(j, "peak_bytes", p->rss_peak);
	json_kv_u64(j, "samples", p->nrss);
	json_obj_end(j);
	json_key(j, "final");
	json_obj(j);
	json_kv_u64(j, "bytes", p->final.total_bytes);
	json_kv_u64(j, "buffers", p->final.total_bufs);
	json_kv_u64(j, "owners_live", live);
	json_obj_end(j);
	json_key(j, "late_attach");
	json_obj(j);
	json_kv_u64(j, "unmatched_frees", p->unmatched_free);
	json_kv_u64(j, "unmatched_free_bytes", p->unmatched_free_bytes);
	json_kv_u64(j, "unmatched_owners", p->unmatched_stage);
	json_obj_end(j);
	json_key(j, "anomalies");
	json_obj(j);
	json_kv_u64(j, "rejected", p->rejected);
	json_kv_u64(j, "untracked", p->untracked);
	json_kv_u64(j, "double_allocs", p->dups);
	json_kv_u64(j, "diverged", p->diverged);
	json_obj_end(j);
	json_key(j, "lost");
	json_obj(j);
	json_kv_u64(j, "seq_gaps", p->seq_gaps);
	json_kv_u64(j, "kernel", p->lost_kernel);
	json_kv_u64(j, "user", p->lost_user);
	json_obj_end(j);
	json_kv_bool(j, "exact", tl_proc__exact(p));
	json_key(j, "check");
	if (!p->kernel_final) {
		json_null(j);
		return;
	}
	json_obj(j);
	json_kv_u64(j, "mismatches", timeline__check(p, what, sizeof(what)));
	json_kv_str(j, "first", what);
	json_obj_end(j);
}

static int timeline_rows(struct json *j, const struct timeline *tl, const struct tl_proc *p,
			 __u64 step)
{
	const struct infl_names *nm = &tl->rec->names;
	__u32 classes = render_used_classes(p), slots = render_used_slots(p);
	struct tl_cursor c;
	struct tl_sample smp;

	if (tl_cursor__init(&c, p))
		return -ENOMEM;
	json_key(j, "timeline");
	json_obj(j);
	json_kv_u64(j, "step_ns", step);
	json_key(j, "classes");
	json_arr(j);
	for (unsigned cl = 0; cl < INFL_MAX_CLASSES; cl++)
		if (classes & (1u << cl))
			json_str(j, names__cls(nm, cl));
	json_arr_end(j);
	json_key(j, "stages");
	json_arr(j);
	for (unsigned s = 0; s < INFL_SLOTS; s++)
		if (slots & (1u << s))
			json_str(j, names__stage(nm, s));
	json_arr_end(j);
	json_key(j, "rows");
	json_arr(j);
	for (__u64 t = tl->t0; t < tl->t_end || t == tl->t0; t = render_next_t(t, step)) {
		tl_cursor__sample(&c, t, step, &smp);
		json_obj(j);
		json_kv_f64(j, "t_s", render_t(tl, t + step), 9);
		json_kv_u64(j, "bytes", smp.at_end->total_bytes);
		json_kv_u64(j, "max_bytes", smp.max_bytes);
		json_kv_u64(j, "rss_bytes", tl_proc__rss_at(p, t + step - 1));
		json_key(j, "class_bytes");
		json_arr(j);
		for (unsigned cl = 0; cl < INFL_MAX_CLASSES; cl++)
			if (classes & (1u << cl))
				json_u64(j, tl_state__class_bytes(smp.at_end, cl));
		json_arr_end(j);
		json_key(j, "owners");
		json_arr(j);
		for (unsigned s = 0; s < INFL_SLOTS; s++)
			if (slots & (1u << s))
				json_u64(j, smp.at_end->owners[s]);
		json_arr_end(j);
		json_key(j, "stage_bytes");
		json_arr(j);
		for (unsigned s = 0; s < INFL_SLOTS; s++)
			if (slots & (1u << s))
				json_u64(j, tl_state__slot_bytes(smp.at_end, s));
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	tl_cursor__free(&c);
	return 0;
}

int render_json(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	__u64 step = o->step_ns ? o->step_ns : render_auto_step(tl, 1000);
	struct json j;
	size_t n;
	const struct tl_proc **procs = render_procs(tl, o, &n);
	int err = 0;

	if (!procs)
		return -ENOMEM;
	json_init(&j, f);
	json_obj(&j);
	json_kv_str(&j, "format", "inflight-report");
	json_kv_u64(&j, "version", 1);
	recording_facts(&j, tl, o);
	json_key(&j, "processes");
	json_arr(&j);
	for (size_t i = 0; i < n && !err; i++) {
		const struct tl_proc *p = procs[i];

		json_obj(&j);
		json_kv_u64(&j, "pid", p->pid);
		json_kv_str(&j, "comm", p->comm);
		json_kv_u64(&j, "events", p->nev);
		json_kv_u64(&j, "owners", p->nlives);
		peak(&j, tl, p);
		stages(&j, tl, p);
		notes(&j, p);
		err = timeline_rows(&j, tl, p, step);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end_line(&j);
	free(procs);
	return err ? err : render_finish(f);
}
