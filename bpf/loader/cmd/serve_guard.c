// SPDX-License-Identifier: BSD-2-Clause
/* The exporter's connection guard: deadlines and budgets. cmd/serve_guard.h */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "cmd/serve_guard.h"

const char *const guard_reason_key[GUARD__REASONS] = {
#define GUARD_KEY(id, key) [id] = key,
	GUARD_REASONS(GUARD_KEY)
#undef GUARD_KEY
};

int guard__init(struct guard *g, const struct guard_limits *lim)
{
	memset(g, 0, sizeof(*g));
	g->lim = *lim;
	if (g->lim.slots < 8)
		g->lim.slots = 8;
	/* room for connections shut down that libmicrohttpd has not closed yet, and for a
	 * batch of accepts between two turns of the loop */
	if (g->lim.soft == 0 || g->lim.soft > g->lim.slots - g->lim.slots / 8)
		g->lim.soft = g->lim.slots - g->lim.slots / 8;
	if (g->lim.per_client == 0 || g->lim.per_client > g->lim.soft)
		g->lim.per_client = g->lim.soft;
	if (g->lim.max_answering == 0 || g->lim.max_answering >= g->lim.per_client)
		g->lim.max_answering = g->lim.per_client / 2 ?: 1;
	if (!g->lim.header_ns)
		g->lim.header_ns = GUARD_HEADER_NS;
	if (!g->lim.answer_ns)
		g->lim.answer_ns = GUARD_ANSWER_NS;
	g->conn = calloc(g->lim.slots, sizeof(*g->conn));
	g->scratch = calloc(g->lim.slots, sizeof(*g->scratch));
	if (!g->conn || !g->scratch) {
		guard__free(g);
		return -ENOMEM;
	}
	return 0;
}

void guard__free(struct guard *g)
{
	free(g->conn);
	free(g->scratch);
	g->conn = NULL;
	g->scratch = NULL;
}

static void client_key(const struct sockaddr *sa, __u8 key[17])
{
	memset(key, 0, 17);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) { /* the same client as its IPv4 self */
			key[0] = 4;
			memcpy(key + 1, a->s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a->s6_addr, 16);
		}
	}
}

static bool live(const struct guard_conn *c)
{
	return c->used && !c->closing;
}

static void shut(struct guard *g, struct guard_conn *c, enum guard_reason why)
{
	shutdown(c->fd, SHUT_RDWR); /* libmicrohttpd reads the end and closes the socket */
	c->closing = true;
	g->st.closed[why]++;
	g->st.open--;
	if (c->answering)
		g->st.answering--;
}

/* Bytes of a request already in the socket, not read yet: a client that just arrived. */
static bool has_unread(int fd)
{
	char b;

	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static int by_wait(const void *a, const void *b)
{
	const struct guard_conn *x = *(struct guard_conn *const *)a, *y = *(struct guard_conn *const *)b;

	return x->since_ns < y->since_ns ? -1 : x->since_ns > y->since_ns;
}

/*
 * The waiting connection (of `client`, or any when NULL; never `spare`, the newcomer) that
 * has waited longest among those with no request bytes unread in their socket (a scraper
 * that just arrived has its request there: libmicrohttpd reads it at its next turn); when
 * every one has some, the longest waiting all the same. NULL when none is waiting.
 */
static struct guard_conn *pick(struct guard *g, const __u8 *client, const struct guard_conn *spare)
{
	struct guard_conn **cand = g->scratch;
	unsigned n = 0;

	for (unsigned i = 0; i < g->lim.slots; i++) {
		struct guard_conn *c = &g->conn[i];

		if (live(c) && !c->answering && c != spare &&
		    (!client || !memcmp(c->client, client, 17)))
			cand[n++] = c;
	}
	if (!n)
		return NULL;
	qsort(cand, n, sizeof(*cand), by_wait);
	for (unsigned i = 0; i < n; i++)
		if (!has_unread(cand[i]->fd))
			return cand[i];
	return cand[0];
}

static unsigned client_open(const struct guard *g, const __u8 *client)
{
	unsigned n = 0;

	for (unsigned i = 0; i < g->lim.slots; i++)
		n += live(&g->conn[i]) && !memcmp(g->conn[i].client, client, 17);
	return n;
}

struct guard_conn *guard__add(struct guard *g, int fd, const struct sockaddr *peer, __u64 now)
{
	struct guard_conn *c = NULL, *v;
	unsigned n;

	for (unsigned i = 0; i < g->lim.slots && !c; i++)
		if (!g->conn[i].used)
			c = &g->conn[i];
	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->fd = fd;
	c->since_ns = now;
	client_key(peer, c->client);
	g->st.accepted++;
	if (++g->st.open > g->st.open_max)
		g->st.open_max = g->st.open;
	for (n = client_open(g, c->client); n > g->lim.per_client && (v = pick(g, c->client, c)); n--)
		shut(g, v, GUARD_CLIENT_LIMIT);
	while (g->st.open > g->lim.soft && (v = pick(g, NULL, c)))
		shut(g, v, GUARD_SERVER_LIMIT);
	return c;
}

void guard__remove(struct guard *g, struct guard_conn *c)
{
	if (!c || !c->used)
		return;
	if (!c->closing) {
		g->st.open--;
		if (c->answering)
			g->st.answering--;
	}
	c->used = false;
}

void guard__request(struct guard *g, struct guard_conn *c, __u64 now)
{
	if (!c || !live(c) || c->answering)
		return;
	c->answering = true;
	c->since_ns = now;
	g->st.answering++;
	while (g->st.answering > g->lim.max_answering) {
		struct guard_conn *oldest = NULL;

		for (unsigned i = 0; i < g->lim.slots; i++) {
			struct guard_conn *o = &g->conn[i];

			if (live(o) && o->answering && o != c &&
			    (!oldest || o->since_ns < oldest->since_ns))
				oldest = o;
		}
		if (!oldest)
			break;
		shut(g, oldest, GUARD_ANSWER_LIMIT);
	}
}

void guard__answered(struct guard *g, struct guard_conn *c, __u64 now)
{
	if (!c || !c->used || !c->answering)
		return;
	c->answering = false;
	if (c->closing)
		return; /* counted out when it was shut */
	c->since_ns = now;
	g->st.answering--;
}

void guard__enforce(struct guard *g, __u64 now)
{
	for (unsigned i = 0; i < g->lim.slots; i++) {
		struct guard_conn *c = &g->conn[i];

		if (!live(c))
			continue;
		if (c->answering && now - c->since_ns > g->lim.answer_ns)
			shut(g, c, GUARD_ANSWER_DEADLINE);
		else if (!c->answering && now - c->since_ns > g->lim.header_ns)
			shut(g, c, GUARD_HEADER_DEADLINE);
	}
}
