// SPDX-License-Identifier: BSD-2-Clause
/*
 * The loader's one error voice: "inflight: WHAT: WHY; HINT" on stderr. Callers put the
 * errno text in WHY themselves (strerror), so every message reads the same way. The whole
 * line goes through util/sanitize.h: a path, a command or a comm quoted in it cannot put a
 * newline, an escape sequence or invalid UTF-8 on the user's terminal, and a line stays one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/errors.h"
#include "util/sanitize.h"

static void vreport(const char *prefix, const char *hint, const char *fmt, va_list ap)
{
	/* stderr is unbuffered: build the whole line first so that it goes out in one write
	 * and does not interleave with the output of a traced command */
	char line[1024], shown[1024];
	int n = snprintf(line, sizeof(line), "inflight: %s", prefix);
	size_t len;

	if (n >= 0 && n < (int)sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (hint && n >= 0 && n < (int)sizeof(line))
		n += snprintf(line + n, sizeof(line) - n, "; %s", hint);
	if (n < 0)
		return;
	san_str(shown, sizeof(shown) - 1, line); /* truncated: still one whole line */
	len = strlen(shown);
	shown[len] = '\n';
	shown[len + 1] = '\0';
	fflush(stdout); /* the error follows whatever was printed before it */
	fputs(shown, stderr);
}

int infl_err(int code, const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", hint, fmt, ap);
	va_end(ap);
	return code;
}

void infl_die(int code, const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", hint, fmt, ap);
	va_end(ap);
	exit(code);
}

void infl_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", NULL, fmt, ap);
	va_end(ap);
}

/*
 * stdout through a cookie stream that remembers why a write failed: stdio drops its buffer
 * after a failed flush and a later fflush() returns 0 with errno untouched, so by the end
 * the reason (ENOSPC, EIO, EPIPE) would otherwise be lost. glibc only: musl's stdout is a
 * constant (FILE *const), so the static build keeps the plain stream and a failed write's
 * reason may read EIO there.
 */
static int stdout_errno;

#ifdef __GLIBC__

static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	(void)cookie;
	while (done < len) {
		ssize_t n = write(STDOUT_FILENO, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!stdout_errno)
				stdout_errno = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += n;
	}
	return done;
}

void infl_track_stdout(void)
{
	cookie_io_functions_t io = { .write = stdout_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return; /* plain stdout: the reason may read EIO */
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	fflush(stdout);
	stdout = f;
}
#else
void infl_track_stdout(void)
{
}
#endif

int infl_output_errno(FILE *f)
{
	return f == stdout ? stdout_errno : 0;
}

int infl_flush_output(FILE *f, const char *name)
{
	int err;

	errno = 0;
	if (!fflush(f) && !ferror(f))
		return 0;
	err = infl_output_errno(f) ?: errno ?: EIO;
	return infl_err(EXIT_IO,
			err == ENOSPC || err == EDQUOT ? "free some space, or write elsewhere"
			: err == EPIPE		       ? "whatever read it went away"
						       : NULL,
			"%s: %s: the output is incomplete", name, strerror(err));
}

int infl_bpf_exit_code(int err, const char **hint)
{
	const char *h;
	int code;

	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
	case EACCES:
		code = EXIT_NOT_PRIV;
		h = "needs CAP_BPF and CAP_PERFMON, and CAP_SYS_ADMIN for uprobes on Linux 6.16+ "
		    "(or root); run with sudo or grant them with "
		    "setcap cap_bpf,cap_perfmon,cap_sys_admin+ep";
		break;
	case ESRCH:
		code = EXIT_NO_PID;
		h = "the process is gone; check the pid with ps";
		break;
	case ENOEXEC:
		code = EXIT_NO_BINARY;
		h = "give the path of an ELF executable or shared library";
		break;
	case E2BIG:
	case ENOMEM:
	case ENOSPC:
		code = EXIT_BPF;
		h = "the kernel refused the map sizes; try smaller --max-bufs/--max-owners/--max-procs";
		break;
	case EOPNOTSUPP:
	case ENOSYS:
		code = EXIT_BPF;
		h = "this kernel lacks BPF or uprobe support (CONFIG_BPF_SYSCALL, "
		    "CONFIG_UPROBE_EVENTS)";
		break;
	case EBUSY:
		code = EXIT_BPF;
		h = "another tracer holds the probe sites; run with -v for libbpf's log";
		break;
	default:
		code = EXIT_BPF;
		h = "run with -v to see libbpf's log (and the verifier's)";
		break;
	}
	if (hint)
		*hint = h;
	return code;
}

int infl_bpf_err(int err, const char *what)
{
	const char *hint = NULL;
	int code = infl_bpf_exit_code(err, &hint);

	return infl_err(code, hint, "%s: %s", what, strerror(-err));
}
