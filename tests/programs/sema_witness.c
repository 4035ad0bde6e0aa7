// SPDX-License-Identifier: BSD-2-Clause
/*
 * Shows where the kernel raises a USDT semaphore, the way inflight attaches: it starts a
 * program stopped right after its exec (as `inflight -- CMD` does) and registers one uprobe
 * with a reference counter (perf_event_open on the uprobe PMU, the call libbpf makes):
 *   exec   right there (what `inflight -- CMD` does today);
 *   entry  after running it to its entry point: the dynamic loader has then relocated it
 *          and made RELRO read-only (what a late `-p` sees);
 *   before for every process, before the program starts (what `-b PATH` does): the kernel
 *          raises the semaphore while exec maps the file; shown at exec and at the entry.
 * Then it prints every mapping of the semaphore's file page with the value the semaphore
 * has in that copy, lets the program run and prints how often the probe hit.
 *
 *   sema_witness exec|entry|before SITE_OFFSET SEMAPHORE_OFFSET PROGRAM [ARGS...]
 *
 * Offsets are file offsets (tests/programs/elf_facts.py offsets ELF PROBE). Output, for the
 * program matrix's evidence (addresses vary with ASLR, so mappings are named by their
 * permissions and file offsets):
 *   at exec|entry: semaphore in rw-p (file 0x2000, 1st of 2 writable): 1
 *   at exec|entry: semaphore in rw-p (file 0x2000, 2nd of 2 writable): 0
 *   hits 0
 * With SEMA_WITNESS_MAPS=1 in the environment it also prints every mapping of the file.
 * Needs root (a uprobe is a perf event that needs CAP_SYS_ADMIN on Linux 6.16+).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#define MAX_MAPS 64

struct map {
	unsigned long start, end, off;
	char perms[5];
};

static void die(const char *what)
{
	fprintf(stderr, "sema_witness: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The mappings of the program's own file, in address order. */
static int file_maps(pid_t pid, const char *exe, struct map *m)
{
	char path[64], line[PATH_MAX + 128], name[PATH_MAX];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		die("open maps");
	while (n < MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct map *p = &m[n];

		name[0] = '\0';
		if (sscanf(line, "%lx-%lx %4s %lx %*s %*s %s", &p->start, &p->end, p->perms,
			   &p->off, name) >= 4 && !strcmp(name, exe))
			n++;
	}
	fclose(f);
	return n;
}

static void show(pid_t pid, const char *exe, const char *when, unsigned long sema_off)
{
	struct map m[MAX_MAPS];
	int n = file_maps(pid, exe, m), writable = 0, k = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open mem");
	for (int i = 0; i < n; i++) {
		writable += m[i].perms[1] == 'w';
		if (getenv("SEMA_WITNESS_MAPS"))
			printf("at %s: map %s file 0x%lx, %lu pages\n", when, m[i].perms, m[i].off,
			       (m[i].end - m[i].start) / 4096);
	}
	for (int i = 0; i < n; i++) {
		unsigned long page = sema_off & ~4095ul;
		unsigned short v;

		if (m[i].off > page || m[i].off + (m[i].end - m[i].start) <= page)
			continue;
		k += m[i].perms[1] == 'w';
		if (pread(fd, &v, sizeof(v), (off_t)(m[i].start + sema_off - m[i].off)) != 2)
			die("read the semaphore");
		printf("at %s: semaphore in %s (file 0x%lx%s%s): %u\n", when, m[i].perms,
		       m[i].off, m[i].perms[1] == 'w' ? (k == 1 ? ", 1st" : ", 2nd") : "",
		       m[i].perms[1] == 'w' ? (writable > 1 ? " of several writable" : " writable")
					    : "", v);
	}
	close(fd);
}

static unsigned long auxv_entry(pid_t pid)
{
	unsigned long kv[2];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open auxv");
	while (read(fd, kv, sizeof(kv)) == sizeof(kv))
		if (kv[0] == 9) { /* AT_ENTRY */
			close(fd);
			return kv[1];
		}
	close(fd);
	errno = ENOENT;
	die("AT_ENTRY");
	return 0;
}

/* Runs the stopped child to its entry point with a one-shot int3 there. */
static void run_to_entry(pid_t pid)
{
	unsigned long entry = auxv_entry(pid), word;
	struct user_regs_struct regs;
	int st;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, entry, NULL);
	if (errno)
		die("peek");
	if (ptrace(PTRACE_POKETEXT, pid, entry, (word & ~0xfful) | 0xcc) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL))
		die("poke");
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
		errno = EINVAL;
		die("run to the entry point");
	}
	if (ptrace(PTRACE_POKETEXT, pid, entry, word) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		die("restore");
	regs.rip = entry;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs))
		die("setregs");
}

static int uprobe(pid_t pid, int cpu, const char *exe, unsigned long site, unsigned long sema)
{
	struct perf_event_attr a;
	char buf[16] = "";
	int fd, type;

	fd = open("/sys/bus/event_source/devices/uprobe/type", O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		die("uprobe PMU type");
	close(fd);
	type = atoi(buf);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config = (uint64_t)sema << 32; /* format: ref_ctr_offset is config:32-63 */
	a.config1 = (uint64_t)(uintptr_t)exe; /* uprobe_path */
	a.config2 = site;		     /* probe_offset */
	fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die("perf_event_open (uprobe)");
	return fd;
}

#define MAX_CPUS 256

int main(int argc, char **argv)
{
	unsigned long site, sema;
	char exe[PATH_MAX], link[64];
	int fds[MAX_CPUS], nfd = 0, st;
	const char *mode = argv[1];
	uint64_t hits = 0;
	ssize_t n;
	pid_t pid;

	if (argc < 5 || (strcmp(mode, "exec") && strcmp(mode, "entry") && strcmp(mode, "before"))) {
		fprintf(stderr, "usage: sema_witness exec|entry|before SITE_OFF SEMA_OFF PROGRAM "
				"[ARGS]\n");
		return 2;
	}
	site = strtoul(argv[2], NULL, 0);
	sema = strtoul(argv[3], NULL, 0);
	if (!realpath(argv[4], exe))
		die("realpath");
	if (!strcmp(mode, "before")) /* system-wide: one event per CPU, as perf does */
		for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && nfd < MAX_CPUS; c++)
			fds[nfd++] = uprobe(-1, (int)c, exe, site, sema);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(argv[4], argv + 4);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		errno = ECHILD;
		die("start the program");
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0)
		die("readlink exe");
	exe[n] = '\0';
	if (!strcmp(mode, "before"))
		show(pid, exe, "exec", sema);
	if (strcmp(mode, "exec"))
		run_to_entry(pid);
	if (nfd == 0)
		fds[nfd++] = uprobe(pid, -1, exe, site, sema);
	show(pid, exe, strcmp(mode, "exec") ? "entry" : "exec", sema);
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL))
		die("detach");
	if (waitpid(pid, &st, 0) != pid)
		die("wait");
	for (int i = 0; i < nfd; i++) {
		uint64_t h = 0;

		if (read(fds[i], &h, sizeof(h)) != sizeof(h))
			die("read the hit count");
		hits += h;
	}
	printf("hits %llu\n", (unsigned long long)hits);
	return 0;
}
