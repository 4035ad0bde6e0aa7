// SPDX-License-Identifier: BSD-2-Clause
/* What every output says of one process; its JSON shape. model/proc_facts.h, docs/json.md */
#include <stdint.h>
#include <sys/wait.h>
#include "contract/usdt_notes.h"
#include "model/clock.h"
#include "model/figures.h"
#include "model/proc_facts.h"
#include "oom.h"

#define rel_s clock__rel_s

const char *proc_facts__oom_text(char *buf, size_t len, const struct infl_oom_kill *k,
				 __u64 origin)
{
	char b1[FMT_LEN], b2[FMT_LEN];
	int n = snprintf(buf, len, "the kernel's OOM killer chose it at +%.3f s, holding %s "
			 "tracked in %llu buffers", rel_s(k->ns, origin),
			 fmt_bytes(b1, k->tracked_bytes), (unsigned long long)k->tracked_bufs);

	if (k->rss_bytes && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, ", RSS %s", fmt_bytes(b2, k->rss_bytes));
	return buf;
}

void proc_facts__oom_json(struct json *j, const struct infl_oom_kill *k, __u64 origin)
{
	json_key(j, "oom_kill");
	if (!k || !k->ns) {
		json_null(j);
		return;
	}
	json_obj(j);
	json_kv_f64(j, "time_s", rel_s(k->ns, origin), 6);
	json_kv_u64(j, "tid", k->tid);
	json_kv_u64(j, "seq", k->seq);
	json_kv_u64(j, "tracked_bytes", k->tracked_bytes);
	json_kv_u64(j, "tracked_bufs", k->tracked_bufs);
	json_kv_opt_u64(j, "rss_bytes", k->rss_bytes, k->rss_bytes);
	json_obj_end(j);
}

void proc_facts__unmatched_text(FILE *f, const struct infl_proc *p)
{
	if (p->double_free)
		fprintf(f, "  not from before the attach: %llu free%s of buffers not live (double "
			   "frees)\n", (unsigned long long)p->double_free, fmt_plural(p->double_free));
	if (p->untracked_free)
		fprintf(f, "  not from before the attach: %llu free%s of buffers whose alloc was "
			   "not tracked\n  (map full, lock timeout)\n",
			(unsigned long long)p->untracked_free, fmt_plural(p->untracked_free));
}

static void json_cells(struct json *j, const char *key, const struct infl_cell *cells, int n_cls,
		       const struct infl_names *n)
{
	json_key(j, key);
	json_obj(j);
	for (int c = 0; c < n_cls; c++) {
		if (!cells[c].count && !cells[c].bytes)
			continue;
		json_key(j, names__cls(n, c));
		json_obj(j);
		json_kv_u64(j, "bufs", cells[c].count);
		json_kv_u64(j, "bytes", cells[c].bytes);
		json_obj_end(j);
	}
	json_obj_end(j);
}

/* How the image ended and began. */
static void json_lineage(struct json *j, const struct infl_proc *p)
{
	json_key(j, "ended_by");
	if (p->exited)
		json_str(j, p->flags & INFL_PROC_EXEC ? "exec" : "exit");
	else
		json_null(j);
	json_kv_opt_u64(j, "ppid", p->ppid, p->ppid);
	json_kv_bool(j, "exec_born", p->flags & INFL_PROC_EXEC_BORN);
	json_kv_bool(j, "from_start", p->flags & INFL_PROC_FROM_START);
}

/* Lifetime totals per class. */
static void json_lifetime(struct json *j, const struct infl_proc *p, const struct infl_names *n)
{
	json_key(j, "lifetime");
	json_obj(j);
	for (int c = 0; c < INFL_CLASSES; c++) {
		if (!p->allocated[c].count && !p->freed[c].count)
			continue;
		json_key(j, names__cls(n, c));
		json_obj(j);
		json_kv_u64(j, "allocs", p->allocated[c].count);
		json_kv_u64(j, "bytes_allocated", p->allocated[c].bytes);
		json_kv_u64(j, "frees", p->freed[c].count);
		json_kv_u64(j, "bytes_freed", p->freed[c].bytes);
		json_obj_end(j);
	}
	json_obj_end(j);
}

static void json_peak(struct json *j, const struct proc_facts *pf)
{
	const struct infl_proc *p = pf->st;

	json_key(j, "peak");
	json_obj(j);
	json_kv_u64(j, "bytes", p->peak_bytes);
	json_kv_u64(j, "bufs", p->peak_bufs);
	json_kv_opt_f64(j, "time_s", p->peak_bytes, rel_s(p->peak_ns, pf->origin), 6);
	json_kv_u64(j, "seq", p->peak_seq);
	/* the composition: exact, or off by how many probe hits in flight while it was copied
	 * (null: it is an earlier peak's) */
	json_kv_bool(j, "composition_exact", !p->peak_fuzz);
	json_kv_opt_u64(j, "composition_fuzz", p->peak_fuzz != INFL_PEAK_FUZZ_UNKNOWN,
			p->peak_fuzz);
	json_kv_opt_u64(j, "rss_bytes", pf->rss_at_peak != UINT64_MAX, pf->rss_at_peak);
	figures__json_composition(j, p->peak, p->peak_owners, pf->names);
	json_obj_end(j);

	json_key(j, "rss");
	json_obj(j);
	json_kv_u64(j, "bytes", p->rss_total);
	json_kv_u64(j, "peak_bytes", p->rss_peak);
	json_kv_opt_f64(j, "peak_time_s", p->rss_peak, rel_s(p->rss_peak_ns, pf->origin), 6);
	json_kv_u64(j, "tracked_at_peak", p->tracked_at_rss_peak);
	json_obj_end(j);
}

static void json_at_end(struct json *j, const struct proc_facts *pf)
{
	const struct infl_proc *p = pf->st;
	struct composition_totals t;
	struct leak_candidates lk;

	figures__composition_totals(p->cur, p->owners, &t);
	figures__leak_candidates(p, pf->names, &lk);
	json_key(j, "at_end");
	json_obj(j);
	json_kv_u64(j, "bytes", t.all.bytes);
	json_kv_u64(j, "bufs", t.all.count);
	json_kv_u64(j, "owners", t.owners);
	json_kv_opt_u64(j, "untracked_bytes", p->rss_total,
		     p->rss_total > t.all.bytes ? p->rss_total - t.all.bytes : 0);
	figures__json_composition(j, p->cur, p->owners, pf->names);
	json_key(j, "leak_candidates");
	json_obj(j);
	json_kv_u64(j, "owners", lk.owners);
	json_kv_u64(j, "bufs", lk.all.count);
	json_kv_u64(j, "bytes", lk.all.bytes);
	json_cells(j, "classes", lk.cls, INFL_CLASSES, pf->names);
	json_obj_end(j);
	json_obj_end(j);
}

/* The latest id of a kind the kernel refused: {"id", "undeclared"} (undeclared: an id its
 * image does not declare whose slot another image holds), null when none was. */
static void json_refused(struct json *j, const char *key, __u64 seen)
{
	bool undeclared;
	__u64 id = figures__refused_id(seen, &undeclared);

	json_key(j, key);
	if (!seen) {
		json_null(j);
		return;
	}
	json_obj(j);
	json_kv_u64(j, "id", id);
	json_kv_bool(j, "undeclared", undeclared);
	json_obj_end(j);
}

static void json_dwell(struct json *j, const struct proc_facts *pf)
{
	const struct infl_proc *p = pf->st;
	const struct infl_names *n = pf->names;

	json_key(j, "dwell");
	json_arr(j);
	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		if (!p->dwell_count[s])
			continue;
		json_obj(j);
		json_kv_str(j, "stage", names__stage(n, s));
		json_kv_u64(j, "id", s);
		json_kv_u64(j, "count", p->dwell_count[s]);
		json_kv_u64(j, "sum_ns", p->dwell_sum_ns[s]);
		json_kv_u64(j, "mean_ns", p->dwell_sum_ns[s] / p->dwell_count[s]);
		json_key(j, "hist_log2_us");
		json_arr(j);
		for (int k = 0; k < INFL_HIST_SLOTS; k++)
			json_u64(j, p->dwell_hist[s][k]);
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);

	json_key(j, "unmatched");
	json_obj(j);
	json_cells(j, "free", p->unmatched_free, INFL_CLASSES, n);
	json_key(j, "stage");
	json_obj(j);
	for (int s = 0; s < INFL_MAX_STAGES; s++)
		if (p->unmatched_stage[s])
			json_kv_u64(j, names__stage(n, s), p->unmatched_stage[s]);
	json_obj_end(j);
	json_obj_end(j);

	json_key(j, "anomalies");
	json_obj(j);
	for (size_t i = 0; i < infl_nanomalies; i++)
		json_kv_u64(j, infl_anomalies[i].key, figures__anomaly_count(p, i));
	json_kv_u64(j, "ring_lost", pf->ring_lost);
	json_obj_end(j);
	json_key(j, "refused_ids");
	json_obj(j);
	json_refused(j, "class", p->bad_class_seen);
	json_refused(j, "stage", p->bad_stage_seen);
	json_obj_end(j);
}

void proc_facts__json(struct json *j, const struct proc_facts *pf)
{
	const struct infl_proc *p = pf->st;
	__u64 end = p->exited && p->exit_ns ? p->exit_ns : pf->now;
	int ws = pf->wait_status;

	json_kv_u64(j, "pid", pf->pid);
	json_kv_opt_str(j, "comm", pf->comm);
	json_kv_opt_str(j, "binary", pf->binary);
	json_kv_opt_str(j, "command", pf->command);
	json_key(j, "argv");
	if (pf->argv) {
		json_arr(j);
		for (char *const *a = pf->argv; *a; a++)
			json_str(j, *a);
		json_arr_end(j);
	} else {
		json_null(j);
	}
	json_kv_bool(j, "exited", p->exited);
	json_kv_opt_u64(j, "exit_status", ws >= 0 && WIFEXITED(ws), ws >= 0 ? WEXITSTATUS(ws) : 0);
	json_kv_opt_u64(j, "exit_signal", ws >= 0 && WIFSIGNALED(ws), ws >= 0 ? WTERMSIG(ws) : 0);
	json_lineage(j, p);
	proc_facts__oom_json(j, pf->oom, pf->origin);
	json_kv_opt_f64(j, "first_event_s", p->first_ns, rel_s(p->first_ns, pf->origin), 6);
	json_key(j, "end_s");
	json_f64(j, rel_s(end, pf->origin), 6);
	/* on the clock's whole microseconds, so that end_s - first_event_s is exactly this */
	json_kv_f64(j, "duration_s", p->first_ns && end > p->first_ns ?
		    rel_s(end, pf->origin) - rel_s(p->first_ns, pf->origin) : 0, 6);
	json_key(j, "events");
	json_obj(j);
	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		json_kv_u64(j, usdt_contract[i].name, p->events[i]);
	json_obj_end(j);
	json_key(j, "owners");
	json_obj(j);
	json_kv_u64(j, "started", p->owners_started);
	json_kv_u64(j, "done", p->owners_done);
	json_obj_end(j);
	json_peak(j, pf);
	json_lifetime(j, p, pf->names);
	json_at_end(j, pf);
	json_dwell(j, pf);
	json_kv_bool(j, "exact", !figures__proc_inexact(p) && !pf->approximate);
}
