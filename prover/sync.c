// SPDX-License-Identifier: BSD-2-Clause
/* Permits and the GPU channel (see sync.h). */
#include <stdlib.h>
#include "sync.h"
#include "track.h"

/* `n` resources free at model time 0 */
static bool free_times_init(struct free_times *f, unsigned n)
{
	f->t = calloc(n ? n : 1, sizeof(*f->t));
	f->n = n;
	return f->t != NULL;
}

static uint64_t free_times_take(struct free_times *f)
{
	return f->t[--f->n];
}

/* kept sorted, latest first: the caller never gives back more than it took */
static void free_times_give(struct free_times *f, uint64_t t)
{
	unsigned i = f->n++;

	for (; i > 0 && f->t[i - 1] < t; i--)
		f->t[i] = f->t[i - 1];
	f->t[i] = t;
}

static uint64_t later(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

bool permits_init(struct permits *p, unsigned count)
{
	if (!free_times_init(&p->free, count))
		return false;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->turn, NULL);
	p->next_ticket = p->next_turn = 0;
	return true;
}

void permits_destroy(struct permits *p)
{
	pthread_cond_destroy(&p->turn);
	pthread_mutex_destroy(&p->lock);
	free(p->free.t);
}

uint64_t permits_take_tickets(struct permits *p, unsigned n)
{
	uint64_t first;

	pthread_mutex_lock(&p->lock);
	first = p->next_ticket;
	p->next_ticket += n;
	pthread_mutex_unlock(&p->lock);
	return first;
}

uint64_t permits_acquire(struct permits *p, uint64_t ticket, uint64_t ready_t)
{
	uint64_t t;

	pthread_mutex_lock(&p->lock);
	while (ticket != p->next_turn || !p->free.n)
		pthread_cond_wait(&p->turn, &p->lock);
	t = later(ready_t, free_times_take(&p->free));
	p->next_turn++;
	/* the next in line may find a permit free too */
	pthread_cond_broadcast(&p->turn);
	pthread_mutex_unlock(&p->lock);
	return t;
}

void permits_release(struct permits *p, uint64_t t)
{
	pthread_mutex_lock(&p->lock);
	free_times_give(&p->free, t);
	pthread_cond_broadcast(&p->turn);
	pthread_mutex_unlock(&p->lock);
}

void permits_skip(struct permits *p, uint64_t first, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		permits_release(p, permits_acquire(p, first + i, 0));
}

bool chan_init(struct chan *ch, unsigned cap)
{
	ch->ring = calloc(cap, sizeof(*ch->ring));
	if (!ch->ring || !free_times_init(&ch->free, cap)) {
		free(ch->ring);
		return false;
	}
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->not_full, NULL);
	pthread_cond_init(&ch->not_empty, NULL);
	ch->cap = cap;
	ch->head = ch->count = 0;
	ch->senders = ch->receivers = NULL;
	ch->next_ticket = ch->taken = 0;
	ch->closed = false;
	return true;
}

void chan_destroy(struct chan *ch)
{
	pthread_cond_destroy(&ch->not_empty);
	pthread_cond_destroy(&ch->not_full);
	pthread_mutex_destroy(&ch->lock);
	free(ch->free.t);
	free(ch->ring);
}

/* no waiter of `list` goes before `me`: earlier by the model's clock, or as early and first */
static bool first_of(const struct chan_waiter *list, const struct chan_waiter *me)
{
	for (const struct chan_waiter *w = list; w; w = w->next)
		if (w->t < me->t || (w->t == me->t && w->tie < me->tie))
			return false;
	return true;
}

static void join(struct chan_waiter **list, struct chan_waiter *me, uint64_t t, uint64_t tie)
{
	*me = (struct chan_waiter){ .t = t, .tie = tie, .next = *list };
	*list = me;
}

static void leave(struct chan_waiter **list, struct chan_waiter *me)
{
	while (*list != me)
		list = &(*list)->next;
	*list = me->next;
}

void chan_expect(struct chan *ch, struct chan_waiter *w, uint64_t t, uint64_t owner)
{
	pthread_mutex_lock(&ch->lock);
	join(&ch->senders, w, t, owner);
	pthread_mutex_unlock(&ch->lock);
}

uint64_t chan_send(struct chan *ch, void *item, uint64_t owner, uint64_t ready_t,
		   struct chan_waiter *expected)
{
	struct chan_waiter here, *me = expected ? expected : &here;
	uint64_t t;

	pthread_mutex_lock(&ch->lock);
	if (!expected)
		join(&ch->senders, &here, ready_t, ch->next_ticket++);
	while (ch->count == ch->cap || !first_of(ch->senders, me))
		pthread_cond_wait(&ch->not_full, &ch->lock);
	leave(&ch->senders, me);
	track_stage(owner, STAGE_gpu_queue);
	t = later(ready_t, free_times_take(&ch->free));
	ch->ring[(ch->head + ch->count) % ch->cap] = (struct chan_slot){ item, t };
	ch->count++;
	/* the next sender in line may find room too; the first receiver takes it */
	pthread_cond_broadcast(&ch->not_full);
	pthread_cond_broadcast(&ch->not_empty);
	pthread_mutex_unlock(&ch->lock);
	return t;
}

bool chan_recv(struct chan *ch, uint64_t ready_t, struct chan_take *out)
{
	struct chan_waiter me;
	bool got = false;

	pthread_mutex_lock(&ch->lock);
	join(&ch->receivers, &me, ready_t, ch->next_ticket++);
	while (!(ch->count && first_of(ch->receivers, &me)) && !(ch->closed && !ch->count))
		pthread_cond_wait(&ch->not_empty, &ch->lock);
	leave(&ch->receivers, &me);
	if (ch->count) {
		struct chan_slot s = ch->ring[ch->head];

		ch->head = (ch->head + 1) % ch->cap;
		ch->count--;
		*out = (struct chan_take){ s.item, later(ready_t, s.t), ch->taken++ };
		free_times_give(&ch->free, out->t);
		pthread_cond_broadcast(&ch->not_full);
		got = true;
	}
	/* another receiver may be first now, for an item still there or for the close */
	pthread_cond_broadcast(&ch->not_empty);
	pthread_mutex_unlock(&ch->lock);
	return got;
}

void chan_close(struct chan *ch)
{
	pthread_mutex_lock(&ch->lock);
	ch->closed = true;
	pthread_cond_broadcast(&ch->not_empty);
	pthread_mutex_unlock(&ch->lock);
}
