/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pipeline's two scheduling objects, as in cuzk: the synthesis permits (a FIFO-fair
 * semaphore of size pw, like tokio's) and the bounded GPU channel (an mpsc of capacity
 * chan-cap).
 */
#ifndef PROVER_SYNC_H
#define PROVER_SYNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct permits {
	pthread_mutex_t lock;
	pthread_cond_t turn;
	unsigned available;
	uint64_t next_ticket; /* handed out in job order ... */
	uint64_t next_turn;   /* ... and served in the same order */
};

void permits_init(struct permits *p, unsigned count);
void permits_destroy(struct permits *p);

/* Reserves `n` consecutive places in line; returns the first. */
uint64_t permits_take_tickets(struct permits *p, unsigned n);

/* Waits until `ticket` is first in line and a permit is free, then takes it. */
void permits_acquire(struct permits *p, uint64_t ticket);

void permits_release(struct permits *p);

struct chan {
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty;
	void **ring;
	unsigned cap, head, count;
	bool closed;
};

/* false when out of memory */
bool chan_init(struct chan *ch, unsigned cap);
void chan_destroy(struct chan *ch);

/*
 * Blocks while the channel is full. `owner` enters the gpu_queue stage inside the channel's
 * lock, so that no worker can take the item (and move it on to `gpu`) before that transition.
 */
void chan_send(struct chan *ch, void *item, uint64_t owner);

/* Blocks while empty; NULL once the channel is closed and drained. */
void *chan_recv(struct chan *ch);

void chan_close(struct chan *ch);

#endif /* PROVER_SYNC_H */
