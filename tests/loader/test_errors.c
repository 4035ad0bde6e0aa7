// SPDX-License-Identifier: BSD-2-Clause
/* errors.c: the one error voice, byte for byte, and the errno -> exit code mapping. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "check.h"
#include "util/errors.h"

/* What `code` wrote to stderr, through a temporary file. */
#define STDERR_OF(code)                                                                        \
	({                                                                                     \
		static char buf__[4096];                                                       \
		char path__[] = "/tmp/inflight-err-XXXXXX";                                    \
		int fd__ = mkstemp(path__), saved__ = dup(2);                                  \
		ssize_t n__;                                                                   \
		fflush(stderr);                                                                \
		dup2(fd__, 2);                                                                 \
		code;                                                                          \
		fflush(stderr);                                                                \
		dup2(saved__, 2);                                                              \
		close(saved__);                                                                \
		n__ = pread(fd__, buf__, sizeof(buf__) - 1, 0);                                \
		buf__[n__ > 0 ? n__ : 0] = '\0';                                               \
		close(fd__);                                                                   \
		unlink(path__);                                                                \
		buf__;                                                                         \
	})

int main(void)
{
	static const struct {
		int err, code;
		const char *in_hint;
	} map[] = {
		{ EPERM, EXIT_NOT_PRIV, "CAP_BPF and CAP_PERFMON" },
		{ -EACCES, EXIT_NOT_PRIV, "CAP_BPF and CAP_PERFMON" },
		{ -ESRCH, EXIT_NO_PID, "ps" },
		{ -ENOEXEC, EXIT_NO_BINARY, "ELF" },
		{ -E2BIG, EXIT_BPF, "--max-bufs" },
		{ -ENOMEM, EXIT_BPF, "--max-bufs" },
		{ -EOPNOTSUPP, EXIT_BPF, "CONFIG_UPROBE_EVENTS" },
		{ -EINVAL, EXIT_BPF, "-v" },
	};
	char *out, big[2000];
	int rc = -1;

	out = STDERR_OF(rc = infl_err(EXIT_NO_PID, "check the pid with ps", "-p %d: %s", 7,
				      strerror(ESRCH)));
	if (!CHECK(!strcmp(out, "inflight: -p 7: No such process; check the pid with ps\n"),
		   "infl_err: \"inflight: WHAT: WHY; HINT\""))
		printf("# got: %s", out);
	CHECK_EQ_U64(rc, EXIT_NO_PID, "infl_err returns its code");
	out = STDERR_OF(infl_err(EXIT_USAGE, NULL, "no hint"));
	CHECK(!strcmp(out, "inflight: no hint\n"), "infl_err without a hint");
	out = STDERR_OF(infl_warn("%s: malformed", "x"));
	CHECK(!strcmp(out, "inflight: warning: x: malformed\n"), "infl_warn");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	out = STDERR_OF(infl_err(EXIT_IO, "hint", "%s", big));
	CHECK(strlen(out) == 1023 && out[1022] == '\n' && !strncmp(out, "inflight: aaa", 13),
	      "an overlong message is cut, still one line (%zu bytes)", strlen(out));

	/* a hostile path or comm quoted in a message: one line, nothing a terminal acts on */
	out = STDERR_OF(infl_err(EXIT_NO_BINARY, "hint", "%s: %s", "/tmp/x\x1b]0;owned\x07\nfake: line\xff",
				 strerror(ENOENT)));
	if (!CHECK(!strcmp(out, "inflight: /tmp/x\\x1b]0;owned\\x07\\nfake: line\\xff: No such file or "
				"directory; hint\n"),
		   "a hostile string in an error line is escaped, the line stays one"))
		printf("# got: %s", out);
	out = STDERR_OF(infl_warn("%s", "\xe2\x80\xae" "evil"));
	CHECK(!strcmp(out, "inflight: warning: \\u202eevil\n"), "bidi override in a warning shown");

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		const char *hint = NULL;
		int code = infl_bpf_exit_code(map[i].err, &hint);

		CHECK(code == map[i].code && hint && strstr(hint, map[i].in_hint),
		      "errno %d -> exit %d, hint names %s", map[i].err, map[i].code, map[i].in_hint);
	}
	CHECK_EQ_U64(infl_bpf_exit_code(EPERM, NULL), EXIT_NOT_PRIV, "the hint is optional");
	return check_done();
}
