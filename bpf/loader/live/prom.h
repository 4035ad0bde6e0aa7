/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Prometheus exporter's parts that need neither BPF nor HTTP, so that tests and fuzzing
 * reach them offline: the text exposition of a snapshot (Prometheus text format 0.0.4, or
 * OpenMetrics 1.0 when the scraper asks for it) and the parser of the `--listen` address.
 * serve.c does the I/O. Metric names and labels: docs/production.md.
 */
#ifndef INFLIGHT_PROM_H
#define INFLIGHT_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "contract/names.h"
#include "model/snapshot.h"

#define PROM_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define PROM_CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Who a traced process is (inflight_process_info); any field may be NULL / 0: unknown. */
struct prom_identity {
	__u32 pid;
	const char *binary;  /* its executable (/proc/PID/exe) */
	const char *comm;    /* /proc/PID/comm, as the process set it */
	const char *command; /* /proc/PID/cmdline, its words joined by spaces */
	__u64 start_time_s;  /* unix seconds */
};

/* The exporter's own connections (cmd/serve_guard.h). */
struct prom_exporter {
	unsigned open;
	__u64 accepted;
	unsigned nreasons;
	const char *const *reason; /* label values of inflight_exporter_connections_closed */
	const __u64 *closed;
};

/* The flight recorder beside the exporter (serve --ring): its dumps, for alerts. */
#define PROM_DUMP_TRIGGERS 6
struct prom_dumps {
	const char *const *trigger; /* PROM_DUMP_TRIGGERS label values */
	__u64 written[PROM_DUMP_TRIGGERS];
	__u64 refused, cut, failed;
	__u64 last_unix_ns; /* the last dump's trigger (wall clock), 0: none yet */
	__u64 ring_bytes;   /* the ring's memory now */
};

struct prom_opts {
	bool openmetrics; /* OpenMetrics 1.0: counter families without _total, "# EOF" */
	const struct prom_identity *ident; /* sorted by pid; NULL: no identities */
	int nident;
	const char *build_version; /* inflight_build_info; NULL: not written */
	const char *build_contract, *build_libbpf;
	const struct prom_exporter *exporter; /* NULL: no exporter families */
	__u64 host_memory_bytes; /* inflight_host_memory_bytes; 0: not written */
	const struct prom_dumps *dumps; /* NULL: no flight recorder */
};

/*
 * Writes every family for every process of `snap`. Samples per (class, stage) and per stage
 * are written for the classes and stages the binary declares (zeros included, so that a
 * query for "waiting in chan_send" reads 0 rather than nothing) and for any other cell that
 * is non-zero. Dwell histograms: cumulative `le` buckets at the kernel's log2 microsecond
 * bounds (2 us .. 2^31 us) and +Inf. The no-stage slot is stage="none" ("_none" when the
 * binary declares a stage "none"). Label values from outside (comm, paths) are written as
 * util/sanitize.h's escaped text. Returns 0, or -EIO when `f` reports an error.
 */
int prom__render(FILE *f, const struct snapshot *snap, const struct infl_names *n,
		 const struct prom_opts *o);

/* True when an HTTP Accept header prefers OpenMetrics over the 0.0.4 text format. */
bool prom__accepts_openmetrics(const char *accept);

/* The exporter's address. */
struct prom_listen {
	struct sockaddr_storage addr;
	socklen_t len;
	bool loopback; /* 127.0.0.0/8 or ::1 */
};

#define PROM_DEFAULT_LISTEN "127.0.0.1:9464"

/*
 * Parses "IPV4:PORT", "[IPV6]:PORT" or ":PORT" (all IPv4 addresses, said explicitly as the
 * empty host, since binding every interface must be asked for). Numeric only: no host names,
 * so no resolver runs as root. PORT is 0 to 65535 (0: the kernel picks one, printed at start).
 * 0, or -EINVAL.
 */
int prom__parse_listen(const char *s, struct prom_listen *out);

/* "127.0.0.1:9464" / "[::1]:9464" of a bound address, into buf. Returns buf. */
const char *prom__fmt_addr(char *buf, size_t len, const struct sockaddr *sa);

#endif /* INFLIGHT_PROM_H */
