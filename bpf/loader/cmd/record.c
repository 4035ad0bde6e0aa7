// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight record -o FILE TARGET`: every probe event (through the BPF ring buffer), a
 * snapshot of every traced process's kernel counters and its RSS every INTERVAL, losses as
 * they are seen, and at the end the final counters, into one recording (docs/recording.md)
 * for `inflight report` and `inflight compare`. Attach modes and exit status as the default
 * command's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "cmd/attach_opts.h"
#include "cmd/commands.h"
#include "cmd/flight.h"
#include "cmd/record_ring.h"
#include "cmd/run_loop.h"
#include "model/figures.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "util/sanitize.h"
#include "util/fmt.h"
#include "util/procfs.h"
#include "recording/rec_format.h"
#include "recording/rec_writer.h"

#define DEFAULT_INTERVAL_NS 100000000ull /* snapshots every 100 ms */
#define MAX_PIDS 4096			 /* processes given a PROC record */

struct record_args {
	struct attach_opts attach;
	const char *out;
	__u64 interval_ns;
	__u64 ring_bytes;
	bool force;
	bool quiet;
	struct flight_opts ring; /* --ring: the flight recorder (ring_ns 0: off) */
};

struct recorder {
	struct rec_writer *w;
	struct session *s;
	__u32 pids[MAX_PIDS]; /* seen, with a PROC record written */
	__u64 drops[MAX_PIDS]; /* ring_drops at the last snapshot */
	bool oom[MAX_PIDS];    /* its OOM record is written */
	__u64 final_gen[MAX_PIDS]; /* the ended image whose final state is written (its gen) */
	int npids;
	__u64 user_lost;      /* session__ring_lost at the last snapshot */
	__u64 snapshots;
	__u32 warned;	      /* kinds of anomaly said on stderr (model/figures.h) */
	unsigned names_gen;   /* session__names_gen when the names were last written */
	int err;	      /* first write error */
	struct flight *flight; /* --ring: events and records go to it, not to a file */
	struct utsname uts;
	char target_cmdline[REC_MAX_STR];
	char *argv1[2];
};

enum { OPT_FORCE = 0x100, OPT_BPF_RING };

static const struct argp_option record_options[] = {
	{ NULL, 0, NULL, 0, "Recording:", 12 },
	{ "output", 'o', "FILE", 0, "Write the recording to FILE (required; created 0640, never "
	  "through a symlink, never over an existing file without --force)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace FILE if it exists", 0 },
	{ "interval", 'i', "INTERVAL", 0,
	  "Snapshot the kernel counters and RSS every INTERVAL (default 100ms)", 0 },
	{ "bpf-ring-size", OPT_BPF_RING, "BYTES", 0,
	  "The BPF ring buffers' size, all CPUs' together: a power of two (default 16777216, "
	  "and each CPU's ring at least 1 MiB); larger loses fewer events in bursts", 0 },
	{ "quiet", 'q', NULL, 0, "No closing line on stderr", 0 },
	{ 0 },
};

static void parse_bpf_ring(const char *arg, const char *opt, __u64 *out)
{
	if (parse_u64(arg, 4096, 1u << 30, out) || (*out & (*out - 1)))
		infl_die(EXIT_USAGE, "a power of two from 4096 to 1073741824", "%s '%s'", opt, arg);
}

/* The flight recorder's options only with --ring, and -o only without. */
static void record_args_end(struct record_args *ra)
{
	struct flight_opts *f = &ra->ring;

	if (!flight_opts__end(f, true)) {
		if (f->ring_size) /* without --ring, --ring-size is the BPF ring's, as it was */
			parse_bpf_ring(f->ring_size, "--ring-size", &ra->ring_bytes);
		if (!ra->out)
			infl_die(EXIT_USAGE, "e.g. inflight record -o run.rec -- CMD",
				 "no output file: give -o FILE");
		return;
	}
	if (ra->out)
		infl_die(EXIT_USAGE, "a flight recorder writes its dumps into --dump-dir",
			 "-o and --ring: give one");
	f->quiet = ra->quiet;
	f->verbose = ra->attach.so.verbose;
}

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct record_args *ra = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &ra->attach;
		state->child_inputs[1] = &ra->ring;
		return 0;
	case 'o':
		ra->out = arg;
		return 0;
	case OPT_FORCE:
		ra->force = true;
		return 0;
	case 'q':
		ra->quiet = true;
		return 0;
	case 'i':
		ra->interval_ns = parse_interval_or_die(arg);
		return 0;
	case OPT_BPF_RING:
		parse_bpf_ring(arg, "--bpf-ring-size", &ra->ring_bytes);
		return 0;
	case ARGP_KEY_END:
		record_args_end(ra);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char record_doc[] =
	"Record every probe event of a traced program, with periodic snapshots of the kernel's "
	"counters and of its RSS, into FILE for `inflight report` (text, csv, json, Chrome "
	"trace, folded stacks, SVG, HTML) and `inflight compare`.\v"
	"EXAMPLES:\n"
	"  inflight record -o run.rec -- build/prover --pw 10\n"
	"  inflight record -o run.rec -p 4242            Ctrl-C ends the recording\n"
	"  inflight report run.rec -o run.svg\n"
	"  inflight record --ring 5m --dump-dir /var/lib/inflight --dump-on 'rss>90%' \\\n"
	"      -b /usr/local/bin/prover        a flight recorder: dumps on OOM, RSS, SIGUSR1\n"
	"\n"
	ATTACH_SIGNALS_DOC "the recording; the final counters are\n"
	"always written. SIGTERM is passed on to a command started with --. With --ring,\n"
	"SIGUSR1 writes a dump.\n"
	"\n"
	ATTACH_EXIT_DOC "recording starts:\n"
	"2 usage, 3 not privileged, 4 no kernel BTF, 5 binary without the contract's\n"
	"probes, 6 no such process, 7 target exited, 9 FILE cannot be written, 10 BPF load\n"
	"or attach failed, 12 no such binary, 13 kernel too old. Details: docs/recording.md.";

static const struct argp_child record_children[] = {
	{ &attach_argp, 0, NULL, 0 },
	{ &flight_argp, 0, NULL, 0 },
	{ 0 },
};

static const struct argp record_argp = {
	record_options, record_parse,
	"-o FILE (-p PID | -b PATH | -- CMD [ARGS...])\n"
	"--ring DURATION --dump-dir DIR (-p PID | -b PATH | -- CMD [ARGS...])", record_doc,
	record_children, NULL, NULL,
};

/*
 * A process that ended before the recorder read /proc (a -b process over within
 * milliseconds): its words (and its comm, when /proc had none) as the kernel read them when
 * it made the record of the image that ran at `now`; cmdline becomes the words joined by
 * spaces. The count of words, 0 when the kernel has none either.
 */
static int ident_from_kernel(struct recorder *r, __u32 pid, __u64 now, char *comm,
			     size_t comm_len, char *cmdline, size_t cmd_len, char *words,
			     char **argv)
{
	struct infl_ident k;
	int argc = 0;

	if (session__ident_at(r->s, pid, now, &k))
		return 0;
	k.comm[sizeof(k.comm) - 1] = '\0';
	if (!comm[0])
		snprintf(comm, comm_len, "%s", k.comm);
	if (!k.args_len || k.args_len > INFL_IDENT_ARGS)
		return 0;
	memcpy(words, k.args, k.args_len);
	words[k.args_len] = '\0'; /* the last word may be cut short: it ends here */
	cmdline[0] = '\0';
	for (size_t i = 0; i < k.args_len && argc < REC_MAX_ARGS; i += strlen(words + i) + 1) {
		argv[argc++] = words + i;
		snprintf(cmdline + strlen(cmdline), cmd_len - strlen(cmdline), "%s%s",
			 argc > 1 ? " " : "", words + i);
	}
	return argc;
}

static int pid_index(struct recorder *r, __u32 pid, __u64 now)
{
	char comm[64], cmdline[REC_MAX_STR], words[REC_MAX_STR], *argv[REC_MAX_ARGS];
	int argc;

	for (int i = 0; i < r->npids; i++)
		if (r->pids[i] == pid)
			return i;
	if (r->npids == MAX_PIDS)
		return -1;
	proc_read(pid, "comm", comm, sizeof(comm));
	proc_read(pid, "cmdline", cmdline, sizeof(cmdline));
	argc = proc_cmdline_words(pid, words, sizeof(words), argv, REC_MAX_ARGS);
	/* gone, or going (its words go with its memory, its comm stays while a zombie) */
	if (!argc)
		argc = ident_from_kernel(r, pid, now, comm, sizeof(comm), cmdline, sizeof(cmdline),
					 words, argv);
	if (r->flight) /* a dump writes it when it holds the process */
		flight__proc(r->flight, pid, now, comm, cmdline, argc, argv);
	else
		rec_writer__proc(r->w, pid, now, comm, cmdline, argc, argv);
	r->pids[r->npids] = pid;
	r->drops[r->npids] = 0;
	r->oom[r->npids] = false;
	r->final_gen[r->npids] = 0;
	return r->npids++;
}

static int on_event(void *ctx, const struct infl_event *ev)
{
	struct recorder *r = ctx;
	int err;

	pid_index(r, ev->pid, ev->ts_ns);
	err = r->flight ? flight__event(r->flight, ev) : rec_writer__event(r->w, ev);
	if (err && !r->err)
		r->err = err;
	return 0; /* a write error ends the recording from the main loop, not mid-batch */
}

/* A snapshot of every process: counters, RSS (kernel and statm) and new losses. */
static int snapshot(struct recorder *r, struct snapshot *snap)
{
	__u64 lost;
	int err = session__snapshot(r->s, snap);

	if (err)
		return err;
	figures__anomalies_warn_new(snap, &r->warned); /* said when first seen, as trace does */
	/* an image with classes or stages of its own was attached: the names as they are now */
	if (!r->flight && session__names_gen(r->s) != r->names_gen) {
		r->names_gen = session__names_gen(r->s);
		rec_writer__names(r->w, session__names(r->s));
	}
	for (int i = 0; i < snap->nprocs; i++) {
		const struct proc_snapshot *ps = &snap->procs[i];
		int k = pid_index(r, ps->pid, snap->mono_ns);

		/* an ended image's final state is written once, not every interval after */
		if (k >= 0 && ps->st.exited && r->final_gen[k] == ps->st.gen)
			continue;
		if (k >= 0 && ps->st.exited)
			r->final_gen[k] = ps->st.gen;
		rec_writer__snapshot(r->w, snap->mono_ns, ps->pid, &ps->st);
		if (ps->st.rss_total)
			rec_writer__rss(r->w, snap->mono_ns, ps->pid, REC_RSS_KERNEL,
					ps->st.rss_total);
		if (!ps->st.exited) {
			__u64 rss = proc_statm_rss(ps->pid);

			if (rss)
				rec_writer__rss(r->w, snap->mono_ns, ps->pid, REC_RSS_STATM, rss);
		}
		if (k >= 0 && ps->oom.ns && !r->oom[k]) {
			rec_writer__oom(r->w, ps->pid, &ps->oom);
			r->oom[k] = true;
		}
		if (k >= 0 && ps->st.ring_drops > r->drops[k]) {
			rec_writer__lost(r->w, snap->mono_ns, ps->pid, REC_LOST_KERNEL,
					 ps->st.ring_drops - r->drops[k]);
			r->drops[k] = ps->st.ring_drops;
		}
	}
	lost = session__ring_lost(r->s);
	if (lost > r->user_lost) {
		rec_writer__lost(r->w, snap->mono_ns, session__target_pid(r->s), REC_LOST_USER,
				 lost - r->user_lost);
		r->user_lost = lost;
	}
	r->snapshots++;
	return rec_writer__flush(r->w);
}

static __u64 wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* What the header says; its strings live as long as the recorder and the session. */
static struct rec_header_info header_info(struct recorder *r, const struct session_opts *so,
					  __u64 interval_ns, __u64 mono, __u64 wall)
{
	struct rec_header_info h = {
		.names = session__names(r->s), .binary = session__binary(r->s), .mode = so->mode,
		.target_pid = session__target_pid(r->s), .start_wall_ns = wall,
		.start_mono_ns = mono, .interval_ns = interval_ns,
		.tool = argp_program_version,
	};

	uname(&r->uts);
	h.host = r->uts.nodename;
	if (so->mode == SESSION_SPAWN) {
		for (h.argc = 0; so->argv[h.argc]; h.argc++)
			;
		h.argv = so->argv;
	} else if (h.target_pid) {
		proc_read(h.target_pid, "cmdline", r->target_cmdline, sizeof(r->target_cmdline));
		r->argv1[0] = r->target_cmdline;
		h.argc = 1;
		h.argv = r->argv1;
	}
	return h;
}

static int write_header(struct recorder *r, const struct record_args *ra, __u64 mono,
			__u64 wall)
{
	struct rec_header_info h = header_info(r, &ra->attach.so, ra->interval_ns, mono, wall);

	if (r->flight)
		return 0; /* each dump has its own */
	r->names_gen = session__names_gen(r->s);
	return rec_writer__header(r->w, &h);
}

/* What the run loop drives (cmd/run_loop.h): the ring buffer, and a snapshot per interval. */
static int record_wait(void *ctx, int timeout_ms)
{
	struct recorder *r = ctx;
	int n = session__poll(r->s, timeout_ms, on_event, r);

	if (n < 0 && n != -EINTR)
		infl_warn("ring buffer: %s", strerror(-n));
	return r->err; /* a write error ends the recording */
}

static int record_tick(void *ctx, __u64 now)
{
	struct recorder *r = ctx;
	struct snapshot snap = { 0 };
	int err = snapshot(r, &snap);

	if (!err && r->flight)
		err = flight__tick(r->flight, &snap, now);
	snapshot__free(&snap);
	return err ?: r->err;
}

/* Gives the file to the user who ran `sudo inflight record`, so that report needs no root. */
static void chown_to_sudo_user(const char *path)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	__u64 u, g;

	if (!uid || !gid || parse_u64(uid, 0, UINT32_MAX - 1, &u) ||
	    parse_u64(gid, 0, UINT32_MAX - 1, &g))
		return;
	if (fchownat(AT_FDCWD, path, u, g, AT_SYMLINK_NOFOLLOW))
		infl_warn("%s: cannot give it to uid %s: %s", path, uid, strerror(errno));
}

static int finish(struct recorder *r, struct snapshot *snap, int status, bool gone)
{
	struct rec_end_info e = { .mono_ns = session__now_ns(), .wall_ns = wall_ns(),
				  .exit_status = gone ? status : -1 };
	__u32 *pids = calloc(snap->nprocs + 1, sizeof(*pids));
	struct infl_proc *st = calloc(snap->nprocs + 1, sizeof(*st));
	int err;

	if (!pids || !st) {
		free(pids);
		free(st);
		return -ENOMEM;
	}
	for (int i = 0; i < snap->nprocs; i++) {
		pids[i] = snap->procs[i].pid;
		st[i] = snap->procs[i].st;
	}
	e.events = rec_writer__events(r->w);
	e.user_lost = session__ring_lost(r->s);
	e.nprocs = snap->nprocs;
	e.pids = pids;
	e.procs = st;
	err = rec_writer__end(r->w, &e);
	free(pids);
	free(st);
	return err;
}

static void on_sigusr1(int sig)
{
	(void)sig;
	flight_sigusr1 = 1;
}

/* The dump directory must take files: said before anything is attached. */
static int check_dump_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return infl_err(EXIT_IO, "create it first", "--dump-dir %s: %s", dir,
				strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return infl_err(EXIT_IO, NULL, "--dump-dir %s: %s", dir, strerror(ENOTDIR));
	if (access(dir, W_OK | X_OK))
		return infl_err(EXIT_IO, NULL, "--dump-dir %s: %s", dir, strerror(errno));
	return 0;
}

/* ---- the flight recorder (cmd/record_ring.h), for record --ring and serve --ring ---- */

struct ring_rec {
	struct recorder r;
};

int ring_rec__prepare(const struct flight_opts *o)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 }; /* no SA_RESTART: waits wake up */
	int err = check_dump_dir(o->dir);

	if (err)
		return err;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return infl_err(EXIT_GENERIC, NULL, "sigaction: %s", strerror(errno));
	return 0;
}

int ring_rec__new(struct session *s, const struct session_opts *so, const struct flight_opts *o,
		  __u64 interval_ns, struct ring_rec **out)
{
	struct ring_rec *rr = calloc(1, sizeof(*rr));
	struct rec_header_info h;
	int err;

	*out = NULL;
	if (!rr)
		return infl_err(EXIT_GENERIC, NULL, "flight recorder: %s", strerror(ENOMEM));
	rr->r.s = s;
	h = header_info(&rr->r, so, interval_ns, session__now_ns(), wall_ns());
	err = flight__new(o, &h, &rr->r.flight);
	if (err) {
		free(rr);
		return err;
	}
	rr->r.w = flight__writer(rr->r.flight);
	*out = rr;
	return 0;
}

int ring_rec__poll(struct ring_rec *rr, int timeout_ms)
{
	return record_wait(&rr->r, timeout_ms);
}

int ring_rec__tick(struct ring_rec *rr, __u64 now)
{
	return record_tick(&rr->r, now);
}

int ring_rec__finish(struct ring_rec *rr, int status)
{
	struct snapshot snap = { 0 };
	int err;

	session__stop(rr->r.s);
	while (session__poll(rr->r.s, 0, on_event, &rr->r) > 0)
		;
	err = snapshot(&rr->r, &snap);
	if (!err)
		flight__finish(rr->r.flight, &snap, status);
	snapshot__free(&snap);
	return err ?: rr->r.err;
}

const struct flight *ring_rec__flight(const struct ring_rec *rr)
{
	return rr->r.flight;
}

void ring_rec__free(struct ring_rec *rr)
{
	if (!rr)
		return;
	flight__free(rr->r.flight);
	free(rr);
}

static int ring_wait(void *ctx, int timeout_ms)
{
	return ring_rec__poll(ctx, timeout_ms);
}

static int ring_tick(void *ctx, __u64 now)
{
	return ring_rec__tick(ctx, now);
}

/* `record --ring`: the flight recorder (cmd/flight.h). Nothing is written until a trigger. */
static int record_ring(struct record_args *ra)
{
	struct ring_rec *rr;
	struct session *s;
	struct session_opts *so = &ra->attach.so;
	struct run_ops ops = { ring_wait, ring_tick, NULL, ra->interval_ns };
	struct run_end end = { .status = -1 };
	__u64 start;
	int err = ring_rec__prepare(&ra->ring);

	if (err)
		return err;
	if (run_loop__install_signals())
		return infl_err(EXIT_GENERIC, NULL, "sigaction: %s", strerror(errno));
	err = session__open(so, &s);
	if (err)
		return err;
	start = session__now_ns();
	err = ring_rec__new(s, so, &ra->ring, ra->interval_ns, &rr);
	if (err) {
		session__free(s);
		return err;
	}
	if (so->mode != SESSION_SPAWN && !ra->quiet) {
		char *bin = san_dup(session__binary(s)), *dir = san_dup(ra->ring.dir);

		fprintf(stderr, "inflight: recording %s into a ring of the last %.0f s; dumps go "
			"to %s; Ctrl-C ends\n", bin ? bin : "?", ra->ring.ring_ns / 1e9,
			dir ? dir : "?");
		free(bin);
		free(dir);
	}
	run_loop__run(s, &ops, rr, &end);
	err = end.err;
	if (!err)
		err = ring_rec__finish(rr, end.gone ? end.status : -1);
	if (err)
		infl_err(EXIT_IO, NULL, "flight recorder: %s", strerror(-err));
	else if (!ra->quiet)
		flight__say(ring_rec__flight(rr), session__now_ns() - start);
	ring_rec__free(rr);
	session__free(s);
	return err ? EXIT_IO : run_loop__exit_status(&end, so->mode);
}

int cmd__record(int argc, char **argv)
{
	struct record_args ra = { .interval_ns = DEFAULT_INTERVAL_NS };
	struct recorder r = { 0 };
	struct snapshot snap = { 0 };
	struct session_opts *so = &ra.attach.so;
	struct run_ops ops = { record_wait, record_tick, NULL, 0 };
	struct run_end end = { .status = -1 };
	__u64 start, wall, lost_total = 0;
	int err, rc = 0;
	char b1[FMT_LEN], b2[FMT_LEN];

	suggest_check_options(&record_argp, argc, argv);
	argp_parse(&record_argp, argc, argv, ARGP_IN_ORDER, NULL, &ra);
	so->record_events = true;
	if (ra.ring_bytes)
		so->ringbuf_bytes = ra.ring_bytes;
	if (ra.ring.ring_ns)
		return record_ring(&ra);
	err = run_loop__install_signals();
	if (err)
		return infl_err(EXIT_GENERIC, NULL, "sigaction: %s", strerror(-err));
	/* the file first: a bad path must not cost a started command */
	err = rec_writer__create(ra.out, ra.force ? REC_W_FORCE : 0, &r.w);
	if (err == -ELOOP)
		return infl_err(EXIT_IO, "remove it, or add --force to replace the link itself (its "
				"target is never touched)",
				"cannot create %s: it is a symbolic link, and a recording is never "
				"written through one", ra.out);
	if (err)
		return infl_err(EXIT_IO, err == -EEXIST ? "add --force to replace it" : NULL,
				"cannot create %s: %s", ra.out, strerror(-err));
	chown_to_sudo_user(ra.out);
	err = session__open(so, &r.s);
	if (err) {
		rec_writer__close(r.w);
		unlink(ra.out);
		return err;
	}
	start = session__now_ns();
	wall = wall_ns();
	err = write_header(&r, &ra, start, wall);
	/* also when not a terminal: scripts wait for this line to know the probes are live */
	if (so->mode != SESSION_SPAWN && !ra.quiet) {
		char *bin = san_dup(session__binary(r.s)), *out = san_dup(ra.out);

		fprintf(stderr, "inflight: recording %s to %s; Ctrl-C ends\n", bin ? bin : "?",
			out ? out : "?");
		free(bin);
		free(out);
	}

	ops.interval_ns = ra.interval_ns;
	if (!err)
		run_loop__run(r.s, &ops, &r, &end);
	err = err ?: end.err;
	/* no more events, what the ring buffer still holds, then the final counters */
	session__stop(r.s);
	while (session__poll(r.s, 0, on_event, &r) > 0)
		;
	if (!err)
		err = snapshot(&r, &snap);
	if (!err)
		err = finish(&r, &snap, end.status, end.gone);
	for (int i = 0; i < snap.nprocs; i++)
		lost_total += snap.procs[i].st.ring_drops;
	lost_total += session__ring_lost(r.s);
	snapshot__free(&snap);
	if (!err)
		err = r.err;
	{
		__u64 events = rec_writer__events(r.w), bytes = rec_writer__bytes(r.w);
		int cerr = rec_writer__close(r.w);

		if (!err)
			err = cerr;
		if (err)
			rc = infl_err(EXIT_IO, NULL, "recording to %s failed: %s", ra.out,
				      strerror(-err));
		else if (!ra.quiet)
			fprintf(stderr, "inflight: recorded %llu event record%s (%llu lost) and %llu "
				"snapshot%s over %s to %s (%s); render it: inflight report %s\n",
				(unsigned long long)events, fmt_plural(events),
				(unsigned long long)lost_total, (unsigned long long)r.snapshots,
				fmt_plural(r.snapshots),
				fmt_duration(b1, session__now_ns() - start), ra.out,
				fmt_bytes(b2, bytes), ra.out);
	}
	session__free(r.s);
	return rc ?: run_loop__exit_status(&end, so->mode);
}
