// SPDX-License-Identifier: BSD-2-Clause
/* Chooses the GPU stage's implementation and runs the H computation on it. */
#include <stdio.h>
#include <stdlib.h>
#include "gpu.h"
#include "gpu_cuda.h"
#include "hpoly.h"
#include "track.h"

struct gpu_backend {
	bool cuda, modelled;
	struct gpu_model model;
	const struct ntt_domain *d;
	void *tw_dev; /* device copy of the twiddle tables: process-wide, class srs */
	size_t tw_bytes;
	uint64_t z_inv;
};

/* the announcement says MODELLED, what the kernel time derives from, and where H goes */
static struct gpu_backend *model_backend(struct gpu_backend *be, unsigned extra_rounds,
					 const struct gpu_model_params *mp, const char *why,
					 char *notice, size_t len)
{
	const struct ntt_domain *d = be->d;

	gpu_model_init(&be->model, d->log_n, extra_rounds, mp);
	be->modelled = true;
	snprintf(notice, len, "GPU stage on a MODELLED device (%s): %.3f ms of kernel time per "
		 "partition +-%u%% (%.3g Mop at %u Mop/s, seed %llu), no CPU used; H is checked "
		 "after the run", why, be->model.kernel_ns / 1e6, mp->spread_pct,
		 gpu_model_ops(d->log_n, extra_rounds) / 1e6, mp->mops,
		 (unsigned long long)mp->seed);
	return be;
}

struct gpu_backend *gpu_backend__new(enum gpu_mode mode, const struct ntt_domain *d,
				     unsigned extra_rounds, const struct gpu_model_params *model,
				     char *notice, size_t len)
{
	struct gpu_backend *be = calloc(1, sizeof(*be));
	char why[256], err[200];

	if (!be) {
		snprintf(notice, len, "out of memory");
		return NULL;
	}
	be->d = d;
	be->z_inv = hpoly_z_inv_on_coset(d);
	if (mode == GPU_CPU) {
		snprintf(notice, len, "GPU stage on the CPU (--gpu=cpu)");
		return be;
	}
	if (mode == GPU_MODEL)
		return model_backend(be, extra_rounds, model, "--gpu=model", notice, len);
	if (!cuda_probe(why, sizeof(why))) {
		if (mode == GPU_CUDA) {
			snprintf(notice, len, "--gpu=cuda: %s", why);
			free(be);
			return NULL;
		}
		return model_backend(be, extra_rounds, model, why, notice, len);
	}
	/* the tables are contiguous: tw, then tw_inv (ntt_domain_init) */
	be->tw_bytes = ntt_table_bytes(d->log_n);
	if (cuda_malloc(&be->tw_dev, be->tw_bytes, err, sizeof(err)) ||
	    cuda_upload(be->tw_dev, d->tw, be->tw_bytes, err, sizeof(err))) {
		cuda_free(be->tw_dev);
		if (mode == GPU_CUDA) {
			snprintf(notice, len, "--gpu=cuda: %s", err);
			free(be);
			return NULL;
		}
		snprintf(why, sizeof(why), "CUDA unusable: %s", err);
		return model_backend(be, extra_rounds, model, why, notice, len);
	}
	track_note_alloc(be->tw_dev, CLS_srs, be->tw_bytes, 0);
	be->cuda = true;
	snprintf(notice, len, "GPU stage on %s", why);
	return be;
}

const char *gpu_backend__name(const struct gpu_backend *be)
{
	return be->cuda ? "cuda" : be->modelled ? "model" : "cpu";
}

struct gpu_model *gpu_backend__model(struct gpu_backend *be)
{
	return be->modelled ? &be->model : NULL;
}

static bool cuda_h_call(struct gpu_backend *be, uint64_t owner, uint64_t *a, const uint64_t *b,
			const uint64_t *c, unsigned extra_rounds, char *err, size_t len)
{
	size_t bytes = be->d->n * sizeof(uint64_t);
	void *dev[3] = { NULL, NULL, NULL };
	struct cuda_h_job job;
	bool ok = false;
	int k;

	for (k = 0; k < 3; k++) {
		if (cuda_malloc(&dev[k], bytes, err, len))
			goto out;
		track_note_alloc(dev[k], CLS_gpu_abc, bytes, owner);
	}
	job = (struct cuda_h_job){
		.log_n = be->d->log_n,
		.n_inv = be->d->n_inv,
		.shift = be->d->shift,
		.shift_inv = be->d->shift_inv,
		.z_inv = be->z_inv,
		.tw_dev = be->tw_dev,
		.tw_inv_dev = (const uint64_t *)be->tw_dev + be->tw_bytes / 2 / sizeof(uint64_t),
		.dev_a = dev[0],
		.dev_b = dev[1],
		.dev_c = dev[2],
		.host_a = a,
		.host_b = b,
		.host_c = c,
		.extra_rounds = extra_rounds,
	};
	ok = cuda_h(&job, err, len) == 0;
out:
	while (k-- > 0) {
		track_note_free(dev[k], CLS_gpu_abc, bytes);
		cuda_free(dev[k]);
	}
	return ok;
}

bool gpu_backend__h(struct gpu_backend *be, uint64_t owner, uint64_t *a, uint64_t *b,
		    uint64_t *c, unsigned extra_rounds, char *err, size_t len)
{
	if (be->cuda)
		return cuda_h_call(be, owner, a, b, c, extra_rounds, err, len);
	hpoly_compute(be->d, a, b, c);
	hpoly_round_trips(be->d, a, extra_rounds);
	return true;
}

void gpu_backend__free(struct gpu_backend *be)
{
	if (!be)
		return;
	if (be->cuda) {
		track_note_free(be->tw_dev, CLS_srs, be->tw_bytes);
		cuda_free(be->tw_dev);
	}
	free(be);
}
