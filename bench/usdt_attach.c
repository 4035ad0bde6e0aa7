// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_attach: attaches one BPF program (empty, or counting hits with -c) to every USDT
 * probe site of provider `prover` in one process, by a chosen mechanism, and times attach
 * and detach (bench/attach_teardown.sh, docs/attach.md). libbpf 1.5, linked statically.
 *   -m perf    one perf-event uprobe per site (perf_event_open + a BPF link each: what
 *              libbpf's USDT support does on a kernel without uprobe_multi)
 *   -m multi   one uprobe_multi link for all the sites (bpf(2) BPF_LINK_CREATE, Linux 6.6+)
 *   -m usdt    libbpf's bpf_program__attach_usdt(), once per probe name: libbpf >= 1.3 picks
 *              uprobe_multi where the kernel has it (multi=1 in the output), else perf
 * Detach, when the target exits (-- CMD) or on SIGINT/SIGTERM (-p PID):
 *   -d inline   close every link, then exit: the exit waits for the kernel
 *   -d threads  close the links from -T N threads at once, then exit
 *   -d fork     a child (own session, stdio on /dev/null) inherits the links and closes
 *               them; this process exits at once. The child's line goes to -o FILE.
 *   -d sibling  the same, but the child is created with CLONE_PARENT: a child of our
 *               parent, which reaps it, instead of an orphan left to init
 * Output, one key=value line per step (CLOCK_MONOTONIC nanoseconds):
 *   usdt_attach attached mech=M multi=0|1 sites=N links=L load_ms=X attach_ms=Y pid=P
 *   usdt_attach stopped reason=exit|signal stop_ns=T hits=H
 *   usdt_attach detached detach_ms=D done_ns=T      (on stdout, or in FILE for fork/sibling)
 *   usdt_attach forked child=PID                    (fork/sibling)
 * Exit status: 0; 2 usage; 3 not permitted (EPERM/EACCES: the line names the step and errno);
 * 1 any other failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "usdt_attach.skel.h"
#include "usdt_sites.h"

#define MAX_THREADS 64

enum mech { MECH_PERF, MECH_MULTI, MECH_USDT };
enum detach { DETACH_INLINE, DETACH_THREADS, DETACH_FORK, DETACH_SIBLING };

struct opts {
	enum mech mech;
	enum detach detach;
	unsigned int threads;
	bool count;
	bool verbose;
	const char *out; /* the forked child's report */
	const char *binary; /* the target's executable, when /proc/PID/exe cannot be read */
	pid_t pid;
	char **argv;
};

struct state {
	struct usdt_attach_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
	struct usdt_sites sites;
	char path[PATH_MAX];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static bool verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN || verbose ? vfprintf(stderr, fmt, ap) : 0;
}

/* One line naming the step and the errno; exit status 3 for a missing privilege. */
static int fail(const char *step, int err)
{
	err = err < 0 ? -err : err;
	fprintf(stderr, "usdt_attach: %s: %s (errno %d)\n", step, strerror(err), err);
	return err == EPERM || err == EACCES ? 3 : 1;
}

static const char *const mech_names[] = { "perf", "multi", "usdt" };
static const char *const detach_names[] = { "inline", "threads", "fork", "sibling" };

static int pick(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	fprintf(stderr, "usdt_attach: unknown choice '%s'\n", arg);
	exit(2);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: usdt_attach [-m perf|multi|usdt] [-d inline|threads|fork|sibling]\n"
		   "                   [-T THREADS] [-o FILE] [-b BINARY] [-c] [-v]\n"
		   "                   (-p PID | -- CMD ARGS...)\n"
		   "Attaches a BPF program to every prover:* USDT site of a process and times\n"
		   "attach and detach. -c counts the hits; -v shows libbpf's messages; -b names\n"
		   "the process's executable (default: its /proc/PID/exe).\n");
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){ .mech = MECH_MULTI, .threads = 8 };
	while ((c = getopt(argc, argv, "+m:d:T:o:p:b:cvh")) != -1) {
		switch (c) {
		case 'm': o->mech = pick(optarg, mech_names, 3); break;
		case 'd': o->detach = pick(optarg, detach_names, 4); break;
		case 'T': o->threads = atoi(optarg); break;
		case 'o': o->out = optarg; break;
		case 'p': o->pid = atoi(optarg); break;
		case 'b': o->binary = optarg; break;
		case 'c': o->count = true; break;
		case 'v': o->verbose = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if ((o->pid > 0) == !!o->argv || o->threads < 1 || o->threads > MAX_THREADS ||
	    ((o->detach == DETACH_FORK || o->detach == DETACH_SIBLING) && !o->out)) {
		usage(stderr);
		exit(2);
	}
}

/* Starts argv stopped right after its exec, so that it can be attached before it runs. */
static pid_t spawn_stopped(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		fprintf(stderr, "usdt_attach: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "usdt_attach: %s did not start\n", argv[0]);
		return -1;
	}
	return pid;
}

static int attach_perf(struct state *st, struct bpf_program *prog, pid_t pid)
{
	for (size_t i = 0; i < st->sites.n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = st->sites.sites[i].sema_off);

		st->links[i] = bpf_program__attach_uprobe_opts(prog, pid, st->path,
							       st->sites.sites[i].off, &uo);
		if (!st->links[i])
			return -errno;
		st->nlinks++;
	}
	return 0;
}

static int attach_multi(struct state *st, struct bpf_program *prog, pid_t pid)
{
	size_t n = st->sites.n;
	unsigned long *offs = calloc(n, sizeof(*offs)), *refs = calloc(n, sizeof(*refs));
	int err = 0;

	if (!offs || !refs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		offs[i] = st->sites.sites[i].off;
		refs[i] = st->sites.sites[i].sema_off;
	}
	LIBBPF_OPTS(bpf_uprobe_multi_opts, mo, .offsets = offs, .ref_ctr_offsets = refs, .cnt = n);
	st->links[0] = bpf_program__attach_uprobe_multi(prog, pid, st->path, NULL, &mo);
	if (!st->links[0])
		err = -errno;
	else
		st->nlinks = 1;
out:
	free(offs);
	free(refs);
	return err;
}

/* libbpf's own USDT attach, once per distinct probe name */
static int attach_usdt(struct state *st, struct bpf_program *prog, pid_t pid)
{
	for (size_t i = 0; i < st->sites.n; i++) {
		const char *name = st->sites.sites[i].name;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(st->sites.sites[j].name, name);
		if (seen)
			continue;
		st->links[st->nlinks] = bpf_program__attach_usdt(prog, pid, st->path, "prover",
								 name, NULL);
		if (!st->links[st->nlinks])
			return -errno;
		st->nlinks++;
	}
	return 0;
}

/* Loads the one program of the mechanism and attaches it; prints the "attached" line. */
static int load_and_attach(struct state *st, const struct opts *o, pid_t pid)
{
	struct bpf_program *progs[3];
	unsigned long long t0 = mono_ns(), t1;
	int err;

	st->skel = usdt_attach_bpf__open();
	if (!st->skel)
		return fail("open the BPF object", errno);
	progs[MECH_PERF] = st->skel->progs.site_perf;
	progs[MECH_MULTI] = st->skel->progs.site_multi;
	progs[MECH_USDT] = st->skel->progs.site_usdt;
	for (int i = 0; i < 3; i++)
		bpf_program__set_autoload(progs[i], i == (int)o->mech);
	st->skel->rodata->count_hits = o->count;
	err = usdt_attach_bpf__load(st->skel);
	if (err)
		return fail("load the BPF program", err);
	st->links = calloc(st->sites.n, sizeof(*st->links));
	if (!st->links)
		return fail("allocate", ENOMEM);
	t1 = mono_ns();
	switch (o->mech) {
	case MECH_PERF: err = attach_perf(st, progs[o->mech], pid); break;
	case MECH_MULTI: err = attach_multi(st, progs[o->mech], pid); break;
	case MECH_USDT: err = attach_usdt(st, progs[o->mech], pid); break;
	}
	if (err)
		return fail(o->mech == MECH_PERF ? "attach (perf_event_open uprobe)" :
			    o->mech == MECH_MULTI ? "attach (uprobe_multi link)" :
						    "attach (libbpf USDT)", err);
	printf("usdt_attach attached mech=%s multi=%d sites=%zu links=%zu load_ms=%.3f "
	       "attach_ms=%.3f pid=%d\n", mech_names[o->mech],
	       bpf_program__expected_attach_type(progs[o->mech]) == BPF_TRACE_UPROBE_MULTI,
	       st->sites.n, st->nlinks, (t1 - t0) / 1e6, (mono_ns() - t1) / 1e6, pid);
	fflush(stdout);
	return 0;
}

struct closer {
	pthread_t thread;
	struct state *st;
	size_t first, step;
};

static void *close_some(void *arg)
{
	struct closer *c = arg;

	for (size_t i = c->first; i < c->st->nlinks; i += c->step)
		bpf_link__destroy(c->st->links[i]);
	return NULL;
}

/* Closes every link (from `threads` threads at once), then the programs and maps. */
static double detach_all(struct state *st, unsigned int threads)
{
	struct closer c[MAX_THREADS];
	unsigned long long t0 = mono_ns();
	unsigned int i, started = 0;

	for (i = 0; i < threads && i < st->nlinks; i++) {
		c[i] = (struct closer){ .st = st, .first = i, .step = threads };
		if (threads > 1 && pthread_create(&c[i].thread, NULL, close_some, &c[i]) == 0)
			started++;
		else
			close_some(&c[i]); /* one thread, or no more threads: close them here */
	}
	for (i = 0; i < started; i++)
		pthread_join(c[i].thread, NULL);
	st->nlinks = 0;
	usdt_attach_bpf__destroy(st->skel);
	st->skel = NULL;
	return (mono_ns() - t0) / 1e6;
}

/*
 * Closes every descriptor but the kernel objects the links need (BPF links, programs and
 * maps, perf events, the parent's pidfd: all anonymous inodes): a pipe or socket inherited
 * from whoever started us (a `$(...)`, a make jobserver, a CI harness) must not stay open
 * in a child that may live for minutes, or the reader at its other end waits for us.
 */
static void close_inherited(void)
{
	char link[64], target[64];
	int fds[1024], n = 0;
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return;
	while ((de = readdir(d)) && n < (int)(sizeof(fds) / sizeof(fds[0]))) {
		int fd = atoi(de->d_name);
		ssize_t len;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		if (strncmp(target, "anon_inode:", 11))
			fds[n++] = fd;
	}
	closedir(d);
	while (n--)
		close(fds[n]);
}

/*
 * The detaching child: no terminal, no stdio, its own session; reports to FILE. It closes
 * the links only once the parent is gone (its pidfd readable: the parent's files are
 * closed by then): were the child first, the parent's exit would drop the last references
 * and wait for the kernel itself.
 */
static void detach_in_child(struct state *st, const char *out, int parent_fd)
{
	struct pollfd pfd = { .fd = parent_fd, .events = POLLIN };
	char tmp[PATH_MAX], line[128];
	int fd = open("/dev/null", O_RDWR);
	double ms;
	FILE *f;

	setsid();
	if (fd >= 0) {
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	close_inherited();
	while (parent_fd >= 0 && poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	ms = detach_all(st, 1);
	snprintf(line, sizeof(line), "usdt_attach detached detach_ms=%.3f done_ns=%llu\n", ms,
		 mono_ns());
	/* written whole, then renamed: a reader never sees half a line */
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (f && fputs(line, f) >= 0 && fclose(f) == 0)
		rename(tmp, out);
	_exit(0);
}

static int detach(struct state *st, const struct opts *o)
{
	pid_t child;
	int parent_fd;

	if (o->detach == DETACH_INLINE || o->detach == DETACH_THREADS) {
		double ms = detach_all(st, o->detach == DETACH_THREADS ? o->threads : 1);

		printf("usdt_attach detached detach_ms=%.3f done_ns=%llu\n", ms, mono_ns());
		return 0;
	}
	fflush(stdout);
	parent_fd = syscall(SYS_pidfd_open, getpid(), 0);
	if (parent_fd < 0)
		return fail("pidfd_open of this process", errno);
	/* SIGCHLD to whoever reaps it; CLONE_PARENT: our parent does */
	child = o->detach == DETACH_SIBLING ? syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0)
					    : fork();
	if (child < 0)
		return fail("fork the detaching child", errno);
	if (child == 0)
		detach_in_child(st, o->out, parent_fd);
	/* the links stay open in the child: our exit only drops our references */
	printf("usdt_attach forked child=%d\n", child);
	return 0;
}

/* Until the target exits (reaped when it is our child) or a signal asks us to stop. */
static const char *wait_target(pid_t pid, bool child)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), status;

	for (;;) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

		if (stop)
			break;
		if (child && waitpid(pid, &status, 0) == pid)
			break;
		if (!child && (pidfd < 0 || poll(&pfd, 1, -1) > 0))
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	return stop ? "signal" : "exit";
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake the wait */
	struct state st = { 0 };
	struct opts o;
	char exe[64];
	const char *why;
	pid_t pid;
	ssize_t n;
	int rc;

	parse_opts(argc, argv, &o);
	verbose = o.verbose;
	libbpf_set_print(print_libbpf);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pid = o.argv ? spawn_stopped(o.argv) : o.pid;
	if (pid <= 0)
		return 1;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	n = o.binary ? (ssize_t)snprintf(st.path, sizeof(st.path), "%s", o.binary)
		     : readlink(exe, st.path, sizeof(st.path) - 1);
	if (n < 0)
		return fail(exe, errno);
	st.path[n] = '\0';
	rc = usdt_sites__read(st.path, "prover", &st.sites);
	if (rc)
		return fail("read the prover USDT notes", rc);
	rc = load_and_attach(&st, &o, pid);
	if (o.argv)
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (rc) {
		if (o.argv)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		return rc;
	}
	why = wait_target(pid, o.argv);
	printf("usdt_attach stopped reason=%s stop_ns=%llu hits=%llu\n", why, mono_ns(),
	       (unsigned long long)st.skel->bss->hits);
	rc = detach(&st, &o);
	usdt_sites__free(&st.sites);
	return rc;
}
