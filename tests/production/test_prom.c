// SPDX-License-Identifier: BSD-2-Clause
/*
 * The exporter's exposition on synthetic snapshots with known answers: exact sample lines,
 * cumulative dwell buckets, both formats, families never interleaved, label escaping,
 * content negotiation, the --listen parser, and promtool's own linter over the output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "check.h"
#include "live/prom.h"

static struct infl_names names;

/* probegen-like names: classes small/big/huge, stages born (entry), work, wait, end */
static void setup_names(void)
{
	static const char *const cls[] = { "small", "big", "huge" };
	static const char *const stage[] = { "born", "work", "wait", "end" };

	names__init(&names);
	names.contract_version = 1;
	for (int c = 0; c < 3; c++) {
		strcpy(names.cls[c], cls[c]);
		names.cls_declared |= 1u << c;
	}
	for (int s = 0; s < 4; s++) {
		strcpy(names.stage[s], stage[s]);
		names.stage_declared |= 1u << s;
	}
	names.entry_mask = 1u << 0;
	names.terminal_mask = 1u << 3;
}

static char *render(const struct snapshot *snap, const struct infl_names *n, bool om, int *rc)
{
	struct prom_opts o = { .openmetrics = om };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*rc = prom__render(f, snap, n, &o);
	fclose(f);
	return buf;
}

/* The output holds exactly this line. */
static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; (p = strstr(p, line)); p++)
		if ((p == out || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static int count_prefix(const char *out, const char *prefix)
{
	int n = 0;

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			n++;
	return n;
}

#define LINE(out, ...)                                                                           \
	({                                                                                       \
		char l__[256];                                                                   \
		snprintf(l__, sizeof(l__), __VA_ARGS__);                                         \
		CHECK(has_line(out, l__), "line: %s", l__);                                      \
	})
#define NO_LINE(out, ...)                                                                        \
	({                                                                                       \
		char l__[256];                                                                   \
		snprintf(l__, sizeof(l__), __VA_ARGS__);                                         \
		CHECK(!has_line(out, l__), "no line: %s", l__);                                  \
	})

/* Every sample belongs to the family announced by the last "# TYPE" (no interleaving) and
 * no family is announced twice. Returns the number of families. */
static int families_well_formed(const char *out, bool om)
{
	char fam[128] = "", seen[64][128];
	int nseen = 0, bad = 0;

	for (const char *p = out; *p;) {
		const char *eol = strchr(p, '\n');
		int len = eol ? eol - p : (int)strlen(p);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", len, p);
		p += len + (eol ? 1 : 0);
		if (!strncmp(line, "# TYPE ", 7)) {
			sscanf(line + 7, "%127s", fam);
			for (int i = 0; i < nseen; i++)
				bad += !strcmp(seen[i], fam);
			if (nseen < 64)
				strcpy(seen[nseen++], fam);
		} else if (line[0] != '#' && line[0]) {
			/* a sample: family name, then a suffix (OpenMetrics counters: _total) */
			size_t fl = strlen(fam);

			if (strncmp(line, fam, fl) ||
			    !(line[fl] == '{' || line[fl] == ' ' || line[fl] == '_'))
				bad++;
			if (!om && line[fl] == '_' && strstr(fam, "_total"))
				bad++;
		}
	}
	return bad ? -1 : nseen;
}

static void test_cells(void)
{
	struct proc_snapshot ps = { .pid = 42 };
	struct snapshot snap = { .nprocs = 1, .procs = &ps };
	char *out;
	int rc;

	ps.st.cur[1][2] = (struct infl_cell){ 3, 3 << 20 };	  /* big in wait */
	ps.st.cur[0][INFL_SLOT_NONE] = (struct infl_cell){ 1, 64 }; /* small, no owner */
	ps.st.cur[9][12] = (struct infl_cell){ 2, 8192 };	  /* undeclared class and stage */
	ps.st.owners[2] = 3;
	ps.st.owners[13] = 1; /* undeclared stage */
	ps.st.total_bytes = (3 << 20) + 64 + 8192;
	ps.st.total_bufs = 6;
	ps.st.peak_bytes = 10 << 20;
	ps.st.peak_bufs = 11;
	/* the peak's composition: 10 big in wait (10 MiB), 1 small of no owner; 4 owners */
	ps.st.peak[1][2] = (struct infl_cell){ 10, (10 << 20) - 64 };
	ps.st.peak[0][INFL_SLOT_NONE] = (struct infl_cell){ 1, 64 };
	ps.st.peak_owners[2] = 4;
	ps.st.events[INFL_PROBE_ALLOC] = 17;
	ps.st.events[INFL_PROBE_FREE] = 11;
	ps.st.events[INFL_PROBE_STAGE] = 23;
	ps.st.owners_started = 5;
	ps.st.owners_done = 2;
	ps.st.unmatched_free[1] = (struct infl_cell){ 4, 4096 };
	ps.st.unmatched_stage[2] = 6;
	ps.st.bad_class = 7;
	ps.st.bad_stage = 8;
	ps.st.buf_map_full = 9;
	ps.st.ring_drops = 10;
	ps.st.slot_waits = 14;
	ps.st.dup_alloc = 12;
	snap.procs_map_full = 13;

	out = render(&snap, &names, false, &rc);
	CHECK_EQ_U64(rc, 0, "render succeeds");
	LINE(out, "inflight_buffers{pid=\"42\",class=\"big\",stage=\"wait\"} 3");
	LINE(out, "inflight_buffer_bytes{pid=\"42\",class=\"big\",stage=\"wait\"} 3145728");
	LINE(out, "inflight_buffers{pid=\"42\",class=\"small\",stage=\"none\"} 1");
	/* declared cells are there with zeros, so that "waiting in born" reads 0 */
	LINE(out, "inflight_buffers{pid=\"42\",class=\"huge\",stage=\"born\"} 0");
	LINE(out, "inflight_buffer_bytes{pid=\"42\",class=\"small\",stage=\"end\"} 0");
	/* undeclared but non-zero: numeric names */
	LINE(out, "inflight_buffers{pid=\"42\",class=\"cls9\",stage=\"stage12\"} 2");
	LINE(out, "inflight_buffer_bytes{pid=\"42\",class=\"cls9\",stage=\"stage12\"} 8192");
	/* undeclared and zero: absent */
	NO_LINE(out, "inflight_buffers{pid=\"42\",class=\"cls9\",stage=\"born\"} 0");
	NO_LINE(out, "inflight_buffers{pid=\"42\",class=\"cls5\",stage=\"stage7\"} 0");
	/* 3 declared classes x (4 declared stages + none) + the undeclared non-zero cell */
	CHECK_EQ_U64(count_prefix(out, "inflight_buffers{"), 3 * 5 + 1, "buffers samples");
	CHECK_EQ_U64(count_prefix(out, "inflight_buffer_bytes{"), 3 * 5 + 1, "bytes samples");

	LINE(out, "inflight_owners{pid=\"42\",stage=\"wait\"} 3");
	LINE(out, "inflight_owners{pid=\"42\",stage=\"born\"} 0");
	LINE(out, "inflight_owners{pid=\"42\",stage=\"stage13\"} 1");
	LINE(out, "inflight_owners{pid=\"42\",stage=\"none\"} 0");
	NO_LINE(out, "inflight_owners{pid=\"42\",stage=\"(none)\"} 0");
	CHECK_EQ_U64(count_prefix(out, "inflight_owners{"), 4 + 1 + 1, "owners samples");

	LINE(out, "inflight_tracked_bytes{pid=\"42\"} %u", (3u << 20) + 64 + 8192);
	LINE(out, "inflight_tracked_buffers{pid=\"42\"} 6");
	LINE(out, "inflight_peak_bytes{pid=\"42\"} 10485760");
	LINE(out, "inflight_peak_buffers{pid=\"42\"} 11");
	/* the exact peak's composition: the cells the kernel copied at it, declared zeros too */
	LINE(out, "inflight_peak_composition_buffers{pid=\"42\",class=\"big\",stage=\"wait\"} 10");
	LINE(out, "inflight_peak_composition_bytes{pid=\"42\",class=\"big\",stage=\"wait\"} %u",
	     (10u << 20) - 64);
	LINE(out, "inflight_peak_composition_bytes{pid=\"42\",class=\"small\",stage=\"none\"} 64");
	LINE(out, "inflight_peak_composition_buffers{pid=\"42\",class=\"huge\",stage=\"born\"} 0");
	NO_LINE(out, "inflight_peak_composition_buffers{pid=\"42\",class=\"cls9\",stage=\"stage12\"} 0");
	CHECK_EQ_U64(count_prefix(out, "inflight_peak_composition_bytes{"), 3 * 5,
		     "peak composition samples");
	LINE(out, "inflight_peak_owners{pid=\"42\",stage=\"wait\"} 4");
	LINE(out, "inflight_peak_owners{pid=\"42\",stage=\"born\"} 0");
	LINE(out, "inflight_events_total{pid=\"42\",probe=\"buf_alloc\"} 17");
	LINE(out, "inflight_events_total{pid=\"42\",probe=\"buf_free\"} 11");
	LINE(out, "inflight_events_total{pid=\"42\",probe=\"stage\"} 23");
	LINE(out, "inflight_owners_started_total{pid=\"42\"} 5");
	LINE(out, "inflight_owners_done_total{pid=\"42\"} 2");
	LINE(out, "inflight_unmatched_frees_total{pid=\"42\",class=\"big\"} 4");
	LINE(out, "inflight_unmatched_free_bytes_total{pid=\"42\",class=\"big\"} 4096");
	LINE(out, "inflight_unmatched_frees_total{pid=\"42\",class=\"small\"} 0");
	LINE(out, "inflight_unmatched_stages_total{pid=\"42\",stage=\"wait\"} 6");
	LINE(out, "inflight_rejected_events_total{pid=\"42\",reason=\"bad_class\"} 7");
	LINE(out, "inflight_rejected_events_total{pid=\"42\",reason=\"bad_stage\"} 8");
	LINE(out, "inflight_dropped_events_total{pid=\"42\",reason=\"buf_map_full\"} 9");
	LINE(out, "inflight_dropped_events_total{pid=\"42\",reason=\"owner_map_full\"} 0");
	LINE(out, "inflight_dropped_events_total{pid=\"42\",reason=\"lock_timeouts\"} 0");
	LINE(out, "inflight_dropped_events_total{pid=\"42\",reason=\"ring_drops\"} 10");
	LINE(out, "inflight_duplicate_allocs_total{pid=\"42\"} 12");
	/* waits are counted, and only buf_map_full makes the totals inexact */
	LINE(out, "inflight_waited_hits_total{pid=\"42\",reason=\"slot_waits\"} 14");
	LINE(out, "inflight_waited_hits_total{pid=\"42\",reason=\"pool_waits\"} 0");
	LINE(out, "inflight_counts_exact{pid=\"42\"} 0"); /* buf_map_full makes it inexact */
	LINE(out, "inflight_process_exited{pid=\"42\"} 0");
	LINE(out, "inflight_untraced_events_total 13");
	LINE(out, "inflight_traced_processes 1");
	/* RSS unknown: no RSS samples rather than zeros */
	CHECK_EQ_U64(count_prefix(out, "inflight_rss_bytes{"), 0, "no rss sample");
	CHECK_EQ_U64(count_prefix(out, "inflight_untracked_bytes{"), 0, "no untracked sample");
	/* 0.0.4: counters typed with their _total name, no EOF */
	LINE(out, "# TYPE inflight_events_total counter");
	LINE(out, "# TYPE inflight_buffers gauge");
	LINE(out, "# TYPE inflight_stage_dwell_seconds histogram");
	NO_LINE(out, "# EOF");
	/* 33 per-process families (buffers to stage_dwell_seconds) and 4 of the scrape
	 * (untraced_events, traced_processes, rss_followed, torn_processes) */
	CHECK(families_well_formed(out, false) == 37, "37 families, never interleaved (got %d)",
	      families_well_formed(out, false));
	free(out);

	out = render(&snap, &names, true, &rc);
	LINE(out, "# TYPE inflight_events counter");
	LINE(out, "inflight_events_total{pid=\"42\",probe=\"stage\"} 23");
	LINE(out, "# TYPE inflight_dropped_events counter");
	CHECK(strlen(out) > 6 && !strcmp(out + strlen(out) - 6, "# EOF\n"),
	      "OpenMetrics ends with # EOF");
	CHECK(families_well_formed(out, true) == 37, "OpenMetrics: 37 families, not interleaved");
	free(out);
}

static void test_dwell(void)
{
	struct proc_snapshot ps = { .pid = 7 };
	struct snapshot snap = { .nprocs = 1, .procs = &ps };
	const char *base = "inflight_stage_dwell_seconds";
	char *out;
	int rc;

	/* stage work: 1 dwell in [0,2) us, 2 in [8,16) us, 1 in the open last slot */
	ps.st.dwell_hist[1][0] = 1;
	ps.st.dwell_hist[1][3] = 2;
	ps.st.dwell_hist[1][31] = 1;
	ps.st.dwell_count[1] = 4;
	ps.st.dwell_sum_ns[1] = 3000000000123ull; /* 3000.000000123 s */
	/* undeclared stage 9 with one dwell of 2^20 us (slot 20) */
	ps.st.dwell_hist[9][20] = 1;
	ps.st.dwell_count[9] = 1;
	ps.st.dwell_sum_ns[9] = 1048576000ull;

	out = render(&snap, &names, false, &rc);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"0.000002\"} 1", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"0.000004\"} 1", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"0.000008\"} 1", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"0.000016\"} 3", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"1.048576\"} 3", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"2147.483648\"} 3", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"work\",le=\"+Inf\"} 4", base);
	LINE(out, "%s_count{pid=\"7\",stage=\"work\"} 4", base);
	LINE(out, "%s_sum{pid=\"7\",stage=\"work\"} 3000.000000123", base);
	/* 31 finite bounds + +Inf per stage shown: 4 declared + stage9 */
	CHECK_EQ_U64(count_prefix(out, "inflight_stage_dwell_seconds_bucket{pid=\"7\",stage=\"work\""),
		     32, "buckets of one stage");
	CHECK_EQ_U64(count_prefix(out, "inflight_stage_dwell_seconds_count{"), 5, "stages shown");
	/* 2^20 us sits in slot 20: below le=2^21 us, not below 2^20 us */
	LINE(out, "%s_bucket{pid=\"7\",stage=\"stage9\",le=\"1.048576\"} 0", base);
	LINE(out, "%s_bucket{pid=\"7\",stage=\"stage9\",le=\"2.097152\"} 1", base);
	LINE(out, "%s_sum{pid=\"7\",stage=\"stage9\"} 1.048576000", base);
	LINE(out, "%s_count{pid=\"7\",stage=\"born\"} 0", base);
	free(out);
}

static void test_rss(void)
{
	struct proc_snapshot ps[3] = { { .pid = 100 }, { .pid = 200 }, { .pid = 300 } };
	struct snapshot snap = { .nprocs = 3, .procs = ps };
	char *out;
	int rc;

	ps[0].st.rss_total = 10 << 20;
	ps[0].st.rss_peak = 12 << 20;
	ps[0].st.total_bytes = 4 << 20;
	ps[1].st.rss_total = 1 << 20; /* tracked buffers not all resident: untracked 0 */
	ps[1].st.rss_peak = 1 << 20;
	ps[1].st.total_bytes = 8 << 20;
	ps[2].st.exited = 1;
	out = render(&snap, NULL, false, &rc);
	LINE(out, "inflight_rss_bytes{pid=\"100\"} 10485760");
	LINE(out, "inflight_rss_peak_bytes{pid=\"100\"} 12582912");
	LINE(out, "inflight_untracked_bytes{pid=\"100\"} 6291456");
	LINE(out, "inflight_untracked_bytes{pid=\"200\"} 0");
	NO_LINE(out, "inflight_rss_bytes{pid=\"300\"} 0");
	LINE(out, "inflight_process_exited{pid=\"300\"} 1");
	LINE(out, "inflight_counts_exact{pid=\"300\"} 1");
	LINE(out, "inflight_traced_processes 3");
	/* no names: nothing declared, so only non-zero cells (none here) */
	CHECK_EQ_U64(count_prefix(out, "inflight_buffers{"), 0, "no cells without names");
	CHECK_EQ_U64(count_prefix(out, "inflight_owners{"), 3, "owners: the no-stage slot only");
	free(out);
}

static void test_escaping(void)
{
	struct infl_names odd = names;
	struct proc_snapshot ps = { .pid = 1 };
	struct snapshot snap = { .nprocs = 1, .procs = &ps };
	char *out;
	int rc;

	/* names__parse only lets identifiers through; the renderer escapes all the same: the
	 * escaped text of sanitize.h (backslash doubled, newline as \n), then the format's
	 * escapes, so that the label Prometheus decodes is that escaped text */
	strcpy(odd.cls[0], "a\"b\\c\nd");
	out = render(&snap, &odd, false, &rc);
	LINE(out, "inflight_buffers{pid=\"1\",class=\"a\\\"b\\\\\\\\c\\\\nd\",stage=\"born\"} 0");
	free(out);

	/* a stage declared as "none" keeps its name; the no-stage slot becomes "_none" */
	odd = names;
	strcpy(odd.stage[1], "none");
	out = render(&snap, &odd, false, &rc);
	LINE(out, "inflight_owners{pid=\"1\",stage=\"none\"} 0");
	LINE(out, "inflight_owners{pid=\"1\",stage=\"_none\"} 0");
	CHECK_EQ_U64(count_prefix(out, "inflight_owners{"), 5, "owners: 4 declared stages + _none");
	free(out);
}

/* The identity family and the scrape-wide ones, with hostile strings from /proc. */
static void test_identity(void)
{
	struct proc_snapshot ps[2] = { { .pid = 5 }, { .pid = 9 } };
	struct snapshot snap = { .nprocs = 2, .procs = ps };
	static const struct prom_identity ids[] = {
		{ 5, "/usr/bin/prover", "prover", "/usr/bin/prover --pw 10", 1700000000 },
		{ 9, "/tmp/x\x1b[31m\nevil \"q\" \xff", "\x1b]0;owned\x07", NULL, 0 },
	};
	static const char *const reasons[] = { "a", "b" };
	static const __u64 closed[] = { 3, 0 };
	struct prom_exporter x = { .open = 2, .accepted = 7, .nreasons = 2, .reason = reasons,
				   .closed = closed };
	struct prom_opts o = { .ident = ids, .nident = 2, .build_version = "0.1",
			       .build_contract = "1", .build_libbpf = "1.5", .exporter = &x,
			       .host_memory_bytes = 24ull << 30 };
	char *buf = NULL, cmd[] = "promtool check metrics >/dev/null 2>&1";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len), *p;
	int status;

	CHECK_EQ_U64(prom__render(f, &snap, &names, &o), 0, "render with identities");
	fclose(f);
	LINE(buf, "# TYPE inflight_process_info gauge");
	LINE(buf, "inflight_process_info{pid=\"5\",binary=\"/usr/bin/prover\",comm=\"prover\","
		  "command=\"/usr/bin/prover --pw 10\",start_time=\"1700000000\"} 1");
	LINE(buf, "inflight_process_start_time_seconds{pid=\"5\"} 1700000000");
	NO_LINE(buf, "inflight_process_start_time_seconds{pid=\"9\"} 0");
	/* ESC, newline, quotes, an invalid byte: visible, one line, valid UTF-8 */
	LINE(buf, "inflight_process_info{pid=\"9\",binary=\"/tmp/x\\\\x1b[31m\\\\nevil \\\"q\\\" "
		  "\\\\xff\",comm=\"\\\\x1b]0;owned\\\\x07\",command=\"\",start_time=\"\"} 1");
	CHECK(!strchr(buf, '\x1b') && !strchr(buf, '\x07') && !strchr(buf, '\xff'),
	      "no raw ESC, BEL or invalid byte in the exposition");
	LINE(buf, "inflight_build_info{version=\"0.1\",contract=\"1\",libbpf=\"1.5\"} 1");
	LINE(buf, "inflight_exporter_connections 2");
	LINE(buf, "inflight_exporter_connections_accepted_total 7");
	LINE(buf, "inflight_exporter_connections_closed_total{reason=\"a\"} 3");
	LINE(buf, "inflight_exporter_connections_closed_total{reason=\"b\"} 0");
	LINE(buf, "inflight_host_memory_bytes 25769803776");
	/* and the exporter's: build, host_memory_bytes, the three of connections */
	CHECK(families_well_formed(buf, false) == 37 + 5, "42 families (got %d)",
	      families_well_formed(buf, false));
	p = popen(cmd, "w");
	if (CHECK(p != NULL, "promtool runs")) {
		fputs(buf, p);
		status = pclose(p);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "promtool check metrics: hostile identities still lint clean (status %d)",
		      status);
	}
	free(buf);
	buf = NULL;
	o.openmetrics = true;
	f = open_memstream(&buf, &len);
	prom__render(f, &snap, &names, &o);
	fclose(f);
	LINE(buf, "# TYPE inflight_process info");
	LINE(buf, "# TYPE inflight_build info");
	LINE(buf, "inflight_build_info{version=\"0.1\",contract=\"1\",libbpf=\"1.5\"} 1");
	CHECK(families_well_formed(buf, true) == 42, "OpenMetrics: 42 families");
	free(buf);
}

static void test_accept(void)
{
	static const struct {
		const char *accept;
		bool om;
	} cases[] = {
		{ NULL, false },
		{ "", false },
		{ "*/*", false },
		{ "text/plain", false },
		{ "application/openmetrics-text", true },
		/* what Prometheus 2.42 sends */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  true },
		{ "text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5", false },
		{ "application/openmetrics-text; q=0", false },
		{ "Application/OpenMetrics-Text; version=1.0.0", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(prom__accepts_openmetrics(cases[i].accept) == cases[i].om,
		      "Accept '%s' -> %s", cases[i].accept ? cases[i].accept : "(none)",
		      cases[i].om ? "openmetrics" : "text");
}

static void test_listen(void)
{
	static const struct {
		const char *s;
		int family; /* 0: rejected */
		const char *shown;
		bool loopback;
	} cases[] = {
		{ "127.0.0.1:9464", AF_INET, "127.0.0.1:9464", true },
		{ "127.1.2.3:80", AF_INET, "127.1.2.3:80", true },
		{ "0.0.0.0:9464", AF_INET, "0.0.0.0:9464", false },
		{ ":9464", AF_INET, "0.0.0.0:9464", false },
		{ "10.0.0.5:0", AF_INET, "10.0.0.5:0", false },
		{ "[::1]:9464", AF_INET6, "[::1]:9464", true },
		{ "[::]:65535", AF_INET6, "[::]:65535", false },
		{ "", 0, NULL, false },
		{ "9464", 0, NULL, false },
		{ "127.0.0.1", 0, NULL, false },
		{ "127.0.0.1:", 0, NULL, false },
		{ "127.0.0.1:65536", 0, NULL, false },
		{ "127.0.0.1:-1", 0, NULL, false },
		{ "127.0.0.1:+80", 0, NULL, false },
		{ "127.0.0.1:80x", 0, NULL, false },
		{ "127.0.0.1:000080", 0, NULL, false },
		{ "localhost:9464", 0, NULL, false },
		{ "256.0.0.1:80", 0, NULL, false },
		{ "::1:9464", 0, NULL, false },
		{ "[::1]9464", 0, NULL, false },
		{ "[::1:9464", 0, NULL, false },
		{ "[]:9464", 0, NULL, false },
		{ "[127.0.0.1]:80", 0, NULL, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct prom_listen l;
		int err = prom__parse_listen(cases[i].s, &l);
		char shown[64] = "";

		if (!cases[i].family) {
			CHECK(err == -EINVAL, "--listen '%s' refused", cases[i].s);
			continue;
		}
		if (!err)
			prom__fmt_addr(shown, sizeof(shown), (struct sockaddr *)&l.addr);
		CHECK(!err && l.addr.ss_family == cases[i].family &&
			      !strcmp(shown, cases[i].shown) && l.loopback == cases[i].loopback,
		      "--listen '%s' -> %s%s (got %s)", cases[i].s, cases[i].shown,
		      cases[i].loopback ? " loopback" : "", shown);
	}
	{
		struct prom_listen l;

		prom__parse_listen(PROM_DEFAULT_LISTEN, &l);
		CHECK(l.loopback, "the default address is loopback");
	}
	CHECK(prom__parse_listen(NULL, &(struct prom_listen){}) == -EINVAL, "NULL refused");
}

/* Prometheus's own linter over a rich snapshot: the text format must parse and lint clean. */
static void test_promtool(void)
{
	struct proc_snapshot ps[2] = { { .pid = 11 }, { .pid = 12 } };
	struct snapshot snap = { .nprocs = 2, .procs = ps };
	char *out, cmd[] = "promtool check metrics >/dev/null 2>&1";
	FILE *p;
	int rc, status;

	for (int i = 0; i < 2; i++) {
		ps[i].st.cur[2][1] = (struct infl_cell){ 2, 1ull << 30 };
		ps[i].st.dwell_hist[0][5] = 3;
		ps[i].st.dwell_count[0] = 3;
		ps[i].st.dwell_sum_ns[0] = 100000;
		ps[i].st.rss_total = 2ull << 30;
		ps[i].st.rss_peak = 2ull << 30;
	}
	out = render(&snap, &names, false, &rc);
	p = popen(cmd, "w");
	CHECK(p != NULL, "promtool runs");
	if (!p)
		return;
	fputs(out, p);
	status = pclose(p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "promtool check metrics: no complaint (status %d)", status);
	free(out);
}

int main(void)
{
	setup_names();
	test_cells();
	test_dwell();
	test_rss();
	test_escaping();
	test_identity();
	test_accept();
	test_listen();
	test_promtool();
	return check_done();
}
