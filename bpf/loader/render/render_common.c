// SPDX-License-Identifier: BSD-2-Clause
/* What every renderer needs: which processes, classes and stages to show, time, metrics. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/errors.h"
#include "util/fmt.h"
#include "render/render.h"

const struct tl_proc **render_procs(const struct timeline *tl, const struct render_opts *o,
				    size_t *n)
{
	const struct tl_proc **v = calloc(tl->nprocs + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < tl->nprocs; i++)
		if (!o->pid || tl->procs[i].pid == o->pid)
			v[(*n)++] = &tl->procs[i];
	return v;
}

const struct tl_proc *render_proc(const struct timeline *tl, const struct render_opts *o)
{
	return o->pid ? timeline__proc(tl, o->pid) : timeline__primary(tl);
}

__u32 render_used_classes(const struct tl_proc *p)
{
	__u32 m = 0;

	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		if (p->class_peak[c])
			m |= 1u << c;
	return m;
}

__u32 render_used_slots(const struct tl_proc *p)
{
	__u32 m = 0;

	for (size_t i = 0; i < p->nslices; i++)
		m |= 1u << p->slices[i].stage;
	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		for (int s = 0; s < INFL_SLOTS; s++)
			if (p->byte_ns[c][s] || p->peak[c][s].count)
				m |= 1u << s;
	return m;
}

__u64 render_auto_step(const struct timeline *tl, unsigned rows)
{
	static const __u64 mult[] = { 1, 2, 5 };
	__u64 span = tl->t_end > tl->t0 ? tl->t_end - tl->t0 : 0;

	for (__u64 dec = 1000000; dec < 1000000000000000ull; dec *= 10)
		for (int i = 0; i < 3; i++)
			if (span / (mult[i] * dec) < rows)
				return mult[i] * dec;
	return 1000000000000000ull;
}

__u64 render_next_t(__u64 t, __u64 step)
{
	return t > UINT64_MAX - step ? UINT64_MAX : t + step;
}

double render_t(const struct timeline *tl, __u64 ns)
{
	return ns > tl->t0 ? (ns - tl->t0) / 1e9 : 0;
}

unsigned __int128 render_slot_byte_ns(const struct tl_proc *p, unsigned slot)
{
	unsigned __int128 sum = 0;

	for (int c = 0; c < INFL_MAX_CLASSES; c++)
		sum += p->byte_ns[c][slot];
	return sum;
}

double render_mean_dwell_ms(const struct tl_proc *p, unsigned stage)
{
	if (stage >= INFL_MAX_STAGES || !p->dwell_count[stage])
		return -1;
	return p->dwell_sum_ns[stage] / 1e6 / p->dwell_count[stage];
}

__u64 render_active_ns(const struct tl_proc *p)
{
	return p->last_ts > p->first_ts ? p->last_ts - p->first_ts : 0;
}

double render_per_minute(const struct tl_proc *p, __u64 count)
{
	__u64 ns = render_active_ns(p);

	return ns ? count * 60e9 / ns : 0;
}

int render_finish(FILE *f)
{
	errno = 0;
	if (fflush(f) || ferror(f))
		return -(infl_output_errno(f) ?: errno ?: EIO);
	return 0;
}

int render_output_open(const char *path, FILE **out)
{
	int fd;

	*out = stdout;
	if (!path || !strcmp(path, "-"))
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return infl_err(EXIT_IO, errno == ELOOP ? "it is a symlink: remove it or choose "
				"another name" : NULL, "cannot create %s: %s", path, strerror(errno));
	*out = fdopen(fd, "w");
	if (!*out) {
		close(fd);
		return infl_err(EXIT_IO, NULL, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

int render_output_close(FILE *f, const char *path, const char *what, int render_err)
{
	bool is_file = f != stdout;
	char b[FMT_LEN];
	long size;
	int err = render_err;

	errno = 0;
	if ((fflush(f) || ferror(f)) && !err)
		err = -(infl_output_errno(f) ?: errno ?: EIO);
	size = is_file ? ftell(f) : 0;
	if (is_file && fclose(f) && !err)
		err = -errno;
	if (err == -ENOMEM)
		return infl_err(EXIT_GENERIC, NULL, "cannot render %s: %s", what, strerror(ENOMEM));
	if (err)
		return infl_err(EXIT_IO, NULL, "cannot write %s to %s: %s", what,
				is_file ? path : "stdout", strerror(-err));
	if (is_file)
		fprintf(stderr, "inflight: wrote %s to %s (%s)\n", what, path,
			fmt_bytes(b, size > 0 ? size : 0));
	return 0;
}
