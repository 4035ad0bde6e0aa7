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
#include "attach/image_table.h"
#include "attach/redeploy.h"
#include "attach/service.h"
#include "util/errors.h"
#include "util/procfs.h"

struct redeploy {
	struct image_table *images; /* where a new file is attached */
	int inotify_fd;		    /* the directory of PATH */
	char given[PATH_MAX];	    /* PATH as given */
	char given_base[NAME_MAX + 1];
	struct infl_image_key cur;  /* the file PATH named when last looked at */
	bool cur_attached;	    /* ... and whether it is attached */
};

int redeploy__open(const char *given, const char *path, struct image_table *images,
		  struct redeploy **out)
{
	struct redeploy *r = calloc(1, sizeof(*r));
	char dir[PATH_MAX];
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->images = images;
	snprintf(r->given, sizeof(r->given), "%s", given);
	snprintf(dir, sizeof(dir), "%s", given);
	snprintf(r->given_base, sizeof(r->given_base), "%s", basename(r->given));
	r->inotify_fd = -1;
	err = proc_image_key(path, &r->cur);
	if (err) {
		errno = -err;
		goto fail;
	}
	r->cur_attached = true;
	r->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (r->inotify_fd < 0)
		goto fail;
	/* a rename onto PATH (mv, install), a new file or link there, a rewrite in place */
	if (inotify_add_watch(r->inotify_fd, dirname(dir), IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	err = -errno;
	redeploy__free(r);
	return err;
}

/* The events since the last look: whether one is about PATH, and whether it was written. */
static bool drain(struct redeploy *r, bool *wrote)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool ours = false;
	ssize_t n;

	*wrote = false;
	while ((n = read(r->inotify_fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			if (ev->len && !strcmp(ev->name, r->given_base)) {
				ours = true;
				*wrote |= (ev->mask & IN_CLOSE_WRITE) != 0;
			}
			p += sizeof(*ev) + ev->len;
		}
	return ours;
}

/* What PATH names now: resolved again (a symlink may have been switched). */
static int resolve(const struct redeploy *r, char *now, size_t len)
{
	if (proc_is_root_path(r->given)) {
		snprintf(now, len, "%s", r->given);
		return 0;
	}
	return realpath(r->given, now) ? 0 : -errno;
}

static void attach_new(struct redeploy *r, const char *now, const struct infl_image_key *key)
{
	struct usdt_binary b;
	const char *hint;
	char why[512];
	bool added;
	int before = image_table__sites(r->images), err = usdt_binary__read(now, &b);

	if (err == -ENOEXEC || err == -EBADMSG || err == -ENOENT)
		return; /* not complete yet (being written), or gone again: its close comes */
	r->cur = *key;
	r->cur_attached = false;
	if (err) {
		infl_warn("%s was replaced by a file inflight cannot read (%s): processes started "
			  "from it are not traced", r->given, strerror(-err));
		return;
	}
	if (b.verdict != USDT_OK || usdt_binary__sema_shared(&b)) {
		if (b.verdict == USDT_OK)
			snprintf(why, sizeof(why), "its semaphores share a page with RELRO (an LLD "
				 "or mold layout): -b cannot enable them");
		else
			usdt_binary__why(&b, why, sizeof(why), &hint);
		infl_warn("%s was replaced by a binary inflight cannot trace: %s; processes "
			  "started from it are not traced", r->given, why);
		usdt_binary__free(&b);
		return;
	}
	usdt_binary__free(&b);
	if (image_table__attach(r->images, now, now, -1, &added))
		return; /* said */
	r->cur_attached = true;
	fprintf(stderr, "inflight: %s was replaced (inode %llu): attached to the new binary (%d "
		"sites); processes of the old one stay traced\n", r->given,
		(unsigned long long)key->ino, image_table__sites(r->images) - before);
}

/* Reads what the directory says and attaches what PATH names now. */
static void handle(void *ctx)
{
	struct redeploy *r = ctx;
	struct infl_image_key key;
	char now[PATH_MAX];
	bool wrote;

	if (!drain(r, &wrote) || resolve(r, now, sizeof(now)) || proc_image_key(now, &key))
		return;
	if (proc_image_same(&key, &r->cur)) {
		/* the attached inode itself: its sites may have moved under the probes */
		if (wrote && r->cur_attached)
			infl_warn("%s was rewritten in place (same inode): its probes may have moved; "
				  "restart inflight to trace the new build", r->given);
		return;
	}
	attach_new(r, now, &key);
}

int redeploy__serve(struct redeploy *r, struct service *svc)
{
	return service__add(svc, r->inotify_fd, handle, r);
}

void redeploy__free(struct redeploy *r)
{
	if (!r)
		return;
	if (r->inotify_fd >= 0)
		close(r->inotify_fd);
	free(r);
}
