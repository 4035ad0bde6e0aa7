// SPDX-License-Identifier: BSD-2-Clause
/* The files a session has attached to (attach/image_table.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/cuda.h"
#include "attach/image_table.h"
#include "attach/lifecycle.h"
#include "attach/usdt_attach.h"
#include "contract/images.h"
#include "util/clock.h"
#include "util/errors.h"
#include "util/procfs.h"

struct image_table {
	struct image_table_cfg cfg;
	bool deferred; /* cfg.bin is not the sites of its file yet (no contract there) */
	struct infl_image_key keys[IMAGE_TABLE_MAX];
	int fds[IMAGE_TABLE_MAX]; /* each file, held open from its attach on (image_table__files) */
	int n;
	struct images slots;
	pthread_mutex_t lock; /* one attach at a time */
};

int image_table__new(const struct image_table_cfg *cfg, struct image_table **out)
{
	struct image_table *t = calloc(1, sizeof(*t));

	*out = t;
	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	t->deferred = cfg->bin_deferred;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

/* Image `b`'s ids placed among the session's slots: its table in `tab`, every earlier
 * image's sites given theirs anew (a slot this one took refuses what they did not claim). */
static int place(struct image_table *t, const char *shown, const struct usdt_binary *b,
		 unsigned *tag, struct image_slots *tab)
{
	struct image_slots_used counted;
	struct infl_names names;
	int refused, err;

	lifecycle__counted_slots(t->cfg.life, &counted);
	err = images__add(&t->slots, shown, b, &counted, tag, &refused);

	if (err)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	images__table(&t->slots, *tag, tab);
	for (int i = 0; i < t->slots.nimg; i++) {
		struct image_slots other;

		if ((unsigned)i == *tag)
			continue;
		images__table(&t->slots, (unsigned)i, &other);
		err = usdt_attach__retable(t->cfg.usdt, (unsigned)i, &other);
		if (err)
			return infl_err(EXIT_BPF, NULL, "%s: update the probe specs of the images "
					"attached before it: %s", shown, strerror(-err));
	}
	images__names(&t->slots, &names);
	t->cfg.names_fn(t->cfg.ctx, &names);
	return 0;
}

/* Since when processes of `key`'s file are traced from their first instruction
 * (INFL_PROC_FROM_START). */
static void traced_since_now(struct image_table *t, const struct infl_image_key *key)
{
	__u64 now = mono_ns();

	bpf_map_update_elem(bpf_map__fd(t->cfg.images), key, &now, BPF_ANY);
}

static int attach_image(struct image_table *t, const char *path, const char *shown, pid_t pid,
			bool *added)
{
	struct usdt_binary other;
	const struct usdt_binary *b = t->cfg.bin;
	struct proc_image file;
	struct image_slots tab;
	unsigned tag = 0;
	int err;

	/* held open: a /proc/PID/root/... path stops working when that process exits */
	err = proc_image_open(path, &file);
	if (err) {
		if (t->cfg.target > 0 && proc_gone(t->cfg.target)) /* a zombie's root is gone too */
			return infl_err(EXIT_TARGET_EXITED, NULL, "pid %d exited before it could be "
					"traced", t->cfg.target);
		return infl_err(EXIT_NO_BINARY, NULL, "%s: %s", path, strerror(-err));
	}
	for (int i = 0; i < t->n; i++)
		if (proc_image_same(&t->keys[i], &file.key)) {
			proc_image_close(&file);
			return 0;
		}
	err = t->n == IMAGE_TABLE_MAX ? infl_err(EXIT_BPF, NULL, "%s: more than %d binaries to "
						 "attach to", path, IMAGE_TABLE_MAX) : 0;
	/* another file than the one cfg.bin was read from (a library, an exec, a redeploy onto
	 * the same path): its own sites */
	if (!err && (t->deferred || !proc_image_same(&file.key, &t->cfg.bin_key))) {
		err = usdt_attach__read(file.path, path, &other);
		b = err ? b : &other;
	}
	if (!err)
		err = place(t, shown, b, &tag, &tab);
	if (!err)
		err = usdt_attach__image(t->cfg.usdt, &file, shown, pid, b, tag, &tab);
	if (!err && b == &other)
		t->deferred = false;
	if (b == &other)
		usdt_binary__free(&other);
	if (err) {
		proc_image_close(&file);
		return err;
	}
	t->fds[t->n] = file.fd;
	t->keys[t->n++] = file.key;
	traced_since_now(t, &file.key);
	*added = true;
	return 0;
}

int image_table__attach(struct image_table *t, const char *path, const char *shown, pid_t pid,
			bool *added)
{
	int err;

	*added = false;
	pthread_mutex_lock(&t->lock);
	err = attach_image(t, path, shown, pid, added);
	pthread_mutex_unlock(&t->lock);
	return err;
}

void image_table__cuda(struct image_table *t, const char *path, const char *shown, pid_t pid)
{
	pthread_mutex_lock(&t->lock);
	if (cuda_attach__image(t->cfg.cuda, path, shown, pid) > 0 && t->cfg.verbose)
		infl_warn("%s: libcuda's memory calls attached", shown);
	pthread_mutex_unlock(&t->lock);
}

int image_table__note(struct image_table *t, const char *path)
{
	struct infl_image_key key;
	int err = proc_image_key(path, &key);

	if (err)
		return infl_err(EXIT_NO_BINARY, NULL, "%s: %s", path, strerror(-err));
	traced_since_now(t, &key);
	return 0;
}

int image_table__sites(const struct image_table *t)
{
	return usdt_attach__sites(t->cfg.usdt);
}

int image_table__files(const struct image_table *t, int *fds, int max)
{
	int n = 0;

	for (int i = 0; t && i < t->n && n < max; i++)
		fds[n++] = t->fds[i];
	return n;
}

void image_table__free(struct image_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		close(t->fds[i]);
	images__free(&t->slots);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
