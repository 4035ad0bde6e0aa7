// SPDX-License-Identifier: BSD-2-Clause
/*
 * One partition's life (its own thread, as a tokio task in cuzk) and the GPU workers that
 * run its prove_start. The order of probe calls here is the contract's story of a partition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "exit_codes.h"
#include "field.h"
#include "hpoly.h"
#include "model_time.h"
#include "pipeline_int.h"
#include "rng.h"
#include "track.h"

#define PARTITION_NICE_MODELLED 10

size_t partition_abc_bytes(const struct pipeline *pl)
{
	return pl->shape.n * sizeof(uint64_t);
}

/* the MSM's per-bucket results: half the size of one of a, b, c, as in cuzk (2 vs 3.9 GiB) */
size_t partition_pending_bytes(const struct pipeline *pl)
{
	return pl->shape.n / 2 * sizeof(uint64_t);
}

/* now, by the model's clock, when it is kept (sync.h); 0 when nothing is modelled */
static uint64_t model_now(const struct pipeline *pl)
{
	return pl->model || pl->host ? model_now_ns() : 0;
}

/*
 * The real witness, always; on the modelled host, then the wait to its modelled end.
 * `t` is when it began by the model's clock; returns when it ended.
 */
static uint64_t synthesize(struct partition *p, uint64_t t)
{
	struct pipeline *pl = p->job->pl;
	const struct circuit_shape *s = &pl->shape;
	size_t abc = partition_abc_bytes(pl);

	p->w.a = track_alloc(CLS_abc, abc, p->owner);
	p->w.b = track_alloc(CLS_abc, abc, p->owner);
	p->w.c = track_alloc(CLS_abc, abc, p->owner);
	p->w.aux = track_alloc(CLS_aux, s->n_aux * sizeof(uint64_t), p->owner);
	p->w.input = track_alloc(CLS_input, s->n_input * sizeof(uint64_t), p->owner);
	p->w.density = track_alloc(CLS_density, s->density_bytes, p->owner);
	circuit_synthesize(s, c1_partition_seed(&p->job->c1, p->index), pl->cfg->synth_rounds,
			   &p->w);
	/* the check's left side, from the evaluations alone (no NTT involved); the modelled
	 * device's partitions are checked after the run, where this costs the pipeline nothing */
	if (p->sampled && !pl->model) {
		p->x = hpoly_pick_x(&pl->dom, pl->x_seed ^ p->owner);
		hpoly_eval_from_evals(&pl->dom, p->w.a, p->w.b, p->w.c, p->x, p->abc_at_x);
	}
	return pl->host ? host_model_finish(pl->host, p->owner, t) : model_now(pl);
}

/* the MSM-like reduction: pairs of h_i * H-point_i summed into one bucket each */
static void msm_reduce(const struct pipeline *pl, const uint64_t *h, uint64_t *buckets)
{
	for (size_t i = 0; i < pl->shape.n / 2; i++)
		buckets[i] = gl_add(gl_mul(h[2 * i], pl->srs_h[2 * i]),
				    gl_mul(h[2 * i + 1], pl->srs_h[2 * i + 1]));
}

/*
 * The device lock, taken in the order the workers took their partitions from the channel
 * (a fair mutex, as tokio's): the device serves the channel's order whichever worker's
 * thread runs first.
 */
static void device_lock(struct pipeline *pl, uint64_t seq)
{
	pthread_mutex_lock(&pl->device_lock);
	while (pl->device_next != seq)
		pthread_cond_wait(&pl->device_turn, &pl->device_lock);
}

static void device_unlock(struct pipeline *pl)
{
	pl->device_next++;
	pthread_cond_broadcast(&pl->device_turn);
	pthread_mutex_unlock(&pl->device_lock);
}

/*
 * cuzk's prove_start: the GPU region under the device lock, then a, b, c are freed. The
 * worker took the partition at `t` by the model's clock, as take number `seq`; returns
 * when the region ended.
 */
static uint64_t prove_start(struct pipeline *pl, struct partition *p, uint64_t t,
			    uint64_t seq)
{
	size_t abc = partition_abc_bytes(pl);
	char err[256];

	p->pending = track_alloc(CLS_pending, partition_pending_bytes(pl), p->owner);
	device_lock(pl, seq);
	if (pl->model) {
		t = gpu_model_region(pl->model, p->owner, t, p->w.a, p->w.b, p->w.c, pl->shape.n,
				     p->pending);
	} else {
		if (!gpu_backend__h(pl->gpu, p->owner, p->w.a, p->w.b, p->w.c,
				    pl->cfg->gpu_rounds - 1, err, sizeof(err))) {
			fprintf(stderr, "prover: GPU stage failed: %s\n", err);
			exit(PROVER_EXIT_SYSTEM);
		}
		msm_reduce(pl, p->w.a, p->pending);
		t = model_now(pl);
	}
	device_unlock(pl);

	/* our own verification, outside the device region: a holds H now */
	if (p->sampled && !pl->model)
		p->h_ok = hpoly_check(&pl->dom, p->abc_at_x, p->w.a, p->x);
	track_free(p->w.a, CLS_abc, abc);
	track_free(p->w.b, CLS_abc, abc);
	track_free(p->w.c, CLS_abc, abc);
	p->w.a = p->w.b = p->w.c = NULL;
	return t;
}

void *gpu_worker_main(void *pipeline)
{
	struct pipeline *pl = pipeline;
	struct chan_take take;
	uint64_t ready = 0; /* by the model's clock: free for the next partition */

	while (chan_recv(&pl->chan, ready, &take)) {
		struct partition *p = take.item;

		track_stage(p->owner, STAGE_gpu);
		ready = prove_start(pl, p, take.t, take.seq);
		/* the GPU part is over the moment the worker lets go */
		track_stage(p->owner, STAGE_finalize);
		pthread_mutex_lock(&p->lock);
		p->gpu_done = true;
		pthread_cond_signal(&p->gpu_done_cond);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/* cuzk's finalize: the CPU-side b_g2 MSM, the 192-byte proof, everything freed */
static void finalize(struct partition *p)
{
	struct pipeline *pl = p->job->pl;
	const struct circuit_shape *s = &pl->shape;
	uint64_t b_g2 = 0, h_acc = 0, inputs = 0, *proof;

	for (size_t i = 0; i < s->n_aux; i++)
		if (circuit_b_dense(s, p->w.density, i))
			b_g2 = gl_add(b_g2, gl_mul(p->w.aux[i], pl->srs_b_g2[i]));
	for (size_t i = 0; i < s->n / 2; i++)
		h_acc = gl_add(h_acc, p->pending[i]);
	for (size_t j = 0; j < s->n_input; j++)
		inputs = rng_mix(inputs ^ p->w.input[j]);

	proof = track_alloc(CLS_proof, PARTITION_PROOF_BYTES, p->owner);
	proof[0] = h_acc;
	proof[1] = b_g2;
	proof[2] = inputs;
	for (size_t k = 3; k < PARTITION_PROOF_BYTES / sizeof(uint64_t); k++)
		proof[k] = rng_mix(proof[k - 1] ^ proof[k - 3]);
	memcpy(p->job->proof + (size_t)p->index * PARTITION_PROOF_BYTES, proof,
	       PARTITION_PROOF_BYTES);
	track_free(proof, CLS_proof, PARTITION_PROOF_BYTES);

	track_free(p->w.aux, CLS_aux, s->n_aux * sizeof(uint64_t));
	track_free(p->w.input, CLS_input, s->n_input * sizeof(uint64_t));
	track_free(p->w.density, CLS_density, s->density_bytes);
	track_free(p->pending, CLS_pending, partition_pending_bytes(pl));
	p->w.aux = p->w.input = p->pending = NULL;
	p->w.density = NULL;
}

void *partition_main(void *partition)
{
	struct partition *p = partition;
	struct pipeline *pl = p->job->pl;
	bool after_send = pl->cfg->release == RELEASE_AFTER_SEND;
	/* by the model's clock; on the modelled host a job's parse takes none of it (docs) */
	uint64_t t = pl->host ? p->job->admitted_t : model_now(pl);

	/*
	 * On the modelled device with real synthesis, the device's host side (the GPU workers)
	 * must not wait for a core behind a dozen syntheses: a real host has cores to spare
	 * for its driver threads, ours has two. Synthesis and finalize yield to it (a higher
	 * nice value needs no privilege); among themselves they share the cores as before. On
	 * the modelled host a synthesis mostly waits out its time, and a lower priority would
	 * only expose its real work to other processes' load (overruns).
	 */
	if (pl->model && !pl->host)
		setpriority(PRIO_PROCESS, (id_t)gettid(), PARTITION_NICE_MODELLED);
	track_stage(p->owner, STAGE_wait_permit);
	t = permits_acquire(&pl->permits, p->ticket, t);
	track_stage(p->owner, STAGE_synth);
	if (pl->host) /* its send's place in line, known now: no later one may go first */
		chan_expect(&pl->chan, &p->sender, t + host_model_duration_ns(pl->host, p->owner),
			    p->owner);
	t = synthesize(p, t);
	if (!after_send) /* the incident: the next synthesis starts while this one waits */
		permits_release(&pl->permits, t);
	track_stage(p->owner, STAGE_chan_send);
	t = chan_send(&pl->chan, p, p->owner, t, pl->host ? &p->sender : NULL); /* gpu_queue inside */
	if (after_send)
		permits_release(&pl->permits, t);

	pthread_mutex_lock(&p->lock);
	while (!p->gpu_done)
		pthread_cond_wait(&p->gpu_done_cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	finalize(p); /* the worker moved it to `finalize` already */
	track_stage(p->owner, STAGE_done);
	return NULL;
}
