/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The GPU stage's compute: CUDA kernels when a device is present, the CPU implementation
 * otherwise (chosen once at start-up, announced in one line). The caller holds the device
 * lock around gpu_backend__h: that is the "CUDA region" cuzk's mutex covers.
 */
#ifndef PROVER_GPU_H
#define PROVER_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ntt.h"

enum gpu_mode { GPU_AUTO, GPU_CPU, GPU_CUDA };

struct gpu_backend;

/*
 * GPU_AUTO: CUDA when usable, else the CPU. GPU_CUDA: NULL when no device (`notice` says
 * why). The domain must outlive the backend. `notice` receives the one-line announcement.
 */
struct gpu_backend *gpu_backend__new(enum gpu_mode mode, const struct ntt_domain *d,
				     char *notice, size_t len);

/* "cuda" or "cpu" */
const char *gpu_backend__name(const struct gpu_backend *be);

/*
 * a, b, c (host, evaluations on the domain) -> H's coefficients in a; b and c may be
 * clobbered. On CUDA, device copies of a, b, c (class gpu_abc) belong to `owner` for the
 * call. Returns false with one line in `err` when CUDA fails.
 */
bool gpu_backend__h(struct gpu_backend *be, uint64_t owner, uint64_t *a, uint64_t *b,
		    uint64_t *c, unsigned extra_rounds, char *err, size_t len);

void gpu_backend__free(struct gpu_backend *be);

#endif /* PROVER_GPU_H */
