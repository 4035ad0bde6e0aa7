/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libcuda's memory calls (bpf/inflight.bpf.c, "libcuda's memory calls"): which programs load,
 * which mapped files are the CUDA driver library, and the uprobes on its functions, entry
 * and return, by function name, once per file.
 */
#ifndef INFLIGHT_ATTACH_CUDA_H
#define INFLIGHT_ATTACH_CUDA_H

#include <stdbool.h>
#include <sys/types.h>

struct inflight_bpf;
struct proc_mapping;
struct cuda_attach;

/* From the options, before anything is loaded: `off` (--no-cuda), `lib` (--cuda-lib, or
 * NULL). 0 or an exit code (printed). */
int cuda_attach__new(bool off, const char *lib, struct cuda_attach **out);

/* Before load: the programs of the lock form loaded (`cas`), none when off. */
void cuda_attach__prepare(struct cuda_attach *ca, struct inflight_bpf *skel, bool cas);

/* Whether a mapping of /proc/PID/maps is of the CUDA driver library: libcuda.so*, or the
 * file --cuda-lib names. */
bool cuda_attach__is_lib(const struct cuda_attach *ca, const struct proc_mapping *m);

/* After load: the uprobes in the libcuda at `path` (reachable from here) for process `pid`
 * (-1: every process; the kernel side keeps to the traced ones). Once per file; problems
 * are warnings. Returns the number of functions attached now (0: already, or none). */
int cuda_attach__image(struct cuda_attach *ca, const char *path, const char *shown, pid_t pid);

/* -b: no process maps it yet; the library --cuda-lib names, or the system's libcuda.so.1.
 * NULL when there is none (or --no-cuda). */
const char *cuda_attach__default_lib(const struct cuda_attach *ca);

bool cuda_attach__enabled(const struct cuda_attach *ca);
/* Before a load tried again without libcuda's programs (the kernel refused them). */
void cuda_attach__disable(struct cuda_attach *ca);
int cuda_attach__libs(const struct cuda_attach *ca); /* files attached so far */

void cuda_attach__free(struct cuda_attach *ca); /* NULL is fine */

#endif /* INFLIGHT_ATTACH_CUDA_H */
