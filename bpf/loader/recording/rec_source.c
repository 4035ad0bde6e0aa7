// SPDX-License-Identifier: BSD-2-Clause
/* A recording's bytes: files through pread, memory, stdin spooled. recording/rec_source.h */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "recording/rec_source.h"

#define READ_CHUNK (1u << 20) /* bytes read at once: records are read many at a time */

/* n bytes, or fewer at the end of the input: from the file's position (read) when `at` is
 * negative, else from offset `at` (pread) */
static ssize_t read_full(int fd, unsigned char *p, size_t n, long long at)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = at < 0 ? read(fd, p + got, n - got)
				   : pread(fd, p + got, n - got, (off_t)(at + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (!k)
			break;
		got += k;
	}
	return got;
}

static int write_full(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		n -= k;
	}
	return 0;
}

/* Copies the rest of `in` after `pre` into an unlinked temporary file. */
static int spool(int in, const unsigned char *pre, size_t npre)
{
	const char *dir = getenv("TMPDIR");
	unsigned char *buf;
	int fd, err = 0;

	fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	buf = malloc(READ_CHUNK);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	err = write_full(fd, pre, npre);
	while (!err) {
		ssize_t k = read_full(in, buf, READ_CHUNK, -1);

		if (k <= 0) {
			err = k;
			break;
		}
		err = write_full(fd, buf, k);
	}
	free(buf);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int rec_src__open(const char *path, struct rec_src *src, unsigned char pre[16], size_t *npre,
		 bool (*check)(const unsigned char *pre, size_t n))
{
	bool is_stdin = !strcmp(path, "-");
	struct stat st;
	ssize_t n;
	int fd;

	memset(src, 0, sizeof(*src));
	src->fd = -1;
	*npre = 0;
	fd = is_stdin ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	/* the magic first: nothing more is read from a file that is not a recording */
	n = read_full(fd, pre, 16, S_ISREG(st.st_mode) ? 0 : -1);
	if (n < 0) {
		int e = (int)n;

		close(fd);
		return e;
	}
	*npre = n;
	if (!S_ISREG(st.st_mode)) {
		int tmp;

		if (!check(pre, n)) {
			close(fd);
			return -EBADMSG;
		}
		tmp = spool(fd, pre, n);
		close(fd);
		if (tmp < 0)
			return tmp;
		fd = tmp;
		if (fstat(fd, &st)) {
			int e = -errno;

			close(fd);
			return e;
		}
	}
	src->fd = fd;
	src->len = st.st_size;
	return 0;
}

void rec_src__mem(struct rec_src *src, const void *data, size_t len)
{
	src->fd = -1;
	src->mem = data;
	src->len = len;
}

void rec_src__close(struct rec_src *src)
{
	if (src->fd >= 0)
		close(src->fd);
	src->fd = -1;
}

void rec_rd__init(struct rec_rd *rd, struct rec_src *src)
{
	memset(rd, 0, sizeof(*rd));
	rd->src = src;
}

void rec_rd__free(struct rec_rd *rd)
{
	free(rd->buf);
	rd->buf = NULL;
}

long long rec_rd__get(struct rec_rd *rd, __u64 pos, size_t n, const unsigned char **p)
{
	struct rec_src *s = rd->src;
	ssize_t got;

	if (s->fd < 0) {
		__u64 left = pos < s->len ? s->len - pos : 0;

		*p = s->mem + (pos < s->len ? pos : s->len);
		return left < n ? (long long)left : (long long)n;
	}
	if (pos >= rd->buf_off && pos + n <= rd->buf_off + rd->buf_len) {
		*p = rd->buf + (pos - rd->buf_off);
		return n;
	}
	if (n > rd->cap || !rd->buf) {
		size_t cap = n > READ_CHUNK ? n : READ_CHUNK;
		unsigned char *b = realloc(rd->buf, cap);

		if (!b)
			return -ENOMEM;
		rd->buf = b;
		rd->cap = cap;
	}
	got = read_full(s->fd, rd->buf, rd->cap, (long long)pos);
	if (got < 0) {
		rd->buf_len = 0;
		return got;
	}
	rd->buf_off = pos;
	rd->buf_len = got;
	*p = rd->buf;
	return (size_t)got < n ? got : (long long)n;
}
