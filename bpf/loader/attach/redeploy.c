// SPDX-License-Identifier: BSD-2-Clause
/* -b PATH across redeploys (attach/redeploy.h). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include "attach/redeploy.h"
#include "attach/session_int.h"
#include "attach/usdt_attach.h"
#include "util/errors.h"
#include "util/procfs.h"

int redeploy__open(struct session *s, const char *given)
{
	char dir[PATH_MAX];
	struct stat st;

	snprintf(s->given, sizeof(s->given), "%s", given);
	snprintf(dir, sizeof(dir), "%s", given);
	snprintf(s->given_base, sizeof(s->given_base), "%s", basename(s->given));
	if (stat(s->path, &st))
		return -errno;
	s->cur_dev = st.st_dev;
	s->cur_ino = st.st_ino;
	s->cur_attached = true;
	s->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->inotify_fd < 0)
		return -errno;
	/* a rename onto PATH (mv, install), a new file or link there, a rewrite in place */
	if (inotify_add_watch(s->inotify_fd, dirname(dir), IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) < 0) {
		int err = -errno;

		close(s->inotify_fd);
		s->inotify_fd = -1;
		return err;
	}
	return 0;
}

/* The events since the last look: whether one is about PATH, and whether it was written. */
static bool drain(struct session *s, bool *wrote)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool ours = false;
	ssize_t n;

	*wrote = false;
	while ((n = read(s->inotify_fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			if (ev->len && !strcmp(ev->name, s->given_base)) {
				ours = true;
				*wrote |= (ev->mask & IN_CLOSE_WRITE) != 0;
			}
			p += sizeof(*ev) + ev->len;
		}
	return ours;
}

/* What PATH names now: resolved again (a symlink may have been switched). */
static int resolve(const struct session *s, char *now, size_t len)
{
	if (proc_is_root_path(s->given)) {
		snprintf(now, len, "%s", s->given);
		return 0;
	}
	return realpath(s->given, now) ? 0 : -errno;
}

static void attach_new(struct session *s, const char *now, const struct stat *st)
{
	struct usdt_binary b;
	const char *hint;
	char why[512];
	int before = usdt_attach__sites(s->usdt), err = usdt_binary__read(now, &b);

	if (err == -ENOEXEC || err == -EBADMSG || err == -ENOENT)
		return; /* not complete yet (being written), or gone again: its close comes */
	s->cur_dev = st->st_dev;
	s->cur_ino = st->st_ino;
	s->cur_attached = false;
	if (err) {
		infl_warn("%s was replaced by a file inflight cannot read (%s): processes started "
			  "from it are not traced", s->given, strerror(-err));
		return;
	}
	if (b.verdict != USDT_OK || usdt_binary__sema_shared(&b)) {
		if (b.verdict == USDT_OK)
			snprintf(why, sizeof(why), "its semaphores share a page with RELRO (an LLD "
				 "or mold layout): -b cannot enable them");
		else
			usdt_binary__why(&b, why, sizeof(why), &hint);
		infl_warn("%s was replaced by a binary inflight cannot trace: %s; processes "
			  "started from it are not traced", s->given, why);
		usdt_binary__free(&b);
		return;
	}
	usdt_binary__free(&b);
	if (session__attach_image(s, now, now, -1))
		return; /* said */
	s->cur_attached = true;
	fprintf(stderr, "inflight: %s was replaced (inode %llu): attached to the new binary (%d "
		"sites); processes of the old one stay traced\n", s->given,
		(unsigned long long)st->st_ino, usdt_attach__sites(s->usdt) - before);
}

void redeploy__handle(struct session *s)
{
	char now[PATH_MAX];
	struct stat st;
	bool wrote;

	if (!drain(s, &wrote) || resolve(s, now, sizeof(now)) || stat(now, &st))
		return;
	if (st.st_dev == s->cur_dev && st.st_ino == s->cur_ino) {
		/* the attached inode itself: its sites may have moved under the probes */
		if (wrote && s->cur_attached)
			infl_warn("%s was rewritten in place (same inode): its probes may have moved; "
				  "restart inflight to trace the new build", s->given);
		return;
	}
	attach_new(s, now, &st);
}
