// SPDX-License-Identifier: BSD-2-Clause
/*
 * A tracing session: checks, load, attach (pid, binary or spawned command), ring-buffer
 * polling and map snapshots. Every failure ends in one error line and a named exit code.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "inflight.skel.h"
#include "attach/caps.h"
#include "util/errors.h"
#include "attach/session.h"
#include "attach/detach.h"
#include "attach/entry.h"
#include "attach/sema.h"
#include "attach/usdt_attach.h"
#include "contract/usdt_binary.h"
#include "util/procfs.h"

#define SNAPSHOT_RETRIES 64 /* seqlock copies before a snapshot is taken as torn */

struct session {
	struct inflight_bpf *skel;
	struct ring_buffer *rb;
	struct usdt_attach *usdt; /* the probes' links (attach/usdt_attach.c) */
	struct usdt_binary bin;	  /* the traced binary's sites and verdict */
	bool detach_child;	  /* session__free hands the links to a child (attach/detach.h) */
	struct infl_names names;
	enum session_mode mode;
	pid_t target;	    /* traced pid (PID, SPAWN), 0 in BINARY mode */
	int pidfd;	    /* tells when the target exits; -1 in BINARY mode */
	bool child;	    /* target is our child (SPAWN): we reap it */
	bool gone;
	int status;	    /* child's wait status, -1 until known */
	char path[PATH_MAX]; /* the traced binary, as attached (may be /proc/PID/root/...) */
	char shown[PATH_MAX]; /* the same, as a user would name it */
	session_event_fn fn; /* valid during session__poll */
	void *fn_ctx;
	int fn_err;
	__u64 ring_lost;
};

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
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/* The contract check, in words a user can act on: the same verdict as `inflight list`. */
static int check_binary(struct session *s, const char *path, const char *shown)
{
	const char *hint;
	char why[512];
	int err = usdt_binary__read(path, &s->bin);

	switch (err) {
	case 0:
		break;
	case -ENOENT:
		return infl_err(EXIT_NO_BINARY, "give the path of an executable", "%s: %s", shown,
				strerror(ENOENT));
	case -ENOEXEC:
		return infl_err(EXIT_NO_BINARY, "give the path of an executable",
				"%s: not an ELF file", shown);
	case -EBADMSG:
		return infl_err(EXIT_NO_PROBES, NULL, "%s: malformed .note.stapsdt", shown);
	default:
		return infl_err(EXIT_NO_BINARY, NULL, "%s: %s", shown, strerror(-err));
	}
	if (s->bin.verdict == USDT_OK)
		return 0;
	usdt_binary__why(&s->bin, why, sizeof(why), &hint);
	return infl_err(EXIT_NO_PROBES, hint, "%s: %s", shown, why);
}

/*
 * Starts argv stopped right after its exec (PTRACE_TRACEME), so that the probes can be
 * attached to it, by pid, before its first instruction. session__open detaches it.
 */
static int spawn_stopped(char **argv, pid_t *out)
{
	int pipefd[2], status, child_err = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return infl_err(EXIT_GENERIC, NULL, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return infl_err(EXIT_GENERIC, NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		/* the command gets none of the tracer's capabilities (root's exec restores its
		 * own; a capability-granted inflight must not pass CAP_BPF on) */
		caps__drop_all();
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		child_err = errno;
		if (write(pipefd[1], &child_err, sizeof(child_err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &child_err, sizeof(child_err)) == sizeof(child_err)) {
		close(pipefd[0]);
		waitpid(pid, &status, 0);
		return infl_err(child_err == ENOENT || child_err == EACCES ? EXIT_NO_BINARY
									 : EXIT_GENERIC,
				"give a command that exists (a path, or a name on $PATH)",
				"cannot run %s: %s", argv[0], strerror(child_err));
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		return infl_err(EXIT_TARGET_EXITED, NULL, "%s exited before it could be traced",
				argv[0]);
	}
	*out = pid;
	return 0;
}

static int configure(struct session *s, const struct session_opts *o)
{
	struct inflight_bpf *skel = s->skel;
	__u32 ring = o->ringbuf_bytes ? o->ringbuf_bytes : 16u << 20;
	int err = 0;

	skel->rodata->entry_stage_mask = s->names.entry_mask;
	skel->rodata->terminal_stage_mask = s->names.terminal_mask;
	skel->rodata->record_events = o->record_events;
	skel->rodata->page_shift = (__u32)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	if (o->max_procs)
		err = err ?: bpf_map__set_max_entries(skel->maps.procs, o->max_procs);
	if (o->max_bufs)
		err = err ?: bpf_map__set_max_entries(skel->maps.bufs, o->max_bufs);
	if (o->max_owners)
		err = err ?: bpf_map__set_max_entries(skel->maps.owners, o->max_owners);
	if (o->record_events)
		err = err ?: bpf_map__set_max_entries(skel->maps.events, ring);
	if (o->no_rss)
		bpf_program__set_autoload(skel->progs.on_rss_stat, false);
	return err;
}

/* Before load: the USDT programs for the mechanism this kernel does best. */
static int prepare_usdt(struct session *s)
{
	struct usdt_attach_cfg cfg = {
		.progs = { s->skel->progs.on_buf_alloc, s->skel->progs.on_buf_free,
			   s->skel->progs.on_stage },
		.specs = s->skel->maps.usdt_specs,
		.ips = s->skel->maps.usdt_ips,
		.have_cookie = (bool *)&s->skel->rodata->usdt_have_cookie,
	};

	return usdt_attach__new(&cfg, &s->usdt);
}

static int load_error(int err, const char *what)
{
	const char *hint = NULL;
	int code = infl_bpf_exit_code(err, &hint);

	return infl_err(code, hint, "%s: %s", what, strerror(err < 0 ? -err : err));
}

#define RELINK_HINT "relink with -z norelro or a page-aligned semaphore section, or use " \
		    "probes/inflight_probes.h (docs/attach.md)"

/* The probes' semaphores of a shared-page layout (LLD, mold) are raised in the copy the
 * program does not read in every process that starts after the attach: -b cannot work. */
static int check_layout(struct session *s)
{
	for (int i = 0; i < USDT_CONTRACT_PROBES; i++)
		if (s->mode == SESSION_BINARY && s->bin.sema_shared[i] && s->bin.live[i])
			return infl_err(EXIT_SEMAPHORE, RELINK_HINT,
					"%s: the semaphore of %s:%s shares its page with RELRO (an "
					"LLD or mold layout): in processes started after the attach "
					"the kernel raises it in a copy the program does not read, so "
					"-b cannot enable its probes (-p PID and -- CMD can)",
					s->shown, s->bin.provider, usdt_contract[i].name);
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

/* After the attach: every semaphore the program reads reads non-zero in the target. */
static int verify_semaphores(struct session *s)
{
	struct sema_check c;
	int err;

	if (s->mode == SESSION_BINARY || s->target <= 0)
		return 0;
	err = sema__check(s->target, s->path, &s->bin, &c);
	if (err) {
		infl_warn("%s: cannot read its semaphores back (%s): not verified", s->shown,
			  strerror(-err));
		return 0;
	}
	if (!c.zero)
		return 0;
	if (s->bin.sema_shared[c.probe])
		return infl_err(EXIT_SEMAPHORE, RELINK_HINT,
				"%s: the semaphore of %s:%s at 0x%llx reads 0 after the attach: it "
				"shares its page with RELRO (an LLD or mold layout) and the kernel "
				"raised the other copy%s",
				s->shown, s->bin.provider, usdt_contract[c.probe].name,
				(unsigned long long)c.addr,
				s->bin.interp ? "" : " (a static binary applies RELRO after its "
						     "entry point)");
	return infl_err(EXIT_SEMAPHORE, NULL,
			"%s: the semaphore of %s:%s at 0x%llx reads 0 after the attach: its probe "
			"would never fire", s->shown, s->bin.provider,
			usdt_contract[c.probe].name, (unsigned long long)c.addr);
}

static int attach_probes(struct session *s)
{
	pid_t pid = s->mode == SESSION_BINARY ? -1 : s->target;

	/* exit and RSS first: a target that ends right after the probes go live must still
	 * be seen exiting */
	s->skel->links.on_process_exit = bpf_program__attach(s->skel->progs.on_process_exit);
	if (!s->skel->links.on_process_exit)
		return load_error(-errno, "attach sched:sched_process_exit");
	if (bpf_program__autoload(s->skel->progs.on_rss_stat)) {
		s->skel->links.on_rss_stat = bpf_program__attach(s->skel->progs.on_rss_stat);
		if (!s->skel->links.on_rss_stat)
			return load_error(-errno, "attach kmem:rss_stat");
	}
	return usdt_attach__image(s->usdt, s->path, s->shown, pid, &s->bin);
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
		err = proc_exe_path(o->pid, s->path, sizeof(s->path));
		if (err)
			return infl_err(err == -ENOENT ? EXIT_NO_PID : EXIT_NOT_PRIV,
					err == -ENOENT ? NULL : "run as root or with CAP_SYS_PTRACE",
					"pid %d: cannot read its executable: %s", o->pid,
					strerror(-err));
		shown_from_link(s);
		return check_binary(s, s->path, s->shown);
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
		return check_binary(s, s->path, o->binary);
	case SESSION_SPAWN:
		if (!o->argv || !o->argv[0])
			return infl_err(EXIT_USAGE, "give a command after --", "no command given");
		err = spawn_stopped(o->argv, &s->target);
		if (err)
			return err;
		s->child = true;
		err = proc_exe_path(s->target, s->path, sizeof(s->path));
		if (err)
			return infl_err(EXIT_GENERIC, NULL, "cannot read the executable of %s: %s",
					o->argv[0], strerror(-err));
		shown_from_link(s);
		return check_binary(s, s->path, o->argv[0]);
	}
	return infl_err(EXIT_USAGE, NULL, "unknown attach mode %d", o->mode);
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
	s->pidfd = -1;
	s->status = -1;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		err = infl_err(EXIT_NO_BTF, "needs a kernel built with CONFIG_DEBUG_INFO_BTF (5.4+)",
			       "kernel has no BTF at /sys/kernel/btf/vmlinux");
		goto fail;
	}
	err = caps__check_attach(false);
	if (err)
		goto fail;
	err = resolve_target(s, o);
	if (err)
		goto fail;
	err = names__from_elf(s->path, &s->names);
	if (err == -EBADMSG)
		infl_warn("%s: malformed .note.inflight names note: using numeric names", s->path);
	if (err)
		names__init(&s->names);

	s->skel = inflight_bpf__open();
	if (!s->skel) {
		err = load_error(-errno, "open BPF object");
		goto fail;
	}
	err = configure(s, o);
	if (err) {
		err = load_error(err, "configure BPF maps");
		goto fail;
	}
	err = prepare_usdt(s);
	if (err)
		goto fail;
	err = inflight_bpf__load(s->skel);
	if (err) {
		err = load_error(err, "load BPF programs");
		goto fail;
	}
	err = check_layout(s);
	if (!err && s->child)
		err = run_to_entry(s, o->argv[0]);
	err = err ?: attach_probes(s);
	err = err ?: verify_semaphores(s);
	if (err)
		goto fail;
	if (o->record_events) {
		s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_ring_event, s, NULL);
		if (!s->rb) {
			err = load_error(-errno, "open ring buffer");
			goto fail;
		}
	}
	if (s->target > 0)
		s->pidfd = pidfd_open(s->target);
	if (s->child && ptrace(PTRACE_DETACH, s->target, NULL, NULL)) {
		err = infl_err(EXIT_GENERIC, NULL, "cannot start %s: %s", o->argv[0],
			       strerror(errno));
		goto fail;
	}
	if (o->drop_caps && caps__drop_all())
		infl_warn("cannot drop capabilities: %s", strerror(errno));
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

int session__poll(struct session *s, int timeout_ms, session_event_fn fn, void *ctx)
{
	int n;

	if (!s->rb) {
		struct pollfd pfd = { .fd = s->pidfd, .events = POLLIN };

		n = poll(&pfd, s->pidfd >= 0 ? 1 : 0, timeout_ms);
		return n < 0 ? -errno : 0;
	}
	s->fn = fn;
	s->fn_ctx = ctx;
	s->fn_err = 0;
	n = timeout_ms ? ring_buffer__poll(s->rb, timeout_ms) : ring_buffer__consume(s->rb);
	s->fn = NULL;
	if (s->fn_err)
		return s->fn_err < 0 ? s->fn_err : -s->fn_err;
	return n;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct proc_snapshot *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* One process's record, copied seqlock style (see struct infl_proc). */
static int copy_proc(int fd, __u32 pid, struct infl_proc *dst, bool *torn)
{
	for (int i = 0; i < SNAPSHOT_RETRIES; i++) {
		if (bpf_map_lookup_elem(fd, &pid, dst))
			return -errno;
		if (dst->write_end == dst->write_begin) {
			*torn = false;
			return 0;
		}
	}
	*torn = true;
	return 0;
}

int session__snapshot(struct session *s, struct snapshot *snap)
{
	int fd = bpf_map__fd(s->skel->maps.procs), cap = 8, err;
	__u32 key, next, *prev = NULL;
	bool torn = false;

	memset(snap, 0, sizeof(*snap));
	snap->procs = calloc(cap, sizeof(*snap->procs));
	if (!snap->procs)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (snap->nprocs == cap) {
			struct proc_snapshot *more;

			more = realloc(snap->procs, 2 * cap * sizeof(*more));
			if (!more) {
				snapshot__free(snap);
				return -ENOMEM;
			}
			snap->procs = more;
			cap *= 2;
		}
		err = copy_proc(fd, key, &snap->procs[snap->nprocs].st, &torn);
		if (err == -ENOENT)
			continue; /* forgotten meanwhile */
		if (err) {
			snapshot__free(snap);
			return err;
		}
		snap->procs[snap->nprocs].pid = key;
		snap->torn += torn;
		snap->nprocs++;
	}
	snap->mono_ns = session__now_ns();
	snap->procs_map_full = s->skel->bss->procs_map_full;
	qsort(snap->procs, snap->nprocs, sizeof(*snap->procs), cmp_pid);
	return 0;
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
	return s->ring_lost;
}

/* Deletes every key of `map` whose leading __u32 is `pid` (bufs and owners keys).
 * Keys are collected first: deleting while iterating restarts a hash map walk. */
static int forget_keys(struct bpf_map *map, size_t key_size, __u32 pid)
{
	int fd = bpf_map__fd(map);
	char cursor[32], next[32], *doomed = NULL;
	size_t n = 0, cap = 0;
	bool first = true;

	if (key_size > sizeof(next))
		return -EINVAL;
	while (bpf_map_get_next_key(fd, first ? NULL : cursor, next) == 0) {
		first = false;
		memcpy(cursor, next, key_size);
		if (*(__u32 *)next != pid)
			continue;
		if (n == cap) {
			char *more = realloc(doomed, (cap ? 2 * cap : 256) * key_size);

			if (!more) {
				free(doomed);
				return -ENOMEM;
			}
			doomed = more;
			cap = cap ? 2 * cap : 256;
		}
		memcpy(doomed + n++ * key_size, next, key_size);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, doomed + i * key_size);
	free(doomed);
	return 0;
}

int session__forget(struct session *s, __u32 pid)
{
	int err = forget_keys(s->skel->maps.bufs, sizeof(struct infl_buf_key), pid);

	err = err ?: forget_keys(s->skel->maps.owners, sizeof(struct infl_owner_key), pid);
	if (err)
		return err;
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.procs), &pid))
		return -errno;
	return 0;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	/* the child holds every link now: the teardown below only drops our references */
	if (s->detach_child && usdt_attach__sites(s->usdt)) {
		pid_t child = detach__hand_off();

		if (child < 0)
			infl_warn("cannot start the detaching child: %s; the exit waits for the "
				  "kernel", strerror(-child));
	}
	ring_buffer__free(s->rb);
	usdt_attach__free(s->usdt);
	usdt_binary__free(&s->bin);
	inflight_bpf__destroy(s->skel);
	if (s->pidfd >= 0)
		close(s->pidfd);
	free(s);
}
