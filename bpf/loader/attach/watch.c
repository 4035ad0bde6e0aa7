// SPDX-License-Identifier: BSD-2-Clause
/* The watch programs' loader side (attach/watch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "watch.skel.h"
#include "attach/watch.h"
#include "contract/usdt_binary.h"
#include "util/errors.h"
#include "util/procfs.h"

#define MAX_LDSO 8 /* dynamic loaders hooked (one per distro or container root, in practice) */

struct watch {
	struct watch_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_program *hook; /* on_dl_debug_state, as this kernel attaches it */
	struct bpf_link *exec_link;
	struct bpf_link *ldso[MAX_LDSO];
	struct infl_image_key ldso_key[MAX_LDSO];
	int nldso;
	watch_fn fn;
	void *ctx;
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct watch *w = ctx;

	if (size >= sizeof(struct infl_watch_event))
		w->fn(w->ctx, data);
	return 0;
}

int watch__open(struct bpf_map *procs, struct bpf_map *images, bool multi, bool stop,
		watch_fn fn, void *ctx, struct watch **out)
{
	struct watch *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	w->fn = fn;
	w->ctx = ctx;
	w->skel = watch_bpf__open();
	if (!w->skel) {
		err = -errno;
		goto fail;
	}
	w->skel->rodata->stop_process = stop;
	w->hook = multi ? w->skel->progs.on_dl_debug_state_multi : w->skel->progs.on_dl_debug_state;
	bpf_program__set_autoload(w->skel->progs.on_dl_debug_state, !multi);
	bpf_program__set_autoload(w->skel->progs.on_dl_debug_state_multi, multi);
	err = bpf_map__reuse_fd(w->skel->maps.procs, bpf_map__fd(procs));
	err = err ?: bpf_map__reuse_fd(w->skel->maps.images, bpf_map__fd(images));
	err = err ?: watch_bpf__load(w->skel);
	if (err)
		goto fail;
	w->exec_link = bpf_program__attach(w->skel->progs.on_watch_exec);
	if (!w->exec_link) {
		err = -errno;
		goto fail;
	}
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.watch_events), on_event, w, NULL);
	if (!w->rb) {
		err = -errno;
		goto fail;
	}
	*out = w;
	return 0;
fail:
	watch__free(w);
	return infl_err(infl_bpf_exit_code(err, NULL), NULL,
			"watch for libraries and execs: %s", strerror(-err));
}

int watch__ldso(struct watch *w, const char *path)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, mo);
	struct bpf_link *link;
	unsigned long off;
	struct infl_image_key key;
	__u64 sym_off;
	int err;

	err = proc_image_key(path, &key);
	if (err)
		return err;
	for (int i = 0; i < w->nldso; i++)
		if (proc_image_same(&w->ldso_key[i], &key))
			return 0;
	if (w->nldso == MAX_LDSO)
		return -E2BIG;
	/* the debuggers' hook: exported (GLIBC_PRIVATE) by every glibc ld.so */
	err = usdt_binary__sym_offset(path, "_dl_debug_state", &sym_off);
	if (err)
		return err;
	off = (unsigned long)sym_off;
	if (w->hook == w->skel->progs.on_dl_debug_state_multi) {
		mo.offsets = &off;
		mo.cnt = 1;
		link = bpf_program__attach_uprobe_multi(w->hook, -1, path, NULL, &mo);
	} else {
		link = bpf_program__attach_uprobe_opts(w->hook, -1, path, off, NULL);
	}
	if (!link)
		return -errno;
	w->ldso[w->nldso] = link;
	w->ldso_key[w->nldso++] = key;
	return 0;
}

int watch__epoll_fd(const struct watch *w)
{
	return w ? ring_buffer__epoll_fd(w->rb) : -1;
}

int watch__consume(struct watch *w)
{
	return w ? ring_buffer__consume(w->rb) : 0;
}

__u64 watch__drops(const struct watch *w)
{
	return w ? w->skel->bss->watch_drops : 0;
}

void watch__free(struct watch *w)
{
	if (!w)
		return;
	ring_buffer__free(w->rb);
	for (int i = 0; i < w->nldso; i++)
		bpf_link__destroy(w->ldso[i]);
	bpf_link__destroy(w->exec_link);
	watch_bpf__destroy(w->skel);
	free(w);
}
