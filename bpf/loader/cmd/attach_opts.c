// SPDX-License-Identifier: BSD-2-Clause
/* Target and limit options shared by the attaching commands. attach_opts.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/attach_opts.h"
#include "attach/caps.h"
#include "util/errors.h"
#include "util/fmt.h"
#include "util/parse.h"

enum {
	OPT_MAX_BUFS = 0x100,
	OPT_MAX_OWNERS,
	OPT_MAX_PROCS,
	OPT_USER,
	OPT_ALLOW_NEW_PRIVS,
	OPT_NO_FOLLOW,
	OPT_NO_RSS,
	OPT_ENTRY_STAGES,
	OPT_TERMINAL_STAGES,
	OPT_CUDA_LIB,
	OPT_NO_CUDA,
	OPT_ACCOUNTING,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Target (exactly one):", 10 },
	{ "pid", 'p', "PID", 0, "Trace the running process PID", 0 },
	{ "binary", 'b', "PATH", 0,
	  "Trace every process running the executable PATH, including ones started later "
	  "(/proc/PID/root/... reaches into a container); again for each library of theirs "
	  "that carries the contract too (-b APP -b LIB.so)",
	  0 },
	{ "-- CMD [ARGS...]", 0, NULL, OPTION_DOC | OPTION_NO_USAGE,
	  "Start CMD and trace it from its first instruction; inflight's options go before --",
	  0 },
	{ "no-follow", OPT_NO_FOLLOW, NULL, 0,
	  "With -p or --: trace the named process alone, not the children it forks (they are "
	  "followed by default, like perf record)",
	  0 },
	{ NULL, 0, NULL, 0, "The contract:", 15 },
	{ "entry-stages", OPT_ENTRY_STAGES, "STAGES",
	  0, "The stages an owner starts in (names or ids, comma-separated), instead of the "
	  "binary's names note",
	  0 },
	{ "terminal-stages", OPT_TERMINAL_STAGES, "STAGES", 0,
	  "The stages that end an owner, instead of the names note's: without one, owners never "
	  "end and fill --max-owners",
	  0 },
	{ NULL, 0, NULL, 0, "GPU memory (libcuda's allocations, docs/programs.md):", 16 },
	{ "cuda-lib", OPT_CUDA_LIB, "PATH", 0,
	  "The CUDA driver library, when it is not named libcuda.so* (and for -b, where no "
	  "process maps it yet: default the system's libcuda.so.1)",
	  0 },
	{ "no-cuda", OPT_NO_CUDA, NULL, 0, "Do not attach to libcuda's memory calls", 0 },
	{ NULL, 0, NULL, 0, "Costs:", 18 },
	{ "no-rss", OPT_NO_RSS, NULL, 0,
	  "Do not follow RSS (kmem:rss_stat fires on every page fault of every process on the "
	  "host; see docs/production.md)",
	  0 },
	{ NULL, 0, NULL, 0, "Limits (kernel map sizes):", 20 },
	{ "max-bufs", OPT_MAX_BUFS, "N", 0,
	  "Live buffers tracked, all processes together (default " INFL__XSTR(INFL_DEFAULT_MAX_BUFS) ")", 0 },
	{ "max-owners", OPT_MAX_OWNERS, "N", 0,
	  "Live owners (work items) tracked (default " INFL__XSTR(INFL_DEFAULT_MAX_OWNERS) ")", 0 },
	{ "max-procs", OPT_MAX_PROCS, "N", 0,
	  "Processes traced at once (default " INFL__XSTR(INFL_DEFAULT_MAX_PROCS) ")", 0 },
	{ NULL, 0, NULL, 0, "Privileges (docs/production.md):", 30 },
	{ "user", OPT_USER, "USER", 0,
	  "Once attached, run as USER (a name or uid); a -- command runs as USER from its "
	  "start. Default under sudo with -p or -b: the user who ran sudo",
	  0 },
	{ "allow-new-privs", OPT_ALLOW_NEW_PRIVS, NULL, 0,
	  "Let a -- command gain privileges later through setuid or file-capability programs "
	  "(it starts with NoNewPrivs otherwise)",
	  0 },
	{ NULL, 0, NULL, 0, "Diagnostics:", 90 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's messages (and the verifier's log on failure)",
	  0 },
	{ "accounting", OPT_ACCOUNTING, "FORM", 0,
	  "How the kernel accounts a probe hit: auto (default: without a lock where the kernel "
	  "has BPF atomics, 5.17+) or locked (a lock per process, as older kernels do: to "
	  "compare the two on one kernel)",
	  0 },
	{ 0 },
};

void attach_opts__init(struct attach_opts *a)
{
	memset(a, 0, sizeof(*a));
	a->so.max_bufs = INFL_DEFAULT_MAX_BUFS;
	a->so.max_owners = INFL_DEFAULT_MAX_OWNERS;
	a->so.max_procs = INFL_DEFAULT_MAX_PROCS;
	a->so.drop_caps = true; /* the CLI needs none once attached */
	/* the CLI's exit does not wait for the kernel's uprobe teardown (attach/detach.h);
	 * INFLIGHT_DETACH=inline makes it wait, e.g. to see the semaphores at 0 at once */
	a->so.detach_child = !getenv("INFLIGHT_DETACH") || strcmp(getenv("INFLIGHT_DETACH"), "inline");
}

static void one_target(struct attach_opts *a, const char *what)
{
	if (a->target_given)
		infl_die(EXIT_USAGE, "give one of -p PID, -b PATH or -- CMD ARGS",
			 "%s: more than one target", what);
	a->target_given = true;
}

static __u32 parse_limit(const char *opt, const char *arg, __u64 max)
{
	__u64 v;
	int err = parse_u64(arg, 1, max, &v);

	if (err == -ERANGE)
		infl_die(EXIT_USAGE, NULL, "%s '%s': out of range: give 1 to %llu", opt, arg,
			 (unsigned long long)max);
	if (err)
		infl_die(EXIT_USAGE, NULL, "%s '%s': not a number: give a decimal count", opt, arg);
	return (__u32)v;
}

/*
 * What the kernel preallocates for the three hash maps, from their key and value sizes: per
 * element its htab_elem header (48 bytes on 64-bit kernels) and the key and value rounded to
 * 8; max_entries elements plus one spare per possible CPU; and a 16-byte bucket per entry,
 * rounded up to a power of two (kernel/bpf/hashtab.c).
 */
static __u64 pow2_up(__u64 v)
{
	__u64 p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static __u64 htab_bytes(__u64 entries, __u64 key, __u64 value, __u64 ncpus)
{
	__u64 elem = 48 + ((key + 7) & ~7ull) + ((value + 7) & ~7ull);

	return (entries + ncpus) * elem + pow2_up(entries) * 16;
}

__u64 attach_opts__map_bytes(const struct session_opts *so)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	__u64 ncpus = n > 0 ? (__u64)n : 1;

	/* a record per process (the atomic form has no queue: the locked form's queue maps,
	 * a kernel before 5.17's, are not counted here) */
	return htab_bytes(so->max_procs, sizeof(__u32), sizeof(struct infl_proc), ncpus) +
	       htab_bytes(so->max_bufs, sizeof(struct infl_buf_key), sizeof(struct infl_buf), ncpus) +
	       htab_bytes(so->max_owners, sizeof(struct infl_owner_key), sizeof(struct infl_owner),
			  ncpus);
}

/* One line when the limits make the kernel preallocate a lot: more than a tenth of this
 * host's memory or 256 MiB, whichever is less. */
static void warn_map_memory(const struct session_opts *so)
{
	__u64 bytes = attach_opts__map_bytes(so), limit = 256ull << 20;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	char b[FMT_LEN];

	if (pages > 0 && page > 0 && (__u64)pages * page / 10 < limit)
		limit = (__u64)pages * page / 10;
	if (bytes > limit)
		infl_warn("--max-procs %u, --max-bufs %u, --max-owners %u: the kernel preallocates "
			  "about %s for the maps, whether used or not",
			  so->max_procs, so->max_bufs, so->max_owners, fmt_bytes(b, bytes));
}

/* --user, or under sudo with -p or -b the user who ran sudo (a -- command keeps the uid it
 * was started with unless --user says otherwise, so that inflight may still signal it). */
static void resolve_user(struct attach_opts *a)
{
	struct session_opts *so = &a->so;

	if (a->user) {
		if (caps__lookup_user(a->user, &so->user))
			infl_die(EXIT_USAGE, "give a user name or a numeric uid", "--user '%s': no such user",
				 a->user);
		if (!caps__has(CAP_SETUID) || !caps__has(CAP_SETGID))
			infl_die(EXIT_NOT_PRIV, "run inflight as root, or leave --user out",
				 "--user %s: changing users needs CAP_SETUID and CAP_SETGID", so->user.name);
		return;
	}
	if (so->mode != SESSION_SPAWN)
		caps__sudo_user(&so->user);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct attach_opts *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		attach_opts__init(a);
		return 0;
	case 'p': {
		int err;

		one_target(a, "-p");
		err = parse_pid(arg, &a->so.pid);
		if (err)
			infl_die(EXIT_USAGE, NULL, "-p '%s': not a process id: give 1 to %d", arg,
				 PID_LIMIT);
		a->so.mode = SESSION_PID;
		return 0;
	}
	case 'b':
		if (!*arg)
			infl_die(EXIT_USAGE, NULL, "-b: empty path");
		/* -b again: another file of the same processes (a library) */
		if (a->target_given && a->so.mode == SESSION_BINARY) {
			if (a->so.nmore == SESSION_MAX_MORE_BINARIES)
				infl_die(EXIT_USAGE, NULL, "-b: more than %d files",
					 SESSION_MAX_MORE_BINARIES + 1);
			a->so.more_binaries[a->so.nmore++] = arg;
			return 0;
		}
		one_target(a, "-b");
		a->so.mode = SESSION_BINARY;
		a->so.binary = arg;
		return 0;
	case OPT_MAX_BUFS:
		a->so.max_bufs = parse_limit("--max-bufs", arg, ATTACH_LIMIT_MAX);
		return 0;
	case OPT_MAX_OWNERS:
		a->so.max_owners = parse_limit("--max-owners", arg, ATTACH_LIMIT_MAX);
		return 0;
	case OPT_MAX_PROCS:
		a->so.max_procs = parse_limit("--max-procs", arg, 65536);
		return 0;
	case 'v':
		a->so.verbose = true;
		return 0;
	case OPT_USER:
		a->user = arg;
		return 0;
	case OPT_ALLOW_NEW_PRIVS:
		a->so.allow_new_privs = true;
		return 0;
	case OPT_NO_FOLLOW:
		a->so.no_follow = true;
		return 0;
	case OPT_NO_RSS:
		a->so.no_rss = true;
		return 0;
	case OPT_ENTRY_STAGES:
		a->so.entry_stages = arg;
		return 0;
	case OPT_TERMINAL_STAGES:
		a->so.terminal_stages = arg;
		return 0;
	case OPT_CUDA_LIB:
		if (!*arg)
			infl_die(EXIT_USAGE, NULL, "--cuda-lib: empty path");
		a->so.cuda_lib = arg;
		return 0;
	case OPT_NO_CUDA:
		a->so.no_cuda = true;
		return 0;
	case OPT_ACCOUNTING:
		if (!strcmp(arg, "locked"))
			a->so.locked_form = true;
		else if (strcmp(arg, "auto"))
			infl_die(EXIT_USAGE, "give auto or locked", "--accounting '%s': no such form",
				 arg);
		return 0;
	case ARGP_KEY_ARG:
		/* only words after `--` are a command; the rest of argv is its own */
		if (!state->quoted || state->next - 1 < state->quoted)
			infl_die(EXIT_USAGE, "put the command to trace after --, e.g. inflight -- ./prover",
				 "unexpected argument '%s'", arg);
		one_target(a, "--");
		a->so.mode = SESSION_SPAWN;
		a->so.argv = &state->argv[state->next - 1];
		state->next = state->argc;
		return 0;
	case ARGP_KEY_END:
		if (!a->target_given)
			infl_die(EXIT_USAGE, "give -p PID, -b PATH or -- CMD ARGS; see --help",
				 "nothing to trace");
		if (a->so.no_follow && a->so.mode == SESSION_BINARY)
			infl_die(EXIT_USAGE, "--no-follow is for -p and --",
				 "--no-follow with -b: -b traces every process of the binary");
		if (a->so.no_cuda && a->so.cuda_lib)
			infl_die(EXIT_USAGE, "give one of them", "--cuda-lib with --no-cuda");
		resolve_user(a);
		warn_map_memory(&a->so);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

const struct argp attach_argp = { options, parse_opt, NULL, NULL, NULL, NULL, NULL };
