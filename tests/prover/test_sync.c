// SPDX-License-Identifier: BSD-2-Clause
/* The permits serve tickets in order; the channel keeps FIFO order and its capacity. */
#include <pthread.h>
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

	permits_acquire(&permits, ticket);
	pthread_mutex_lock(&order_lock);
	order[served++] = ticket;
	pthread_mutex_unlock(&order_lock);
	permits_release(&permits);
	return NULL;
}

int main(void)
{
	pthread_t t[WAITERS];
	uint64_t first;
	unsigned in_order = 0;

	/* one permit, tickets taken in order, threads started in reverse order */
	permits_init(&permits, 1);
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

	struct chan ch;
	int items[5];
	unsigned fifo = 0;

	CHECK(chan_init(&ch, 3), "a channel of capacity 3");
	for (int i = 0; i < 3; i++)
		chan_send(&ch, &items[i], 0);
	CHECK_EQ_U64(ch.count, 3, "three sends fill it");
	fifo += chan_recv(&ch) == &items[0];
	chan_send(&ch, &items[3], 0); /* wraps around the ring */
	fifo += chan_recv(&ch) == &items[1];
	fifo += chan_recv(&ch) == &items[2];
	fifo += chan_recv(&ch) == &items[3];
	CHECK_EQ_U64(fifo, 4, "items come out in the order they went in");
	chan_close(&ch);
	CHECK(chan_recv(&ch) == NULL, "a closed, drained channel yields NULL");
	chan_destroy(&ch);
	return check_done();
}
