// SPDX-License-Identifier: BSD-2-Clause
/*
 * The loader's one error voice: "inflight: WHAT: WHY; HINT" on stderr. Callers put the
 * errno text in WHY themselves (strerror), so every message reads the same way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "util/errors.h"

static void vreport(const char *prefix, const char *hint, const char *fmt, va_list ap)
{
	/* stderr is unbuffered: build the whole line first so that it goes out in one write
	 * and does not interleave with the output of a traced command */
	char line[1024];
	int n = snprintf(line, sizeof(line), "inflight: %s", prefix);

	if (n >= 0 && n < (int)sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (hint && n >= 0 && n < (int)sizeof(line))
		n += snprintf(line + n, sizeof(line) - n, "; %s", hint);
	if (n < 0)
		return;
	if (n >= (int)sizeof(line) - 1) /* truncated: still end the line */
		n = sizeof(line) - 2;
	line[n] = '\n';
	line[n + 1] = '\0';
	fflush(stdout); /* the error follows whatever was printed before it */
	fputs(line, stderr);
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
