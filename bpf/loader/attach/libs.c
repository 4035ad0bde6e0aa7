// SPDX-License-Identifier: BSD-2-Clause
/* The mapped binaries of a traced process (attach/libs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "attach/cuda.h"
#include "attach/image_table.h"
#include "attach/libs.h"
#include "attach/sema.h"
#include "attach/service.h"
#include "attach/watch.h"
#include "util/errors.h"
#include "util/procfs.h"

struct libs {
	struct libs_cfg cfg;
	int target_maps, target_root; /* the target's /proc maps and root, opened early */
	struct watch *watch;	      /* libraries and execs after the attach */
};

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
	struct infl_image_key key;
	struct stat st;

	if (root >= 0)
		snprintf(path, len, "/proc/self/fd/%d%s", root, m->path);
	else
		snprintf(path, len, "/proc/%d/root%s", pid, m->path);
	if (!proc_image_key(path, &key) && proc_mapping_of(m, &key))
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
	struct infl_image_key sk = {};
	struct proc_mapping m;
	int err = -ENOENT;
	FILE *f = proc_maps_open(pid);

	if (!f)
		return -errno;
	proc_image_key(skip, &sk); /* a file gone: nothing to skip */
	while (err && next_mapped(f, &m))
		if (!proc_mapping_of(&m, &sk) && !is_ldso(m.path) &&
		    !reach(pid, -1, &m, path, len) && usdt_binary__traceable(path))
			err = 0;
	fclose(f);
	return err;
}

bool libs__maps_cuda(const struct cuda_attach *cuda, pid_t pid)
{
	struct proc_mapping m;
	bool found = false;
	FILE *f = proc_maps_open(pid);

	if (!f)
		return false;
	while (!found && next_mapped(f, &m))
		found = cuda_attach__is_lib(cuda, &m);
	fclose(f);
	return found;
}

/* A newly attached file's semaphores, settled and read back in `pid`: a 0 is said, not fatal. */
static void verify(pid_t pid, const char *path, const char *shown)
{
	struct usdt_binary b;
	struct sema_check c;

	if (usdt_binary__read(path, &b))
		return;
	sema__settle_said(pid, path, shown, &b);
	if (!sema__check(pid, path, &b, &c) && c.zero)
		infl_warn("%s: the semaphore of %s:%s reads 0 in pid %d after the attach%s: its "
			  "events there are not counted", shown, b.provider,
			  usdt_contract[c.probe].name, pid,
			  b.sema_shared[c.probe] ? " (it shares its page with RELRO: an LLD or "
						   "mold layout)" : "");
	usdt_binary__free(&b);
}

/* The target's maps and root, opened while the session still has its privileges (they are
 * dropped once attached): its later mappings are read through them. 0 or -errno. */
static int open_target(struct libs *l)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", l->cfg.target);
	l->target_maps = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root", l->cfg.target);
	l->target_root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return l->target_maps < 0 ? -errno : 0;
}

/*
 * The maps of `pid`, opened afresh (after an exec, an fd opened before reads the old image's
 * mappings); for the target, the fd opened while we had the privileges if that fails (a
 * process more privileged than we are once ours are dropped).
 */
static FILE *open_maps(struct libs *l, pid_t pid, int *root)
{
	FILE *f;
	int fd;

	*root = pid == l->cfg.target ? l->target_root : -1;
	f = proc_maps_open(pid);
	if (f || pid != l->cfg.target || l->target_maps < 0 || errno == ENOENT || errno == ESRCH)
		return f;
	fd = dup(l->target_maps);
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0 && (f = fdopen(fd, "re")))
		return f;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Attaches every not yet attached file of process `pid` that carries the contract, and hooks
 * its ld.so. Problems are warnings: the process is traced for what could be attached. */
static void scan(struct libs *l, pid_t pid)
{
	char path[PATH_MAX + 64];
	struct proc_mapping m;
	pid_t attach_pid = l->cfg.follow ? -1 : pid;
	bool added;
	int root;
	FILE *f = open_maps(l, pid, &root);

	if (!f) {
		if (errno != ENOENT && errno != ESRCH)
			infl_warn("pid %d: cannot read its mappings (%s): libraries it loads are "
				  "not traced", pid, strerror(errno));
		return;
	}
	while (next_mapped(f, &m)) {
		if (reach(pid, root, &m, path, sizeof(path)))
			continue;
		if (is_ldso(m.path)) {
			int err = l->watch ? watch__ldso(l->watch, path) : 0;

			if (err)
				infl_warn("pid %d: cannot watch its dlopen()s (%s: %s): libraries "
					  "it loads later are not traced", pid, m.path,
					  strerror(-err));
			continue;
		}
		if (cuda_attach__is_lib(l->cfg.cuda, &m)) {
			image_table__cuda(l->cfg.images, path, m.path, attach_pid);
			continue;
		}
		if (!usdt_binary__traceable(path))
			continue;
		if (image_table__attach(l->cfg.images, path, m.path, attach_pid, &added))
			continue; /* said */
		if (added)
			verify(pid, path, m.path);
	}
	fclose(f);
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
	struct libs *l = ctx;

	scan(l, (pid_t)ev->pid);
	if (ev->stopped)
		kill((pid_t)ev->pid, SIGCONT);
}

int libs__open(const struct libs_cfg *cfg, struct libs **out)
{
	struct libs *l = calloc(1, sizeof(*l));
	bool stop;
	int err;

	*out = NULL;
	if (!l)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	l->cfg = *cfg;
	l->target_maps = l->target_root = -1;
	/* a process we could not continue once our capabilities are gone is never stopped */
	stop = cfg->child || (proc_uid(cfg->target) == getuid() && !in_foreground(cfg->target));
	err = open_target(l);
	if (err && err != -ENOENT && err != -ESRCH)
		infl_warn("pid %d: cannot read its mappings (%s): libraries it maps are not traced",
			  cfg->target, strerror(-err));
	err = watch__open(cfg->procs, cfg->images_map, cfg->multi, stop, on_watch, l, &l->watch);
	if (err) {
		libs__free(l);
		return err;
	}
	scan(l, cfg->target);
	*out = l;
	return 0;
}

static void on_service(void *ctx)
{
	struct libs *l = ctx;

	watch__consume(l->watch);
}

int libs__serve(struct libs *l, struct service *svc)
{
	return service__add(svc, watch__epoll_fd(l->watch), on_service, l);
}

void libs__free(struct libs *l)
{
	if (!l)
		return;
	watch__free(l->watch);
	if (l->target_maps >= 0)
		close(l->target_maps);
	if (l->target_root >= 0)
		close(l->target_root);
	free(l);
}
