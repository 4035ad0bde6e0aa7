// SPDX-License-Identifier: BSD-2-Clause
/*
 * A tracing session: the hub of attach/, and the only code that sees its insides. It opens
 * the parts in order and ties them together; each keeps its own state and none knows the
 * session: the kernel object (programs.h), what is traced (target.h), the files attached
 * (image_table.h), the libraries and execs after the attach (libs.h), redeploys
 * (redeploy.h), the thread those two run on (service.h), the processes' lives
 * (lifecycle.h) and the snapshots (snapshot_read.h). Here too: the tracepoints, the event
 * ring and the names every output shows. Errors: as session.h says.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/caps.h"
#include "attach/cuda.h"
#include "attach/detach.h"
#include "attach/event_rings.h"
#include "attach/features.h"
#include "attach/image_table.h"
#include "attach/libs.h"
#include "attach/lifecycle.h"
#include "attach/programs.h"
#include "attach/redeploy.h"
#include "attach/sema.h"
#include "attach/service.h"
#include "attach/session.h"
#include "attach/snapshot_read.h"
#include "attach/stage_roles.h"
#include "attach/target.h"
#include "attach/usdt_attach.h"
#include "util/clock.h"
#include "util/errors.h"
#include "util/procfs.h"

struct session {
	struct programs k;	   /* the kernel object */
	struct bpf_link *rss_link; /* k.rss_prog's */
	/* what the command line asked */
	enum session_mode mode;
	bool follow;	   /* PID, SPAWN: children followed, probes attached binary-wide */
	bool detach_child; /* session__free hands the links to a child (attach/detach.h) */
	const char *more[SESSION_MAX_MORE_BINARIES]; /* -b's other files */
	int nmore;
	/* the parts */
	struct target t;	       /* what is traced */
	struct infl_image_key bin_key; /* the file t.bin was read from */
	struct cuda_attach *cuda;      /* libcuda's memory calls */
	struct lifecycle *life;	       /* the control ring, ended images */
	struct image_table *images;    /* the files attached */
	struct libs *libs;	       /* PID, SPAWN: libraries and execs after the attach */
	struct redeploy *redeploy;     /* BINARY: a new build put in PATH's place */
	struct service *svc;	       /* the thread of those two */
	/* the names every output shows: the images' slots, with the command line's entry and
	 * terminal stages over them; names_gen counts their changes */
	struct stage_roles roles;
	struct infl_names names;
	unsigned names_gen;
};

__u64 session__now_ns(void)
{
	return mono_ns();
}

/*
 * The session's names from its images' slots (`slots`: contract/images.h), with the command
 * line's entry and terminal stages over the notes'; the kernel's entry and terminal stages
 * with them (set before the process goes on: one that maps a new image is stopped
 * meanwhile, attach/watch.h). Outputs read s->names while this runs: a name only ever
 * changes from its numeric default or to its qualified form, at an attach.
 */
static void apply_names(void *ctx, const struct infl_names *slots)
{
	struct session *s = ctx;
	struct infl_names n = *slots;

	stage_roles__apply(&s->roles, &n);
	if (!memcmp(&n, &s->names, sizeof(n)))
		return;
	s->names = n;
	__atomic_add_fetch(&s->names_gen, 1, __ATOMIC_RELEASE);
	s->k.skel->data->entry_stage_mask = s->names.entry_mask;
	s->k.skel->bss->terminal_stage_mask = s->names.terminal_mask;
}

static int attach_tracepoint(struct bpf_program *prog, struct bpf_link **link, const char *what)
{
	*link = bpf_program__attach(prog);
	return *link ? 0 : infl_bpf_err(-errno, what);
}

/* Another file of -b (a library the binary's processes load): every process that maps it. */
static int attach_more(struct session *s, const char *given)
{
	char path[PATH_MAX];
	struct usdt_binary b;
	bool added;
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
	return image_table__attach(s->images, path, given, -1, &added);
}

static int attach_probes(struct session *s)
{
	struct inflight_bpf *k = s->k.skel;
	pid_t pid = s->mode == SESSION_BINARY || s->follow ? -1 : s->t.pid;
	bool added;
	int err;

	/* the process's life and RSS first: a target that ends right after the probes go live
	 * must still be seen exiting */
	err = attach_tracepoint(s->k.exit_prog, s->k.atomic ? &k->links.on_process_exit :
							     &k->links.on_process_exit_nocas,
				"attach sched:sched_process_exit");
	err = err ?: attach_tracepoint(s->k.exec_prog, s->k.atomic ? &k->links.on_process_exec :
								   &k->links.on_process_exec_nocas,
				       "attach sched:sched_process_exec");
	err = err ?: attach_tracepoint(k->progs.on_process_fork, &k->links.on_process_fork,
				       "attach sched:sched_process_fork");
	if (!err && s->k.rss_prog)
		err = attach_tracepoint(s->k.rss_prog, &s->rss_link, "attach kmem:rss_stat");
	/* the OOM killer's victims (bpf/oom.bpf.h): without them an OOM kill reads as SIGKILL */
	if (!err) {
		k->links.on_oom_victim = bpf_program__attach(k->progs.on_oom_victim);
		if (!k->links.on_oom_victim)
			infl_warn("cannot watch the OOM killer (oom:mark_victim): %s; an OOM kill "
				  "will read as a plain SIGKILL", strerror(errno));
	}
	if (!err && s->mode != SESSION_BINARY)
		err = lifecycle__seed(s->life, s->t.pid, s->t.child);
	if (!err && s->mode == SESSION_BINARY && cuda_attach__default_lib(s->cuda))
		image_table__cuda(s->images, cuda_attach__default_lib(s->cuda),
				  cuda_attach__default_lib(s->cuda), -1);
	if (!err && s->mode == SESSION_BINARY && s->t.cuda_only)
		err = image_table__note(s->images, s->t.path); /* its processes are the ones to count */
	if (err || s->t.deferred)
		return err; /* nothing to attach yet: the libraries it loads will be (watch) */
	err = image_table__attach(s->images, s->t.path, s->t.lib_main ? s->t.path : s->t.shown, pid,
				  &added);
	for (int i = 0; !err && i < s->nmore; i++)
		err = attach_more(s, s->more[i]);
	return err;
}

/* session__poll without a handler: the events are drained all the same */
static int drop_event(void *ctx, const struct infl_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

/* After load: the control ring's reader, the event ring (recording), the files' table. */
static int open_parts(struct session *s, const struct session_opts *o)
{
	struct image_table_cfg cfg = {
		.usdt = s->k.usdt,
		.cuda = s->cuda,
		.images = s->k.skel->maps.images,
		.target = s->t.pid,
		.bin = &s->t.bin,
		.bin_key = s->bin_key,
		.bin_deferred = s->t.deferred,
		.verbose = o->verbose,
		.names_fn = apply_names,
		.ctx = s,
	};
	int err = lifecycle__new(s->k.skel, &s->life);

	if (err)
		return infl_bpf_err(err, "open the control ring buffer");
	if (o->record_events) {
		err = event_rings__open(s->k.events, s->k.skel->maps.events);
		if (err)
			return infl_bpf_err(err, "open the event ring buffers");
	}
	cfg.life = s->life;
	if (image_table__new(&cfg, &s->images))
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	return 0;
}

/* After the attach: every semaphore the program reads reads non-zero in the target. */
static int verify_semaphores(struct session *s)
{
	if (s->mode == SESSION_BINARY || s->t.pid <= 0 || s->t.deferred)
		return 0;
	return sema__verify(s->t.pid, s->t.path, s->t.shown, &s->t.bin);
}

/* PID and SPAWN: the libraries the target maps now, and those it loads or execs later. */
static int watch_target(struct session *s)
{
	struct libs_cfg cfg = {
		.target = s->t.pid,
		.child = s->t.child,
		.follow = s->follow,
		.multi = usdt_attach__mech(s->k.usdt) == USDT_MECH_MULTI,
		.procs = s->k.skel->maps.procs,
		.images_map = s->k.skel->maps.images,
		.images = s->images,
		.cuda = s->cuda,
	};

	return s->mode == SESSION_BINARY ? 0 : libs__open(&cfg, &s->libs);
}

/* BINARY: a new build put in PATH's place is attached too; without the watch (said) not. */
static void watch_redeploys(struct session *s, const char *given)
{
	int err = redeploy__open(given, s->t.path, s->images, &s->redeploy);

	if (err)
		infl_warn("%s: cannot watch for redeploys (%s): a new build put in its place is "
			  "not traced", given, strerror(-err));
}

/* The thread, for the parts that have work for it (attach/service.h). */
static int start_service(struct session *s)
{
	int err = service__new(&s->svc);

	if (!err && s->libs)
		err = libs__serve(s->libs, s->svc);
	if (!err && s->redeploy)
		err = redeploy__serve(s->redeploy, s->svc);
	err = err ?: service__start(s->svc);
	return err ? infl_err(EXIT_GENERIC, NULL, "start the session's thread: %s", strerror(-err))
		   : 0;
}

int session__open(const struct session_opts *o, struct session **out)
{
	struct session *s;
	int err;

	*out = NULL;
	programs__verbose(o->verbose);
	s = calloc(1, sizeof(*s));
	if (!s)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	s->mode = o->mode;
	s->detach_child = o->detach_child;
	s->follow = o->mode != SESSION_BINARY && !o->no_follow;
	s->nmore = o->mode == SESSION_BINARY ? o->nmore : 0;
	for (int i = 0; i < s->nmore; i++)
		s->more[i] = o->more_binaries[i];
	target__init(&s->t);

	/* BTF, then privileges (the feature probes load programs), then what the kernel has */
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		err = infl_err(EXIT_NO_BTF, "needs a kernel built with CONFIG_DEBUG_INFO_BTF (5.4+)",
			       "kernel has no BTF at /sys/kernel/btf/vmlinux");
	else
		err = caps__check_attach(false, features__uprobe_multi_named);
	err = err ?: programs__check_kernel(&s->k);
	err = err ?: cuda_attach__new(o->no_cuda, o->cuda_lib, &s->cuda);
	err = err ?: target__resolve(&s->t, o, s->cuda);
	if (err)
		goto fail;
	proc_image_key(s->t.path, &s->bin_key); /* the file s->t.bin describes (0: unknown) */
	err = names__from_elf(s->t.path, &s->names);
	if (err == -EBADMSG)
		infl_warn("%s: malformed .note.inflight names note: using numeric names", s->t.path);
	if (err)
		names__init(&s->names);
	err = stage_roles__parse(&s->names, o->entry_stages, o->terminal_stages, &s->roles);
	if (err)
		goto fail;
	stage_roles__apply(&s->roles, &s->names);

	s->k.mode = s->mode;
	s->k.follow = s->follow;
	s->k.names = s->names;
	s->k.cuda = s->cuda;
	err = programs__load(&s->k, o);
	err = err ?: open_parts(s, o);
	if (!err && s->mode == SESSION_BINARY)
		err = sema__check_layout(&s->t.bin, s->t.shown);
	err = err ?: attach_probes(s);
	err = err ?: verify_semaphores(s);
	err = err ?: watch_target(s);
	if (!err && s->mode == SESSION_BINARY)
		watch_redeploys(s, o->binary);
	err = err ?: start_service(s);
	err = err ?: target__go(&s->t, o->argv ? o->argv[0] : NULL);
	if (err)
		goto fail;
	if (o->drop_caps && (err = caps__drop_all(&o->user))) {
		err = infl_err(EXIT_NOT_PRIV, NULL, "cannot drop privileges%s%s: %s",
			       o->user.set ? " to user " : "", o->user.set ? o->user.name : "",
			       strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	target__kill(&s->t);
	session__free(s);
	return err;
}

/*
 * Waits for the control ring, the event ring or the target's exit, then drains both rings:
 * recorded events wake the recorder only as each quarter of a CPU's ring fills
 * (inflight.bpf.c: ring_flags), so they are read when the wait ends, whatever ended it.
 */
int session__poll(struct session *s, int timeout_ms, session_event_fn fn, void *ctx)
{
	struct pollfd pfd[3] = {
		{ .fd = lifecycle__epoll_fd(s->life), .events = POLLIN },
		{ .fd = s->t.pidfd, .events = POLLIN },
		{ .fd = s->k.events ? event_rings__epoll_fd(s->k.events) : -1, .events = POLLIN },
	};
	int n = 0;

	if (timeout_ms && poll(pfd, 3, timeout_ms) < 0)
		return -errno;
	if (s->k.events) /* recording: programs.c made them, open_parts opened them */
		n = event_rings__consume(s->k.events, fn ? fn : drop_event, ctx);
	if (n >= 0)
		n += lifecycle__consume(s->life);
	lifecycle__sweep(s->life);
	return n;
}

bool session__target_gone(struct session *s, int *status)
{
	return target__gone(&s->t, status);
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
	return s->t.shown;
}

pid_t session__target_pid(const struct session *s)
{
	return s->mode == SESSION_BINARY ? 0 : s->t.pid;
}

enum session_mode session__mode(const struct session *s)
{
	return s->mode;
}

__u64 session__ring_lost(const struct session *s)
{
	return event_rings__lost(s->k.events) + lifecycle__lost(s->life);
}

void session__stop(struct session *s)
{
	struct timespec t = { 0, 2000000 }; /* a handler takes microseconds */

	__atomic_store_n(&s->k.skel->bss->stopped, 1, __ATOMIC_SEQ_CST);
	nanosleep(&t, NULL);
}

__u64 session__deferred_ops(const struct session *s, __u64 *full)
{
	return programs__deferred_ops(&s->k, full);
}

__u64 session__lock_wait_rounds(const struct session *s)
{
	return programs__lock_wait_rounds(&s->k);
}

const char *session__rss_off(const struct session *s)
{
	return s->k.rss_off;
}

int session__snapshot(struct session *s, struct snapshot *snap)
{
	int err = snapshot_read__take(s->k.skel, s->life, snap);

	if (err)
		return err;
	snap->mono_ns = mono_ns();
	snap->rss_off = s->k.rss_off;
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
	return snapshot_read__map_usage(s->k.skel, procs, bufs, owners);
}

void session__free(struct session *s)
{
	int go = -1;

	if (!s)
		return;
	service__free(s->svc); /* nothing attaches from now on */
	/* the child holds every link now: the teardown below only drops our references */
	if (s->detach_child && (usdt_attach__sites(s->k.usdt) || s->libs ||
				cuda_attach__libs(s->cuda))) {
		int files[DETACH_FILES_MAX];

		_Static_assert(DETACH_FILES_MAX >= IMAGE_TABLE_MAX, "every attached file leased");

		go = detach__hand_off(files, image_table__files(s->images, files,
							       DETACH_FILES_MAX));
		if (go < 0)
			infl_warn("cannot start the detaching child: %s; the exit waits for the "
				  "kernel", strerror(-go));
	}

	lifecycle__free(s->life);
	bpf_link__destroy(s->rss_link);
	libs__free(s->libs);
	redeploy__free(s->redeploy);
	cuda_attach__free(s->cuda);
	image_table__free(s->images);
	target__free(&s->t);
	programs__free(&s->k);
	free(s);
	detach__go(go); /* our references are gone: the child closes the last ones */
}
