// SPDX-License-Identifier: BSD-2-Clause
/* The final summary, text and JSON. See summary.h and docs/json.md. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include "contract/usdt_notes.h"
#include "live/summary.h"
#include "model/clock.h"
#include "model/figures.h"
#include "model/proc_facts.h"
#include "util/fmt.h"
#include "util/sanitize.h"

#define STAGE_W 11
#define LIST_COL 39 /* where the "by class" list starts: after the bytes column */
#define LINE_MAX_COLS 79

/*
 * The signal's abbreviation as glibc's sigabbrev_np() gives it on x86-64 (29 is POLL), from a
 * table of our own: that function is glibc >= 2.32 only, and neither older glibc nor musl
 * (the static build) has it.
 */
static const char *sig_abbrev(int sig)
{
	static const char *const names[] = {
		NULL,	"HUP",	 "INT",	   "QUIT", "ILL",  "TRAP", "ABRT",   "BUS",
		"FPE",	"KILL",	 "USR1",   "SEGV", "USR2", "PIPE", "ALRM",   "TERM",
		"STKFLT", "CHLD", "CONT",  "STOP", "TSTP", "TTIN", "TTOU",   "URG",
		"XCPU", "XFSZ",	 "VTALRM", "PROF", "WINCH", "POLL", "PWR",   "SYS",
	};

	return sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])) ? names[sig] : NULL;
}

const char *summary__wait_status(char *buf, size_t len, int status)
{
	if (status < 0)
		snprintf(buf, len, "status unknown");
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by SIG%s%s", sig_abbrev(WTERMSIG(status)) ?: "?",
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, len, "wait status 0x%x", status);
	return buf;
}

#define rel_s clock__rel_s

/* Prints "name count/bytes" items separated by commas, wrapping at LINE_MAX_COLS with
 * continuation lines indented to `indent`; `col` is the current column. */
static void class_list(FILE *f, int col, int indent, const struct infl_cell *by_cls,
		       const struct infl_names *n)
{
	bool first = true;

	for (int c = 0; c < INFL_CLASSES; c++) {
		char item[INFL_NAME_LEN + 2 * FMT_LEN], b[FMT_LEN];
		int len;

		if (!by_cls[c].count && !by_cls[c].bytes)
			continue;
		len = snprintf(item, sizeof(item), "%s %llu/%s", names__cls(n, c),
			       (unsigned long long)by_cls[c].count, fmt_bytes_short(b, by_cls[c].bytes));
		if (!first) {
			fputc(',', f);
			col++;
			/* the item, and room for the comma that may follow it */
			if (col + 1 + len + 1 > LINE_MAX_COLS) {
				fprintf(f, "\n%*s", indent, "");
				col = indent;
			} else {
				fputc(' ', f);
				col++;
			}
		}
		fputs(item, f);
		col += len;
		first = false;
	}
	fputs(first ? "-\n" : "\n", f);
}

/* The stage column: STAGE_W, or wider for a stage name qualified by its image. */
static int stage_w(const struct infl_names *n)
{
	int w = STAGE_W;

	for (unsigned s = 0; s < INFL_MAX_STAGES; s++)
		if ((int)strlen(names__stage(n, s)) > w)
			w = (int)strlen(names__stage(n, s));
	return w;
}

static int row_prefix(FILE *f, int w, const char *label, __u64 owners, struct infl_cell all)
{
	char b[FMT_LEN];

	return fprintf(f, "  %-*s %6llu %6llu %9s  ", w, label, (unsigned long long)owners,
		       (unsigned long long)all.count,
		       all.count || all.bytes ? fmt_bytes(b, all.bytes) : "0");
}

/* The full composition of a moment: a row per stage that holds or owns something. */
static void text_composition(FILE *f, const struct infl_cell cells[INFL_CLASSES][INFL_SLOTS],
			     const __u64 owners[INFL_SLOTS], const struct infl_names *n)
{
	struct composition_totals t;
	int w = stage_w(n), list_col = LIST_COL + w - STAGE_W;

	figures__composition_totals(cells, owners, &t);
	fprintf(f, "  %-*s %6s %6s %9s  %s\n", w, "stage", "owners", "bufs", "bytes",
		"by class (bufs/bytes)");
	for (int s = 0; s < INFL_SLOTS; s++) {
		struct infl_cell by_cls[INFL_CLASSES];

		if (!t.slot[s].count && !t.slot[s].bytes && !owners[s])
			continue;
		for (int c = 0; c < INFL_CLASSES; c++)
			by_cls[c] = cells[c][s];
		class_list(f, row_prefix(f, w, names__stage(n, s), owners[s], t.slot[s]), list_col,
			   by_cls, n);
	}
	class_list(f, row_prefix(f, w, "total", t.owners, t.all), list_col, t.cls, n);
}

/* What the loader read of the process when it first saw it (live/idents.h), or NULL */
static const struct proc_ident *ident_of(const struct proc_snapshot *ps,
					 const struct summary_info *info)
{
	return info->idents ? idents__find(info->idents, ps->pid, ps->st.gen) : NULL;
}

/* The command line of the process: the spawned command's words, else those read from /proc
 * when it was first seen (-b, -p, children); NULL when unknown */
static char *const *proc_argv(const struct proc_snapshot *ps, const struct summary_info *info)
{
	const struct proc_ident *id = ident_of(ps, info);

	if (info->argv && ps->pid == (__u32)info->target_pid)
		return info->argv;
	return id ? id->argv : NULL;
}

/* A process seen through libcuda only: a binary without the contract, or one that has not
 * fired a probe yet */
static bool cuda_alone(const struct infl_proc *p)
{
	__u64 cuda = 0, contract = 0;

	for (int c = INFL_MAX_CLASSES; c < INFL_CLASSES; c++)
		cuda += p->allocated[c].count;
	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		contract += p->events[i];
	return cuda && !contract;
}

static void text_header(FILE *f, const struct proc_snapshot *ps, __u64 now,
			const struct summary_info *info, __u64 origin)
{
	const struct infl_proc *p = &ps->st;
	__u64 end = p->exited && p->exit_ns ? p->exit_ns : now;
	char st[64], d[FMT_LEN], oom[160];
	/* a process other than the target that ended before tracing did (-b, children): the
	 * end of tracing is not its end */
	bool by_itself = p->exited && p->exit_ns && origin && ps->pid != (__u32)info->target_pid;
	const struct proc_ident *id = ident_of(ps, info);

	int col = fprintf(f, "inflight summary: pid %u", ps->pid);
	char *const *words = proc_argv(ps, info);

	if (words && *words) {
		col += fprintf(f, ":");
		/* a long command wraps between its words, each escaped (util/sanitize.h) */
		for (char *const *a = words; *a; a++) {
			int len = (int)san_len(*a);

			if (a != words && col + 1 + len > LINE_MAX_COLS)
				col = fprintf(f, "\n   ");
			fputc(' ', f);
			san_fputs(f, *a);
			col += 1 + len;
		}
	} else if (info->binary) {
		fputs(": ", f);
		san_fputs(f, info->binary);
	}
	fputc('\n', f);
	if (ps->oom.ns)
		fprintf(f, "  OOM-KILLED: killed by the kernel's OOM killer%s",
			ps->pid == (__u32)info->target_pid && info->target_status >= 0 ? " (SIGKILL)" : "");
	else if (p->flags & INFL_PROC_EXEC)
		fprintf(f, "  this image ended by exec (the pid went on as another)");
	else if (ps->pid == (__u32)info->target_pid && info->target_status >= 0)
		fprintf(f, "  %s", summary__wait_status(st, sizeof(st), info->target_status));
	else if (by_itself && id && id->wait_status >= 0) /* from its pidfd */
		fprintf(f, "  %s at +%.3f s", summary__wait_status(st, sizeof(st), id->wait_status),
			clock__rel_s(p->exit_ns, origin));
	else if (by_itself)
		fprintf(f, "  exited at +%.3f s", clock__rel_s(p->exit_ns, origin));
	else
		fprintf(f, "  %s", p->exited ? "exited" : "still running");
	if (info->end)
		fprintf(f, "; tracing ended%s: %s", by_itself ? " later" : "", info->end);
	fputc('\n', f);
	if (ps->oom.ns)
		fprintf(f, "  %s\n", proc_facts__oom_text(oom, sizeof(oom), &ps->oom, origin));
	fprintf(f, "  %s from the first event to the %s\n",
		fmt_duration(d, p->first_ns && end > p->first_ns ? end - p->first_ns : 0),
		p->exited ? "exit" : "end");
	fprintf(f, "  events:");
	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		fprintf(f, "%s %s %llu", i ? "," : "", usdt_contract[i].name,
			(unsigned long long)p->events[i]);
	fputc('\n', f);
	if (cuda_alone(p))
		fprintf(f, "  libcuda's memory calls alone (no contract event): every owner (none)\n");
	fprintf(f, "  owners: %llu started, %llu done\n", (unsigned long long)p->owners_started,
		(unsigned long long)p->owners_done);
	if (p->ppid)
		fprintf(f, "  forked from pid %u%s\n", p->ppid,
			p->flags & INFL_PROC_EXEC_BORN ? "; began with an exec" : "");
	else if (p->flags & INFL_PROC_EXEC_BORN)
		fprintf(f, "  began with an exec\n");
}

static void text_peak(FILE *f, const struct infl_proc *p, const struct infl_names *n,
		      __u64 origin)
{
	char b[FMT_LEN], b2[FMT_LEN];

	if (!p->peak_bytes) {
		fprintf(f, "\npeak: nothing was ever in flight\n");
		return;
	}
	fprintf(f, "\npeak: %s in %llu buffer%s at +%.3f s (event %llu)\n",
		fmt_bytes(b, p->peak_bytes), (unsigned long long)p->peak_bufs, fmt_plural(p->peak_bufs),
		rel_s(p->peak_ns, origin), (unsigned long long)p->peak_seq);
	if (p->peak_fuzz == INFL_PEAK_FUZZ_UNKNOWN)
		fprintf(f, "  (the value is exact; the composition below is an earlier peak's: "
			   "this one came while that was being copied)\n");
	else if (p->peak_fuzz)
		fprintf(f, "  (the value is exact; the composition below may be off by %llu "
			   "probe hit%s in flight while it was copied)\n",
			(unsigned long long)p->peak_fuzz, fmt_plural(p->peak_fuzz));
	text_composition(f, p->peak, p->peak_owners, n);
	if (p->rss_peak)
		fprintf(f, "  rss peak %s at +%.3f s, with %s tracked then\n",
			fmt_bytes(b, p->rss_peak), rel_s(p->rss_peak_ns, origin),
			fmt_bytes(b2, p->tracked_at_rss_peak));
}

static void text_end(FILE *f, const struct infl_proc *p, const struct infl_names *n)
{
	struct composition_totals t;
	struct leak_candidates lk;
	char b[FMT_LEN], b2[FMT_LEN];
	const char *when = p->flags & INFL_PROC_EXEC ? "at the exec" :
			   p->exited ? "at exit" : "at the end";

	figures__composition_totals(p->cur, p->owners, &t);
	if (!t.all.count && !t.all.bytes && !t.owners) {
		fprintf(f, "\nin flight %s: nothing\n", when);
	} else {
		fprintf(f, "\nin flight %s: %s in %llu buffer%s, %llu owner%s\n", when,
			fmt_bytes(b, t.all.bytes), (unsigned long long)t.all.count,
			fmt_plural(t.all.count), (unsigned long long)t.owners, fmt_plural(t.owners));
		text_composition(f, p->cur, p->owners, n);
	}
	if (p->rss_total)
		fprintf(f, "  rss %s, untracked %s\n", fmt_bytes(b, p->rss_total),
			fmt_bytes(b2, p->rss_total > t.all.bytes ? p->rss_total - t.all.bytes : 0));
	figures__leak_candidates(p, n, &lk);
	if (!lk.all.count && !lk.owners) {
		fprintf(f, "leak candidates: none\n");
		return;
	}
	fprintf(f, "leak candidates: %llu owner%s in a terminal stage hold%s %llu buffer%s, %s\n  ",
		(unsigned long long)lk.owners, fmt_plural(lk.owners), lk.owners == 1 ? "s" : "",
		(unsigned long long)lk.all.count, fmt_plural(lk.all.count), fmt_bytes(b, lk.all.bytes));
	class_list(f, 2, 2, lk.cls, n);
}

/* Lifetime totals per class: "abc 60 allocs 15.0 MiB, 60 frees 15.0 MiB". */
static void text_lifetime(FILE *f, const struct infl_proc *p, const struct infl_names *n)
{
	bool any = false;
	int w = STAGE_W;

	for (int c = 0; c < INFL_CLASSES; c++)
		if ((p->allocated[c].count || p->freed[c].count) &&
		    (int)strlen(names__cls(n, c)) > w)
			w = (int)strlen(names__cls(n, c));

	for (int c = 0; c < INFL_CLASSES; c++) {
		char b1[FMT_LEN], b2[FMT_LEN];

		if (!p->allocated[c].count && !p->freed[c].count)
			continue;
		if (!any)
			fprintf(f, "\nlifetime per class (since tracing began):\n");
		any = true;
		fprintf(f, "  %-*s %8llu allocs %9s, %8llu frees %9s\n", w, names__cls(n, c),
			(unsigned long long)p->allocated[c].count, fmt_bytes(b1, p->allocated[c].bytes),
			(unsigned long long)p->freed[c].count, fmt_bytes(b2, p->freed[c].bytes));
	}
}

/* What the reader must know to read the numbers right: RSS not followed, owners that can
 * never end. */
static void text_warnings(FILE *f, const struct infl_proc *p, const struct infl_names *n,
			  const char *rss_off)
{
	__u64 owners = p->owners_started + p->owners_done;

	for (int s = 0; s < INFL_SLOTS; s++)
		owners += p->owners[s];
	if (rss_off)
		fprintf(f, "  rss: %s\n", rss_off);
	if (!n->terminal_mask && owners)
		fprintf(f, "  no stage is terminal: owners never end (each stays in the owner map\n"
			   "  until the process exits); name them with --terminal-stages\n");
}

static void text_dwell(FILE *f, const struct infl_proc *p, const struct infl_names *n)
{
	bool any = false;

	for (int s = 0; s < INFL_MAX_STAGES; s++) {
		char mean[FMT_LEN], total[FMT_LEN];

		if (!p->dwell_count[s])
			continue;
		if (!any)
			fprintf(f, "\ndwell per stage (owners that left it):\n");
		any = true;
		fprintf(f, "  %s: %llu left, mean %s, total %s\n", names__stage(n, s),
			(unsigned long long)p->dwell_count[s],
			fmt_duration(mean, p->dwell_sum_ns[s] / p->dwell_count[s]),
			fmt_duration(total, p->dwell_sum_ns[s]));
		fmt_log2_hist(f, p->dwell_hist[s], INFL_HIST_SLOTS, fmt_us, "    ");
	}
	if (!any)
		fprintf(f, "\ndwell per stage: no owner left a stage\n");
}

static void text_unmatched(FILE *f, const struct infl_proc *p, const struct infl_names *n)
{
	bool frees = false, stages = false;

	for (int c = 0; c < INFL_CLASSES; c++)
		frees |= p->unmatched_free[c].count != 0;
	for (int s = 0; s < INFL_MAX_STAGES; s++)
		stages |= p->unmatched_stage[s] != 0;
	if (!frees && !stages) {
		fprintf(f, "\nunmatched events (from before the attach): none\n");
		proc_facts__unmatched_text(f, p);
		return;
	}
	fprintf(f, "\nunmatched events (buffers and owners from before the attach):\n");
	proc_facts__unmatched_text(f, p);
	if (frees) {
		fprintf(f, "  frees of unknown buffers: ");
		class_list(f, 28, 4, p->unmatched_free, n);
	}
	if (stages) {
		bool first = true;

		fprintf(f, "  unknown owners first seen in:");
		for (int s = 0; s < INFL_MAX_STAGES; s++) {
			if (!p->unmatched_stage[s])
				continue;
			fprintf(f, "%s %s %llu", first ? "" : ",", names__stage(n, s),
				(unsigned long long)p->unmatched_stage[s]);
			first = false;
		}
		fputc('\n', f);
	}
}

static void text_anomalies(FILE *f, const struct infl_proc *p, const struct summary_info *info)
{
	int col = 0;
	bool any = false;

	for (size_t i = 0; i < infl_nanomalies; i++) {
		char item[192];
		int len;

		if (!figures__anomaly_count(p, i))
			continue;
		len = (int)strlen(figures__anomaly_phrase(item, sizeof(item), i, p));
		if (!any)
			col = fprintf(f, "\nanomalies: %s", item);
		else if (col + 2 + len > LINE_MAX_COLS)
			col = fprintf(f, ",\n  %s", item) - 2;
		else
			col += fprintf(f, ", %s", item);
		any = true;
	}
	if (info->ring_lost) {
		col += fprintf(f, "%s%llu ring record%s lost by the loader",
			       any ? ", " : "\nanomalies: ", (unsigned long long)info->ring_lost,
			       fmt_plural(info->ring_lost));
		any = true;
	}
	if (!any)
		fprintf(f, "\nanomalies: none\n");
	else
		fputc('\n', f);
	if (figures__proc_inexact(p))
		fprintf(f, "  the totals above are INEXACT: some updates were not accounted\n"
			   "  (a map was full or a lock timed out); see docs/cli.md\n");
}

static void text_proc(FILE *f, const struct proc_snapshot *ps, const struct snapshot *snap,
		      const struct infl_names *n, const struct summary_info *info, __u64 origin,
		      __u32 opid)
{
	text_header(f, ps, snap->mono_ns, info, origin);
	/* the clock, in every process's summary: each may be read alone */
	if (origin)
		fprintf(f, "  times: seconds since the first probe event (pid %u)\n", opid);
	text_warnings(f, &ps->st, n, snap->rss_off);
	text_peak(f, &ps->st, n, origin);
	text_end(f, &ps->st, n);
	text_lifetime(f, &ps->st, n);
	text_dwell(f, &ps->st, n);
	text_unmatched(f, &ps->st, n);
	text_anomalies(f, &ps->st, info);
}

static void json_proc(struct json *j, const struct proc_snapshot *ps, __u64 now,
		      const struct infl_names *n, const struct summary_info *info, __u64 origin)
{
	bool target = ps->pid == (__u32)info->target_pid;
	const struct proc_ident *id = ident_of(ps, info);
	char cmd[4096] = "";
	struct proc_facts pf = {
		.pid = ps->pid, .binary = info->binary, .wait_status = target ? info->target_status : -1,
		.origin = origin, .now = now, .rss_at_peak = UINT64_MAX,
		.ring_lost = info->ring_lost, .st = &ps->st, .names = n, .oom = &ps->oom,
	};

	if (id) { /* read when the process was first seen */
		pf.comm = id->comm;
		pf.command = id->command;
		pf.argv = id->argv;
		if (!target && !(ps->st.flags & INFL_PROC_EXEC))
			pf.wait_status = id->wait_status;
	}
	if (target && info->argv) {
		size_t o = 0;

		for (char *const *a = info->argv; *a && o < sizeof(cmd); a++)
			o += snprintf(cmd + o, sizeof(cmd) - o, "%s%s", a == info->argv ? "" : " ", *a);
		pf.command = cmd;
		pf.argv = info->argv;
	}
	json_obj(j);
	proc_facts__json(j, &pf);
	json_obj_end(j);
}

void summary__print(FILE *f, const struct snapshot *snap, const struct infl_names *n,
		    const struct summary_info *info)
{
	__u32 opid = info->origin_pid;
	__u64 origin = info->origin_ns;

	if (!origin)
		origin = clock__origin(snap, &opid);
	if (info->json) {
		struct json j;

		json_init(&j, f);
		json_obj(&j);
		json_kv_u64(&j, "schema", INFL_JSON_SCHEMA);
		json_kv_str(&j, "type", "summary");
		clock__json(&j, origin, opid);
		json_kv_opt_str(&j, "reason", info->end);
		json_kv_u64(&j, "torn", snap->torn);
		json_kv_u64(&j, "procs_map_full", snap->procs_map_full);
		json_kv_opt_str(&j, "rss_off", snap->rss_off);
		json_kv_bool(&j, "no_terminal_stage", !n->terminal_mask);
		json_key(&j, "processes");
		json_arr(&j);
		for (int i = 0; i < snap->nprocs; i++)
			json_proc(&j, &snap->procs[i], snap->mono_ns, n, info, origin);
		json_arr_end(&j);
		json_obj_end(&j);
		json_end_line(&j);
		return;
	}
	if (!snap->nprocs) {
		fprintf(f, "inflight summary: no traced process hit a probe%s%s\n",
			info->end ? "; tracing ended: " : "", info->end ? info->end : "");
		if (info->target_status >= 0) {
			char st[64];

			fprintf(f, "  pid %d %s\n", (int)info->target_pid,
				summary__wait_status(st, sizeof(st), info->target_status));
		}
	}
	for (int i = 0; i < snap->nprocs; i++) {
		if (i)
			fputc('\n', f);
		text_proc(f, &snap->procs[i], snap, n, info, origin, opid);
	}
	if (snap->procs_map_full)
		fprintf(f, "\n%llu events of processes beyond --max-procs were not counted\n",
			(unsigned long long)snap->procs_map_full);
	if (snap->torn)
		fprintf(f, "\n%d processes were copied while the kernel kept writing: their "
			   "numbers may disagree slightly\n", snap->torn);
	fflush(f);
}
