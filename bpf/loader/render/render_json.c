// SPDX-License-Identifier: BSD-2-Clause
/*
 * `report --format json`: one document with the recording's facts and, per process, the
 * figures of the live summary under the same keys (model/proc_facts.h: proc_facts__json, fed
 * with the replay's count of the process's kernel record), then what only a recording
 * knows: each class's and stage's own peak, memory x time per stage, completions per owner
 * kind, losses, the replay check and the timeline at the step. Schema: docs/json.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "util/fmt.h"
#include "contract/names.h"
#include "model/clock.h"
#include "model/proc_facts.h"
#include "render/render.h"

static void name_tables(struct json *j, const struct infl_names *nm)
{
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
}

static void recording_facts(struct json *j, const struct timeline *tl,
			    const struct render_opts *o)
{
	static const char *const modes[] = { "pid", "binary", "command" };
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
	json_kv_str(j, "command", timeline__command(tl, timeline__primary(tl)));
	json_kv_str(j, "binary", r->binary);
	json_kv_str(j, "mode", modes[r->mode < 3 ? r->mode : 0]);
	json_kv_u64(j, "target_pid", r->target_pid);
	json_kv_u64(j, "start_unix_ns", r->start_wall_ns);
	json_kv_f64(j, "start_s", render__t(tl, r->start_mono_ns), 6);
	json_kv_f64(j, "end_s", render__t(tl, tl->t_end), 6);
	json_kv_u64(j, "duration_ns", tl->t_end - r->start_mono_ns);
	json_kv_u64(j, "snapshot_interval_ns", r->interval_ns);
	json_kv_bool(j, "complete", r->has_end && !r->cut);
	json_kv_opt_str(j, "cut", r->cut ? r->cut_why : NULL);
	json_kv_str(j, "tool", r->tool);
	name_tables(j, nm);
	if (r->has_dump) {
		json_key(j, "dump");
		json_obj(j);
		json_kv_u64(j, "number", r->dump.number);
		json_kv_str(j, "trigger", r->dump.trigger);
		json_kv_str(j, "detail", r->dump.detail);
		json_kv_f64(j, "trigger_s", render__t(tl, r->dump.trigger_ns), 6);
		json_kv_f64(j, "window_s", render__t(tl, r->dump.window_ns), 6);
		json_kv_u64(j, "ring_ns", r->dump.ring_ns);
		json_kv_u64(j, "after_ns", r->dump.after_ns);
		json_kv_u64(j, "evicted_events", r->dump.evicted_events);
		json_kv_u64(j, "refused", r->dump.refused);
		json_obj_end(j);
	} else {
		json_key(j, "dump");
		json_null(j);
	}
	json_obj_end(j);
}

static void peaks(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;

	json_key(j, "class_peaks");
	json_arr(j);
	for (unsigned c = 0; c < INFL_CLASSES; c++) {
		if (!p->class_peak[c])
			continue;
		json_obj(j);
		json_kv_str(j, "class", names__cls(nm, c));
		json_kv_u64(j, "bytes", p->class_peak[c]);
		json_kv_f64(j, "time_s", render__t(tl, p->class_peak_ts[c]), 6);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "stage_peaks");
	json_arr(j);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		if (!p->slot_peak[s] && !p->owners_peak[s])
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(nm, s));
		json_kv_opt_u64(j, "id", s < INFL_MAX_STAGES, s);
		json_kv_u64(j, "bytes", p->slot_peak[s]);
		json_kv_opt_f64(j, "time_s", p->slot_peak[s], render__t(tl, p->slot_peak_ts[s]), 6);
		json_kv_u64(j, "owners_max", p->owners_peak[s]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void memory_x_time(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;
	__u32 slots = tl_proc__used_slots(p);
	unsigned __int128 all = 0;

	for (unsigned s = 0; s < INFL_SLOTS; s++)
		all += tl_proc__slot_byte_ns(p, s);
	json_key(j, "memory_x_time");
	json_arr(j);
	for (unsigned s = 0; s < INFL_SLOTS; s++) {
		unsigned __int128 bn = tl_proc__slot_byte_ns(p, s);
		double dwell = tl_proc__mean_dwell_ms(p, s);

		if (!(slots & (1u << s)))
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(nm, s));
		json_kv_u64(j, "byte_ms", (__u64)(bn / 1000000u));
		json_kv_f64(j, "share", all ? (double)bn / (double)all : 0, 6);
		json_kv_u64(j, "stays", s < INFL_MAX_STAGES ? p->dwell_count[s] : 0);
		json_key(j, "mean_dwell_ms");
		if (dwell < 0)
			json_null(j);
		else
			json_f64(j, dwell, 6);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void completions(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	const struct infl_names *nm = &tl->rec->names;

	json_key(j, "completed");
	json_obj(j);
	json_kv_u64(j, "owners", p->retired);
	json_kv_f64(j, "active_s", tl_proc__active_ns(p) / 1e9, 6);
	/* owner kinds apart: proof jobs and partitions are different units of work */
	json_key(j, "by_kind");
	json_obj(j);
	for (unsigned k = 0; k < INFL_SLOTS; k++) {
		if (!p->retired_by_kind[k] && !p->started_by_kind[k])
			continue;
		json_key(j, names__stage(nm, k));
		json_obj(j);
		json_kv_u64(j, "started", p->started_by_kind[k]);
		json_kv_u64(j, "done", p->retired_by_kind[k]);
		json_kv_f64(j, "per_minute", tl_proc__per_minute(p, p->retired_by_kind[k]), 3);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_obj_end(j);
}

static void losses(struct json *j, const struct tl_proc *p)
{
	char what[160];

	json_kv_u64(j, "lives", p->nlives);
	json_kv_u64(j, "recorded_events", p->nev);
	json_key(j, "lost");
	json_obj(j);
	json_kv_u64(j, "seq_gaps", p->seq_gaps);
	json_kv_u64(j, "kernel", p->lost_kernel);
	json_kv_u64(j, "user", p->lost_user);
	json_kv_u64(j, "diverged", p->diverged);
	json_obj_end(j);
	json_kv_bool(j, "replay_exact", tl_proc__exact(p));
	json_key(j, "carried");
	if (p->window_seq) {
		json_obj(j);
		json_kv_u64(j, "after_seq", p->window_seq);
		json_kv_u64(j, "bufs", p->carried_bufs);
		json_kv_u64(j, "owners", p->carried_owners);
		json_obj_end(j);
	} else {
		json_null(j);
	}
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
	__u32 classes = tl_proc__used_classes(p), slots = tl_proc__used_slots(p);
	struct tl_cursor c;
	struct tl_sample smp;
	int err;

	if (tl_cursor__init(&c, p))
		return -ENOMEM;
	json_key(j, "timeline");
	json_obj(j);
	json_kv_u64(j, "step_ns", step);
	json_key(j, "classes");
	json_arr(j);
	for (unsigned cl = 0; cl < INFL_CLASSES; cl++)
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
	/* one sample at least; a clock saturated at its end (render__next_t) ends them */
	for (__u64 t = tl->t0, first = 1; first || t < p->t_end;
	     t = render__next_t(t, step), first = 0) {
		tl_cursor__sample(&c, t, step, &smp);
		json_obj(j);
		json_kv_f64(j, "time_s", render__t(tl, t + step), 6);
		json_kv_u64(j, "bytes", smp.at_end->total_bytes);
		json_kv_u64(j, "max_bytes", smp.max_bytes);
		json_kv_u64(j, "rss_bytes", tl_cursor__rss_at(&c, t + step - 1));
		json_key(j, "class_bytes");
		json_arr(j);
		for (unsigned cl = 0; cl < INFL_CLASSES; cl++)
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
	err = c.err;
	tl_cursor__free(&c);
	return err;
}

/* The shared figures of a process (the live summary's keys), from the replay. */
void render__json_proc_figures(struct json *j, const struct timeline *tl, const struct tl_proc *p)
{
	const struct recording *r = tl->rec;
	bool target = p->pid == r->target_pid;
	struct infl_proc fig = p->fig;
	struct proc_facts pf = {
		.pid = p->pid, .comm = p->comm[0] ? p->comm : NULL,
		.binary = r->binary[0] ? r->binary : NULL, .command = timeline__command(tl, p),
		.argv = target && r->argc ? r->argv : p->argv,
		.wait_status = target && r->has_end ? r->exit_status : -1, .origin = tl->t0,
		.now = p->t_end, .rss_at_peak = p->nrss ? p->rss_at_peak : UINT64_MAX,
		.ring_lost = p->lost_user, .st = &fig, .names = &r->names,
		.approximate = !tl_proc__exact(p), .oom = &p->oom,
	};

	if (pf.command && !pf.command[0])
		pf.command = NULL;
	/* what only the kernel counts, never the stream (hits it skipped or that waited on
	 * the lock): its final record's, so that the JSON says what the text does */
	if (p->kernel_final) {
		fig.lock_timeouts = p->kernel_final->lock_timeouts;
		fig.slot_waits = p->kernel_final->slot_waits;
		fig.pool_waits = p->kernel_final->pool_waits;
	}
	proc_facts__json(j, &pf);
}

int render__json(FILE *f, const struct timeline *tl, const struct render_opts *o)
{
	__u64 step = o->step_ns ? o->step_ns : render__auto_step(tl, 1000);
	struct json j;
	size_t n;
	const struct tl_proc **procs = render__procs(tl, o, &n);
	int err = 0;

	if (!procs)
		return -ENOMEM;
	json_init(&j, f);
	json_obj(&j);
	json_kv_u64(&j, "schema", INFL_JSON_SCHEMA);
	json_kv_str(&j, "format", "inflight-report");
	json_kv_u64(&j, "version", 2);
	clock__json(&j, tl->t0_pid ? tl->t0 : 0, tl->t0_pid);
	recording_facts(&j, tl, o);
	json_key(&j, "processes");
	json_arr(&j);
	for (size_t i = 0; i < n && !err; i++) {
		const struct tl_proc *p = procs[i];

		json_obj(&j);
		render__json_proc_figures(&j, tl, p);
		losses(&j, p);
		peaks(&j, tl, p);
		memory_x_time(&j, tl, p);
		completions(&j, tl, p);
		err = timeline_rows(&j, tl, p, step);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end_line(&j);
	free(procs);
	return err ? err : render__finish(f);
}
