/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CUDA side of the GPU stage, as plain C calls (prover/gpu_driver.c on the driver API,
 * with the kernels of prover/gpu_kernels.cu; prover/gpu_nocuda.c stands in when the build
 * has no nvcc or runs sanitized). Tracking stays on the C side.
 * Every call returns 0 on success, or -1 with one line in `err`.
 */
#ifndef PROVER_GPU_CUDA_H
#define PROVER_GPU_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One NTT domain and one H computation, with device buffers the caller allocated. */
struct cuda_h_job {
	unsigned log_n;
	uint64_t n_inv, shift, shift_inv, z_inv;
	const uint64_t *tw_dev, *tw_inv_dev; /* device twiddle tables, n/2 each */
	uint64_t *dev_a, *dev_b, *dev_c;     /* n each */
	uint64_t *host_a;		     /* in: a's evaluations; out: H's coefficients */
	const uint64_t *host_b, *host_c;
	unsigned extra_rounds;		     /* forward+inverse round trips of H */
};

/* 1 when a CUDA device is usable (desc names it), 0 when not (desc says why). */
int cuda_probe(char *desc, size_t len);

int cuda_malloc(void **dev, size_t bytes, char *err, size_t len);
void cuda_free(void *dev);
int cuda_upload(void *dev, const void *host, size_t bytes, char *err, size_t len);

/* The H recipe on the device: iNTT, coset NTT, pointwise (ab - c)/Z, coset iNTT. */
int cuda_h(const struct cuda_h_job *job, char *err, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PROVER_GPU_CUDA_H */
