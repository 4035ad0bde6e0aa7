// SPDX-License-Identifier: BSD-2-Clause
/* The kernel object of a session (attach/programs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/caps.h"
#include "attach/cuda.h"
#include "attach/lifecycle.h"
#include "attach/event_rings.h"
#include "attach/programs.h"
#include "attach/usdt_attach.h"
#include "util/errors.h"
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

void programs__verbose(bool verbose)
{
	libbpf_verbose = verbose;
	libbpf_set_print(print_libbpf);
}

/* The kernel offers what inflight needs, or one line names what is missing. */
int programs__check_kernel(struct programs *s)
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

/* The programs this kernel loads: one form (inflight.bpf.c: the atomic one where the kernel
 * has BPF atomics and bpf_loop, else the locked one), RSS if it can. */
static void choose_programs(struct programs *s, const struct session_opts *o)
{
	struct inflight_bpf *k = s->skel;
	bool cas = s->feat.atomics && s->feat.bpf_loop && !o->locked_form;
	struct bpf_program *cas_progs[] = { k->progs.on_buf_alloc, k->progs.on_buf_free,
					    k->progs.on_stage };
	struct bpf_program *map_progs[] = { k->progs.on_buf_alloc_nocas, k->progs.on_buf_free_nocas,
					    k->progs.on_stage_nocas };

	for (int i = 0; i < INFL_PROBE__COUNT; i++) {
		bpf_program__set_autoload(cas_progs[i], cas);
		bpf_program__set_autoload(map_progs[i], !cas);
		s->progs[i] = cas ? cas_progs[i] : map_progs[i];
	}
	s->atomic = cas;
	s->exit_prog = cas ? k->progs.on_process_exit : k->progs.on_process_exit_nocas;
	s->exec_prog = cas ? k->progs.on_process_exec : k->progs.on_process_exec_nocas;
	bpf_program__set_autoload(k->progs.on_process_exit, cas);
	bpf_program__set_autoload(k->progs.on_process_exec, cas);
	bpf_program__set_autoload(k->progs.on_process_exit_nocas, !cas);
	bpf_program__set_autoload(k->progs.on_process_exec_nocas, !cas);
	bpf_program__set_autoload(k->progs.lock_wait_more, !cas);
	bpf_program__set_autoload(k->progs.map_combine, !cas);
	s->rss_off = o->no_rss ? "not followed (--no-rss)" : features__rss_unavailable(&s->feat);
	{
		/* [form][layout]: inflight.bpf.c's RSS_PROG rows */
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

/* The locked form's queue maps (inflight.bpf.c), one slot each where they are not used
 * (an inner queue map need not match the pool's template in size; the template is only
 * created while the pool is). */
static int shrink_map_queues(struct inflight_bpf *skel)
{
	struct bpf_map *q[] = {
		skel->maps.mq_0, skel->maps.mq_1, skel->maps.mq_2, skel->maps.mq_3,
		skel->maps.mq_4, skel->maps.mq_5, skel->maps.mq_6, skel->maps.mq_7,
		skel->maps.mq_8, skel->maps.mq_9, skel->maps.mq_10, skel->maps.mq_11,
		skel->maps.mq_12, skel->maps.mq_13, skel->maps.mq_14, skel->maps.mq_15,
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]) && !err; i++)
		err = bpf_map__set_max_entries(q[i], 1);
	return err;
}

static int configure(struct programs *s, const struct session_opts *o)
{
	struct inflight_bpf *skel = s->skel;
	__u32 ring = event_rings__ring_bytes(o->ringbuf_bytes, libbpf_num_possible_cpus(),
					     sysconf(_SC_PAGESIZE));
	int err = 0;

	choose_programs(s, o);
	cuda_attach__prepare(s->cuda, skel, s->atomic);
	skel->data->entry_stage_mask = s->names.entry_mask;
	skel->bss->terminal_stage_mask = s->names.terminal_mask;
	skel->rodata->record_events = o->record_events;
	skel->rodata->page_shift = (__u32)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	skel->rodata->traced_set = s->mode != SESSION_BINARY;
	skel->rodata->defer_all = o->defer_all;
	skel->rodata->follow_forks = s->follow;
	/* the recorder is woken when a quarter of a CPU's ring waits (inflight.bpf.c) */
	skel->rodata->events_wake_bytes = ring / 4;
	if (o->max_procs) {
		err = err ?: bpf_map__set_max_entries(skel->maps.procs, o->max_procs);
		err = err ?: bpf_map__set_max_entries(skel->maps.locks, o->max_procs);
		err = err ?: bpf_map__set_max_entries(skel->maps.deferred_of,
						      INFL_DEFER_QUEUES(o->max_procs));
	}
	if (o->max_procs)
		err = err ?: bpf_map__set_max_entries(skel->maps.map_queue_claims,
						      INFL_DEFER_QUEUES(o->max_procs));
	/* the queues behind the locked form's lock take no memory in the atomic form */
	if (s->atomic)
		err = err ?: shrink_map_queues(skel);
	if (o->max_bufs)
		err = err ?: bpf_map__set_max_entries(skel->maps.bufs, o->max_bufs);
	if (o->max_owners)
		err = err ?: bpf_map__set_max_entries(skel->maps.owners, o->max_owners);
	/* a second try (load_skel) keeps the rings of the first */
	if (o->record_events && !s->events)
		err = err ?: event_rings__new(ring, &s->events);
	if (o->record_events)
		err = err ?: event_rings__template(s->events, skel->maps.events);
	err = err ?: bpf_map__set_max_entries(skel->maps.ctl, CTL_RING_BYTES);
	err = err ?: bpf_map__set_max_entries(skel->maps.traced_pids, pid_chunks());
	return err;
}

/* Before load: the USDT programs for the mechanism this kernel does best. */
static int prepare_usdt(struct programs *s)
{
	struct usdt_attach_cfg cfg = {
		.specs = s->skel->maps.usdt_specs,
		.ips = s->skel->maps.usdt_ips,
		.ip_cache = s->skel->maps.usdt_ip_cache,
		.tail_progs = { s->atomic ? NULL : s->skel->progs.lock_wait_more,
				s->atomic ? NULL : s->skel->progs.map_combine },
		.perf_only = !s->atomic,
		.have_cookie = (bool *)&s->skel->rodata->usdt_have_cookie,
		.verbose = libbpf_verbose,
	};

	for (int i = 0; i < INFL_PROBE__COUNT; i++)
		cfg.progs[i] = s->progs[i];
	return usdt_attach__new(&cfg, &s->usdt);
}

/* The load's words for an error of libbpf or the kernel (`err`: -errno). */
static int load_error(int err, const char *what)
{
	return infl_bpf_err(err, what);
}

/* The locked form's longer wait and its combining (inflight.bpf.c: lock_wait_more,
 * map_combine) are tail calls: their slots (enum lock_prog) are set here, where those
 * programs were loaded. */
static int link_wait_more(struct programs *s)
{
	int fds[] = { bpf_program__fd(s->skel->progs.lock_wait_more),
		      bpf_program__fd(s->skel->progs.map_combine) };

	for (int slot = 0; slot < 2; slot++) {
		if (fds[slot] < 0)
			return 0; /* the atomic form: not loaded, not needed */
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lock_wait_progs), &slot,
					&fds[slot], BPF_ANY))
			return load_error(-errno, "set the lock's tail-call programs");
	}
	return 0;
}

/*
 * Opens, configures and loads the skeleton. When the load fails with libcuda's programs, it
 * is tried once more without them, and a warning says so: a verifier that refuses them
 * (a kernel they were not yet run on) must not cost the contract's tracing.
 */
static int load_skel(struct programs *s, const struct session_opts *o)
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

int programs__load(struct programs *p, const struct session_opts *o)
{
	return load_skel(p, o) ?: link_wait_more(p);
}

void programs__free(struct programs *p)
{
	usdt_attach__free(p->usdt);
	p->usdt = NULL;
	inflight_bpf__destroy(p->skel);
	p->skel = NULL;
	event_rings__free(p->events);
	p->events = NULL;
}

__u64 programs__deferred_ops(const struct programs *s, __u64 *full)
{
	if (full)
		*full = __atomic_load_n(&s->skel->bss->deferred_full, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->skel->bss->deferred_ops, __ATOMIC_RELAXED);
}

__u64 programs__lock_wait_rounds(const struct programs *s)
{
	return __atomic_load_n(&s->skel->bss->lock_wait_rounds, __ATOMIC_RELAXED);
}

