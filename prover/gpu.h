/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The GPU stage's implementation, chosen once at start-up and announced in one line: CUDA
 * kernels when a device is present, else a MODELLED device (gpu_model.h: kernel time from
 * the work, no CPU used), or on request the H computation on the CPU. The caller holds the
 * device lock around gpu_backend__h and the model's region: that is the "CUDA region"
 * cuzk's mutex covers.
 */
#ifndef PROVER_GPU_H
#define PROVER_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpu_model.h"
#include "ntt.h"

enum gpu_mode { GPU_AUTO, GPU_CPU, GPU_CUDA, GPU_MODEL };

struct gpu_backend;

/*
 * GPU_AUTO: CUDA when usable, else the modelled device. GPU_CUDA: NULL when no device
 * (`notice` says why). The domain must outlive the backend; the model times `extra_rounds`
 * round trips with `model`'s rate, spread and seed. `notice` receives the one-line
 * announcement.
 */
struct gpu_backend *gpu_backend__new(enum gpu_mode mode, const struct ntt_domain *d,
				     unsigned extra_rounds, const struct gpu_model_params *model,
				     char *notice, size_t len);

/* "cuda", "cpu" or "model" */
const char *gpu_backend__name(const struct gpu_backend *be);

/* The modelled device, or NULL when the GPU stage computes H (CUDA or CPU). */
struct gpu_model *gpu_backend__model(struct gpu_backend *be);

/*
 * CUDA or CPU: a, b, c (host, evaluations on the domain) -> H's coefficients in a; b and c
 * may be clobbered. On CUDA, device copies of a, b, c (class gpu_abc) belong to `owner` for the
 * call. Returns false with one line in `err` when CUDA fails.
 */
bool gpu_backend__h(struct gpu_backend *be, uint64_t owner, uint64_t *a, uint64_t *b,
		    uint64_t *c, unsigned extra_rounds, char *err, size_t len);

void gpu_backend__free(struct gpu_backend *be);

#endif /* PROVER_GPU_H */
