// SPDX-License-Identifier: BSD-2-Clause
/*
 * `inflight serve [--listen ADDR:PORT] TARGET`: a Prometheus exporter. Every scrape of
 * /metrics takes a fresh snapshot of the kernel maps and renders it (prom.c).
 *
 * HTTP is libmicrohttpd's. The glibc build loads it with dlopen when `serve` starts: Debian's
 * static library needs GnuTLS, and that build must need nothing but libc on a production host
 * (the other commands do not need a web server at all). The static build (INFL_MHD_LINKED,
 * bpf/static.mk) links a libmicrohttpd built for musl without TLS, and needs no library. The socket is bound before the probes are
 * attached, so that a privileged port works, and the session then drops every capability.
 * One thread: the main loop runs libmicrohttpd's event loop and watches the target.
 *
 * Connections are held to the deadlines and budgets of cmd/serve_guard.h: slow, idle and
 * numerous clients lose their connections, scrapes keep being answered.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <microhttpd.h>
#include "inflight_note.h"
#include "cmd/attach_opts.h"
#include "attach/features.h"
#include "cmd/commands.h"
#include "cmd/flight.h"
#include "cmd/record_ring.h"
#include "cmd/run_loop.h"
#include "cmd/serve_guard.h"
#include "cmd/serve_procs.h"
#include "util/errors.h"
#include "util/suggest.h"
#include "util/fmt.h"
#include "util/procfs.h"
#include "util/sanitize.h"
#include "live/prom.h"
#include "live/summary.h"

#ifdef INFL_MHD_LINKED
#define MHD_NOTE "libmicrohttpd is linked in."
#else
#include <dlfcn.h>
#define MHD_LIBRARY "libmicrohttpd.so.12"
#define MHD_PACKAGE "libmicrohttpd12"
#define MHD_NOTE "Needs libmicrohttpd (Debian package " MHD_PACKAGE "), loaded at start."
#endif
#define FORGET_EVERY_NS 100000000ull /* how often exited processes are looked for (-b) */
#define DEFAULT_KEEP_EXITED_NS 120000000000ull /* 2 min: a few scrapes see the final state */
#define MAX_CONNECTIONS 256 /* fewer when the descriptor limit is low (conn_slots) */
#define PER_CLIENT_CONNECTIONS 64
#define MAX_ANSWERING 8	   /* answers in memory at once: bounds the exporter's memory */
#define FD_RESERVE 64	   /* descriptors kept free for everything but HTTP */
#define MHD_IDLE_TIMEOUT_S 15 /* libmicrohttpd's own inactivity timeout: a backstop only */
#define MHD_POOL_BYTES (16 * 1024) /* per connection: a request's headers, the answer's */
#define LISTEN_BACKLOG 1024
#define DEFER_ACCEPT_S 5
#define RING_INTERVAL_NS 100000000ull /* serve --ring: the recorder's snapshot period */
#define RING_POLL_MS 10 /* ... and the longest a scrape waits for the ring buffer's drain */

/* the few libmicrohttpd functions we call, typed from its own header */
static struct {
	typeof(&MHD_start_daemon) start_daemon;
	typeof(&MHD_stop_daemon) stop_daemon;
	typeof(&MHD_run_wait) run_wait;
	typeof(&MHD_create_response_from_buffer) response_from_buffer;
	typeof(&MHD_add_response_header) add_header;
	typeof(&MHD_queue_response) queue_response;
	typeof(&MHD_destroy_response) destroy_response;
	typeof(&MHD_lookup_connection_value) lookup_value;
	typeof(&MHD_get_connection_info) connection_info;
} mhd;

struct serve_args {
	struct attach_opts attach;
	struct prom_listen listen;
	const char *listen_text;
	__u64 keep_exited_ns;
	struct flight_opts ring; /* --ring: a flight recorder beside the exporter */
};

enum { OPT_KEEP_EXITED = 0x200 };

static const struct argp_option serve_options[] = {
	{ NULL, 0, NULL, 0, "Exporter:", 1 },
	{ "listen", 'l', "ADDR:PORT", 0,
	  "Serve /metrics on ADDR:PORT (default " PROM_DEFAULT_LISTEN "; [::1]:PORT for IPv6; "
	  ":PORT for every IPv4 interface; port 0 picks a free one)",
	  0 },
	{ "keep-exited", OPT_KEEP_EXITED, "DURATION", 0,
	  "Keep serving an exited process's final state this long (default 2m)", 0 },
	{ 0 },
};

static error_t serve_parse(int key, char *arg, struct argp_state *state)
{
	struct serve_args *sa = state->input;
	int err;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &sa->attach;
		state->child_inputs[1] = &sa->ring;
		return 0;
	case ARGP_KEY_END:
		if (flight_opts__end(&sa->ring, false))
			sa->ring.verbose = sa->attach.so.verbose;
		return 0;
	case 'l':
		if (prom__parse_listen(arg, &sa->listen))
			infl_die(EXIT_USAGE, "e.g. --listen 127.0.0.1:9464, --listen [::1]:9464",
				 "--listen '%s': not a numeric ADDR:PORT", arg);
		sa->listen_text = arg;
		return 0;
	case OPT_KEEP_EXITED:
		err = parse_duration_ns(arg, 0, 7 * 24 * 3600000000000ull, &sa->keep_exited_ns);
		if (err)
			infl_die(EXIT_USAGE, "e.g. --keep-exited 5m", "--keep-exited '%s': %s", arg,
				 err == -ERANGE ? "out of range: give 0 to 7 days" : "not a duration");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const char serve_doc[] =
	"Export the traced program's buffers in flight to Prometheus: gauges per (class, stage, "
	"pid), owners per stage, peak, RSS and untracked bytes, event and drop counters, stage "
	"dwell histograms (docs/production.md).\v"
	"EXAMPLES:\n"
	"  inflight serve -b /usr/local/bin/prover         every prover on this host\n"
	"  inflight serve --listen 127.0.0.1:9464 -p 4242\n"
	"  curl -s 127.0.0.1:9464/metrics | grep inflight_owners\n"
	"  inflight serve --ring 5m --dump-dir /var/lib/inflight -b /usr/local/bin/prover\n"
	"                        the exporter and a flight recorder: dumps on OOM, SIGUSR1\n"
	"\n"
	MHD_NOTE " The address is\n"
	"bound before the probes are attached; then every capability is dropped.\n"
	"EXIT STATUS: as `inflight trace`, plus 11 when the address cannot be bound.";

static const struct argp_child serve_children[] = {
	{ &attach_argp, 0, NULL, 0 },
	{ &flight_argp, 0, NULL, 0 },
	{ 0 },
};

static const struct argp serve_argp = {
	serve_options, serve_parse, "(-p PID | -b PATH | -- CMD [ARGS...])", serve_doc,
	serve_children, NULL, NULL,
};

#ifdef INFL_MHD_LINKED
static int load_mhd(void)
{
	mhd.start_daemon = MHD_start_daemon;
	mhd.stop_daemon = MHD_stop_daemon;
	mhd.run_wait = MHD_run_wait;
	mhd.response_from_buffer = MHD_create_response_from_buffer;
	mhd.add_header = MHD_add_response_header;
	mhd.queue_response = MHD_queue_response;
	mhd.destroy_response = MHD_destroy_response;
	mhd.lookup_value = MHD_lookup_connection_value;
	mhd.connection_info = MHD_get_connection_info;
	return 0;
}
#else
static int load_mhd(void)
{
	void *h = dlopen(MHD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	const char *missing = NULL;

	if (!h)
		return infl_err(EXIT_GENERIC,
				"install the package " MHD_PACKAGE " (apt-get install " MHD_PACKAGE ")",
				"serve: cannot load %s: %s", MHD_LIBRARY, dlerror());
#define SYM(field, name)                                                                         \
	do {                                                                                     \
		*(void **)&mhd.field = dlsym(h, name);                                           \
		if (!mhd.field && !missing)                                                      \
			missing = name;                                                          \
	} while (0)
	SYM(start_daemon, "MHD_start_daemon");
	SYM(stop_daemon, "MHD_stop_daemon");
	SYM(run_wait, "MHD_run_wait");
	SYM(response_from_buffer, "MHD_create_response_from_buffer");
	SYM(add_header, "MHD_add_response_header");
	SYM(queue_response, "MHD_queue_response");
	SYM(destroy_response, "MHD_destroy_response");
	SYM(lookup_value, "MHD_lookup_connection_value");
	SYM(connection_info, "MHD_get_connection_info");
#undef SYM
	if (missing)
		return infl_err(EXIT_GENERIC, "install " MHD_PACKAGE " 0.9.73 or later",
				"serve: %s has no %s", MHD_LIBRARY, missing);
	return 0; /* the library stays loaded for the life of the process */
}
#endif

/* A listening socket on the address; EXIT_LISTEN with the reason when it cannot be had. */
static int bind_listen(const struct serve_args *sa, int *out)
{
	const char *text = sa->listen_text ? sa->listen_text : PROM_DEFAULT_LISTEN;
	int fd, one = 1, err;

	fd = socket(sa->listen.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return infl_err(EXIT_LISTEN, NULL, "--listen %s: socket: %s", text, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)); /* restart after a crash */
	/* a connection reaches us with its first bytes, or not for DEFER_ACCEPT_S: sockets
	 * that only connect never take a slot, and a scraper arrives with its request */
	setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &(int){ DEFER_ACCEPT_S }, sizeof(int));
	if (sa->listen.addr.ss_family == AF_INET6) /* [::] means IPv6 only; :PORT is IPv4 */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&sa->listen.addr, sa->listen.len) ||
	    listen(fd, LISTEN_BACKLOG)) {
		err = errno;
		close(fd);
		return infl_err(EXIT_LISTEN,
				err == EADDRINUSE    ? "another program serves that port: pick another"
				: err == EACCES	     ? "ports below 1024 need root or CAP_NET_BIND_SERVICE"
				: err == EADDRNOTAVAIL ? "no interface of this host has that address"
						       : NULL,
				"--listen %s: %s", text, strerror(err));
	}
	*out = fd;
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	mhd.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned status, const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
		     MHD_RESPMEM_PERSISTENT);
}

/* What the run loop drives (cmd/run_loop.h): the HTTP server, its guard, and what serve
 * remembers of its processes. */
struct server {
	struct session *s;
	struct MHD_Daemon *d;
	struct guard guard;
	struct serve_idents idents;
	struct serve_retired retired;
	__u64 keep_exited_ns;
	__u64 next_forget;
	__u64 host_memory; /* MemTotal */
	struct ring_rec *rr; /* --ring, else NULL */
};

static enum MHD_Result metrics(struct server *sv, struct MHD_Connection *c)
{
	const char *accept = mhd.lookup_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	struct prom_exporter x = {
		.open = sv->guard.st.open,
		.accepted = sv->guard.st.accepted,
		.nreasons = GUARD__REASONS,
		.reason = guard_reason_key,
		.closed = sv->guard.st.closed,
	};
	struct prom_opts o = {
		.openmetrics = prom__accepts_openmetrics(accept),
		.build_version = INFL_VERSION,
		.build_contract = INFL__XSTR(INFLIGHT_CONTRACT_VERSION),
		.build_libbpf = features__libbpf_version(),
		.exporter = &x,
		.host_memory_bytes = sv->host_memory,
	};
	struct prom_dumps dumps;
	struct snapshot snap;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	err = session__snapshot(sv->s, &snap);
	if (err) {
		infl_warn("scrape: snapshot: %s", strerror(-err));
		return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "snapshot failed\n");
	}
	if (!serve_idents__sync(&sv->idents, &snap, session__binary(sv->s))) {
		o.ident = sv->idents.id;
		o.nident = sv->idents.n;
	}
	if (sv->rr) {
		flight__stats(ring_rec__flight(sv->rr), &dumps);
		o.dumps = &dumps;
	}
	f = open_memstream(&body, &len);
	err = f ? prom__render(f, &snap, session__names(sv->s), &o) : -ENOMEM;
	if (f && fclose(f))
		err = -ENOMEM;
	snapshot__free(&snap);
	if (err) {
		free(body);
		return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "render failed\n");
	}
	return reply(c, MHD_HTTP_OK,
		     o.openmetrics ? PROM_CONTENT_TYPE_OPENMETRICS : PROM_CONTENT_TYPE_TEXT, body,
		     len, MHD_RESPMEM_MUST_FREE);
}

static struct guard_conn *guard_slot(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
		mhd.connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct server *sv = cls;

	(void)version;
	(void)upload;
	if (!*req_cls) { /* the first call of a request: its headers are all in */
		*req_cls = sv;
		guard__request(&sv->guard, guard_slot(c), session__now_ns());
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (*upload_size) /* a GET with a body: ignore it */
		*upload_size = 0;
	if (!strcmp(url, "/metrics"))
		return metrics(sv, c);
	if (!strcmp(url, "/"))
		return reply_static(c, MHD_HTTP_OK, "inflight exporter: GET /metrics\n");
	return reply_static(c, MHD_HTTP_NOT_FOUND, "not found: GET /metrics\n");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct server *sv = cls;

	(void)req_cls;
	(void)toe;
	guard__answered(&sv->guard, guard_slot(c), session__now_ns());
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct server *sv = cls;
	const union MHD_ConnectionInfo *fd, *peer;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		guard__remove(&sv->guard, *socket_context);
		*socket_context = NULL;
		return;
	}
	fd = mhd.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	peer = mhd.connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fd)
		return;
	*socket_context = guard__add(&sv->guard, fd->connect_fd, peer ? peer->client_addr : NULL,
				     session__now_ns());
	if (!*socket_context) /* more than the guard tracks: libmicrohttpd's limit is the same */
		shutdown(fd->connect_fd, SHUT_RDWR);
}

/* Processes that ended `keep_exited_ns` ago are served no more (the kernel freed their
 * entries when they ended; this is the session's copy of their final state); they are kept
 * for the summary at the end. */
static void forget_exited(struct server *sv)
{
	struct snapshot snap;
	__u64 now = session__now_ns();

	if (session__snapshot(sv->s, &snap))
		return;
	/* short-lived processes get an identity too, not only those a scrape sees */
	serve_idents__sync(&sv->idents, &snap, session__binary(sv->s));
	for (int i = 0; i < snap.nprocs; i++) {
		const struct infl_proc *p = &snap.procs[i].st;

		if (p->exited && p->exit_ns + sv->keep_exited_ns <= now &&
		    !session__forget_image(sv->s, snap.procs[i].pid, p->gen))
			serve_retired__add(&sv->retired, &snap.procs[i]);
	}
	snapshot__free(&snap);
}

static int final_summary(struct server *sv, const struct serve_args *sa,
			 const struct run_end *e)
{
	const struct session_opts *so = &sa->attach.so;
	const struct serve_retired *r = &sv->retired;
	struct summary_info info = { .target_status = -1 };
	struct snapshot snap;
	char b[FMT_LEN];
	int err;

	session__stop(sv->s); /* the final counters: no probe hit accounted after them */
	err = session__snapshot(sv->s, &snap);

	err = err ?: serve_retired__prepend(r, &snap);
	if (err)
		return infl_err(EXIT_BPF, NULL, "final snapshot: %s", strerror(-err));
	info.binary = session__binary(sv->s);
	info.argv = so->mode == SESSION_SPAWN ? so->argv : NULL;
	info.end = run_loop__end_text(e, so->mode);
	info.target_pid = session__target_pid(sv->s);
	info.target_status = e->gone ? e->status : -1;
	if (r->older)
		printf("inflight summary: %llu earlier process%s not shown (the last %d that exited "
		       "are); the highest peak among them: %s (pid %u)\n\n",
		       (unsigned long long)r->older, r->older == 1 ? "" : "es",
		       SERVE_RETIRED_KEEP, fmt_bytes(b, r->older_peak), r->older_peak_pid);
	summary__print(stdout, &snap, session__names(sv->s), &info);
	snapshot__free(&snap);
	return 0;
}

static int serve_wait(void *ctx, int timeout_ms)
{
	struct server *sv = ctx;

	if (sv->rr) {
		/* the ring buffer is the wait, the requests are served between its drains */
		mhd.run_wait(sv->d, 0);
		guard__enforce(&sv->guard, session__now_ns());
		return ring_rec__poll(sv->rr, timeout_ms < RING_POLL_MS ? timeout_ms : RING_POLL_MS);
	}
	mhd.run_wait(sv->d, timeout_ms);
	guard__enforce(&sv->guard, session__now_ns());
	return 0;
}

static int serve_tick(void *ctx, __u64 now)
{
	struct server *sv = ctx;

	return sv->rr ? ring_rec__tick(sv->rr, now) : 0;
}

static void serve_housekeep(void *ctx, __u64 now)
{
	struct server *sv = ctx;

	if (now < sv->next_forget)
		return;
	forget_exited(sv);
	sv->next_forget = session__now_ns() + FORGET_EVERY_NS;
}

/* Descriptors open now, from /proc/self/fd. */
static unsigned fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n > 2 ? n - 2 : 0; /* . and .. */
}

/* How many connections the descriptor limit allows (raised to its hard limit first), with
 * FD_RESERVE left for everything else. */
static unsigned conn_slots(void)
{
	struct rlimit rl;
	unsigned used = fds_open(), avail;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 16;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	avail = rl.rlim_cur > used + FD_RESERVE + 16 ? rl.rlim_cur - used - FD_RESERVE : 16;
	if (avail < MAX_CONNECTIONS)
		infl_warn("serve: %u HTTP connections at most (RLIMIT_NOFILE %llu)", avail,
			  (unsigned long long)rl.rlim_cur);
	return avail < MAX_CONNECTIONS ? avail : MAX_CONNECTIONS;
}

static struct MHD_Daemon *start_http(struct server *sv, int fd)
{
	struct guard_limits lim = {
		.slots = conn_slots(),
		.per_client = PER_CLIENT_CONNECTIONS,
		.max_answering = MAX_ANSWERING,
		.header_ns = GUARD_HEADER_NS,
		.answer_ns = GUARD_ANSWER_NS,
	};

	if (guard__init(&sv->guard, &lim))
		return NULL;
	/* no internal thread: run_wait in our loop serves requests, so a scrape never runs
	 * concurrently with the loop's own session calls; epoll, so no descriptor limit of
	 * select() applies */
	return mhd.start_daemon(MHD_USE_AUTO, 0, NULL, NULL, on_request, sv,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, sv->guard.lim.slots,
				/* a backstop above the guard's own per-client budget, which closes
				 * a client's oldest connection instead of refusing its newest */
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				sv->guard.lim.per_client + sv->guard.lim.slots / 8,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)MHD_IDLE_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MHD_POOL_BYTES,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, sv,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, sv,
				MHD_OPTION_END);
}

/* The line scripts wait for: one write, the binary as escaped text. */
static void announce(const char *addr, const char *binary)
{
	char *bin = san_dup(binary);

	fprintf(stderr, "inflight: serving http://%s/metrics for %s\n", addr, bin ? bin : "?");
	free(bin);
}

int cmd__serve(int argc, char **argv)
{
	struct serve_args sa = { .keep_exited_ns = DEFAULT_KEEP_EXITED_NS };
	const struct session_opts *so = &sa.attach.so;
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	struct server sv = { 0 };
	struct run_ops ops = { serve_wait, serve_tick, serve_housekeep, 0 };
	struct run_end end;
	char shown[64];
	int fd = -1, err, rc = 0;
	__u64 start = session__now_ns();

	prom__parse_listen(PROM_DEFAULT_LISTEN, &sa.listen);
	suggest_check_options(&serve_argp, argc, argv);
	argp_parse(&serve_argp, argc, argv, ARGP_IN_ORDER, NULL, &sa);
	err = load_mhd();
	if (!err && sa.ring.ring_ns) {
		err = ring_rec__prepare(&sa.ring);
		sa.attach.so.record_events = true;
		ops.interval_ns = RING_INTERVAL_NS;
	}
	if (!err && run_loop__install_signals())
		err = infl_err(EXIT_GENERIC, NULL, "sigaction: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN); /* a scraper hanging up is not our end */
	err = err ?: bind_listen(&sa, &fd);
	if (err)
		return err;
	err = session__open(so, &sv.s);
	if (err) {
		close(fd);
		return err;
	}
	sv.keep_exited_ns = sa.keep_exited_ns;
	sv.host_memory = proc_mem_total();
	if (sa.ring.ring_ns) {
		err = ring_rec__new(sv.s, so, &sa.ring, RING_INTERVAL_NS, &sv.rr);
		if (err) {
			close(fd);
			session__free(sv.s);
			return err;
		}
	}
	sv.d = start_http(&sv, fd);
	if (!sv.d) {
		close(fd);
		guard__free(&sv.guard);
		session__free(sv.s);
		return infl_err(EXIT_LISTEN, NULL, "serve: libmicrohttpd would not start");
	}
	getsockname(fd, (struct sockaddr *)&bound, &blen);
	prom__fmt_addr(shown, sizeof(shown), (struct sockaddr *)&bound);
	if (!sa.listen.loopback)
		infl_warn("serving on %s: reachable from other hosts", shown);
	announce(shown, session__binary(sv.s));

	run_loop__run(sv.s, &ops, &sv, &end);
	mhd.stop_daemon(sv.d); /* closes the listening socket too */
	if (sv.rr) {
		err = ring_rec__finish(sv.rr, end.gone ? end.status : -1);
		if (err)
			rc = infl_err(EXIT_IO, NULL, "flight recorder: %s", strerror(-err));
		else
			flight__say(ring_rec__flight(sv.rr), session__now_ns() - start);
	}
	err = final_summary(&sv, &sa, &end);
	rc = rc ?: err;
	rc = rc ?: infl_flush_output(stdout, "stdout");
	guard__free(&sv.guard);
	serve_idents__free(&sv.idents);
	serve_retired__free(&sv.retired);
	ring_rec__free(sv.rr);
	session__free(sv.s);
	return rc ?: run_loop__exit_status(&end, so->mode);
}
