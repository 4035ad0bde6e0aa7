// SPDX-License-Identifier: BSD-2-Clause
/*
 * The permits serve tickets in order; the channel keeps FIFO order and its capacity and
 * serves its senders in the order they came, or, when they said so in advance, in the
 * order of their model times whatever order their threads come in; both carry the model's
 * clock: a permit or a slot given back at model time T lets the next taker begin at T at
 * the earliest, and the earliest given back goes first.
 */
#include <pthread.h>
#include <time.h>
#include "check.h"
#include "sync.h"

#define WAITERS 12

static struct permits permits;
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t order[WAITERS];
static unsigned served;

static void *waiter(void *arg)
{
	uint64_t ticket = (uint64_t)(uintptr_t)arg;

	permits_acquire(&permits, ticket, 0);
	pthread_mutex_lock(&order_lock);
	order[served++] = ticket;
	pthread_mutex_unlock(&order_lock);
	permits_release(&permits, 0);
	return NULL;
}

static void test_permit_order(void)
{
	pthread_t t[WAITERS];
	uint64_t first;
	unsigned in_order = 0;

	/* one permit, tickets taken in order, threads started in reverse order */
	CHECK(permits_init(&permits, 1), "one permit");
	first = permits_take_tickets(&permits, WAITERS);
	CHECK_EQ_U64(first, 0, "the first ticket is 0");
	CHECK_EQ_U64(permits_take_tickets(&permits, 0), WAITERS, "tickets are consecutive");
	for (int i = WAITERS - 1; i >= 0; i--)
		pthread_create(&t[i], NULL, waiter, (void *)(uintptr_t)(first + i));
	for (int i = 0; i < WAITERS; i++)
		pthread_join(t[i], NULL);
	for (unsigned i = 0; i < WAITERS; i++)
		in_order += order[i] == i;
	CHECK_EQ_U64(in_order, WAITERS, "permits are granted in ticket order");
	permits_destroy(&permits);
}

static void test_permit_clock(void)
{
	struct permits p;

	CHECK(permits_init(&p, 2), "two permits");
	CHECK_EQ_U64(permits_acquire(&p, 0, 500), 500, "a free permit: the taker's own time");
	CHECK_EQ_U64(permits_acquire(&p, 1, 0), 0, "the second, free since the start: time 0");
	permits_release(&p, 900);
	permits_release(&p, 700); /* given back later in real time, earlier by the model's */
	CHECK_EQ_U64(permits_acquire(&p, 2, 100), 700, "the next taker gets the permit freed "
		     "earliest by the model's clock, whatever order they came back in");
	CHECK_EQ_U64(permits_acquire(&p, 3, 1000), 1000, "a taker later than the release: its "
		     "own time");
	permits_release(&p, 5);
	permits_release(&p, 6);
	/* tickets 4 and 5 belong to a job that failed: they pass without holding a permit */
	permits_take_tickets(&p, 6);
	permits_skip(&p, 4, 2);
	CHECK_EQ_U64(permits_acquire(&p, 6, 0), 5, "skipped tickets let the next one through, "
		     "and give the permits back as they found them");
	CHECK_EQ_U64(p.free.n, 1, "one permit still free");
	permits_destroy(&p);
}

static struct chan sch;

static void *sender(void *arg)
{
	chan_send(&sch, arg, 0, 0, NULL);
	return NULL;
}

/* waits until `n` senders have taken their place in line */
static void wait_senders(uint64_t n)
{
	const struct timespec tick = { 0, 1000000 };
	uint64_t have;

	for (unsigned i = 0; i < 5000; i++) {
		pthread_mutex_lock(&sch.lock);
		have = sch.next_ticket;
		pthread_mutex_unlock(&sch.lock);
		if (have >= n)
			return;
		nanosleep(&tick, NULL);
	}
}

static void test_chan(void)
{
	struct chan ch;
	struct chan_take tk;
	int items[5];
	unsigned fifo = 0;

	CHECK(chan_init(&ch, 3), "a channel of capacity 3");
	for (int i = 0; i < 3; i++)
		chan_send(&ch, &items[i], 0, 0, NULL);
	CHECK_EQ_U64(ch.count, 3, "three sends fill it");
	fifo += chan_recv(&ch, 0, &tk) && tk.item == &items[0] && tk.seq == 0;
	chan_send(&ch, &items[3], 0, 0, NULL); /* wraps around the ring */
	fifo += chan_recv(&ch, 0, &tk) && tk.item == &items[1] && tk.seq == 1;
	fifo += chan_recv(&ch, 0, &tk) && tk.item == &items[2] && tk.seq == 2;
	fifo += chan_recv(&ch, 0, &tk) && tk.item == &items[3] && tk.seq == 3;
	CHECK_EQ_U64(fifo, 4, "items come out in the order they went in, takes numbered in order");
	chan_close(&ch);
	CHECK(!chan_recv(&ch, 0, &tk), "a closed, drained channel yields nothing");
	chan_destroy(&ch);

	CHECK(chan_init(&ch, 1), "a channel of capacity 1");
	CHECK_EQ_U64(chan_send(&ch, &items[0], 0, 10, NULL), 10, "a send into an empty slot: the "
		     "sender's time");
	CHECK(chan_recv(&ch, 3, &tk) && tk.t == 10, "a worker ready earlier takes it when it "
	      "was sent");
	CHECK_EQ_U64(chan_send(&ch, &items[1], 0, 12, NULL), 12, "the slot was empty again at 10");
	CHECK(chan_recv(&ch, 30, &tk) && tk.t == 30, "a worker ready later takes it when it is "
	      "ready");
	CHECK_EQ_U64(chan_send(&ch, &items[2], 0, 20, NULL), 30, "a sender ready at 20 finds the slot "
		     "emptied at 30: it sends at 30");
	chan_destroy(&ch);
}

/* senders blocked on a full channel are served in the order they arrived */
static void test_chan_fair(void)
{
	pthread_t t[4];
	struct chan_take tk;
	int x;
	unsigned in_order = 0;

	CHECK(chan_init(&sch, 1), "a channel of capacity 1, full");
	chan_send(&sch, &x, 0, 0, NULL);
	for (uintptr_t i = 0; i < 4; i++) {
		pthread_create(&t[i], NULL, sender, (void *)(i + 1));
		wait_senders(i + 2); /* the first send took ticket 0 */
	}
	for (uintptr_t i = 0; i < 5; i++) /* the channel's order is the order of the sends */
		in_order += chan_recv(&sch, 0, &tk) && tk.item == (i ? (void *)i : (void *)&x);
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ_U64(in_order, 5, "four blocked senders sent in the order they came");
	chan_destroy(&sch);
}

static struct chan ech;
static struct chan_waiter expected[3];
static int eitems[3];

static void *expected_sender(void *arg)
{
	uintptr_t i = (uintptr_t)arg;

	chan_send(&ech, &eitems[i], 0x10001 + i, 100 * (i + 1), &expected[i]);
	return NULL;
}

/* senders that said when they will send go in that order, however late their threads run */
static void test_chan_expected(void)
{
	const struct timespec tick = { 0, 20000000 };
	struct chan_take tk;
	pthread_t t[3];
	unsigned in_order = 0;

	CHECK(chan_init(&ech, 4), "a channel of capacity 4");
	for (uintptr_t i = 0; i < 3; i++) /* sends expected at model times 100, 200, 300 */
		chan_expect(&ech, &expected[i], 100 * (i + 1), 0x10001 + i);
	for (int i = 2; i >= 0; i--) { /* the threads come in the other order */
		pthread_create(&t[i], NULL, expected_sender, (void *)(uintptr_t)i);
		nanosleep(&tick, NULL);
	}
	for (uintptr_t i = 0; i < 3; i++)
		in_order += chan_recv(&ech, 0, &tk) && tk.item == &eitems[i] && tk.t == 100 * (i + 1);
	for (unsigned i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ_U64(in_order, 3, "three expected senders, started last first: sent in the order "
		     "of their model times, with those times");
	chan_destroy(&ech);
}

int main(void)
{
	test_permit_order();
	test_permit_clock();
	test_chan();
	test_chan_fair();
	test_chan_expected();
	return check_done();
}
