// SPDX-License-Identifier: BSD-2-Clause
/* The mapped binaries of a traced process (attach/libs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "attach/cuda.h"
#include "attach/libs.h"
#include "attach/sema.h"
#include "attach/session_int.h"
#include "attach/watch.h"
#include "util/errors.h"
#include "util/procfs.h"

/* The next executable file mapping of `f`: 1, or 0 at the end. */
static int next_mapped(FILE *f, struct proc_mapping *m)
{
	while (proc_maps_next(f, m))
		if (m->perms[2] == 'x' && m->ino && m->path[0] == '/' &&
		    !strstr(m->path, " (deleted)"))
			return 1;
	return 0;
}

/*
 * A path to the mapped file that works from here: through the process's root (another mount
 * namespace; `root` an fd of it opened while we could, else /proc/PID/root), or its map_files
 * link when the path now names another file (replaced on disk). 0, or -ENOENT.
 */
static int reach(pid_t pid, int root, const struct proc_mapping *m, char *path, size_t len)
{
	struct stat st;

	if (root >= 0)
		snprintf(path, len, "/proc/self/fd/%d%s", root, m->path);
	else
		snprintf(path, len, "/proc/%d/root%s", pid, m->path);
	if (!stat(path, &st) && st.st_ino == m->ino && major(st.st_dev) == m->maj &&
	    minor(st.st_dev) == m->min)
		return 0;
	snprintf(path, len, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)m->start,
		 (unsigned long long)m->end);
	return stat(path, &st) ? -ENOENT : 0;
}

static bool is_ldso(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "ld-linux", 8) || (!strncmp(base, "ld-", 3) && strstr(base, ".so"));
}

int libs__first(pid_t pid, const char *skip, char *path, size_t len)
{
	char maps[64];
	struct proc_mapping m;
	struct stat sk;
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	if (stat(skip, &sk))
		memset(&sk, 0, sizeof(sk));
	while (err && next_mapped(f, &m))
		if (!(m.ino == sk.st_ino && m.maj == major(sk.st_dev) && m.min == minor(sk.st_dev)) &&
		    !is_ldso(m.path) && !reach(pid, -1, &m, path, len) && usdt_binary__traceable(path))
			err = 0;
	fclose(f);
	return err;
}

bool libs__maps_cuda(struct session *s, pid_t pid)
{
	char maps[64];
	struct proc_mapping m;
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return false;
	while (!found && next_mapped(f, &m))
		found = cuda_attach__is_lib(s->cuda, m.path, m.maj, m.min, m.ino);
	fclose(f);
	return found;
}

/* A newly attached file's semaphores, read back in `pid`: a 0 is said, not fatal. */
static void verify(pid_t pid, const char *path, const char *shown)
{
	struct usdt_binary b;
	struct sema_check c;

	if (usdt_binary__read(path, &b))
		return;
	if (!sema__check(pid, path, &b, &c) && c.zero)
		infl_warn("%s: the semaphore of %s:%s reads 0 in pid %d after the attach%s: its "
			  "events there are not counted", shown, b.provider,
			  usdt_contract[c.probe].name, pid,
			  b.sema_shared[c.probe] ? " (it shares its page with RELRO: an LLD or "
						   "mold layout)" : "");
	usdt_binary__free(&b);
}

int libs__open_target(struct session *s)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", s->target);
	s->target_maps = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root", s->target);
	s->target_root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return s->target_maps < 0 ? -errno : 0;
}

/*
 * The maps of `pid`, opened afresh (after an exec, an fd opened before reads the old image's
 * mappings); for the target, the fd opened while we had the privileges if that fails (a
 * process more privileged than we are once ours are dropped).
 */
static FILE *open_maps(struct session *s, pid_t pid, int *root)
{
	char path[64];
	FILE *f;
	int fd;

	*root = pid == s->target ? s->target_root : -1;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (f || pid != s->target || s->target_maps < 0 || errno == ENOENT || errno == ESRCH)
		return f;
	fd = dup(s->target_maps);
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0 && (f = fdopen(fd, "re")))
		return f;
	if (fd >= 0)
		close(fd);
	return NULL;
}

int libs__scan(struct session *s, pid_t pid)
{
	char path[PATH_MAX + 64];
	struct proc_mapping m;
	int attached = 0, before, root;
	FILE *f = open_maps(s, pid, &root);

	if (!f) {
		if (errno != ENOENT && errno != ESRCH)
			infl_warn("pid %d: cannot read its mappings (%s): libraries it loads are "
				  "not traced", pid, strerror(errno));
		return 0;
	}
	while (next_mapped(f, &m)) {
		if (reach(pid, root, &m, path, sizeof(path)))
			continue;
		if (is_ldso(m.path)) {
			int err = s->watch ? watch__ldso(s->watch, path) : 0;

			if (err)
				infl_warn("pid %d: cannot watch its dlopen()s (%s: %s): libraries "
					  "it loads later are not traced", pid, m.path,
					  strerror(-err));
			continue;
		}
		if (cuda_attach__is_lib(s->cuda, m.path, m.maj, m.min, m.ino)) {
			session__attach_cuda(s, path, m.path, pid);
			continue;
		}
		if (!usdt_binary__traceable(path))
			continue;
		before = s->nimages;
		if (session__attach_image(s, path, m.path, s->follow ? -1 : pid))
			continue; /* said */
		if (s->nimages > before) {
			attached++;
			verify(pid, path, m.path);
		}
	}
	fclose(f);
	return attached;
}
