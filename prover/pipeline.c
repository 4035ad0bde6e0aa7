// SPDX-License-Identifier: BSD-2-Clause
/*
 * Set-up (SRS, domain, GPU backend, input), the job dispatcher and the proof jobs.
 * Partitions live in partition.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include "exit_codes.h"
#include "model_time.h"
#include "pipeline_int.h"
#include "rng.h"
#include "track.h"
#include "field.h"

#define THREAD_STACK (512 * 1024) /* hundreds of partition threads: keep them small */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double pipeline_peak_rss_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int e;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	e = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (e) {
		fprintf(stderr, "prover: cannot start a thread: %s\n", strerror(e));
		exit(PROVER_EXIT_SYSTEM);
	}
}

static void record_failure(struct pipeline *pl, int code)
{
	pthread_mutex_lock(&pl->result_lock);
	if (!pl->failure)
		pl->failure = code;
	pthread_mutex_unlock(&pl->result_lock);
}

/* parse stage: the C1 text (read per job, as cuzk does) into c1_data */
static int parse_input(struct job *job)
{
	struct pipeline *pl = job->pl;
	const char *path = pl->cfg->input;
	char err[300], *text;
	size_t len;
	enum c1_status st;

	if (path) {
		st = c1_read_file(path, job->owner, &text, &len, err, sizeof(err));
		if (st) {
			fprintf(stderr, "prover: %s: %s\n", path, err);
			return PROVER_EXIT_INPUT_IO;
		}
	} else {
		len = pl->input_len;
		text = c1_copy_text(pl->input_text, len, job->owner);
	}
	st = c1_parse(text, len, job->owner, &job->c1, err, sizeof(err));
	c1_free_text(text, len);
	if (st) {
		fprintf(stderr, "prover: %s: malformed C1 input: %s\n", path ? path : "(generated)",
			err);
		return PROVER_EXIT_INPUT_BAD;
	}
	return 0;
}

static void *job_main(void *arg)
{
	struct job *job = arg;
	struct pipeline *pl = job->pl;
	unsigned checked = 0, passed = 0;
	uint64_t digest;
	bool deferred_ok = true;
	int rc;

	track_stage(job->owner, STAGE_parse);
	rc = parse_input(job);
	if (!rc && job->c1.partitions != pl->parts_per_job) {
		fprintf(stderr, "prover: %s: malformed C1 input: its partition count changed while "
			"running (%u, then %u)\n", pl->cfg->input, pl->parts_per_job,
			job->c1.partitions);
		c1_release(&job->c1);
		rc = PROVER_EXIT_INPUT_BAD;
	}
	if (rc) {
		record_failure(pl, rc);
		/* its places in the permits' line must not hold up the jobs behind it */
		permits_skip(&pl->permits, job->first_ticket, pl->parts_per_job);
		track_stage(job->owner, STAGE_done);
		sem_post(&pl->job_slots);
		return NULL;
	}
	job->n_parts = job->c1.partitions;
	job->parts = calloc(job->n_parts, sizeof(*job->parts));
	if (!job->parts) {
		fprintf(stderr, "prover: out of memory for %u partitions\n", job->n_parts);
		exit(PROVER_EXIT_SYSTEM);
	}
	job->proof_bytes = (size_t)job->n_parts * PARTITION_PROOF_BYTES;
	job->proof = track_alloc(CLS_proof, job->proof_bytes, job->owner);

	for (unsigned i = 0; i < job->n_parts; i++) {
		struct partition *p = &job->parts[i];

		p->job = job;
		p->index = i;
		p->owner = owner_of_partition(job->seq, i);
		p->ticket = job->first_ticket + i;
		p->sampled = hcheck_sampled(pl->h_every, job->seq, job->n_parts, i);
		pthread_mutex_init(&p->lock, NULL);
		pthread_cond_init(&p->gpu_done_cond, NULL);
		start_thread(&p->thread, partition_main, p);
	}
	track_stage(job->owner, STAGE_assemble);
	for (unsigned i = 0; i < job->n_parts; i++) {
		pthread_join(job->parts[i].thread, NULL);
		checked += job->parts[i].sampled && !pl->model;
		passed += job->parts[i].h_ok;
		pthread_cond_destroy(&job->parts[i].gpu_done_cond);
		pthread_mutex_destroy(&job->parts[i].lock);
	}
	digest = rng_hash(0, job->proof, job->proof_bytes);

	pthread_mutex_lock(&pl->result_lock);
	/* the modelled device's samples: what to make again and what the proof says it gave */
	for (unsigned i = 0; pl->model && i < job->n_parts; i++) {
		struct hcheck_sample smp = {
			.owner = job->parts[i].owner,
			.seed = c1_partition_seed(&job->c1, i),
		};

		if (!job->parts[i].sampled)
			continue;
		memcpy(&smp.h_acc, job->proof + (size_t)i * PARTITION_PROOF_BYTES,
		       sizeof(smp.h_acc));
		deferred_ok = deferred_ok && hcheck_add(&pl->deferred, &smp);
	}
	pl->proofs_done++;
	pl->partitions_done += job->n_parts;
	pl->h_checked += checked;
	pl->h_passed += passed;
	pl->digest += rng_mix(digest); /* order-free: jobs finish in any order */
	pthread_mutex_unlock(&pl->result_lock);
	if (!deferred_ok) {
		fprintf(stderr, "prover: out of memory for the H check's samples\n");
		exit(PROVER_EXIT_SYSTEM);
	}
	track_free(job->proof, CLS_proof, job->proof_bytes);
	c1_release(&job->c1);
	track_stage(job->owner, STAGE_done);
	free(job->parts);
	sem_post(&pl->job_slots);
	return NULL;
}

/* process-wide parameters, loaded once: the SRS-like points and the NTT domain */
static void load_srs(struct pipeline *pl)
{
	const struct circuit_shape *s = &pl->shape;
	size_t table_bytes = ntt_table_bytes(pl->cfg->log_n);
	uint64_t state = 0x5352535f6c6f6164ull; /* fixed: proofs depend on it */

	pl->domain_tables = track_alloc(CLS_srs, table_bytes, 0);
	ntt_domain_init(&pl->dom, pl->cfg->log_n, pl->domain_tables);
	pl->srs_bytes = (s->n + s->n_aux) * sizeof(uint64_t);
	pl->srs = track_alloc(CLS_srs, pl->srs_bytes, 0);
	for (size_t i = 0; i < s->n + s->n_aux; i++)
		pl->srs[i] = gl_from_u64(rng_next(&state));
	pl->srs_h = pl->srs;
	pl->srs_b_g2 = pl->srs + s->n;
}

/*
 * The process-wide buffers, released as soon as the last job is done (and again, harmlessly,
 * at teardown): the modelled device's H checks come after, on their own plain memory, so
 * that a recording's last event is the pipeline's, not the check's.
 */
static void release_shared(struct pipeline *pl)
{
	if (pl->srs) {
		track_free(pl->srs, CLS_srs, pl->srs_bytes);
		track_free(pl->domain_tables, CLS_srs, ntt_table_bytes(pl->cfg->log_n));
		pl->srs = pl->domain_tables = NULL;
	}
	if (pl->input_text)
		c1_free_text(pl->input_text, pl->input_len);
	pl->input_text = NULL;
}

/* The input: a file is checked once up front (each job reads it again); else generated. */
static int prepare_input(struct pipeline *pl)
{
	const struct pipeline_config *cfg = pl->cfg;
	struct job check = { .pl = pl, .owner = 0 }; /* a job that only parses */
	char *text;
	size_t len;
	int rc;

	if (!cfg->input) {
		text = c1_generate(&cfg->gen, &len);
		if (!text) {
			fprintf(stderr, "prover: out of memory generating the C1 input\n");
			return PROVER_EXIT_SYSTEM;
		}
		pl->input_text = c1_copy_text(text, len, 0);
		pl->input_len = len;
		free(text);
	}
	rc = parse_input(&check);
	if (!rc) {
		pl->parts_per_job = check.c1.partitions;
		c1_release(&check.c1);
	}
	return rc;
}

static void *hold_untracked(size_t mb)
{
	size_t bytes = mb << 20;
	void *p;

	if (!mb)
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "prover: --untracked-mb %zu: %s\n", mb, strerror(errno));
		exit(PROVER_EXIT_SYSTEM);
	}
	memset(p, 0x5a, bytes); /* resident, and deliberately invisible to the probes */
	return p;
}

/* the announcement says MODELLED, what the duration derives from, and what is still real */
static void setup_host_model(struct pipeline *pl, struct pipeline_result *res)
{
	const struct pipeline_config *cfg = pl->cfg;
	const struct circuit_shape *s = &pl->shape;

	host_model_init(&pl->host_model, s->n_rows, cfg->synth_rounds, cfg->synth_kcps,
			cfg->synth_spread, cfg->model_seed);
	pl->host = &pl->host_model;
	snprintf(res->host_notice, sizeof(res->host_notice),
		 "synthesis on a MODELLED host (--host=model): %.3f ms per partition +-%u%% "
		 "(%zu constraints x %u rounds at %uk/s, seed %llu), each partition as if on "
		 "cores of its own; the real witness is still computed", pl->host->synth_ns / 1e6,
		 cfg->synth_spread, s->n_rows, cfg->synth_rounds, cfg->synth_kcps,
		 (unsigned long long)cfg->model_seed);
	fprintf(stderr, "prover: %s\n", res->host_notice);
}

/* the input first: a bad file is reported before anything else is said or loaded */
static int setup(struct pipeline *pl, struct pipeline_result *res)
{
	const struct pipeline_config *cfg = pl->cfg;
	const struct gpu_model_params device = {
		.mops = cfg->gpu_mops, .spread_pct = cfg->gpu_spread, .seed = cfg->model_seed
	};
	int rc = prepare_input(pl);

	if (rc)
		return rc;
	circuit_shape(cfg->log_n, &pl->shape);
	load_srs(pl);
	pl->gpu = gpu_backend__new(cfg->gpu, &pl->dom, cfg->gpu_rounds - 1, &device,
				   res->gpu_notice, sizeof(res->gpu_notice));
	fprintf(stderr, "prover: %s\n", res->gpu_notice);
	if (!pl->gpu)
		return PROVER_EXIT_NO_CUDA;
	if (cfg->host == HOST_MODEL)
		setup_host_model(pl, res);
	res->gpu_name = gpu_backend__name(pl->gpu);
	pl->model = gpu_backend__model(pl->gpu);
	pl->h_every = cfg->h_check_every ? cfg->h_check_every
					 : pl->model ? HCHECK_EVERY_MODEL : 1;
	if (getrandom(&pl->x_seed, sizeof(pl->x_seed), 0) != sizeof(pl->x_seed))
		pl->x_seed = rng_mix((uint64_t)(now_s() * 1e9));
	if (!permits_init(&pl->permits, cfg->pw) || !chan_init(&pl->chan, cfg->chan_cap)) {
		fprintf(stderr, "prover: out of memory for the permits and the GPU channel\n");
		exit(PROVER_EXIT_SYSTEM);
	}
	pthread_mutex_init(&pl->device_lock, NULL);
	pthread_cond_init(&pl->device_turn, NULL);
	pthread_mutex_init(&pl->result_lock, NULL);
	sem_init(&pl->job_slots, 0, cfg->jobs);
	return 0;
}

/* undoes what setup did, however far it got */
static void teardown(struct pipeline *pl)
{
	if (pl->gpu) {
		sem_destroy(&pl->job_slots);
		pthread_mutex_destroy(&pl->result_lock);
		pthread_cond_destroy(&pl->device_turn);
		pthread_mutex_destroy(&pl->device_lock);
		chan_destroy(&pl->chan);
		permits_destroy(&pl->permits);
		gpu_backend__free(pl->gpu);
	}
	hcheck_list_free(&pl->deferred);
	release_shared(pl);
}

/* waits for a job slot; false when asked to stop */
static bool admit(struct pipeline *pl)
{
	while (!*pl->cfg->stop) {
		if (!sem_wait(&pl->job_slots))
			return !*pl->cfg->stop;
		if (errno != EINTR)
			break;
	}
	return false;
}

/* the modelled parts' accounts, for the summary: every thread has stopped, none updates them */
static void collect_models(struct pipeline *pl, struct pipeline_result *res)
{
	if (pl->host) {
		res->host_modelled = true;
		res->host = *pl->host;
	}
	if (pl->model) {
		res->modelled = true;
		res->model = *pl->model;
	}
}

/*
 * The H checks' outcome: the inline ones (CUDA, CPU) are counted already; the modelled
 * device's samples are checked now, after wall_s, where their CPU work slows nothing, with
 * domain tables of their own (the pipeline's are released: release_shared).
 */
static int check_results(struct pipeline *pl, struct pipeline_result *res)
{
	struct ntt_domain dom;
	uint64_t *tables = NULL;
	const struct hcheck_ctx ctx = {
		.shape = &pl->shape,
		.dom = &dom,
		.synth_rounds = pl->cfg->synth_rounds,
		.extra_rounds = pl->cfg->gpu_rounds - 1,
		.x_seed = pl->x_seed,
	};
	double t0 = now_s();
	long passed = -1;

	res->h_every = pl->h_every;
	res->h_checked = pl->h_checked;
	res->h_passed = pl->h_passed;
	if (pl->model) {
		res->h_deferred = true;
		tables = malloc(ntt_table_bytes(pl->cfg->log_n));
		if (tables) {
			ntt_domain_init(&dom, pl->cfg->log_n, tables);
			passed = hcheck_run_deferred(&ctx, &pl->deferred);
		}
		free(tables);
		if (passed < 0) {
			fprintf(stderr, "prover: out of memory for the H check\n");
			return PROVER_EXIT_SYSTEM;
		}
		res->h_checked = pl->deferred.n;
		res->h_passed = passed;
		res->check_s = now_s() - t0;
	}
	return res->h_passed == res->h_checked ? PROVER_EXIT_OK : PROVER_EXIT_CHECK;
}

int pipeline_run(const struct pipeline_config *cfg, struct pipeline_result *res)
{
	struct pipeline pl = { .cfg = cfg };
	struct job *jobs = calloc(cfg->proofs, sizeof(*jobs));
	pthread_t *workers = calloc(cfg->gw, sizeof(*workers));
	void *untracked = hold_untracked(cfg->untracked_mb);
	unsigned started = 0;
	double t0 = now_s(), t1;
	uint64_t t1_ns;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!jobs || !workers) {
		fprintf(stderr, "prover: out of memory for %u jobs\n", cfg->proofs);
		exit(PROVER_EXIT_SYSTEM);
	}
	rc = setup(&pl, res);
	if (rc)
		goto out;

	t1 = now_s();
	t1_ns = model_now_ns();
	res->setup_s = t1 - t0;
	res->rss_before_mib = pipeline_peak_rss_mib();
	res->partition_bytes = 3 * partition_abc_bytes(&pl) +
			       (pl.shape.n_aux + pl.shape.n_input) * sizeof(uint64_t) +
			       pl.shape.density_bytes;
	for (unsigned i = 0; i < cfg->gw; i++)
		start_thread(&workers[i], gpu_worker_main, &pl);
	for (; started < cfg->proofs && admit(&pl); started++) {
		jobs[started].pl = &pl;
		jobs[started].seq = started + 1;
		jobs[started].owner = owner_of_job(started + 1);
		/* the first `jobs` are admitted at once, at the start, by the model's clock */
		jobs[started].admitted_t = started < cfg->jobs ? t1_ns : model_now_ns();
		/* its partitions queue for permits together, in admission order */
		jobs[started].first_ticket = permits_take_tickets(&pl.permits, pl.parts_per_job);
		start_thread(&jobs[started].thread, job_main, &jobs[started]);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(jobs[i].thread, NULL);
	chan_close(&pl.chan);
	for (unsigned i = 0; i < cfg->gw; i++)
		pthread_join(workers[i], NULL);
	res->wall_s = now_s() - t1;
	if (pl.model) /* the last region's end by the model's clock, since the first admission */
		res->model_makespan_s = (pl.model->free_at - t1_ns) / 1e9;
	res->proofs = pl.proofs_done;
	res->partitions = pl.partitions_done;
	res->digest = pl.digest;
	collect_models(&pl, res);
	release_shared(&pl);
	rc = pl.failure;
	if (!rc)
		rc = check_results(&pl, res);
out:
	teardown(&pl);
	if (untracked)
		munmap(untracked, cfg->untracked_mb << 20);
	free(workers);
	free(jobs);
	return rc;
}
