// SPDX-License-Identifier: BSD-2-Clause
/* What every renderer needs: which processes to show, the report's clock, output files. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "util/errors.h"
#include "util/fmt.h"
#include "model/clock.h"
#include "render/render.h"
#include "util/sanitize.h"

const struct tl_proc **render__procs(const struct timeline *tl, const struct render_opts *o,
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

const struct tl_proc *render__proc(const struct timeline *tl, const struct render_opts *o)
{
	return o->pid ? timeline__proc(tl, o->pid) : timeline__primary(tl);
}

__u64 render__auto_step(const struct timeline *tl, unsigned rows)
{
	static const __u64 mult[] = { 1, 2, 5 };
	__u64 span = tl->t_end > tl->t0 ? tl->t_end - tl->t0 : 0;

	for (__u64 dec = 1000000; dec < 1000000000000000ull; dec *= 10)
		for (int i = 0; i < 3; i++)
			if (span / (mult[i] * dec) < rows)
				return mult[i] * dec;
	return 1000000000000000ull;
}

__u64 render__next_t(__u64 t, __u64 step)
{
	return t > UINT64_MAX - step ? UINT64_MAX : t + step;
}

double render__t(const struct timeline *tl, __u64 ns)
{
	return clock__rel_s(ns, tl->t0);
}

/*
 * Output files go through a cookie stream that remembers why a write failed: stdio drops
 * the reason (ENOSPC, EIO) after a failed flush, and "Input/output error" would be all a
 * user learns of a full disk. stdout has the same from util/errors.c.
 */
struct out_cookie {
	int fd;
	int err;
};

static ssize_t out_write(void *c, const char *buf, size_t n)
{
	struct out_cookie *oc = c;
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(oc->fd, buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			oc->err = k < 0 ? errno : EIO;
			errno = oc->err;
			return done ? (ssize_t)done : -1;
		}
		done += k;
	}
	return n;
}

static int out_close(void *c)
{
	struct out_cookie *oc = c;
	int err = close(oc->fd) ? errno : 0;

	free(oc);
	errno = err;
	return err ? -1 : 0;
}

static int out_seek(void *c, off64_t *off, int whence)
{
	struct out_cookie *oc = c;
	off_t r = lseek(oc->fd, *off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

/* the cookies of the output files open now (report and compare have one, trace one) */
static struct {
	FILE *f;
	struct out_cookie *c;
} outs[4];

int render__output_errno(FILE *f)
{
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (outs[i].f == f && f)
			return outs[i].c->err;
	return infl_output_errno(f);
}

static FILE *out_stream(int fd)
{
	static const cookie_io_functions_t io = { .write = out_write, .close = out_close,
						  .seek = out_seek };
	struct out_cookie *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c)
		return NULL;
	c->fd = fd;
	f = fopencookie(c, "w", io);
	if (!f) {
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (!outs[i].f) {
			outs[i].f = f;
			outs[i].c = c;
			break;
		}
	return f;
}

static void out_forget(FILE *f)
{
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (outs[i].f == f)
			outs[i].f = NULL;
}

int render__output_fclose(FILE *f)
{
	int r;

	if (f == stdout)
		return 0;
	r = fclose(f);
	out_forget(f);
	return r;
}

int render__finish(FILE *f)
{
	errno = 0;
	if (fflush(f) || ferror(f))
		return -(render__output_errno(f) ?: errno ?: EIO);
	return 0;
}

int render__output_open_guarded(const char *path, const char *const *inputs, size_t n,
			       FILE **out)
{
	struct stat st, in;
	int fd;

	*out = stdout;
	if (!path || !strcmp(path, "-"))
		return 0;
	/* no O_TRUNC yet: first make sure this is not one of the inputs */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return infl_err(EXIT_IO, errno == ELOOP ? "it is a symlink: remove it or choose "
				"another name" : NULL, "cannot create %s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		return infl_err(EXIT_IO, NULL, "cannot write %s: %s", path, strerror(e));
	}
	for (size_t i = 0; i < n; i++) {
		if (!inputs[i] || !strcmp(inputs[i], "-") || stat(inputs[i], &in))
			continue;
		if (in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			close(fd);
			return infl_err(EXIT_USAGE, "give -o another name", "%s is the input %s: "
					"writing there would destroy it", path, inputs[i]);
		}
	}
	if (ftruncate(fd, 0) && S_ISREG(st.st_mode)) {
		int e = errno;

		close(fd);
		return infl_err(EXIT_IO, NULL, "cannot write %s: %s", path, strerror(e));
	}
	*out = out_stream(fd);
	if (!*out) {
		close(fd);
		return infl_err(EXIT_IO, NULL, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

int render__output_open(const char *path, FILE **out)
{
	return render__output_open_guarded(path, NULL, 0, out);
}

int render__output_close(FILE *f, const char *path, const char *what, int render_err)
{
	bool is_file = f != stdout;
	char b[FMT_LEN];
	long size;
	int err = render_err;

	errno = 0;
	if ((fflush(f) || ferror(f)) && !err)
		err = -(render__output_errno(f) ?: errno ?: EIO);
	size = is_file ? ftell(f) : 0;
	if (is_file && render__output_fclose(f) && !err)
		err = -errno;
	if (err == -ENOMEM)
		return infl_err(EXIT_GENERIC, NULL, "cannot render %s: %s", what, strerror(ENOMEM));
	if (err)
		return infl_err(EXIT_IO, NULL, "cannot write %s to %s: %s", what,
				is_file ? path : "stdout", strerror(-err));
	if (is_file) {
		char *shown = san_dup(path);

		fprintf(stderr, "inflight: wrote %s to %s (%s)\n", what, shown ? shown : "?",
			fmt_bytes(b, size > 0 ? size : 0));
		free(shown);
	}
	return 0;
}
