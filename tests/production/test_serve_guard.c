// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd/serve_guard.c, the exporter's connection guard, on real sockets (socket pairs stand
 * in for accepted connections: the guard shuts them down and peeks at them): deadlines,
 * the per-client and server budgets closing the oldest squatter rather than the newcomer,
 * connections that never answered going before kept-alive ones, a connection with unread
 * request bytes spared, answers in memory bounded, every close counted by its reason.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "check.h"
#include "cmd/serve_guard.h"

#define S 1000000000ull

struct pair {
	int ours, peer; /* ours: what the guard holds; peer: the client's end */
	struct guard_conn *c;
};

static struct sockaddr_in client(int last_octet)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_addr.s_addr = htonl(0x7f000000u | last_octet);
	return a;
}

static void open_pair(struct guard *g, struct pair *p, int who, __u64 now)
{
	int sv[2];
	struct sockaddr_in a = client(who);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	p->ours = sv[0];
	p->peer = sv[1];
	fcntl(p->peer, F_SETFL, O_NONBLOCK);
	p->c = guard__add(g, p->ours, (struct sockaddr *)&a, now);
}

/* the guard shut our end: the client reads its end */
static bool shut(const struct pair *p)
{
	char b;

	return read(p->peer, &b, 1) == 0;
}

static void close_pair(struct guard *g, struct pair *p)
{
	guard__remove(g, p->c);
	close(p->ours);
	close(p->peer);
}

static void test_deadlines(void)
{
	struct guard_limits lim = { .slots = 16 };
	struct guard g;
	struct pair a, b;

	CHECK(!guard__init(&g, &lim), "init");
	open_pair(&g, &a, 1, 0);
	open_pair(&g, &b, 1, 0);
	guard__request(&g, b.c, 1 * S);
	guard__enforce(&g, GUARD_HEADER_NS);
	CHECK(!shut(&a), "no request yet, at the header deadline itself: still open");
	guard__enforce(&g, GUARD_HEADER_NS + 1);
	CHECK(shut(&a), "no whole request within %llu s: shut", GUARD_HEADER_NS / S);
	CHECK(!shut(&b), "... the one being answered is not");
	CHECK_EQ_U64(g.st.closed[GUARD_HEADER_DEADLINE], 1, "counted as header_deadline");
	guard__enforce(&g, 1 * S + GUARD_ANSWER_NS + 1);
	CHECK(shut(&b), "its answer not read within %llu s: shut", GUARD_ANSWER_NS / S);
	CHECK_EQ_U64(g.st.closed[GUARD_ANSWER_DEADLINE], 1, "counted as answer_deadline");
	CHECK_EQ_U64(g.st.open, 0, "none open");
	CHECK_EQ_U64(g.st.answering, 0, "none answering");
	close_pair(&g, &a);
	close_pair(&g, &b);

	/* a kept-alive connection: the deadline runs from its last answer */
	open_pair(&g, &a, 1, 0);
	guard__request(&g, a.c, 1 * S);
	guard__answered(&g, a.c, 2 * S);
	guard__enforce(&g, 2 * S + GUARD_HEADER_NS);
	CHECK(!shut(&a), "kept alive: the deadline counts from the last answer");
	guard__enforce(&g, 2 * S + GUARD_HEADER_NS + 1);
	CHECK(shut(&a), "... and then applies");
	close_pair(&g, &a);
	CHECK_EQ_U64(g.st.accepted, 3, "accepted counted");
	guard__free(&g);
}

static void test_client_budget(void)
{
	struct guard_limits lim = { .slots = 64, .per_client = 4 };
	struct pair a[6], other;
	struct guard g;
	int n = 0;

	guard__init(&g, &lim);
	open_pair(&g, &other, 2, 0);
	for (int i = 0; i < 6; i++)
		open_pair(&g, &a[i], 1, (__u64)(i + 1) * S);
	/* 6 from one client, budget 4: its two oldest went, the newest are in */
	CHECK(shut(&a[0]) && shut(&a[1]), "a client over its budget loses its oldest connections");
	for (int i = 2; i < 6; i++)
		n += !shut(&a[i]);
	CHECK_EQ_U64(n, 4, "... its 4 newest stay");
	CHECK(!shut(&other), "another client is not touched");
	CHECK_EQ_U64(g.st.closed[GUARD_CLIENT_LIMIT], 2, "counted as client_limit");
	CHECK_EQ_U64(g.st.open, 5, "5 open");
	for (int i = 0; i < 6; i++)
		close_pair(&g, &a[i]);
	close_pair(&g, &other);
	CHECK_EQ_U64(g.st.open, 0, "0 open once removed");
	guard__free(&g);
}

static void test_order_and_spare(void)
{
	struct guard_limits lim = { .slots = 64, .per_client = 3 };
	struct pair kept, fresh, newer, arriving, last;
	struct guard g;
	char b[8];

	guard__init(&g, &lim);
	open_pair(&g, &kept, 1, 0); /* answered a request at 2 s: waiting since then */
	guard__request(&g, kept.c, 1 * S);
	guard__answered(&g, kept.c, 2 * S);
	open_pair(&g, &fresh, 1, 1 * S + 1);
	open_pair(&g, &newer, 1, 3 * S);
	open_pair(&g, &arriving, 1, 4 * S);
	CHECK(shut(&fresh) && !shut(&kept) && !shut(&newer) && !shut(&arriving),
	      "over budget: the one waiting longest for a request goes");
	/* kept, newer, arriving open; newer's request bytes wait unread */
	if (write(newer.peer, "GET /", 5) != 5)
		abort();
	guard__answered(&g, kept.c, 2 * S); /* no request open: a no-op */
	open_pair(&g, &last, 1, 5 * S);
	CHECK(shut(&kept) && !shut(&arriving), "the longest waiting goes again");
	guard__free(&g);
	guard__init(&g, &lim);
	close(kept.ours), close(kept.peer), close(fresh.ours), close(fresh.peer);
	close(arriving.ours), close(arriving.peer), close(last.ours), close(last.peer);
	close(newer.ours), close(newer.peer);

	/* the spare: the oldest has unread request bytes, the next oldest goes instead */
	open_pair(&g, &kept, 1, 1 * S);
	open_pair(&g, &newer, 1, 2 * S);
	open_pair(&g, &arriving, 1, 3 * S);
	if (write(kept.peer, "GET /", 5) != 5)
		abort();
	open_pair(&g, &last, 1, 4 * S);
	CHECK(!shut(&kept) && shut(&newer) && !shut(&arriving) && !shut(&last),
	      "a connection with its request unread is spared: the next oldest goes");
	CHECK(recv(kept.ours, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT) == 5,
	      "... its bytes still there for libmicrohttpd to read");
	open_pair(&g, &fresh, 1, 4 * S); /* same time as last: still never the newcomer */
	CHECK(!shut(&fresh) && shut(&arriving), "the newcomer is never the one closed");
	close_pair(&g, &kept);
	close_pair(&g, &fresh);
	close_pair(&g, &newer);
	close_pair(&g, &arriving);
	close_pair(&g, &last);
	guard__free(&g);
}

static void test_server_and_answers(void)
{
	struct guard_limits lim = { .slots = 16, .per_client = 16, .max_answering = 2 };
	struct pair p[16];
	struct guard g;
	int n;

	guard__init(&g, &lim);
	CHECK_EQ_U64(g.lim.soft, 14, "soft limit: slots less an eighth");
	for (int i = 0; i < 16; i++)
		open_pair(&g, &p[i], i + 1, (__u64)(i + 1) * S); /* 16 clients */
	n = 0;
	for (int i = 0; i < 16; i++)
		n += shut(&p[i]);
	CHECK_EQ_U64(n, 2, "over the server's soft limit: the 2 oldest went");
	CHECK_EQ_U64(g.st.closed[GUARD_SERVER_LIMIT], 2, "counted as server_limit");
	guard__request(&g, p[5].c, 20 * S);
	guard__request(&g, p[6].c, 21 * S);
	guard__request(&g, p[7].c, 22 * S);
	CHECK(shut(&p[5]) && !shut(&p[6]) && !shut(&p[7]),
	      "over max_answering: the oldest answer goes, the newest request is served");
	CHECK_EQ_U64(g.st.closed[GUARD_ANSWER_LIMIT], 1, "counted as answer_limit");
	CHECK_EQ_U64(g.st.answering, 2, "2 answering");
	guard__answered(&g, p[5].c, 23 * S); /* libmicrohttpd reports the abandoned answer */
	CHECK_EQ_U64(g.st.answering, 2, "an abandoned answer of a shut connection counts once");
	for (int i = 0; i < 16; i++)
		close_pair(&g, &p[i]);
	CHECK(g.st.open == 0 && g.st.answering == 0, "all counts back to 0");
	{
		struct pair extra[16];
		int got = 0;

		for (int i = 0; i < 16; i++) {
			open_pair(&g, &extra[i], 1, 30 * S);
			got += extra[i].c != NULL;
		}
		CHECK_EQ_U64(got, 16, "every slot usable again");
		open_pair(&g, &p[0], 1, 31 * S);
		CHECK(p[0].c == NULL, "beyond the slots: NULL, the caller closes it");
		close(p[0].ours);
		close(p[0].peer);
		for (int i = 0; i < 16; i++)
			close_pair(&g, &extra[i]);
	}
	guard__free(&g);
}

int main(void)
{
	test_deadlines();
	test_client_budget();
	test_order_and_spare();
	test_server_and_answers();
	return check_done();
}
