/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pipeline's two scheduling objects, as in cuzk: the synthesis permits (a FIFO-fair
 * semaphore of size pw, like tokio's) and the bounded GPU channel (an mpsc of capacity
 * chan-cap, fair to its senders, like tokio's).
 *
 * Both also carry the model's clock (docs/prover.md, "The model's clock"): a permit or a
 * free slot in the channel remembers when, by the model's clock, it was given back, and an
 * item in the channel when it was sent; taking one returns the later of the taker's own
 * time and that. The modelled host and device then begin their work when the model says
 * it could begin, not when a thread happened to be scheduled. The channel serves its
 * senders in the order of their model times: where synthesis is modelled, each partition
 * says when it will send as its synthesis begins (chan_expect), and no later one sends
 * before it, however late its thread runs; and it gives each item to the waiting receiver
 * that was ready first by the model's clock. Where nothing is modelled the times are all 0
 * and senders and receivers are served in the order they came.
 */
#ifndef PROVER_SYNC_H
#define PROVER_SYNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Model times of free resources, earliest first out: a permit or a slot given back is
 * taken by the next in line at the earliest time any is free, whatever order the threads
 * giving them back ran in.
 */
struct free_times {
	uint64_t *t; /* sorted, latest first: the earliest is t[n - 1] */
	unsigned n;
};

struct permits {
	pthread_mutex_t lock;
	pthread_cond_t turn;
	struct free_times free; /* one entry per available permit */
	uint64_t next_ticket;	/* handed out in job order ... */
	uint64_t next_turn;	/* ... and served in the same order */
};

/* false when out of memory */
bool permits_init(struct permits *p, unsigned count);
void permits_destroy(struct permits *p);

/* Reserves `n` consecutive places in line; returns the first. */
uint64_t permits_take_tickets(struct permits *p, unsigned n);

/*
 * Waits until `ticket` is first in line and a permit is free, then takes the permit freed
 * earliest. Returns the model time the holder may start: the later of `ready_t` and when
 * that permit was given back.
 */
uint64_t permits_acquire(struct permits *p, uint64_t ticket, uint64_t ready_t);

/* Gives a permit back at model time `t`. */
void permits_release(struct permits *p, uint64_t t);

/* Lets `n` tickets from `first` pass in turn without holding a permit (a job that failed). */
void permits_skip(struct permits *p, uint64_t first, unsigned n);

struct chan_slot {
	void *item;
	uint64_t t; /* model time it was sent */
};

/* a sender or receiver waiting in the channel: ordered by model time, then by `tie` */
struct chan_waiter {
	uint64_t t, tie; /* tie: the owner id of an expected sender, else the arrival's number */
	struct chan_waiter *next;
};

struct chan {
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty; /* not_full waits on CLOCK_MONOTONIC */
	struct chan_slot *ring;
	struct free_times free; /* one entry per empty slot */
	unsigned cap, head, count;
	struct chan_waiter *senders, *receivers; /* expected or waiting, in no order */
	uint64_t next_ticket;			 /* arrivals, counted */
	uint64_t taken; /* items taken so far: each take's place in line */
	bool closed;
};

/* What a worker took out of the channel. */
struct chan_take {
	void *item;
	uint64_t t;   /* model time of the take: the later of the taker's and the send's */
	uint64_t seq; /* takes are numbered from 0 in channel order */
};

/* false when out of memory */
bool chan_init(struct chan *ch, unsigned cap);
void chan_destroy(struct chan *ch);

/*
 * Says that `owner` will send at model time `t` (its synthesis's end, known when it
 * begins): until it has, no sender later by the model's clock goes first. `w` stays the
 * caller's until its chan_send returns.
 */
void chan_expect(struct chan *ch, struct chan_waiter *w, uint64_t t, uint64_t owner);

/*
 * Blocks while the channel is full or a sender earlier by the model's clock (expected or
 * waiting; as early and with a smaller tie) has not sent. `expected` is what the sender
 * passed to chan_expect, or NULL: it then joins the line at `ready_t`, after those as early
 * that came first. `owner` enters the gpu_queue stage inside the channel's lock, so that
 * no worker can take the item (and move it on to `gpu`) before that transition. Returns
 * the model time of the send: the later of `ready_t` and when the slot it took was emptied.
 */
uint64_t chan_send(struct chan *ch, void *item, uint64_t owner, uint64_t ready_t,
		   struct chan_waiter *expected);

/*
 * Blocks while empty or while a receiver ready earlier by the model's clock (or as early,
 * and arrived first) waits; false once the channel is closed and drained. The take's
 * model time (the later of `ready_t` and the item's send time) is when its slot is empty
 * again.
 */
bool chan_recv(struct chan *ch, uint64_t ready_t, struct chan_take *out);

void chan_close(struct chan *ch);

#endif /* PROVER_SYNC_H */
