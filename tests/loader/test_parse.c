// SPDX-License-Identifier: BSD-2-Clause
/*
 * attach_opts.c: the number and duration parsers (outside input: exact accept/refuse sets),
 * the /proc/PID/root test, and the shared argp child on good command lines. The refusals of
 * the CLI itself (exit code 2, one line) are tested by tests/t_loader_cli.sh.
 */
#include <errno.h>
#include "cmd/attach_opts.h"
#include "util/procfs.h"
#include "check.h"

static void test_u64(void)
{
	static const struct {
		const char *s;
		__u64 min, max;
		int err;
		__u64 want;
	} cases[] = {
		{ "0", 0, 10, 0, 0 },
		{ "10", 0, 10, 0, 10 },
		{ "11", 0, 10, -ERANGE, 0 },
		{ "0", 1, 10, -ERANGE, 0 },
		{ "18446744073709551615", 0, ~0ull, 0, ~0ull },
		{ "18446744073709551616", 0, ~0ull, -ERANGE, 0 },
		{ "99999999999999999999999", 0, ~0ull, -ERANGE, 0 },
		{ "99999999999999999999999x", 0, ~0ull, -EINVAL, 0 },
		{ "", 0, 10, -EINVAL, 0 },
		{ "-1", 0, 10, -EINVAL, 0 },
		{ "+1", 0, 10, -EINVAL, 0 },
		{ " 1", 0, 10, -EINVAL, 0 },
		{ "1 ", 0, 10, -EINVAL, 0 },
		{ "0x10", 0, 100, -EINVAL, 0 },
		{ "1k", 0, 10000, -EINVAL, 0 },
		{ "007", 0, 10, 0, 7 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 v = 12345;
		int err = parse_u64(cases[i].s, cases[i].min, cases[i].max, &v);

		CHECK(err == cases[i].err && (err || v == cases[i].want),
		      "parse_u64(\"%s\", %llu, %llu) = %d, %llu", cases[i].s,
		      (unsigned long long)cases[i].min, (unsigned long long)cases[i].max, err,
		      (unsigned long long)v);
	}
	CHECK(parse_u64(NULL, 0, 1, &(__u64){ 0 }) == -EINVAL, "parse_u64(NULL) refused");
}

static void test_pid(void)
{
	pid_t p = 0;

	CHECK(parse_pid("1", &p) == 0 && p == 1, "pid 1");
	CHECK(parse_pid("4194304", &p) == 0 && p == 4194304, "pid 4194304 (PID_MAX_LIMIT)");
	CHECK(parse_pid("4194305", &p) == -ERANGE, "pid above PID_MAX_LIMIT refused");
	CHECK(parse_pid("0", &p) == -ERANGE, "pid 0 refused");
	CHECK(parse_pid("-1", &p) == -EINVAL, "pid -1 refused");
	CHECK(parse_pid("12a", &p) == -EINVAL, "pid 12a refused");
}

static void test_duration(void)
{
	static const struct {
		const char *s;
		int err;
		__u64 ns;
	} cases[] = {
		{ "1", 0, 1000000000ull },
		{ "1s", 0, 1000000000ull },
		{ "1.5s", 0, 1500000000ull },
		{ "0.25", 0, 250000000ull },
		{ "250ms", 0, 250000000ull },
		{ "10ms", 0, 10000000ull },
		{ "500us", 0, 500000ull },
		{ "2m", 0, 120000000000ull },
		{ "1h", 0, 3600000000000ull },
		{ "1.000000001s", 0, 1000000001ull },
		{ "0.5ms", 0, 500000ull },
		{ "1.0000000001s", -EINVAL, 0 }, /* below a nanosecond */
		{ "", -EINVAL, 0 },
		{ "s", -EINVAL, 0 },
		{ ".5s", -EINVAL, 0 },
		{ "1.s", -EINVAL, 0 },
		{ "1 s", -EINVAL, 0 },
		{ "1S", -EINVAL, 0 },
		{ "1sec", -EINVAL, 0 },
		{ "1ns", -EINVAL, 0 },
		{ "-1s", -EINVAL, 0 },
		{ "1e3", -EINVAL, 0 },
		{ "99999999999999999999h", -ERANGE, 0 },
		{ "5124096h", -ERANGE, 0 }, /* past 2^64 ns */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 ns = 0;
		int err = parse_duration_ns(cases[i].s, 0, ~0ull, &ns);

		CHECK(err == cases[i].err && (err || ns == cases[i].ns),
		      "parse_duration_ns(\"%s\") = %d, %llu", cases[i].s, err,
		      (unsigned long long)ns);
	}
	CHECK(parse_duration_ns("9ms", 10000000, 3600000000000ull, &(__u64){ 0 }) == -ERANGE,
	      "below the minimum: -ERANGE");
	CHECK(parse_duration_ns("61m", 10000000, 3600000000000ull, &(__u64){ 0 }) == -ERANGE,
	      "above the maximum: -ERANGE");
}

/* The sizes of --ring-size and --dump-on's thresholds: binary units, a bare number bytes. */
static void test_size(void)
{
	static const struct {
		const char *s;
		int err;
		__u64 v;
	} cases[] = {
		{ "4096", 0, 4096 },
		{ "4096B", 0, 4096 },
		{ "1K", 0, 1024 },
		{ "1KiB", 0, 1024 },
		{ "64M", 0, 64ull << 20 },
		{ "64MiB", 0, 64ull << 20 },
		{ "1.5G", 0, 3ull << 29 },
		{ "2GiB", 0, 2ull << 30 },
		{ "1T", 0, 1ull << 40 },
		{ "0.5K", 0, 512 },
		{ "", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ "1 M", -EINVAL, 0 },
		{ "1m", -EINVAL, 0 },
		{ "1MB", -EINVAL, 0 },
		{ "-1M", -EINVAL, 0 },
		{ ".5M", -EINVAL, 0 },
		{ "16777216T", -ERANGE, 0 }, /* 2^64 */
		{ "99999999999999999999", -ERANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 v = 0;
		int err = parse_size(cases[i].s, 0, ~0ull, &v);

		CHECK(err == cases[i].err && (err || v == cases[i].v), "parse_size(\"%s\") = %d, %llu",
		      cases[i].s, err, (unsigned long long)v);
	}
	CHECK(parse_size("1023K", 1u << 20, ~0ull, &(__u64){ 0 }) == -ERANGE,
	      "below the minimum: -ERANGE");
}

static void test_proc_root(void)
{
	CHECK(proc_is_root_path("/proc/123/root/usr/bin/prover"), "/proc/123/root/...");
	CHECK(proc_is_root_path("/proc/self/root/bin/x"), "/proc/self/root/...");
	CHECK(!proc_is_root_path("/proc/123/exe"), "/proc/123/exe is not one");
	CHECK(!proc_is_root_path("/proc/12x/root/a"), "/proc/12x/root/ is not one");
	CHECK(!proc_is_root_path("/proc//root/a"), "/proc//root/ is not one");
	CHECK(!proc_is_root_path("/usr/bin/prover"), "a plain path is not one");
	CHECK(!proc_is_root_path("proc/1/root/a"), "a relative path is not one");
}

/* a parent parser the way trace/record/serve use the child */
static error_t parent_parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	if (key == ARGP_KEY_INIT) {
		state->child_inputs[0] = state->input;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp_child children[] = { { &attach_argp, 0, NULL, 0 }, { 0 } };
static const struct argp parent = { NULL, parent_parse, NULL, NULL, children, NULL, NULL };

static int parse(struct attach_opts *a, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return argp_parse(&parent, argc, argv, ARGP_IN_ORDER | ARGP_NO_EXIT, NULL, a);
}

static void test_argp(void)
{
	struct attach_opts a;
	char *pid[] = { "t", "-p", "42", "-v", NULL };
	char *bin[] = { "t", "--max-bufs", "100", "-b", "/x/prover", "--max-owners=7",
			"--max-procs", "3", NULL };
	char *cmd[] = { "t", "--max-bufs", "16777216", "--", "prog", "-p", "1", "--", "x", NULL };

	CHECK(parse(&a, pid) == 0, "-p 42 -v parses");
	CHECK(a.so.mode == SESSION_PID && a.so.pid == 42 && a.so.verbose && !a.so.argv,
	      "... PID mode, pid 42, verbose");
	CHECK(a.so.max_bufs == INFL_DEFAULT_MAX_BUFS &&
		      a.so.max_owners == INFL_DEFAULT_MAX_OWNERS &&
		      a.so.max_procs == INFL_DEFAULT_MAX_PROCS && a.so.drop_caps,
	      "... default limits, capabilities dropped after attach");

	CHECK(parse(&a, bin) == 0, "-b PATH with limits parses");
	CHECK(a.so.mode == SESSION_BINARY && !strcmp(a.so.binary, "/x/prover") && !a.so.verbose,
	      "... BINARY mode, the path as given");
	CHECK(a.so.max_bufs == 100 && a.so.max_owners == 7 && a.so.max_procs == 3,
	      "... limits 100, 7, 3");

	CHECK(parse(&a, cmd) == 0, "-- CMD ARGS parses");
	CHECK(a.so.mode == SESSION_SPAWN && a.so.argv == &cmd[4], "... SPAWN mode from the word after --");
	CHECK(!strcmp(a.so.argv[1], "-p") && !strcmp(a.so.argv[3], "--") && !a.so.argv[5],
	      "... the command's own options and -- are its own");
	CHECK(a.so.max_bufs == 16777216 && a.so.pid == 0, "... and options before -- are ours");
}

/* /proc/PID/maps lines: the fields, a mapping without a file, a deleted file, junk skipped */
static void test_maps(void)
{
	static const char text[] =
		"00400000-00452000 r-xp 00001000 fd:01 1234567 /usr/bin/prog\n"
		"junk\n"
		"7ffd1000-7ffd2000 rw-p 00000000 00:00 0 \n"
		"7f0000000000-7f0000001000 r-xp 00000000 103:02 42 /usr/lib/x.so (deleted)\n";
	struct proc_mapping m;
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	int n = 0;

	if (!CHECK(f, "fmemopen"))
		return;
	CHECK(proc_maps_next(f, &m) && m.start == 0x400000 && m.end == 0x452000 &&
		      m.offset == 0x1000 && m.maj == 0xfd && m.min == 1 && m.ino == 1234567 &&
		      !strcmp(m.perms, "r-xp") && !strcmp(m.path, "/usr/bin/prog"),
	      "maps: a file's mapping, every field");
	CHECK(proc_maps_next(f, &m) && m.ino == 0 && !strcmp(m.perms, "rw-p") && !m.path[0],
	      "maps: a line that does not parse skipped; a mapping without a file");
	CHECK(proc_maps_next(f, &m) && m.maj == 0x103 && m.min == 2 && m.start == 0x7f0000000000 &&
		      !strcmp(m.path, "/usr/lib/x.so (deleted)"),
	      "maps: a deleted file keeps its mark");
	CHECK(!proc_maps_next(f, &m), "maps: the end");
	fclose(f);
	f = fopen("/proc/self/maps", "re");
	while (f && proc_maps_next(f, &m))
		n += m.perms[2] == 'x' && strstr(m.path, "test_loader_parse") != NULL;
	if (f)
		fclose(f);
	CHECK(n >= 1, "maps: this program's own code is found in /proc/self/maps (%d)", n);
}

int main(void)
{
	test_u64();
	test_pid();
	test_duration();
	test_proc_root();
	test_size();
	test_argp();
	test_maps();
	return check_done();
}
