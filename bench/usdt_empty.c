// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt_empty: attaches do-nothing BPF programs (or, with -a, programs that only fetch the
 * arguments; with -s, that make one atomic add to a word all threads share; with -c, one add
 * to a per-CPU word; with -h and -t, that keep a record per live buffer, in a hash map or in
 * an open-addressing table; with -H and -A, that find the process's record, in a hash map or
 * in an array; with -m, the least an exact hit does, and with -M that and recording's
 * least: usdt_empty.bpf.c) to the contract's three probes in one
 * process, and stays attached until that process exits or a signal arrives; with -r also a
 * do-nothing kmem:rss_stat program. The floor that inflight's per-hit cost is compared with,
 * and the shortest attach a libbpf tool can do.
 *
 * Prints "usdt_empty attached pid=P load_ms=L attach_ms=A" once all three are attached, and
 * with -h, -t, -m and -M "usdt_empty lost=N" at the end: buffer records it could not insert
 * or find.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "usdt_empty.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* -R: the events are read and dropped */
static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int attach(struct bpf_program *prog, pid_t pid, const char *path, const char *name,
		  struct bpf_link **link)
{
	*link = bpf_program__attach_usdt(prog, pid, path, "prover", name, NULL);
	if (!*link) {
		fprintf(stderr, "usdt_empty: attaching to prover:%s in %s: %s\n", name, path,
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct usdt_empty_bpf *skel = NULL;
	struct bpf_link *links[3] = { 0 };
	struct bpf_program *progs[3];
	char exe[64], path[PATH_MAX];
	int set = 0, with_rss = 0, pidfd = -1, rc = 1, i;
	struct bpf_link *rss_link = NULL;
	struct ring_buffer *rb = NULL;
	double t0 = mono_ms(), t1;
	ssize_t n;
	pid_t pid;

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[1], "-a"))
			set = 1;
		else if (!strcmp(argv[1], "-s"))
			set = 2;
		else if (!strcmp(argv[1], "-c"))
			set = 3;
		else if (!strcmp(argv[1], "-h"))
			set = 4;
		else if (!strcmp(argv[1], "-t"))
			set = 5;
		else if (!strcmp(argv[1], "-H"))
			set = 6;
		else if (!strcmp(argv[1], "-A"))
			set = 7;
		else if (!strcmp(argv[1], "-R"))
			set = 8;
		else if (!strcmp(argv[1], "-L"))
			set = 9;
		else if (!strcmp(argv[1], "-m"))
			set = 10;
		else if (!strcmp(argv[1], "-M"))
			set = 11;
		else if (!strcmp(argv[1], "-r"))
			with_rss = 1;
		else
			break;
	}
	if (argc != 2 || (pid = atoi(argv[1])) <= 0) {
		fprintf(stderr, "Usage: usdt_empty [-a|-s|-c|-h|-t|-H|-A|-R|-L|-m|-M] [-r] PID\n"
				"Attaches empty BPF programs (-a: argument fetch only; -s: one\n"
				"atomic add to a shared word; -c: one add to a per-CPU word; -h, -t:\n"
				"the arguments and a record per live buffer, in a hash map or in an\n"
				"open-addressing table in an array; -H, -A: the arguments and the\n"
				"process's record found, in a hash map or in an array; -R: the\n"
				"arguments and a 56-byte event into a ring buffer this reads; -L:\n"
				"the arguments, the process's record found, a place taken in it and\n"
				"the op into a per-CPU log; -m: the least an exact hit does (the\n"
				"arguments, a place in the process's record, the owner's record\n"
				"and a record per live buffer); -M: that, the clock and the event\n"
				"into a ring buffer this reads) to the\n"
				"prover:buf_alloc, buf_free and stage probes of process PID; -r: an\n"
				"empty kmem:rss_stat program too.\n");
		return 2;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	n = readlink(exe, path, sizeof(path) - 1);
	if (n < 0) {
		fprintf(stderr, "usdt_empty: %s: %s\n", exe, strerror(errno));
		return 1;
	}
	path[n] = 0;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		fprintf(stderr, "usdt_empty: pidfd_open(%d): %s\n", pid, strerror(errno));
		return 1;
	}
	libbpf_set_print(quiet);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	skel = usdt_empty_bpf__open();
	if (!skel) {
		fprintf(stderr, "usdt_empty: opening the BPF object: %s\n", strerror(errno));
		goto cleanup;
	}
	{
		/* one row per set: alloc, free, stage */
		struct bpf_program *sets[12][3] = {
			{ skel->progs.empty_alloc, skel->progs.empty_free, skel->progs.empty_stage },
			{ skel->progs.args_alloc, skel->progs.args_free, skel->progs.args_stage },
			{ skel->progs.shared_alloc, skel->progs.shared_free,
			  skel->progs.shared_stage },
			{ skel->progs.percpu_alloc, skel->progs.percpu_free,
			  skel->progs.percpu_stage },
			{ skel->progs.hbuf_alloc, skel->progs.hbuf_free, skel->progs.hbuf_stage },
			{ skel->progs.tbuf_alloc, skel->progs.tbuf_free, skel->progs.tbuf_stage },
			{ skel->progs.hproc_alloc, skel->progs.hproc_free,
			  skel->progs.hproc_stage },
			{ skel->progs.aproc_alloc, skel->progs.aproc_free,
			  skel->progs.aproc_stage },
			{ skel->progs.ring_alloc, skel->progs.ring_free, skel->progs.ring_stage },
			{ skel->progs.plog_alloc, skel->progs.plog_free, skel->progs.plog_stage },
			{ skel->progs.least_alloc, skel->progs.least_free,
			  skel->progs.least_stage },
			{ skel->progs.least_record_alloc, skel->progs.least_record_free,
			  skel->progs.least_record_stage },
		};

		/* load only the set in use */
		for (int s = 0; s < 12; s++)
			for (i = 0; i < 3; i++)
				bpf_program__set_autoload(sets[s][i], s == set);
		for (i = 0; i < 3; i++)
			progs[i] = sets[set][i];
	}
	bpf_program__set_autoload(skel->progs.empty_rss, with_rss);
	if (usdt_empty_bpf__load(skel)) {
		fprintf(stderr, "usdt_empty: loading the BPF programs: %s (needs CAP_BPF and "
				"CAP_PERFMON)\n", strerror(errno));
		goto cleanup;
	}
	t1 = mono_ms();
	if (attach(progs[0], pid, path, "buf_alloc", &links[0]) ||
	    attach(progs[1], pid, path, "buf_free", &links[1]) ||
	    attach(progs[2], pid, path, "stage", &links[2]))
		goto cleanup;
	if (with_rss && !(rss_link = bpf_program__attach(skel->progs.empty_rss))) {
		fprintf(stderr, "usdt_empty: attaching to kmem:rss_stat: %s\n", strerror(errno));
		goto cleanup;
	}
	printf("usdt_empty attached pid=%d load_ms=%.3f attach_ms=%.3f\n", pid, t1 - t0,
	       mono_ms() - t1);
	fflush(stdout);

	if ((set == 8 || set == 11) &&
	    !(rb = ring_buffer__new(bpf_map__fd(skel->maps.ring), on_event, NULL, NULL))) {
		fprintf(stderr, "usdt_empty: reading the ring: %s\n", strerror(errno));
		goto cleanup;
	}
	rc = 0;
	while (!stop) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		/* the ring (-R) read as inflight's recorder reads its own: every poll interval */
		if (poll(&pfd, 1, rb ? 100 : 200) > 0)
			break; /* the process exited */
		if (rb)
			ring_buffer__consume(rb);
	}
	/* the sets that keep buffer records: what they could not insert or find (must be 0
	 * when attached before the first event) */
	if (set == 4 || set == 5 || set == 10 || set == 11)
		printf("usdt_empty lost=%llu\n", (unsigned long long)(skel->bss->hbuf_lost +
								  skel->bss->tbuf_lost));
cleanup:
	ring_buffer__free(rb);
	for (i = 0; i < 3; i++)
		bpf_link__destroy(links[i]);
	bpf_link__destroy(rss_link);
	usdt_empty_bpf__destroy(skel);
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}
