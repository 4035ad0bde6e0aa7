/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The exporter's guard: which HTTP connections `serve` keeps and which it closes, so that
 * slow, idle or numerous clients can never lock scrapes out. libmicrohttpd's own limits are
 * an inactivity timeout that any byte resets and a connection limit that refuses the newcomer
 * (the scraper) rather than the squatters; the guard adds what they lack:
 *
 *  - deadlines: a connection must deliver a whole request within GUARD_HEADER_NS of its
 *    accept or of its previous answer (a Slowloris that drips a header line every few
 *    seconds, an idle socket, a kept-alive connection nobody uses), and its answer must be
 *    read within GUARD_ANSWER_NS (a client that never reads);
 *  - budgets, enforced by closing the oldest squatter, never by refusing the newcomer: at most
 *    `per_client` open connections per client address, `soft` in all, `max_answering` answers
 *    in memory at once. The connection that has waited longest for its request goes first
 *    (a newcomer is the last candidate); one whose request bytes wait unread in its socket (a
 *    scraper that just arrived) is spared while any other can go. The listening socket is
 *    TCP_DEFER_ACCEPT (serve.c), so a connection that sends nothing does not even reach us.
 *
 * Closing is shutdown(2) of the socket: libmicrohttpd, which owns the descriptor, sees the end
 * at its next read and closes it itself. Pure bookkeeping plus those two socket calls, no
 * libmicrohttpd: tests/production/test_serve_guard.c drives it with socket pairs.
 */
#ifndef INFLIGHT_CMD_SERVE_GUARD_H
#define INFLIGHT_CMD_SERVE_GUARD_H

#include <stdbool.h>
#include <sys/socket.h>
#include <linux/types.h>

#define GUARD_HEADER_NS 5000000000ull  /* accept (or last answer) -> a whole request */
#define GUARD_ANSWER_NS 10000000000ull /* request -> answer read, whatever its size */

/* Why the guard closed a connection; the exporter counts each (docs/production.md). */
#define GUARD_REASONS(X)                                                                         \
	X(GUARD_HEADER_DEADLINE, "header_deadline") /* no whole request in time */               \
	X(GUARD_ANSWER_DEADLINE, "answer_deadline") /* the answer not read in time */            \
	X(GUARD_CLIENT_LIMIT, "client_limit")	    /* its client holds too many */              \
	X(GUARD_SERVER_LIMIT, "server_limit")	    /* the server holds too many */              \
	X(GUARD_ANSWER_LIMIT, "answer_limit")	    /* too many answers in memory */

enum guard_reason {
#define GUARD_ENUM(id, key) id,
	GUARD_REASONS(GUARD_ENUM)
#undef GUARD_ENUM
		GUARD__REASONS
};

extern const char *const guard_reason_key[GUARD__REASONS];

struct guard_limits {
	unsigned slots;	       /* connections tracked (libmicrohttpd's own limit) */
	unsigned soft;	       /* open connections before the oldest squatter goes (< slots) */
	unsigned per_client;   /* open connections of one client address */
	unsigned max_answering; /* answers being sent at once */
	__u64 header_ns, answer_ns;
};

struct guard_conn {
	bool used;
	bool answering;	    /* a request was read, its answer is on its way */
	bool closing;	    /* shut down by the guard, libmicrohttpd has yet to close it */
	int fd;
	__u8 client[17];    /* family byte + address (v4-mapped IPv6 as IPv4) */
	__u64 since_ns;	    /* waiting: since accept or last answer; answering: since request */
};

struct guard_stats {
	__u64 accepted;
	__u64 closed[GUARD__REASONS];
	unsigned open, open_max, answering;
};

struct guard {
	struct guard_limits lim;
	struct guard_conn *conn;      /* lim.slots of them */
	struct guard_conn **scratch;  /* lim.slots: the candidates of an eviction */
	struct guard_stats st;
};

/* 0 or -ENOMEM. Limits are clamped to be consistent (soft < slots, etc.). */
int guard__init(struct guard *g, const struct guard_limits *lim);
void guard__free(struct guard *g);

/* A connection was accepted from `peer` on socket `fd`: its slot (NULL when every slot is
 * taken: the caller closes it). Enforces the budgets at once. */
struct guard_conn *guard__add(struct guard *g, int fd, const struct sockaddr *peer, __u64 now);
/* The connection is gone (closed by libmicrohttpd, for whatever reason). */
void guard__remove(struct guard *g, struct guard_conn *c);
/* A whole request was read: its answer starts (enforces max_answering). */
void guard__request(struct guard *g, struct guard_conn *c, __u64 now);
/* Its answer was sent (or abandoned): waiting for the next request. */
void guard__answered(struct guard *g, struct guard_conn *c, __u64 now);
/* The deadlines and budgets, now. Call it often (every loop turn). */
void guard__enforce(struct guard *g, __u64 now);

#endif /* INFLIGHT_CMD_SERVE_GUARD_H */
