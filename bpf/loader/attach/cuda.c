// SPDX-License-Identifier: BSD-2-Clause
/* libcuda's memory calls, the loader's side (attach/cuda.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "inflight.skel.h"
#include "attach/cuda.h"
#include "util/errors.h"
#include "util/procfs.h"

#define CUDA_MAX_LIBS 8 /* driver libraries attached (one per container root, in practice) */
#define CUDA_NFUNCS 12

/* The driver API's memory functions: the entry program per lock form (the allocations'
 * do not take the lock: they only save their arguments), the return one is shared. */
struct cuda_fn {
	const char *name;
	struct bpf_program *entry[2]; /* [cas] */
};

struct cuda_attach {
	struct inflight_bpf *skel;
	bool off, cas;
	const char *lib;
	struct infl_image_key lib_key; /* --cuda-lib's file, when lib */
	struct cuda_fn fns[CUDA_NFUNCS];
	struct infl_image_key libs[CUDA_MAX_LIBS]; /* the files attached to */
	int nlibs;
	struct bpf_link *links[CUDA_MAX_LIBS * CUDA_NFUNCS * 2];
	int nlinks;
};

static void fill_fns(struct cuda_attach *ca)
{
	struct inflight_bpf *k = ca->skel;
	const struct cuda_fn fns[CUDA_NFUNCS] = {
		{ "cuMemAlloc_v2", { k->progs.on_cu_mem_alloc, k->progs.on_cu_mem_alloc } },
		{ "cuMemAllocPitch_v2",
		  { k->progs.on_cu_mem_alloc_pitch, k->progs.on_cu_mem_alloc_pitch } },
		{ "cuMemAllocManaged",
		  { k->progs.on_cu_mem_alloc_managed, k->progs.on_cu_mem_alloc_managed } },
		{ "cuMemAllocAsync", { k->progs.on_cu_mem_alloc_async, k->progs.on_cu_mem_alloc_async } },
		{ "cuMemAllocFromPoolAsync",
		  { k->progs.on_cu_mem_alloc_async, k->progs.on_cu_mem_alloc_async } },
		{ "cuMemHostAlloc", { k->progs.on_cu_mem_host_alloc, k->progs.on_cu_mem_host_alloc } },
		{ "cuMemAllocHost_v2",
		  { k->progs.on_cu_mem_host_alloc, k->progs.on_cu_mem_host_alloc } },
		{ "cuMemCreate", { k->progs.on_cu_mem_create, k->progs.on_cu_mem_create } },
		{ "cuMemFree_v2", { k->progs.on_cu_mem_free_nocas, k->progs.on_cu_mem_free } },
		{ "cuMemFreeAsync", { k->progs.on_cu_mem_free_nocas, k->progs.on_cu_mem_free } },
		{ "cuMemFreeHost",
		  { k->progs.on_cu_mem_free_host_nocas, k->progs.on_cu_mem_free_host } },
		{ "cuMemRelease", { k->progs.on_cu_mem_release_nocas, k->progs.on_cu_mem_release } },
	};

	memcpy(ca->fns, fns, sizeof(fns));
}

int cuda_attach__new(bool off, const char *lib, struct cuda_attach **out)
{
	struct cuda_attach *ca = calloc(1, sizeof(*ca));

	*out = NULL;
	if (!ca)
		return infl_err(EXIT_GENERIC, NULL, "out of memory");
	ca->off = off;
	ca->lib = lib;
	if (lib) {
		int err = proc_image_key(lib, &ca->lib_key);

		if (err) {
			free(ca);
			return infl_err(EXIT_NO_BINARY, NULL, "--cuda-lib %s: %s", lib,
					strerror(-err));
		}
	}
	*out = ca;
	return 0;
}

void cuda_attach__prepare(struct cuda_attach *ca, struct inflight_bpf *skel, bool cas)
{
	struct bpf_program *ret[2] = { skel->progs.on_cu_ret_nocas, skel->progs.on_cu_ret };
	struct bpf_program *prog;

	ca->skel = skel;
	ca->cas = cas;
	fill_fns(ca);
	/* every program of the section off, then those this session uses on */
	bpf_object__for_each_program(prog, skel->obj)
		if (!strncmp(bpf_program__name(prog), "on_cu_", 6))
			bpf_program__set_autoload(prog, false);
	if (!ca->off) {
		for (int i = 0; i < CUDA_NFUNCS; i++)
			bpf_program__set_autoload(ca->fns[i].entry[cas], true);
		bpf_program__set_autoload(ret[cas], true);
	}
	skel->rodata->cuda_enabled = !ca->off;
	if (ca->off) /* preallocated: no memory for threads nobody will look at */
		bpf_map__set_max_entries(skel->maps.cuda_threads, 1);
}

void cuda_attach__disable(struct cuda_attach *ca)
{
	if (ca)
		ca->off = true;
}

bool cuda_attach__enabled(const struct cuda_attach *ca)
{
	return ca && !ca->off;
}

int cuda_attach__libs(const struct cuda_attach *ca)
{
	return ca ? ca->nlibs : 0;
}

bool cuda_attach__is_lib(const struct cuda_attach *ca, const struct proc_mapping *m)
{
	const char *base = strrchr(m->path, '/');

	if (!ca || ca->off)
		return false;
	if (ca->lib)
		return proc_mapping_of(m, &ca->lib_key);
	base = base ? base + 1 : m->path;
	return !strncmp(base, "libcuda.so", 10);
}

const char *cuda_attach__default_lib(const struct cuda_attach *ca)
{
	/* where the driver's packages put it (Debian and Ubuntu, RHEL and SUSE, WSL) */
	static const char *const sys[] = {
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
		"/usr/lib64/libcuda.so.1",
		"/usr/lib/libcuda.so.1",
		"/usr/lib/wsl/lib/libcuda.so.1",
	};

	if (!ca || ca->off)
		return NULL;
	if (ca->lib)
		return ca->lib;
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if (!access(sys[i], R_OK))
			return sys[i];
	return NULL;
}

static struct bpf_link *attach_fn(struct bpf_program *prog, const char *path, const char *fn,
				  pid_t pid, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = fn, .retprobe = ret);

	return bpf_program__attach_uprobe_opts(prog, pid, path, 0, &o);
}

int cuda_attach__image(struct cuda_attach *ca, const char *path, const char *shown, pid_t pid)
{
	struct bpf_program *ret;
	struct infl_image_key key;
	int attached = 0;

	if (!ca || ca->off || !ca->skel || proc_image_key(path, &key))
		return 0;
	ret = ca->cas ? ca->skel->progs.on_cu_ret : ca->skel->progs.on_cu_ret_nocas;
	for (int i = 0; i < ca->nlibs; i++)
		if (proc_image_same(&ca->libs[i], &key))
			return 0;
	if (ca->nlibs == CUDA_MAX_LIBS) {
		infl_warn("%s: more than %d CUDA driver libraries: its memory calls are not traced",
			  shown, CUDA_MAX_LIBS);
		return 0;
	}
	ca->libs[ca->nlibs++] = key;
	for (int i = 0; i < CUDA_NFUNCS; i++) {
		const struct cuda_fn *f = &ca->fns[i];
		struct bpf_link *in, *out = NULL;

		/* the return first: an entry without its return would leave a saved call */
		out = attach_fn(ret, path, f->name, pid, true);
		if (!out)
			continue; /* an older driver without it (the async and VMM calls) */
		in = attach_fn(f->entry[ca->cas], path, f->name, pid, false);
		if (!in) {
			infl_warn("%s: cannot attach to %s: %s; its calls are not counted", shown,
				  f->name, strerror(errno));
			bpf_link__destroy(out);
			continue;
		}
		ca->links[ca->nlinks++] = out;
		ca->links[ca->nlinks++] = in;
		attached++;
	}
	if (!attached)
		infl_warn("%s: none of the CUDA driver's memory functions could be attached: its "
			  "memory is not traced", shown);
	else
		ca->skel->bss->cuda_attached = 1;
	return attached;
}

void cuda_attach__free(struct cuda_attach *ca)
{
	if (!ca)
		return;
	for (int i = 0; i < ca->nlinks; i++)
		bpf_link__destroy(ca->links[i]);
	free(ca);
}
