// SPDX-License-Identifier: BSD-2-Clause
/* Permits and the GPU channel (see sync.h). */
#include <stdlib.h>
#include "sync.h"
#include "track.h"

void permits_init(struct permits *p, unsigned count)
{
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->turn, NULL);
	p->available = count;
	p->next_ticket = p->next_turn = 0;
}

void permits_destroy(struct permits *p)
{
	pthread_cond_destroy(&p->turn);
	pthread_mutex_destroy(&p->lock);
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

void permits_acquire(struct permits *p, uint64_t ticket)
{
	pthread_mutex_lock(&p->lock);
	while (ticket != p->next_turn || !p->available)
		pthread_cond_wait(&p->turn, &p->lock);
	p->available--;
	p->next_turn++;
	/* the next in line may find a permit free too */
	pthread_cond_broadcast(&p->turn);
	pthread_mutex_unlock(&p->lock);
}

void permits_release(struct permits *p)
{
	pthread_mutex_lock(&p->lock);
	p->available++;
	pthread_cond_broadcast(&p->turn);
	pthread_mutex_unlock(&p->lock);
}

bool chan_init(struct chan *ch, unsigned cap)
{
	ch->ring = calloc(cap, sizeof(*ch->ring));
	if (!ch->ring)
		return false;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->not_full, NULL);
	pthread_cond_init(&ch->not_empty, NULL);
	ch->cap = cap;
	ch->head = ch->count = 0;
	ch->closed = false;
	return true;
}

void chan_destroy(struct chan *ch)
{
	pthread_cond_destroy(&ch->not_empty);
	pthread_cond_destroy(&ch->not_full);
	pthread_mutex_destroy(&ch->lock);
	free(ch->ring);
}

void chan_send(struct chan *ch, void *item, uint64_t owner)
{
	pthread_mutex_lock(&ch->lock);
	while (ch->count == ch->cap)
		pthread_cond_wait(&ch->not_full, &ch->lock);
	track_stage(owner, STAGE_gpu_queue);
	ch->ring[(ch->head + ch->count) % ch->cap] = item;
	ch->count++;
	pthread_cond_signal(&ch->not_empty);
	pthread_mutex_unlock(&ch->lock);
}

void *chan_recv(struct chan *ch)
{
	void *item = NULL;

	pthread_mutex_lock(&ch->lock);
	while (!ch->count && !ch->closed)
		pthread_cond_wait(&ch->not_empty, &ch->lock);
	if (ch->count) {
		item = ch->ring[ch->head];
		ch->head = (ch->head + 1) % ch->cap;
		ch->count--;
		pthread_cond_signal(&ch->not_full);
	}
	pthread_mutex_unlock(&ch->lock);
	return item;
}

void chan_close(struct chan *ch)
{
	pthread_mutex_lock(&ch->lock);
	ch->closed = true;
	pthread_cond_broadcast(&ch->not_empty);
	pthread_mutex_unlock(&ch->lock);
}
