// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight [-i INTERVAL] [--json] TARGET`, the default command: attach, print the per-stage
 * timeline every INTERVAL (none by default: only the summary), and on the target's exit,
 * Ctrl-C or SIGTERM always a final snapshot and the summary.
 *
 * Exit status: with -- CMD, the command's own (128+N when a signal N killed it), or 128+N when
 * inflight itself was stopped by signal N while the command still ran; otherwise 0 once the
 * summary is out. Failures before tracing: the codes of errors.h (docs/cli.md).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cmd/attach_opts.h"
#include "render/render.h"
#include "cmd/commands.h"
#include "cmd/run_loop.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "util/procfs.h"
#include "util/sanitize.h"
#include "model/figures.h"
#include "live/live.h"
#include "live/summary.h"

struct trace_args {
	struct attach_opts attach;
	__u64 interval_ns; /* 0: no timeline, the summary only */
	bool json;
	bool wide;
	const char *out;   /* -o: the timeline and the summary go there */
};

static const struct argp_option trace_options[] = {
	{ NULL, 0, NULL, 0, "Output:", 12 },
	{ "interval", 'i', "INTERVAL", 0,
	  "Print the per-stage timeline every INTERVAL (e.g. 500ms, 1s, 2m; a bare number is "
	  "seconds). Without it only the final summary is printed",
	  0 },
	{ "json", 'j', NULL, 0, "JSON, one object per line (docs/json.md)", 0 },
	{ "wide", 'w', NULL, 0, "A column for every class, however wide the table gets", 0 },
	{ "output", 'o', "FILE", 0, "Write the timeline and the summary to FILE (created or "
	  "truncated, never through a symlink) instead of stdout; with --json and -- CMD it "
	  "keeps CMD's own output apart", 0 },
	{ 0 },
};

static error_t trace_parse(int key, char *arg, struct argp_state *state)
{
	struct trace_args *ta = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &ta->attach;
		return 0;
	case 'i':
		ta->interval_ns = parse_interval_or_die(arg);
		return 0;
	case 'j':
		ta->json = true;
		return 0;
	case 'w':
		ta->wide = true;
		return 0;
	case 'o':
		ta->out = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* The commands of main.c's table, for --help. */
static char *trace_help_filter(int key, const char *text, void *input)
{
	char *out = NULL, *cmds = NULL;
	size_t len = 0;
	FILE *f;

	(void)input;
	if (key != ARGP_KEY_HELP_POST_DOC || !text || !infl_commands)
		return (char *)text;
	f = open_memstream(&cmds, &len);
	if (!f)
		return (char *)text;
	fprintf(f, "COMMANDS:\n");
	for (const struct infl_command *c = infl_commands; c->name; c++)
		fprintf(f, "  inflight %s %s\n      %s\n", c->name, c->args, c->doc);
	fclose(f);
	if (asprintf(&out, "%s\n%s", cmds, text) < 0)
		out = (char *)text;
	free(cmds);
	return out;
}

static const char trace_doc[] =
	"Count every large buffer of a traced program in flight, per buffer class and per "
	"pipeline stage, live, from the program's USDT probes (the inflight probe contract).\v"
	"EXAMPLES:\n"
	"  inflight -- build/prover --pw 10      trace a command; summary when it ends\n"
	"  inflight -i 1s -p 4242                a timeline every second; Ctrl-C ends\n"
	"  inflight -i 500ms --json -b /usr/local/bin/prover > timeline.jsonl\n"
	"  inflight -i 1s --json -o run.jsonl -- build/prover   JSON apart from its output\n"
	"  inflight list build/prover            what a binary carries\n"
	"\n"
	ATTACH_SIGNALS_DOC "tracing; the final snapshot and the\n"
	"summary are always printed. SIGTERM is passed on to a command started with --;\n"
	"Ctrl-C reaches it from the terminal.\n"
	"\n"
	ATTACH_EXIT_DOC "tracing starts:\n"
	"2 usage, 3 not privileged (needs CAP_BPF and CAP_PERFMON), 4 no kernel BTF,\n"
	"5 binary without the contract's probes, 6 no such process, 7 target exited,\n"
	"10 BPF load or attach failed, 12 no such binary or not an ELF file,\n"
	"13 kernel too old (before Linux 5.8). Details: docs/cli.md.";

static const struct argp_child trace_children[] = {
	{ &attach_argp, 0, NULL, 0 },
	{ 0 },
};

static const struct argp trace_argp = {
	trace_options, trace_parse, "(-p PID | -b PATH | -- CMD [ARGS...])", trace_doc,
	trace_children, trace_help_filter, NULL,
};

/*
 * The timeline shows a process that ended in the first interval after its end, then no
 * more (the summary keeps it); `shown` holds when the last two intervals were taken. The
 * last frame, drawn in place over the one before, keeps what that one showed: a process
 * that ended just before it stays on the screen above its summary.
 */
static int print_snapshot(struct session *s, struct live *live, struct snapshot *snap,
			  __u64 shown[2], bool last)
{
	struct snapshot view;
	int err = session__snapshot(s, snap);

	if (err)
		return err;
	if (!live)
		return 0;
	view = *snap;
	view.procs = malloc((snap->nprocs + 1) * sizeof(*view.procs));
	if (!view.procs)
		return -ENOMEM;
	view.nprocs = 0;
	for (int i = 0; i < snap->nprocs; i++)
		if (!snap->procs[i].st.exited ||
		    snap->procs[i].st.exit_ns >= shown[last ? 1 : 0])
			view.procs[view.nprocs++] = snap->procs[i];
	live__print(live, &view);
	free(view.procs);
	shown[1] = shown[0];
	shown[0] = snap->mono_ns;
	return 0;
}

/*
 * Processes that ended while tracing goes on (-b restarts, children, images replaced by exec)
 * wait for the final summary with the living, up to KEEP_ENDED of them: past that the oldest
 * get their summary when they are pushed out, and the session forgets them, so that a long
 * trace across restarts never holds more than KEEP_ENDED final records. The target's own
 * images always wait for the end.
 */
#define KEEP_ENDED 256

static int by_exit(const void *a, const void *b)
{
	const struct proc_snapshot *x = *(const struct proc_snapshot *const *)a;
	const struct proc_snapshot *y = *(const struct proc_snapshot *const *)b;

	return x->st.exit_ns < y->st.exit_ns ? -1 : x->st.exit_ns > y->st.exit_ns;
}

static void report_ended(struct session *s, struct summary_info *info, FILE *out,
			 struct proc_idents *idents)
{
	const struct proc_snapshot **ended;
	const char *end = info->end;
	struct snapshot snap, one;
	int n = 0, over;

	if (session__nended(s) <= KEEP_ENDED || session__snapshot(s, &snap))
		return; /* room left, or the final snapshot will say why */
	if (idents__sync(idents, &snap)) /* those that ended unseen are named before they go */
		infl_warn("out of memory: some processes are not named");
	ended = calloc(snap.nprocs, sizeof(*ended));
	for (int i = 0; ended && i < snap.nprocs; i++)
		if (snap.procs[i].st.exited &&
		    !(info->target_pid && snap.procs[i].pid == (__u32)info->target_pid))
			ended[n++] = &snap.procs[i];
	qsort(ended, n, sizeof(*ended), by_exit);
	over = n - KEEP_ENDED;
	info->end = NULL; /* tracing has not ended */
	for (int i = 0; i < over; i++) {
		one = snap;
		one.nprocs = 1;
		one.procs = (struct proc_snapshot *)ended[i];
		one.torn = 0;
		summary__print(out, &one, session__names(s), info);
		if (!info->json)
			fputc('\n', out);
		session__forget_image(s, ended[i]->pid, ended[i]->st.gen);
		idents__drop(idents, ended[i]->pid, ended[i]->st.gen);
	}
	fflush(out);
	info->end = end;
	free(ended);
	snapshot__free(&snap);
}

/* What the run loop drives (cmd/run_loop.h). */
struct tracer {
	struct session *s;
	struct live *live;
	struct summary_info *info;
	FILE *out;	   /* where the summaries go: stdout or -o FILE */
	__u64 shown_ns[2]; /* when the timeline last printed, and the time before */
	__u32 warned;	   /* kinds of anomaly said on stderr (model/figures.h) */
	__u64 next_check;  /* when to look at the processes next */
	struct proc_idents idents; /* who they are, read when first seen */
};

/* the idents' source for what /proc cannot say (live/idents.h) */
static int kernel_ident(void *ctx, __u32 pid, __u64 gen, struct infl_ident *out)
{
	return session__ident(ctx, pid, gen, out);
}

/* how often new processes are named and new anomalies said: a process that hit a probe is
 * named when it has run this long (or from the timeline's snapshots, with -i) */
#define CHECK_NS 100000000ull

/* New processes named from /proc while they run; anomalies said on stderr when first seen,
 * not only in the summary at the end. */
static void check_procs(struct tracer *t, const struct snapshot *snap)
{
	if (idents__sync(&t->idents, snap))
		infl_warn("out of memory: some processes are not named");
	idents__collect_exits(&t->idents);
	figures__anomalies_warn_new(snap, &t->warned);
}

static void check_now(struct tracer *t, __u64 now)
{
	struct snapshot snap;

	if (now < t->next_check)
		return;
	t->next_check = now + CHECK_NS;
	if (session__snapshot(t->s, &snap))
		return;
	check_procs(t, &snap);
	snapshot__free(&snap);
}

static int trace_wait(void *ctx, int timeout_ms)
{
	struct tracer *t = ctx;

	session__poll(t->s, timeout_ms, NULL, NULL); /* wakes up when the target exits */
	return 0;
}

static int trace_tick(void *ctx, __u64 now)
{
	struct tracer *t = ctx;
	struct snapshot snap = { 0 };
	int err = print_snapshot(t->s, t->live, &snap, t->shown_ns, false);

	if (!err)
		check_procs(t, &snap);
	t->next_check = now + CHECK_NS;
	snapshot__free(&snap);
	if (err)
		infl_warn("snapshot: %s", strerror(-err));
	return 0;
}

static void trace_housekeep(void *ctx, __u64 now)
{
	struct tracer *t = ctx;

	check_now(t, now);
	report_ended(t->s, t->info, t->out, &t->idents);
}

int cmd__trace(int argc, char **argv)
{
	struct trace_args ta = { 0 };
	struct tracer t = { 0 };
	struct snapshot snap = { 0 };
	struct summary_info info = { .target_status = -1 };
	struct run_ops ops = { trace_wait, trace_tick, trace_housekeep, 0 };
	struct run_end end;
	const struct session_opts *so = &ta.attach.so;
	FILE *out = stdout;
	int err, rc = 0;
	char shown[PATH_MAX] = "";

	suggest_check_options(&trace_argp, argc, argv);
	argp_parse(&trace_argp, argc, argv, ARGP_IN_ORDER, NULL, &ta);
	/* the command writes to stdout too: JSON there would interleave with its output */
	if (ta.json && so->mode == SESSION_SPAWN && !ta.out)
		return infl_err(EXIT_USAGE, "give -o FILE for the JSON: the command's own output "
				"stays on stdout", "--json with -- CMD: the JSON lines would share "
				"stdout with the command's output");
	err = run_loop__install_signals();
	if (err)
		return infl_err(EXIT_GENERIC, NULL, "sigaction: %s", strerror(-err));
	/* the output first: a bad path must not cost a started command */
	rc = render__output_open(ta.out, &out);
	if (rc)
		return rc;
	/* the executable as the process names it, while it surely still runs */
	if (so->mode == SESSION_PID && proc_exe_name(so->pid, shown, sizeof(shown)))
		shown[0] = '\0';
	err = session__open(so, &t.s);
	if (err) {
		if (out != stdout)
			fclose(out);
		return err;
	}
	t.idents.kernel = kernel_ident;
	t.idents.kernel_ctx = t.s;
	if (ta.interval_ns) {
		struct live_opts lo = { .json = ta.json, .wide = ta.wide,
					/* stdout is a stream of infl_track_stdout(): ask its fd */
					.tty = !ta.json && isatty(out == stdout ? STDOUT_FILENO
										 : fileno(out)),
					.interval_ns = ta.interval_ns };

		t.live = live__new(&lo, session__names(t.s), out);
		if (!t.live) {
			session__free(t.s);
			return infl_err(EXIT_GENERIC, NULL, "live timeline: %s", strerror(ENOMEM));
		}
	}
	info.binary = so->mode == SESSION_BINARY ? so->binary :
		      so->mode == SESSION_SPAWN	 ? so->argv[0] :
		      shown[0]			 ? shown :
						   session__binary(t.s);
	info.argv = so->mode == SESSION_SPAWN ? so->argv : NULL;
	info.target_pid = session__target_pid(t.s);
	info.json = ta.json;
	t.info = &info;
	t.out = out;
	info.idents = &t.idents;
	/* attached: scripts may wait for this line before they start the workload */
	if (so->mode != SESSION_SPAWN) {
		char *shown_bin = san_dup(info.binary);

		fprintf(stderr, "inflight: tracing %s; Ctrl-C ends and prints the summary\n",
			shown_bin ? shown_bin : "?");
		free(shown_bin);
	}

	ops.interval_ns = ta.interval_ns;
	run_loop__run(t.s, &ops, &t, &end);

	session__stop(t.s); /* the final counters: no probe hit accounted after them */
	err = print_snapshot(t.s, t.live, &snap, t.shown_ns, true);
	if (err) {
		rc = infl_err(EXIT_BPF, NULL, "final snapshot: %s", strerror(-err));
	} else {
		info.end = run_loop__end_text(&end, so->mode);
		info.target_status = end.gone ? end.status : -1;
		info.ring_lost = session__ring_lost(t.s);
		if (t.live)
			info.origin_ns = live__origin(t.live, &info.origin_pid);
		check_procs(&t, &snap);
		summary__print(out, &snap, session__names(t.s), &info);
	}
	if (out == stdout) {
		rc = rc ?: infl_flush_output(stdout, "stdout");
	} else if ((fflush(out) || ferror(out)) && !rc) {
		int e = render__output_errno(out) ?: EIO;

		rc = infl_err(EXIT_IO, e == ENOSPC || e == EDQUOT ? "free some space, or write "
			      "elsewhere" : NULL, "%s: %s: the output is incomplete", ta.out,
			      strerror(e));
	}
	if (out != stdout && render__output_fclose(out) && !rc)
		rc = infl_err(EXIT_IO, NULL, "%s: %s", ta.out, strerror(errno));
	snapshot__free(&snap);
	live__free(t.live);
	idents__free(&t.idents);
	session__free(t.s);
	return rc ?: run_loop__exit_status(&end, so->mode);
}
