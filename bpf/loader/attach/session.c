// SPDX-License-Identifier: BSD-2-Clause
/*
 * A tracing session: checks, kernel features, load, attach (pid, binary or spawned
 * command) and ring-buffer polling; lifecycle.c follows the traced processes' lives and
 * takes the snapshots. Every failure ends in one error line and a named exit code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/caps.h"
#include "attach/cuda.h"
#include "attach/detach.h"
#include "attach/entry.h"
#include "attach/libs.h"
#include "attach/lifecycle.h"
#include "attach/redeploy.h"
#include "attach/sema.h"
#include "attach/service.h"
#include "attach/session_int.h"
#include "attach/snapshot_read.h"
#include "attach/stage_roles.h"
#include "attach/usdt_attach.h"
#include "attach/watch.h"
#include "util/clock.h"
#include "util/errors.h"
#include "contract/usdt_binary.h"
#include "util/procfs.h"

static bool libbpf_verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !libbpf_verbose)
		return 0;
	if (!libbpf_verbose)
		return 0; /* failures are reported once, in our own words */
	return vfprintf(stderr, fmt, ap);
}

__u64 session__now_ns(void)
{
	return mono_ns();
}

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/* SPAWN: a binary refused whatever its libraries carry (32-bit, a provider mismatch, no
 * semaphores...) is refused before it runs at all. */
static int refuse_early(struct session *s, const char *shown)
{
	struct usdt_binary b;
	int err = usdt_binary__read(s->path, &b);

	if (err)
		return usdt_attach__read(s->path, shown, &s->bin); /* the words for the error */
	err = b.verdict == USDT_OK || (b.verdict == USDT_MISSING && !b.other_provider[0]);
	usdt_binary__free(&b);
	return err ? 0 : usdt_attach__read(s->path, shown, &s->bin);
}

/*
 * PID and SPAWN (after its entry point: the libraries it links are mapped): the target's
 * executable, or else the first library it maps that carries the contract; a program
 * without either that calls dlopen() is traced for the libraries it loads later.
 */
static int choose_image(struct session *s, const char *shown)
{
	char lib[PATH_MAX];
	int err = usdt_binary__read(s->path, &s->bin);

	/* a process that exits while its files are read: what happened, not what failed */
	if (err && s->target > 0 && proc_gone(s->target))
		return infl_err(EXIT_TARGET_EXITED, NULL,
				"pid %d exited before inflight could attach to it", s->target);
	if (err) /* s->bin is empty again: read_binary says why */
		return usdt_attach__read(s->path, shown, &s->bin);
	if (s->bin.verdict == USDT_OK)
		return 0;
	if (s->bin.verdict == USDT_MISSING && !s->bin.other_provider[0]) {
		if (!libs__first(s->target, s->path, lib, sizeof(lib))) {
			usdt_binary__free(&s->bin);
			snprintf(s->path, sizeof(s->path), "%s", lib);
			s->lib_main = true;
			return usdt_attach__read(s->path, lib, &s->bin);
		}
		if (s->target > 0 && libs__maps_cuda(s, s->target)) {
			s->deferred = s->cuda_only = true;
			infl_warn("%s carries none of the contract's probes: tracing libcuda's "
				  "memory calls alone, owners (none)%s", shown,
				  s->bin.imports_dlopen ? ", and what it loads that does" : "");
			return 0;
		}
		if (s->bin.imports_dlopen || s->bin.imports_exec) {
			s->deferred = true;
			infl_warn("%s carries none of the contract's probes: tracing what it loads "
				  "(dlopen) or runs (exec) that does", shown);
			return 0;
		}
	}
	usdt_binary__free(&s->bin);
	return usdt_attach__read(s->path, shown, &s->bin);
}

/*
 * Starts the command stopped right after its exec (PTRACE_TRACEME), so that the probes can be
 * attached to it, by pid, before its first instruction. session__open detaches it. The child
 * gives up every privilege first (caps__child_setup): what fails there, or the exec, comes
 * back through the pipe as {stage, errno}.
 */
static int spawn_stopped(const struct session_opts *o, pid_t *out)
{
	char **argv = o->argv;
	int pipefd[2], status, child_err[2] = { 0, 0 };
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return infl_err(EXIT_GENERIC, NULL, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return infl_err(EXIT_GENERIC, NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		/* the command gets none of the tracer's capabilities, now or at a later exec */
		child_err[1] = -caps__child_setup(&o->user, o->allow_new_privs);
		if (child_err[1])
			child_err[0] = 1;
		else if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		if (!child_err[0])
			child_err[1] = errno;
		if (write(pipefd[1], child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], child_err, sizeof(child_err)) == sizeof(child_err)) {
		close(pipefd[0]);
		waitpid(pid, &status, 0);
		if (child_err[0])
			return infl_err(EXIT_NOT_PRIV, "see docs/production.md, Privileges",
					"cannot start %s without privileges: %s", argv[0],
					strerror(child_err[1]));
		return infl_err(child_err[1] == ENOENT || child_err[1] == EACCES ? EXIT_NO_BINARY
										 : EXIT_GENERIC,
				"give a command that exists (a path, or a name on $PATH)",
				"cannot run %s: %s", argv[0], strerror(child_err[1]));
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		return infl_err(EXIT_TARGET_EXITED, NULL, "%s exited before it could be traced",
				argv[0]);
	}
	*out = pid;
	return 0;
}

/* The programs this kernel loads: one lock form (proc_lock.bpf.h), RSS if it can. */
static void choose_programs(struct session *s, const struct session_opts *o)
{
	struct inflight_bpf *k = s->skel;
	bool cas = s->feat.atomics && s->feat.bpf_loop; /* proc_lock.bpf.h */
	struct bpf_program *cas_progs[] = { k->progs.on_buf_alloc, k->progs.on_buf_free,
					    k->progs.on_stage };
	struct bpf_program *map_progs[] = { k->progs.on_buf_alloc_nocas, k->progs.on_buf_free_nocas,
					    k->progs.on_stage_nocas };

	for (int i = 0; i < INFL_PROBE__COUNT; i++) {
		bpf_program__set_autoload(cas_progs[i], cas);
		bpf_program__set_autoload(map_progs[i], !cas);
		s->progs[i] = cas ? cas_progs[i] : map_progs[i];
	}
	bpf_program__set_autoload(k->progs.lock_wait_more, !cas);
	s->rss_off = o->no_rss ? "not followed (--no-rss)" : features__rss_unavailable(&s->feat);
	{
		/* [lock form][layout]: inflight.bpf.c's RSS_PROG rows */
		struct bpf_program *rss[2][2] = {
			{ k->progs.on_rss_stat_nocas, k->progs.on_rss_stat_nocas_pre62 },
			{ k->progs.on_rss_stat, k->progs.on_rss_stat_pre62 },
		};

		s->rss_prog = s->rss_off ? NULL : rss[cas][s->feat.rss == RSS_LAYOUT_ATOMIC];
		for (int l = 0; l < 2; l++)
			for (int v = 0; v < 2; v++)
				bpf_program__set_autoload(rss[l][v], rss[l][v] == s->rss_prog);
	}
}

/* The kernel side's table of traced pids (inflight.bpf.c: traced_pids), one byte a pid up
 * to pid_max, 64 to a chunk; a pid past it (pid_max raised later) is looked up the slow way. */
static __u32 pid_chunks(void)
{
	char buf[32] = "";
	unsigned long max;

	proc_read_file("/proc/sys/kernel/pid_max", buf, sizeof(buf));
	max = strtoul(buf, NULL, 10);
	if (max < 32768 || max > (1ul << 22))
		max = max ? 1ul << 22 : 32768; /* PID_MAX_LIMIT on 64-bit, or the default */
	return (__u32)((max + 63) / 64);
}

static int configure(struct session *s, const struct session_opts *o)
{
	struct inflight_bpf *skel = s->skel;
	__u32 ring = o->ringbuf_bytes ? o->ringbuf_bytes : 16u << 20;
	int err = 0;

	choose_programs(s, o);
	cuda_attach__prepare(s->cuda, skel, s->feat.atomics && s->feat.bpf_loop);
	skel->data->entry_stage_mask = s->names.entry_mask;
	skel->bss->terminal_stage_mask = s->names.terminal_mask;
	skel->rodata->record_events = o->record_events;
	skel->rodata->page_shift = (__u32)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	skel->rodata->traced_set = s->mode != SESSION_BINARY;
	if (o->lock_wait_ns)
		skel->rodata->lock_wait_ns = o->lock_wait_ns;
	skel->rodata->defer_all = o->defer_all;
	skel->rodata->follow_forks = s->follow;
	/* the recorder is woken when a quarter of the ring waits (inflight.bpf.c) */
	skel->rodata->events_wake_bytes = ring / 4;
	if (o->max_procs) {
		err = err ?: bpf_map__set_max_entries(skel->maps.procs, o->max_procs);
		err = err ?: bpf_map__set_max_entries(skel->maps.locks, o->max_procs);
		err = err ?: bpf_map__set_max_entries(skel->maps.deferred,
						      INFL_DEFER_QUEUES(o->max_procs));
		err = err ?: bpf_map__set_max_entries(skel->maps.deferred_of,
						      INFL_DEFER_QUEUES(o->max_procs));
	}
	/* the queues behind the lock exist with the LK_CAS programs only (deferred.bpf.h) */
	if (!(s->feat.atomics && s->feat.bpf_loop)) {
		err = err ?: bpf_map__set_max_entries(skel->maps.deferred, 1);
		err = err ?: bpf_map__set_max_entries(skel->maps.deferred_of, 1);
	}
	if (o->max_bufs)
		err = err ?: bpf_map__set_max_entries(skel->maps.bufs, o->max_bufs);
	if (o->max_owners)
		err = err ?: bpf_map__set_max_entries(skel->maps.owners, o->max_owners);
	if (o->record_events)
		err = err ?: bpf_map__set_max_entries(skel->maps.events, ring);
	err = err ?: bpf_map__set_max_entries(skel->maps.ctl, CTL_RING_BYTES);
	err = err ?: bpf_map__set_max_entries(skel->maps.traced_pids, pid_chunks());
	return err;
}

/* Before load: the USDT programs for the mechanism this kernel does best. */
static int prepare_usdt(struct session *s)
{
	struct usdt_attach_cfg cfg = {
		.specs = s->skel->maps.usdt_specs,
		.ips = s->skel->maps.usdt_ips,
		.ip_cache = s->skel->maps.usdt_ip_cache,
		.have_cookie = (bool *)&s->skel->rodata->usdt_have_cookie,
		.verbose = libbpf_verbose,
	};

	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		cfg.progs[i] = s->progs[i];
	return usdt_attach__new(&cfg, &s->usdt);
}

/* The session's words for an error of libbpf or the kernel (`err`: -errno). */
static int load_error(int err, const char *what)
{
	return infl_bpf_err(err, what);
}

/* The LK_MAP programs' longer wait (inflight.bpf.c: lock_wait_more) is a tail call: its
 * slot is set here, where those programs were loaded. */
static int link_wait_more(struct session *s)
{
	int fd = bpf_program__fd(s->skel->progs.lock_wait_more), slot = 0;

	if (fd < 0)
		return 0; /* LK_CAS: not loaded, not needed */
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lock_wait_progs), &slot, &fd, BPF_ANY))
		return load_error(-errno, "set the lock's wait program");
	return 0;
}

/*
 * The session's names from its images' slots (contract/images.h), with the command line's
 * entry and terminal stages over the notes'; the kernel's entry and terminal stages with
 * them (set before the process goes on: one that maps a new image is stopped meanwhile,
 * attach/watch.h). Outputs read s->names while this runs: a name only ever changes from
 * its numeric default or to its qualified form, at an attach.
 */
static void apply_names(struct session *s)
{
	struct infl_names n;

	images__names(&s->slots, &n);
	stage_roles__apply(&s->roles, &n);
	if (!memcmp(&n, &s->names, sizeof(n)))
		return;
	s->names = n;
	__atomic_add_fetch(&s->names_gen, 1, __ATOMIC_RELEASE);
	s->skel->data->entry_stage_mask = s->names.entry_mask;
	s->skel->bss->terminal_stage_mask = s->names.terminal_mask;
}

/* Image `b`'s ids placed among the session's slots: its table in `tab`, every earlier
 * image's sites given theirs anew (a slot this one took refuses what they did not claim). */
static int add_image(struct session *s, const char *shown, const struct usdt_binary *b,
		     unsigned *tag, struct image_slots *tab)
{
	struct image_slots_used counted;
	int refused, err;

	lifecycle__counted_slots(s->life, &counted);
	err = images__add(&s->slots, shown, b, &counted, tag, &refused);

	if (err)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	images__table(&s->slots, *tag, tab);
	for (int t = 0; t < s->slots.nimg; t++) {
		struct image_slots other;

		if ((unsigned)t == *tag)
			continue;
		images__table(&s->slots, (unsigned)t, &other);
		err = usdt_attach__retable(s->usdt, (unsigned)t, &other);
		if (err)
			return infl_err(EXIT_BPF, NULL, "%s: update the probe specs of the images "
					"attached before it: %s", shown, strerror(-err));
	}
	apply_names(s);
	return 0;
}

/* -b without the contract: the binary's processes are told apart by its file (the kernel
 * side's images map) as if its probes had been attached */
static int note_image(struct session *s, const char *path)
{
	struct infl_image_key key;
	__u64 now = session__now_ns();
	int err = proc_image_key(path, &key);

	if (err)
		return infl_err(EXIT_NO_BINARY, NULL, "%s: %s", path, strerror(-err));
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.images), &key, &now, BPF_ANY);
	return 0;
}

static int attach_image(struct session *s, const char *path, const char *shown, pid_t pid)
{
	struct usdt_binary other, *b = &s->bin;
	struct proc_image file;
	struct image_slots tab;
	unsigned tag = 0;
	__u64 now;
	int err;

	/* held open: a /proc/PID/root/... path stops working when that process exits */
	err = proc_image_open(path, &file);
	if (err) {
		if (s->target > 0 && proc_gone(s->target)) /* a zombie's root is gone too */
			return infl_err(EXIT_TARGET_EXITED, NULL, "pid %d exited before it could be "
					"traced", s->target);
		return infl_err(EXIT_NO_BINARY, NULL, "%s: %s", path, strerror(-err));
	}
	for (int i = 0; i < s->nimages; i++)
		if (proc_image_same(&s->images[i], &file.key)) {
			proc_image_close(&file);
			return 0;
		}
	err = s->nimages == SESSION_MAX_IMAGES ?
		      infl_err(EXIT_BPF, NULL, "%s: more than %d binaries to attach to", path,
			       SESSION_MAX_IMAGES) : 0;
	/* another file than the one s->bin was read from (a library, an exec, a redeploy onto
	 * the same path): its own sites */
	if (!err && (s->deferred || !proc_image_same(&file.key, &s->bin_key))) {
		err = usdt_attach__read(file.path, path, &other);
		b = err ? b : &other;
	}
	if (!err)
		err = add_image(s, shown, b, &tag, &tab);
	if (!err)
		err = usdt_attach__image(s->usdt, &file, shown, pid, b, tag, &tab);
	proc_image_close(&file);
	if (!err && b != &s->bin)
		s->deferred = false;
	if (b != &s->bin)
		usdt_binary__free(b);
	if (err)
		return err;
	s->images[s->nimages++] = file.key;
	/* processes of this binary that start from now on are traced from their first
	 * instruction (INFL_PROC_FROM_START) */
	now = session__now_ns();
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.images), &file.key, &now, BPF_ANY);
	return 0;
}

/*
 * SPAWN: the command runs to its entry point first (attach/entry.h), so that ld.so has
 * made RELRO read-only and the kernel raises each semaphore where the program reads it.
 */
static int run_to_entry(struct session *s, const char *cmd)
{
	int status, err = entry__run_to(s->target, &status);

	if (err == -ECHILD) {
		s->child = false; /* reaped */
		return infl_err(EXIT_TARGET_EXITED, NULL, "%s %s before its entry point", cmd,
				WIFSIGNALED(status) ? "was killed" : "exited");
	}
	return err ? infl_err(EXIT_GENERIC, NULL, "run %s to its entry point: %s", cmd,
			      strerror(-err)) : 0;
}

/* The real uid of `pid`, -1 when unknown. */
static uid_t proc_uid(pid_t pid)
{
	char buf[2048], *p;
	unsigned int uid;

	proc_read(pid, "status", buf, sizeof(buf));
	p = strstr(buf, "Uid:");
	return p && sscanf(p, "Uid: %u", &uid) == 1 ? (uid_t)uid : (uid_t)-1;
}

/* True when `pid` is in the foreground process group of its terminal: a job-control shell
 * watches it, and would take a stop of ours for the user's (and give the terminal back). */
static bool in_foreground(pid_t pid)
{
	char buf[512], *p;
	int pgrp, tty, tpgid;

	proc_read(pid, "stat", buf, sizeof(buf));
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %d %*d %d %d", &pgrp, &tty, &tpgid) != 3)
		return false;
	return tty != 0 && tpgid == pgrp;
}

/* A process of ours said it may have mapped a new binary: attach what carries the contract,
 * then let it go on. */
static void on_watch(void *ctx, const struct infl_watch_event *ev)
{
	struct session *s = ctx;

	libs__scan(s, (pid_t)ev->pid);
	if (ev->stopped)
		kill((pid_t)ev->pid, SIGCONT);
}

/*
 * PID and SPAWN: the libraries the target maps now, and those it (or its children) load or
 * exec later. Such a process is stopped until the loader has attached, except a -p target in
 * the foreground of a terminal, whose shell would take the stop for the user's: there the
 * first microseconds of a new library are not seen (docs/attach.md).
 */
static int watch_target(struct session *s)
{
	bool stop;
	int err;

	if (s->mode == SESSION_BINARY)
		return 0;
	/* a process we could not continue once our capabilities are gone is never stopped */
	stop = s->child || (proc_uid(s->target) == getuid() && !in_foreground(s->target));
	err = libs__open_target(s);
	if (err && err != -ENOENT && err != -ESRCH)
		infl_warn("pid %d: cannot read its mappings (%s): libraries it maps are not traced",
			  s->target, strerror(-err));
	err = watch__open(s->skel->maps.procs, s->skel->maps.images,
			  usdt_attach__mech(s->usdt) == USDT_MECH_MULTI, stop, on_watch, s, &s->watch);
	if (err)
		return err;
	libs__scan(s, s->target);
	return 0;
}

void session__attach_cuda(struct session *s, const char *path, const char *shown, pid_t pid)
{
	pthread_mutex_lock(&s->attach_lock);
	if (cuda_attach__image(s->cuda, path, shown, s->follow ? -1 : pid) > 0 && libbpf_verbose)
		infl_warn("%s: libcuda's memory calls attached", shown);
	pthread_mutex_unlock(&s->attach_lock);
}

/* From the loop (an exec seen on the control ring) and the service thread (a library, a
 * redeploy) alike: one at a time. */
int session__attach_image(struct session *s, const char *path, const char *shown, pid_t pid)
{
	int err;

	pthread_mutex_lock(&s->attach_lock);
	err = attach_image(s, path, shown, pid);
	pthread_mutex_unlock(&s->attach_lock);
	return err;
}

static int attach_tracepoint(struct bpf_program *prog, struct bpf_link **link, const char *what)
{
	*link = bpf_program__attach(prog);
	return *link ? 0 : load_error(-errno, what);
}

/* Another file of -b (a library the binary's processes load): every process that maps it. */
static int attach_more(struct session *s, const char *given)
{
	char path[PATH_MAX];
	struct usdt_binary b;
	int err;

	if (proc_is_root_path(given) && access(given, R_OK) == 0)
		snprintf(path, sizeof(path), "%s", given);
	else if (!realpath(given, path))
		return infl_err(EXIT_NO_BINARY, "give the path of a library or an executable",
				"%s: %s", given, strerror(errno));
	err = usdt_attach__read(path, given, &b); /* the words for a file that cannot be traced */
	if (err)
		return err;
	usdt_binary__free(&b);
	return session__attach_image(s, path, given, -1);
}

static int attach_probes(struct session *s)
{
	struct inflight_bpf *k = s->skel;
	pid_t pid = s->mode == SESSION_BINARY || s->follow ? -1 : s->target;
	int err;

	/* the process's life and RSS first: a target that ends right after the probes go live
	 * must still be seen exiting */
	err = attach_tracepoint(k->progs.on_process_exit, &k->links.on_process_exit,
				"attach sched:sched_process_exit");
	err = err ?: attach_tracepoint(k->progs.on_process_exec, &k->links.on_process_exec,
				       "attach sched:sched_process_exec");
	err = err ?: attach_tracepoint(k->progs.on_process_fork, &k->links.on_process_fork,
				       "attach sched:sched_process_fork");
	if (!err && s->rss_prog)
		err = attach_tracepoint(s->rss_prog, &s->rss_link, "attach kmem:rss_stat");
	/* the OOM killer's victims (bpf/oom.bpf.h): without them an OOM kill reads as SIGKILL */
	if (!err) {
		k->links.on_oom_victim = bpf_program__attach(k->progs.on_oom_victim);
		if (!k->links.on_oom_victim)
			infl_warn("cannot watch the OOM killer (oom:mark_victim): %s; an OOM kill "
				  "will read as a plain SIGKILL", strerror(errno));
	}
	if (!err && s->mode != SESSION_BINARY)
		err = lifecycle__seed(s->life, s->target, s->child);
	if (!err && s->mode == SESSION_BINARY && cuda_attach__default_lib(s->cuda))
		session__attach_cuda(s, cuda_attach__default_lib(s->cuda),
				     cuda_attach__default_lib(s->cuda), -1);
	if (!err && s->mode == SESSION_BINARY && s->cuda_only)
		err = note_image(s, s->path); /* its processes are the ones to count */
	if (err || s->deferred)
		return err; /* nothing to attach yet: the libraries it loads will be (watch) */
	err = session__attach_image(s, s->path, s->lib_main ? s->path : s->shown, pid);
	for (int i = 0; !err && i < s->nmore; i++)
		err = attach_more(s, s->more[i]);
	return err;
}

static int on_ring_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	if (size < sizeof(struct infl_event)) {
		s->ring_lost++;
		return 0;
	}
	if (s->fn && !s->fn_err)
		s->fn_err = s->fn(s->fn_ctx, data);
	return s->fn_err;
}

/* The target's executable as its /proc/PID/exe link names it. */
static void shown_from_link(struct session *s)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", s->target);
	n = readlink(link, s->shown, sizeof(s->shown) - 1);
	s->shown[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(s->shown, sizeof(s->shown), "%s", s->path);
}

/* Resolves the target and its binary; SPAWN starts the command (stopped). */
/* -b: a binary without the contract, where a libcuda is there to attach (the system's or
 * --cuda-lib), is traced for its processes' device memory alone */
static bool binary_cuda_only(struct session *s)
{
	const char *lib = cuda_attach__default_lib(s->cuda);

	if (!lib || usdt_binary__read(s->path, &s->bin))
		return false;
	if (s->bin.verdict == USDT_MISSING && !s->bin.other_provider[0]) {
		s->deferred = s->cuda_only = true;
		infl_warn("%s carries none of the contract's probes: tracing libcuda's memory calls "
			  "(%s) alone in its processes, owners (none)", s->shown, lib);
		return true;
	}
	usdt_binary__free(&s->bin);
	return false;
}

static int resolve_target(struct session *s, const struct session_opts *o)
{
	int err;

	switch (o->mode) {
	case SESSION_PID:
		if (o->pid <= 0 || (kill(o->pid, 0) && errno == ESRCH))
			return infl_err(EXIT_NO_PID, "check the pid with `ps`",
					"no such process: %d", o->pid);
		s->target = o->pid;
		if (proc_is_zombie(o->pid))
			return infl_err(EXIT_TARGET_EXITED, NULL,
					"pid %d has exited (a zombie waiting for its parent)", o->pid);
		if (proc_is_kthread(o->pid))
			return caps__kthread_error(o->pid);
		err = proc_exe_path(o->pid, s->path, sizeof(s->path));
		if (err && proc_gone(o->pid))
			return infl_err(EXIT_TARGET_EXITED, NULL, "pid %d exited before inflight "
					"could attach to it", o->pid);
		if (err)
			return caps__exe_error(o->pid, -err);
		shown_from_link(s);
		return choose_image(s, s->shown);
	case SESSION_BINARY:
		if (!o->binary || !*o->binary)
			return infl_err(EXIT_USAGE, "give -b PATH", "no binary given");
		/* /proc/PID/root/... reaches into another mount namespace: realpath() would
		 * resolve it in ours. libbpf and the kernel resolve it in the target's. */
		if (proc_is_root_path(o->binary) && access(o->binary, R_OK) == 0)
			snprintf(s->path, sizeof(s->path), "%s", o->binary);
		else if (!realpath(o->binary, s->path))
			return infl_err(EXIT_NO_BINARY, "give the path of an executable", "%s: %s",
					o->binary, strerror(errno));
		snprintf(s->shown, sizeof(s->shown), "%s", o->binary);
		if (binary_cuda_only(s))
			return 0;
		return usdt_attach__read(s->path, o->binary, &s->bin);
	case SESSION_SPAWN:
		if (!o->argv || !o->argv[0])
			return infl_err(EXIT_USAGE, "give a command after --", "no command given");
		err = spawn_stopped(o, &s->target);
		if (err)
			return err;
		s->child = true;
		err = proc_exe_path(s->target, s->path, sizeof(s->path));
		if (err)
			return infl_err(EXIT_GENERIC, NULL, "cannot read the executable of %s: %s",
					o->argv[0], strerror(-err));
		shown_from_link(s);
		err = refuse_early(s, o->argv[0]);
		err = err ?: run_to_entry(s, o->argv[0]);
		return err ?: choose_image(s, o->argv[0]);
	}
	return infl_err(EXIT_USAGE, NULL, "unknown attach mode %d", o->mode);
}

/*
 * Opens, configures and loads the skeleton. When the load fails with libcuda's programs, it
 * is tried once more without them, and a warning says so: a verifier that refuses them
 * (a kernel they were not yet run on) must not cost the contract's tracing.
 */
static int load_skel(struct session *s, const struct session_opts *o)
{
	int err;

	for (int attempt = 0;; attempt++) {
		s->skel = inflight_bpf__open();
		if (!s->skel)
			return load_error(-errno, "open BPF object");
		err = configure(s, o);
		if (err)
			return load_error(err, "configure BPF maps");
		err = prepare_usdt(s);
		if (err)
			return err;
		err = inflight_bpf__load(s->skel);
		if (!err)
			return 0;
		if (attempt || !cuda_attach__enabled(s->cuda) || caps__memlock_error(s->feat.release, err))
			break;
		infl_warn("libcuda's memory calls are not traced: this kernel refuses their "
			  "programs (%s; -v shows the verifier's log)", strerror(-err));
		cuda_attach__disable(s->cuda);
		usdt_attach__free(s->usdt);
		s->usdt = NULL;
		inflight_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	return caps__memlock_error(s->feat.release, err) ?: load_error(err, "load BPF programs");
}

/* The kernel offers what inflight needs, or one line names what is missing. */
static int check_kernel(struct session *s)
{
	const char *missing;
	char line[256];
	int err = features__probe(&s->feat);

	if (err)
		return infl_err(EXIT_NO_BTF, "needs a kernel built with CONFIG_DEBUG_INFO_BTF (5.4+)",
				"kernel has no BTF at /sys/kernel/btf/vmlinux");
	missing = features__missing(&s->feat);
	if (missing)
		return infl_err(EXIT_OLD_KERNEL, "inflight needs Linux 5.8 or later "
				"(docs/production.md, \"Supported kernels\")",
				"kernel %s too old: it lacks %s", s->feat.release, missing);
	if (libbpf_verbose) {
		features__describe(&s->feat, line, sizeof(line));
		fprintf(stderr, "inflight: %s\n", line);
	}
	return 0;
}

static int open_rings(struct session *s, const struct session_opts *o)
{
	int err = lifecycle__new(s->skel, &s->life);

	if (err)
		return load_error(err, "open the control ring buffer");
	if (!o->record_events)
		return 0;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_ring_event, s, NULL);
	return s->rb ? 0 : load_error(-errno, "open ring buffer");
}

int session__open(const struct session_opts *o, struct session **out)
{
	struct session *s;
	int err;

	*out = NULL;
	libbpf_verbose = o->verbose;
	libbpf_set_print(print_libbpf);
	s = calloc(1, sizeof(*s));
	if (!s)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	s->mode = o->mode;
	s->detach_child = o->detach_child;
	s->follow = o->mode != SESSION_BINARY && !o->no_follow;
	s->nmore = o->mode == SESSION_BINARY ? o->nmore : 0;
	for (int i = 0; i < s->nmore; i++)
		s->more[i] = o->more_binaries[i];
	s->pidfd = -1;
	s->status = -1;
	s->target_maps = s->target_root = -1;
	s->inotify_fd = -1;
	pthread_mutex_init(&s->attach_lock, NULL);

	/* BTF, then privileges (the feature probes load programs), then what the kernel has */
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		err = infl_err(EXIT_NO_BTF, "needs a kernel built with CONFIG_DEBUG_INFO_BTF (5.4+)",
			       "kernel has no BTF at /sys/kernel/btf/vmlinux");
	else
		err = caps__check_attach(false, features__uprobe_multi_named);
	err = err ?: check_kernel(s);
	err = err ?: cuda_attach__new(o->no_cuda, o->cuda_lib, &s->cuda);
	err = err ?: resolve_target(s, o);
	if (err)
		goto fail;
	proc_image_key(s->path, &s->bin_key); /* the file s->bin describes (0: unknown) */
	err = names__from_elf(s->path, &s->names);
	if (err == -EBADMSG)
		infl_warn("%s: malformed .note.inflight names note: using numeric names", s->path);
	if (err)
		names__init(&s->names);
	err = stage_roles__parse(&s->names, o->entry_stages, o->terminal_stages, &s->roles);
	if (err)
		goto fail;
	stage_roles__apply(&s->roles, &s->names);

	err = load_skel(s, o);
	if (err)
		goto fail;
	err = link_wait_more(s);
	err = err ?: open_rings(s, o);
	if (!err && s->mode == SESSION_BINARY)
		err = sema__check_layout(&s->bin, s->shown);
	err = err ?: attach_probes(s);
	if (!err && s->mode != SESSION_BINARY && s->target > 0 && !s->deferred)
		err = sema__verify(s->target, s->path, s->shown, &s->bin);
	err = err ?: watch_target(s);
	if (!err && s->mode == SESSION_BINARY && (err = redeploy__open(s, o->binary)))
		infl_warn("%s: cannot watch for redeploys (%s): a new build put in its place is "
			  "not traced", o->binary, strerror(-err));
	err = err < 0 ? 0 : err;
	if (!err && (err = service__start(s)))
		err = infl_err(EXIT_GENERIC, NULL, "start the session's thread: %s", strerror(-err));
	if (err)
		goto fail;
	if (s->target > 0)
		s->pidfd = pidfd_open(s->target);
	if (s->child && ptrace(PTRACE_DETACH, s->target, NULL, NULL)) {
		err = infl_err(EXIT_GENERIC, NULL, "cannot start %s: %s", o->argv[0],
			       strerror(errno));
		goto fail;
	}
	if (o->drop_caps && (err = caps__drop_all(&o->user))) {
		err = infl_err(EXIT_NOT_PRIV, NULL, "cannot drop privileges%s%s: %s",
			       o->user.set ? " to user " : "", o->user.set ? o->user.name : "",
			       strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->child && s->target > 0) {
		kill(s->target, SIGKILL);
		waitpid(s->target, NULL, 0);
		s->child = false;
	}
	session__free(s);
	return err;
}

/*
 * Waits for the control ring, the event ring or the target's exit, then drains both rings:
 * recorded events are submitted without a wake-up (inflight.bpf.c: ring_submit), so they
 * are read when the wait ends, whatever ended it.
 */
int session__poll(struct session *s, int timeout_ms, session_event_fn fn, void *ctx)
{
	struct pollfd pfd[3] = {
		{ .fd = lifecycle__epoll_fd(s->life), .events = POLLIN },
		{ .fd = s->pidfd, .events = POLLIN },
		{ .fd = s->rb ? ring_buffer__epoll_fd(s->rb) : -1, .events = POLLIN },
	};
	int n = 0;

	if (timeout_ms && poll(pfd, 3, timeout_ms) < 0)
		return -errno;
	s->fn = fn;
	s->fn_ctx = ctx;
	s->fn_err = 0;
	if (s->rb)
		n = ring_buffer__consume(s->rb);
	s->fn = NULL;
	if (n >= 0)
		n += lifecycle__consume(s->life);
	lifecycle__sweep(s->life);
	if (s->fn_err)
		return s->fn_err < 0 ? s->fn_err : -s->fn_err;
	return n;
}

bool session__target_gone(struct session *s, int *status)
{
	if (status)
		*status = s->status;
	if (s->mode == SESSION_BINARY)
		return false;
	if (s->gone)
		return true;
	if (s->child) {
		int st;

		if (waitpid(s->target, &st, WNOHANG) == s->target) {
			s->status = st;
			s->gone = true;
		}
	} else if (s->pidfd >= 0) {
		struct pollfd pfd = { .fd = s->pidfd, .events = POLLIN };

		s->gone = poll(&pfd, 1, 0) == 1;
	} else {
		s->gone = kill(s->target, 0) && errno == ESRCH;
	}
	if (status)
		*status = s->status;
	return s->gone;
}

const struct infl_names *session__names(const struct session *s)
{
	return &s->names;
}

unsigned session__names_gen(const struct session *s)
{
	return __atomic_load_n(&s->names_gen, __ATOMIC_ACQUIRE);
}

const char *session__binary(const struct session *s)
{
	return s->shown;
}

pid_t session__target_pid(const struct session *s)
{
	return s->mode == SESSION_BINARY ? 0 : s->target;
}

enum session_mode session__mode(const struct session *s)
{
	return s->mode;
}

__u64 session__ring_lost(const struct session *s)
{
	return s->ring_lost + lifecycle__lost(s->life);
}

bool session__has_queue(const struct session *s)
{
	return s->feat.atomics && s->feat.bpf_loop;
}

__u64 session__deferred_ops(const struct session *s, __u64 *full)
{
	if (full)
		*full = __atomic_load_n(&s->skel->bss->deferred_full, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->skel->bss->deferred_ops, __ATOMIC_RELAXED);
}

__u64 session__lock_wait_rounds(const struct session *s)
{
	return __atomic_load_n(&s->skel->bss->lock_wait_rounds, __ATOMIC_RELAXED);
}

void session__stop(struct session *s)
{
	struct timespec t = { 0, 2000000 }; /* a handler takes microseconds */

	__atomic_store_n(&s->skel->bss->stopped, 1, __ATOMIC_SEQ_CST);
	nanosleep(&t, NULL);
}

const char *session__rss_off(const struct session *s)
{
	return s->rss_off;
}

int session__snapshot(struct session *s, struct snapshot *snap)
{
	int err = snapshot_read(s->skel, s->life, snap);

	if (err)
		return err;
	snap->mono_ns = mono_ns();
	snap->rss_off = s->rss_off;
	return 0;
}

int session__forget(struct session *s, __u32 pid)
{
	return lifecycle__forget(s->life, pid, 0, true);
}

int session__forget_image(struct session *s, __u32 pid, __u64 gen)
{
	return lifecycle__forget(s->life, pid, gen, false);
}

int session__ident(const struct session *s, __u32 pid, __u64 gen, struct infl_ident *out)
{
	return lifecycle__ident(s->life, pid, gen, out);
}

int session__ident_at(const struct session *s, __u32 pid, __u64 ts, struct infl_ident *out)
{
	return lifecycle__ident_at(s->life, pid, ts, out);
}

int session__nended(const struct session *s)
{
	int n;

	lifecycle__ended(s->life, &n);
	return n;
}

int session__map_usage(struct session *s, __u32 *procs, __u32 *bufs, __u32 *owners)
{
	return snapshot_read__map_usage(s->skel, procs, bufs, owners);
}

void session__free(struct session *s)
{
	int go = -1;

	if (!s)
		return;
	service__stop(s); /* nothing attaches from now on */
	/* the child holds every link now: the teardown below only drops our references */
	if (s->detach_child && (usdt_attach__sites(s->usdt) || s->watch ||
				cuda_attach__libs(s->cuda))) {
		go = detach__hand_off();
		if (go < 0)
			infl_warn("cannot start the detaching child: %s; the exit waits for the "
				  "kernel", strerror(-go));
	}
	ring_buffer__free(s->rb);
	lifecycle__free(s->life);
	bpf_link__destroy(s->rss_link);
	watch__free(s->watch);
	cuda_attach__free(s->cuda);
	usdt_attach__free(s->usdt);
	usdt_binary__free(&s->bin);
	images__free(&s->slots);
	inflight_bpf__destroy(s->skel);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->target_maps >= 0)
		close(s->target_maps);
	if (s->target_root >= 0)
		close(s->target_root);
	if (s->inotify_fd >= 0)
		close(s->inotify_fd);
	pthread_mutex_destroy(&s->attach_lock);
	free(s);
	detach__go(go); /* our references are gone: the child closes the last ones */
}
