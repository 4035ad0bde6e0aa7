/* SPDX-License-Identifier: BSD-2-Clause */
/* What the pipeline's job side (pipeline.c) and partition side (partition.c) share. */
#ifndef PROVER_PIPELINE_INT_H
#define PROVER_PIPELINE_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include "circuit.h"
#include "hcheck.h"
#include "ntt.h"
#include "pipeline.h"
#include "sync.h"

#define PARTITION_PROOF_BYTES 192 /* a Groth16 proof: A, C in G1, B in G2, compressed */

/*
 * Owner ids (docs/prover.md): a proof job is seq << 16, its partition i is
 * (seq << 16) | (i + 1); seq counts jobs from 1, so 0 stays "no owner" and no id repeats.
 */
#define OWNER_JOB_SHIFT 16
static inline uint64_t owner_of_job(unsigned seq)
{
	return (uint64_t)seq << OWNER_JOB_SHIFT;
}

static inline uint64_t owner_of_partition(unsigned seq, unsigned index)
{
	return owner_of_job(seq) | (index + 1);
}

struct pipeline {
	const struct pipeline_config *cfg;
	struct circuit_shape shape;
	struct ntt_domain dom;
	uint64_t *domain_tables; /* class srs, owner 0 */
	uint64_t *srs;		 /* class srs, owner 0: H points, then b_g2 points */
	size_t srs_bytes;
	const uint64_t *srs_h, *srs_b_g2;
	struct gpu_backend *gpu;
	struct gpu_model *model; /* the modelled device, or NULL when H is computed */
	struct host_model host_model;
	struct host_model *host; /* &host_model when synthesis is modelled, else NULL */
	unsigned h_every;	 /* 1 partition in h_every gets its H checked */
	struct permits permits;
	struct chan chan;
	pthread_mutex_t device_lock; /* one GPU: the gw workers share it, ... */
	pthread_cond_t device_turn;  /* ... in the order they took their partitions */
	uint64_t device_next;	     /* the take whose turn it is */
	unsigned parts_per_job;	     /* what the input says: every job reads the same */
	uint64_t x_seed;	     /* the H checks' points derive from it */
	char *input_text;	     /* the generated C1 (class c1_data, owner 0), or NULL */
	size_t input_len;
	sem_t job_slots;

	/* results, added up once per job */
	pthread_mutex_t result_lock;
	unsigned proofs_done, partitions_done, h_checked, h_passed;
	uint64_t digest;
	struct hcheck_list deferred; /* the modelled device's samples, checked after the run */
	int failure; /* first job failure's exit code */
};

struct partition {
	struct job *job;
	unsigned index;
	uint64_t owner;
	uint64_t ticket; /* place in the permits' line */
	pthread_t thread;
	struct witness w;
	uint64_t *pending;     /* GPU results awaiting finalize */
	bool sampled;	       /* its H gets checked (inline, or after the run if modelled) */
	uint64_t x;	       /* check point */
	uint64_t abc_at_x[3];  /* A(x), B(x), C(x) from the evaluations */
	bool h_ok;
	struct chan_waiter sender; /* on the modelled host: its place in the channel's line */

	/* the GPU worker's hand-back */
	pthread_mutex_t lock;
	pthread_cond_t gpu_done_cond;
	bool gpu_done;
};

struct job {
	struct pipeline *pl;
	unsigned seq;
	uint64_t owner;
	uint64_t admitted_t;   /* CLOCK_MONOTONIC ns: when its job slot was granted */
	uint64_t first_ticket; /* its partitions' places in the permits' line, in job order */
	pthread_t thread;
	struct c1_input c1;
	uint8_t *proof; /* class proof: the partitions' proofs, side by side */
	size_t proof_bytes;
	struct partition *parts;
	unsigned n_parts;
};

/* partition.c */
void *partition_main(void *partition);
void *gpu_worker_main(void *pipeline);

size_t partition_abc_bytes(const struct pipeline *pl);	   /* each of a, b, c */
size_t partition_pending_bytes(const struct pipeline *pl);

#endif /* PROVER_PIPELINE_INT_H */
