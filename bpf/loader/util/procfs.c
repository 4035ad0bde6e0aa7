// SPDX-License-Identifier: BSD-2-Clause
/* The loader's reads of /proc. util/procfs.h */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <sys/stat.h>
#include "util/procfs.h"

void proc_read(pid_t pid, const char *file, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	proc_read_file(path, buf, len);
}

int proc_cmdline_words(pid_t pid, char *buf, size_t len, char **words, int max)
{
	char path[64];
	ssize_t n;
	int fd, count = 0;

	if (len < 2)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (ssize_t at = 0; at < n && count < max; at += strlen(buf + at) + 1)
		words[count++] = buf + at;
	return count;
}

void proc_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (!len)
		return;
	buf[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == 0))
		buf[--n] = 0;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

int proc_exe_name(pid_t pid, char *buf, size_t len)
{
	char link[32];
	ssize_t n;

	if (len == 0)
		return -EINVAL;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int proc_exe_path(pid_t pid, char *out, size_t len)
{
	char exe[PATH_MAX];
	struct stat st;
	int err = proc_exe_name(pid, exe, sizeof(exe));

	if (err)
		return err;
	if ((size_t)snprintf(out, len, "/proc/%d/root%s", (int)pid, exe) < len &&
	    stat(out, &st) == 0)
		return 0;
	snprintf(out, len, "/proc/%d/exe", (int)pid);
	return 0;
}

bool proc_is_zombie(pid_t pid)
{
	char buf[256], *paren;

	proc_read(pid, "stat", buf, sizeof(buf));
	paren = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

bool proc_gone(pid_t pid)
{
	return (kill(pid, 0) && errno == ESRCH) || proc_is_zombie(pid);
}

/* field 9 of /proc/PID/stat: the task's flags; PF_KTHREAD (include/linux/sched.h) */
#define PF_KTHREAD_FLAG 0x00200000u

bool proc_is_kthread(pid_t pid)
{
	char buf[512], *p;
	unsigned long flags;
	int field;

	proc_read(pid, "stat", buf, sizeof(buf));
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	for (p += 2, field = 3; p && field < 9; field++)
		p = (p = strchr(p, ' ')) ? p + 1 : NULL;
	return p && sscanf(p, "%lu", &flags) == 1 && (flags & PF_KTHREAD_FLAG);
}

bool proc_is_root_path(const char *p)
{
	if (strncmp(p, "/proc/", 6))
		return false;
	p += 6;
	if (!strncmp(p, "self/", 5)) {
		p += 4;
	} else {
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return !strncmp(p, "/root/", 6);
}

int proc_start_time(pid_t pid, __u64 *unix_s)
{
	char stat[1024], boot[4096], *p, *btime;
	unsigned long long ticks, since_boot;
	long hz = sysconf(_SC_CLK_TCK);
	int field;

	proc_read(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')'); /* the comm may hold spaces and parentheses */
	if (!p || p[1] != ' ' || hz <= 0)
		return -ENOENT;
	/* fields after the comm are one space apart; the 22nd is starttime, in clock ticks
	 * after boot */
	for (p += 2, field = 3; p && field < 22; field++)
		p = (p = strchr(p, ' ')) ? p + 1 : NULL;
	if (!p || sscanf(p, "%llu", &ticks) != 1)
		return -ENOENT;
	proc_read_file("/proc/stat", boot, sizeof(boot));
	btime = strstr(boot, "\nbtime ");
	if (!btime || sscanf(btime + 7, "%llu", &since_boot) != 1)
		return -ENOENT;
	*unix_s = since_boot + ticks / (unsigned long long)hz;
	return 0;
}

__u64 proc_mem_total(void)
{
	char buf[256], *p;
	unsigned long long kib;

	proc_read_file("/proc/meminfo", buf, sizeof(buf));
	p = strstr(buf, "MemTotal:");
	return p && sscanf(p + 9, "%llu", &kib) == 1 ? kib * 1024 : 0;
}

__u64 proc_statm_rss(pid_t pid)
{
	char buf[128];
	unsigned long long size, resident;

	proc_read(pid, "statm", buf, sizeof(buf));
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return resident * (__u64)sysconf(_SC_PAGESIZE);
}

FILE *proc_maps_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	return fopen(path, "re");
}

int proc_maps_next(FILE *f, struct proc_mapping *m)
{
	char line[sizeof(m->path) + 128];
	unsigned long long start, end, off, ino;

	while (fgets(line, sizeof(line), f)) {
		m->path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start, &end, m->perms,
			   &off, &m->maj, &m->min, &ino, m->path) < 7)
			continue;
		m->start = start;
		m->end = end;
		m->offset = off;
		m->ino = ino;
		return 1;
	}
	return 0;
}

__u64 proc_kernel_dev(dev_t d)
{
	return ((__u64)major(d) << 20) | minor(d);
}

int proc_image_open(const char *path, struct proc_image *im)
{
	struct stat st;
	int err;

	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (im->fd < 0 || fstat(im->fd, &st)) {
		err = -errno;
		if (im->fd >= 0)
			close(im->fd);
		im->fd = -1;
		return err;
	}
	snprintf(im->path, sizeof(im->path), "/proc/self/fd/%d", im->fd);
	im->key.dev = proc_kernel_dev(st.st_dev);
	im->key.ino = st.st_ino;
	return 0;
}

void proc_image_close(struct proc_image *im)
{
	if (im->fd >= 0)
		close(im->fd);
	im->fd = -1;
}

int proc_image_key(const char *path, struct infl_image_key *key)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	key->dev = proc_kernel_dev(st.st_dev);
	key->ino = st.st_ino;
	return 0;
}

bool proc_mapping_of(const struct proc_mapping *m, const struct infl_image_key *key)
{
	struct infl_image_key mapped = { .dev = ((__u64)m->maj << 20) | m->min, .ino = m->ino };

	return proc_image_same(&mapped, key);
}

bool proc_image_same(const struct infl_image_key *a, const struct infl_image_key *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}
