// SPDX-License-Identifier: BSD-2-Clause
/*
 * A bounded attack on `inflight serve`, with a scraper beside it: the tests of the
 * exporter's resilience (tests/t_prod_exporter_attack.sh). One thread, one poll loop.
 *
 *   http_attack [-a ATTACK_FROM] [-s SCRAPE_FROM] [-m MAX_CONNECTS] [-t TIMEOUT_MS]
 *               ADDR PORT MODE CONNS SECONDS
 *
 * ADDR and the source addresses (default: the kernel's choice) are loopback ones only.
 * MODE is what each of CONNS attacking connections does, for SECONDS (at most 120):
 *   idle      connects and sends nothing
 *   drip      a Slowloris: "GET /metrics HTTP/1.1" and one more header line every
 *             DRIP_MS, never the blank line that ends the headers
 *   slowread  sends a whole request and never reads the answer (a tiny receive buffer)
 *   flood     connects again as soon as the server closes one, as fast as it can
 * Every attacker connection the server closes is opened again (a real attacker does), up to
 * MAX_CONNECTS connects in all (default 20000), so the run is bounded in time and count.
 * Meanwhile a scraper opens a fresh connection every SCRAPE_MS and GETs /metrics; a scrape
 * succeeds when a 200 with the exposition's last family arrives within TIMEOUT_MS (default
 * 2000). CONNS 0 is the scraper alone.
 *
 * Prints one line:
 *   scrapes N ok N failed N timeouts N p50_ms X p99_ms X max_ms X connects N held_max N
 *   closed N connect_errors N
 * (timeouts: failed scrapes that got no answer in time, the others were refused; held_max:
 * the most attacker connections open at once; closed: how many the server closed;
 * connect_errors: scrapes this side could not even start, e.g. for want of a local port).
 * A scrape under way when the attack ends gets the rest of its time. Exit 0 when it ran; the
 * test judges the figures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 2000
#define DRIP_MS 1000
#define SCRAPE_MS 200
#define MAX_SCRAPES 1024
#define LAST_FAMILY "inflight_torn_processes"

enum mode { IDLE, DRIP, SLOWREAD, FLOOD };

struct attacker {
	int fd;
	bool connected; /* the non-blocking connect finished */
	long long next_drip;
	int drips;
};

struct scraper {
	int fd;
	long long started, next;
	char buf[1 << 20]; /* the whole exposition */
	size_t len;
	bool sent;
};

static struct sockaddr_in target, attack_from, scrape_from;
static long long scrape_timeout_ms = 2000;
static enum mode mode;
static long long connects, closed, max_connects = 20000;
static int held, held_max;
static double lat[MAX_SCRAPES];
static int nscrapes, nok, ntimeouts, nconnect_errors;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

static int open_conn(bool tiny_rcvbuf, const struct sockaddr_in *from)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (from->sin_family && bind(fd, (const struct sockaddr *)from, sizeof(*from))) {
		close(fd);
		return -1;
	}
	if (tiny_rcvbuf) {
		int small = 1024;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&target, sizeof(target)) && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_all(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0 && errno != EAGAIN)
		return; /* the server closed it: poll says so next */
}

static void attacker_open(struct attacker *a, long long now)
{
	a->fd = -1;
	if (connects >= max_connects)
		return;
	a->fd = open_conn(mode == SLOWREAD, &attack_from);
	if (a->fd < 0)
		return;
	connects++;
	a->connected = false;
	a->drips = 0;
	a->next_drip = now + DRIP_MS;
}

/* the connect completed: what the mode sends first */
static void attacker_start(struct attacker *a)
{
	a->connected = true;
	held++;
	if (held > held_max)
		held_max = held;
	if (mode == DRIP)
		send_all(a->fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
	else if (mode == SLOWREAD)
		send_all(a->fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
				"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
}

static void attacker_lost(struct attacker *a, long long now)
{
	if (a->connected)
		held--;
	close(a->fd);
	closed++;
	attacker_open(a, now); /* at once: a flood, or a Slowloris that comes back */
}

/* readable or hung up: drain what the server sent (not in slowread), notice a close */
static void attacker_event(struct attacker *a, short revents, long long now)
{
	char buf[4096];
	ssize_t n;

	if (!a->connected && (revents & POLLOUT) && !(revents & (POLLERR | POLLHUP))) {
		attacker_start(a);
		return;
	}
	if (revents & (POLLERR | POLLHUP)) {
		attacker_lost(a, now);
		return;
	}
	if (revents & POLLIN) {
		if (mode == SLOWREAD)
			return;
		n = read(a->fd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EAGAIN))
			attacker_lost(a, now);
	}
}

static void scrape_begin(struct scraper *s, long long now)
{
	s->fd = open_conn(false, &scrape_from);
	s->started = now;
	s->len = 0;
	s->sent = false;
	if (s->fd < 0) { /* this side's own trouble (no port left): counted, tried again later */
		nconnect_errors++;
		s->next = now + SCRAPE_MS;
	}
}

static void scrape_end(struct scraper *s, bool ok, long long now)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (nscrapes < MAX_SCRAPES) {
		lat[nscrapes++] = ok ? (double)(now - s->started) : (double)scrape_timeout_ms;
		nok += ok;
	}
	s->next = s->started + SCRAPE_MS;
}

static void scrape_event(struct scraper *s, short revents, long long now)
{
	ssize_t n;

	if (!s->sent && (revents & POLLOUT)) {
		send_all(s->fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
		s->sent = true;
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = read(s->fd, s->buf + s->len, sizeof(s->buf) - 1 - s->len);
	if (n > 0) {
		s->len += n;
		if (s->len < sizeof(s->buf) - 1)
			return;
	}
	s->buf[s->len] = '\0';
	scrape_end(s, !strncmp(s->buf, "HTTP/1.1 200", 12) && strstr(s->buf, LAST_FAMILY), now);
}

/* The attack is over: the scrape under way gets the rest of its time to end, like any. */
static void finish_scrape(struct scraper *s)
{
	while (s->fd >= 0) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN | (s->sent ? 0 : POLLOUT) };
		long long now = now_ms(), left = s->started + scrape_timeout_ms - now;

		if (left <= 0) {
			ntimeouts++;
			scrape_end(s, false, now);
			break;
		}
		if (poll(&p, 1, (int)left) > 0)
			scrape_event(s, p.revents, now_ms());
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(void)
{
	double p50 = 0, p99 = 0, max = 0;

	qsort(lat, nscrapes, sizeof(lat[0]), cmp_double);
	if (nscrapes) {
		p50 = lat[nscrapes / 2];
		p99 = lat[(nscrapes * 99) / 100 < nscrapes ? (nscrapes * 99) / 100 : nscrapes - 1];
		max = lat[nscrapes - 1];
	}
	printf("scrapes %d ok %d failed %d timeouts %d p50_ms %.0f p99_ms %.0f max_ms %.0f "
	       "connects %lld held_max %d closed %lld connect_errors %d\n",
	       nscrapes, nok, nscrapes - nok, ntimeouts, p50, p99, max, connects, held_max, closed,
	       nconnect_errors);
}

static bool loopback_addr(const char *text, struct sockaddr_in *a)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	/* loopback only: this is an attack */
	return inet_pton(AF_INET, text, &a->sin_addr) == 1 &&
	       (ntohl(a->sin_addr.s_addr) >> 24) == 127;
}

static int parse_args(int argc, char **argv, int *nconns, long long *seconds)
{
	static const char *const names[] = { "idle", "drip", "slowread", "flood" };
	int opt;

	while ((opt = getopt(argc, argv, "a:s:m:t:")) != -1) {
		if ((opt == 'a' && !loopback_addr(optarg, &attack_from)) ||
		    (opt == 's' && !loopback_addr(optarg, &scrape_from)) || opt == '?')
			return -1;
		if (opt == 'm')
			max_connects = atoll(optarg);
		if (opt == 't')
			scrape_timeout_ms = atoll(optarg);
	}
	if (argc - optind != 5 || !loopback_addr(argv[optind], &target))
		return -1;
	target.sin_port = htons(atoi(argv[optind + 1]));
	mode = (enum mode)-1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(argv[optind + 2], names[i]))
			mode = (enum mode)i;
	*nconns = atoi(argv[optind + 3]);
	*seconds = atoll(argv[optind + 4]);
	if ((int)mode < 0 || *nconns < 0 || *nconns > MAX_CONNS || *seconds < 1 ||
	    *seconds > 120 || max_connects < 0 || scrape_timeout_ms < 100 ||
	    scrape_timeout_ms > 30000)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct attacker att[MAX_CONNS];
	static struct pollfd pfd[MAX_CONNS + 1];
	struct scraper *s = calloc(1, sizeof(*s));
	struct rlimit rl;
	long long end, now, seconds;
	int nconns;

	if (!s || parse_args(argc, argv, &nconns, &seconds)) {
		fprintf(stderr, "usage: http_attack [-a 127.x.y.z] [-s 127.x.y.z] [-m MAX_CONNECTS] "
				"[-t TIMEOUT_MS] 127.x.y.z PORT idle|drip|slowread|flood "
				"CONNS(0-%d) SECONDS(1-120)\n", MAX_CONNS);
		return 2;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	now = now_ms();
	end = now + seconds * 1000;
	for (int i = 0; i < nconns; i++)
		attacker_open(&att[i], now);
	s->fd = -1;
	s->next = now + 500; /* the attack first */
	while ((now = now_ms()) < end) {
		int n = 0, timeout = 50;

		if (s->fd < 0 && now >= s->next)
			scrape_begin(s, now);
		else if (s->fd >= 0 && now - s->started >= scrape_timeout_ms) {
			ntimeouts++;
			scrape_end(s, false, now);
		}
		for (int i = 0; i < nconns; i++) {
			if (att[i].fd < 0)
				continue;
			if (mode == DRIP && att[i].connected && now >= att[i].next_drip) {
				char line[64];

				snprintf(line, sizeof(line), "X-Drip-%d: %d\r\n", att[i].drips, i);
				send_all(att[i].fd, line);
				att[i].drips++;
				att[i].next_drip = now + DRIP_MS;
			}
			pfd[n].fd = att[i].fd;
			pfd[n].events = POLLIN | (att[i].connected ? 0 : POLLOUT);
			pfd[n++].revents = 0;
		}
		pfd[n].fd = s->fd;
		pfd[n].events = POLLIN | (s->fd >= 0 && !s->sent ? POLLOUT : 0);
		pfd[n].revents = 0;
		if (poll(pfd, n + 1, timeout) < 0 && errno != EINTR)
			break;
		now = now_ms();
		for (int i = 0, k = 0; i < nconns; i++) {
			if (att[i].fd < 0)
				continue;
			if (pfd[k].revents)
				attacker_event(&att[i], pfd[k].revents, now);
			k++;
		}
		if (s->fd >= 0 && pfd[n].revents)
			scrape_event(s, pfd[n].revents, now);
		for (int i = 0; i < nconns; i++) /* connects that failed at once: try again */
			if (att[i].fd < 0 && connects < max_connects)
				attacker_open(&att[i], now);
	}
	finish_scrape(s);
	report();
	return 0;
}
