// SPDX-License-Identifier: BSD-2-Clause
/*
 * The GPU stage on CUDA through the driver API, opened at run time: libcuda.so.1 with
 * dlopen(), its entry points by the versioned names it exports, the kernels from the PTX
 * embedded in the prover (prover/gpu_kernels.cu, prover/gpu_ptx.S), which the driver
 * JIT-compiles for the device it has. No CUDA library is linked: where there is no driver
 * the probe says so and the prover falls back (or refuses --gpu=cuda) as gpu.c decides.
 * The prototypes are the driver's own (cuda.h, for its types and declarations only).
 * Every failure is one line in `err` naming the call and the CUresult's name.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <cuda.h>
#include "gpu_cuda.h"
#include "gpu_plan.h"

#define THREADS 256 /* threads a block, every launch */
#define DRIVER_LIB "libcuda.so.1"

extern const char gpu_kernels_ptx[]; /* prover/gpu_ptx.S */

/* what the prover calls, by the names the library exports (cuda.h maps the plain names of
 * the memory and copy calls to these _v2 entry points) */
#define DRIVER_CALLS(X)                                                                        \
	X(cuGetErrorName)                                                                      \
	X(cuGetErrorString)                                                                    \
	X(cuInit)                                                                              \
	X(cuDeviceGetCount)                                                                    \
	X(cuDeviceGet)                                                                         \
	X(cuDeviceGetName)                                                                     \
	X(cuDeviceGetAttribute)                                                                \
	X(cuDevicePrimaryCtxRetain)                                                            \
	X(cuCtxSetCurrent)                                                                     \
	X(cuModuleLoadData)                                                                    \
	X(cuModuleGetFunction)                                                                 \
	X(cuMemAlloc_v2)                                                                       \
	X(cuMemFree_v2)                                                                        \
	X(cuMemcpyHtoD_v2)                                                                     \
	X(cuMemcpyDtoH_v2)                                                                     \
	X(cuLaunchKernel)                                                                      \
	X(cuCtxSynchronize)

static struct {
#define DRIVER_POINTER(name) __typeof__(name) *name;
	DRIVER_CALLS(DRIVER_POINTER)
#undef DRIVER_POINTER
} drv;

enum { K_BIT_REVERSE, K_BUTTERFLY, K_SCALE, K_POINTWISE_H, K_COUNT };
static const char *const kernel_names[K_COUNT] = {
	"k_bit_reverse", "k_butterfly", "k_scale", "k_pointwise_h",
};

/* set once, by the first probe */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static struct {
	bool usable;
	char desc[256];
	CUcontext ctx;
	CUmodule module;
	CUfunction kernel[K_COUNT];
} dev;

/* "CALL: CUDA_ERROR_NAME (the driver's text)" */
static void describe(char *buf, size_t len, const char *prefix, const char *call, CUresult r)
{
	const char *name = NULL, *text = NULL;

	if (drv.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = NULL;
	if (drv.cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
		text = NULL;
	if (name)
		snprintf(buf, len, "%s%s: %s (%s)", prefix, call, name, text ? text : "no text");
	else
		snprintf(buf, len, "%s%s: CUresult %d", prefix, call, (int)r);
}

static int fail(CUresult r, const char *call, char *err, size_t len)
{
	describe(err, len, "CUDA ", call, r);
	return -1;
}

#define CU_TRY(call, name)                                                                     \
	do {                                                                                   \
		CUresult r_ = (call);                                                          \
		if (r_ != CUDA_SUCCESS)                                                        \
			return fail(r_, name, err, len);                                       \
	} while (0)

/* the library and every entry point, or why not */
static bool open_driver(char *desc, size_t len)
{
	void *lib = dlopen(DRIVER_LIB, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(desc, len, "no CUDA driver: %s", dlerror());
		return false;
	}
#define DRIVER_LOOKUP(name)                                                                    \
	drv.name = (__typeof__(name) *)dlsym(lib, #name);                                     \
	if (!drv.name) {                                                                       \
		snprintf(desc, len, "no usable CUDA driver: %s has no %s", DRIVER_LIB, #name); \
		return false;                                                                  \
	}
	DRIVER_CALLS(DRIVER_LOOKUP)
#undef DRIVER_LOOKUP
	return true; /* the library stays loaded for the process's life */
}

#define PROBE_TRY(call, name)                                                                  \
	do {                                                                                   \
		CUresult r_ = (call);                                                          \
		if (r_ != CUDA_SUCCESS) {                                                      \
			describe(dev.desc, sizeof(dev.desc), prefix, name, r_);                \
			return;                                                                \
		}                                                                              \
	} while (0)

/* device 0, its primary context, the module and its kernels */
static void probe(void)
{
	const char *prefix = "no CUDA device: ";
	char name[128] = "";
	int count = 0, major = 0, minor = 0;
	CUdevice d;

	if (!open_driver(dev.desc, sizeof(dev.desc)))
		return;
	PROBE_TRY(drv.cuInit(0), "cuInit");
	PROBE_TRY(drv.cuDeviceGetCount(&count), "cuDeviceGetCount");
	if (!count) {
		snprintf(dev.desc, sizeof(dev.desc), "no CUDA device found");
		return;
	}
	prefix = "CUDA device 0 unusable: ";
	PROBE_TRY(drv.cuDeviceGet(&d, 0), "cuDeviceGet");
	PROBE_TRY(drv.cuDeviceGetName(name, sizeof(name), d), "cuDeviceGetName");
	PROBE_TRY(drv.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d),
		  "cuDeviceGetAttribute");
	PROBE_TRY(drv.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d),
		  "cuDeviceGetAttribute");
	PROBE_TRY(drv.cuDevicePrimaryCtxRetain(&dev.ctx, d), "cuDevicePrimaryCtxRetain");
	PROBE_TRY(drv.cuCtxSetCurrent(dev.ctx), "cuCtxSetCurrent");
	/* the JIT compilation of the PTX for this device: a driver older than the nvcc that
	 * wrote it says CUDA_ERROR_UNSUPPORTED_PTX_VERSION here */
	PROBE_TRY(drv.cuModuleLoadData(&dev.module, gpu_kernels_ptx), "cuModuleLoadData");
	for (int k = 0; k < K_COUNT; k++)
		PROBE_TRY(drv.cuModuleGetFunction(&dev.kernel[k], dev.module, kernel_names[k]),
			  "cuModuleGetFunction");
	snprintf(dev.desc, sizeof(dev.desc), "CUDA device 0, %s (sm_%d%d)", name, major, minor);
	dev.usable = true;
}

int cuda_probe(char *desc, size_t len)
{
	pthread_once(&probe_once, probe);
	snprintf(desc, len, "%s", dev.desc);
	return dev.usable;
}

/* the calling thread works in the device's primary context (a context is current per
 * thread: the GPU workers are not the thread that probed) */
static __thread bool ctx_bound;

static int bind_ctx(char *err, size_t len)
{
	if (!dev.usable) {
		snprintf(err, len, "CUDA: no usable device (%s)", dev.desc);
		return -1;
	}
	if (!ctx_bound) {
		CU_TRY(drv.cuCtxSetCurrent(dev.ctx), "cuCtxSetCurrent");
		ctx_bound = true;
	}
	return 0;
}

static CUdeviceptr dptr(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

int cuda_malloc(void **p, size_t bytes, char *err, size_t len)
{
	CUdeviceptr d = 0;

	*p = NULL;
	if (bind_ctx(err, len))
		return -1;
	CU_TRY(drv.cuMemAlloc_v2(&d, bytes), "cuMemAlloc_v2");
	*p = (void *)(uintptr_t)d;
	return 0;
}

void cuda_free(void *p)
{
	char err[8];

	if (p && !bind_ctx(err, sizeof(err)))
		drv.cuMemFree_v2(dptr(p));
}

int cuda_upload(void *p, const void *host, size_t bytes, char *err, size_t len)
{
	if (bind_ctx(err, len))
		return -1;
	CU_TRY(drv.cuMemcpyHtoD_v2(dptr(p), host, bytes), "cuMemcpyHtoD_v2");
	return 0;
}

/* gpu_plan.h's passes as launches on the default stream; the first failure stops the rest */
struct launches {
	unsigned log_n;
	CUresult r;
	int failed; /* the kernel whose launch failed */
};

static unsigned blocks_for(size_t items)
{
	return (unsigned)((items + THREADS - 1) / THREADS);
}

static void launch(struct launches *l, int k, size_t items, void **params)
{
	if (l->r != CUDA_SUCCESS)
		return;
	l->r = drv.cuLaunchKernel(dev.kernel[k], blocks_for(items), 1, 1, THREADS, 1, 1, 0, NULL,
				  params, NULL);
	l->failed = k;
}

static void launch_bit_reverse(void *ctx, uint64_t *v)
{
	struct launches *l = ctx;
	CUdeviceptr dv = dptr(v);
	unsigned log_n = l->log_n;
	void *params[] = { &dv, &log_n };

	launch(l, K_BIT_REVERSE, (size_t)1 << log_n, params);
}

static void launch_butterflies(void *ctx, uint64_t *v, const uint64_t *tw, unsigned log_half)
{
	struct launches *l = ctx;
	CUdeviceptr dv = dptr(v), dtw = dptr(tw);
	unsigned log_n = l->log_n;
	void *params[] = { &dv, &dtw, &log_n, &log_half };

	launch(l, K_BUTTERFLY, (size_t)1 << (log_n - 1), params);
}

static void launch_scale(void *ctx, uint64_t *v, uint64_t first, uint64_t step)
{
	struct launches *l = ctx;
	CUdeviceptr dv = dptr(v);
	size_t n = (size_t)1 << l->log_n;
	void *params[] = { &dv, &n, &first, &step };

	launch(l, K_SCALE, n, params);
}

static void launch_pointwise_h(void *ctx, uint64_t *a, const uint64_t *b, const uint64_t *c,
			       uint64_t z_inv)
{
	struct launches *l = ctx;
	CUdeviceptr da = dptr(a), db = dptr(b), dc = dptr(c);
	size_t n = (size_t)1 << l->log_n;
	void *params[] = { &da, &db, &dc, &n, &z_inv };

	launch(l, K_POINTWISE_H, n, params);
}

static const struct gpu_ops driver_ops = {
	launch_bit_reverse, launch_butterflies, launch_scale, launch_pointwise_h,
};

int cuda_h(const struct cuda_h_job *job, char *err, size_t len)
{
	size_t bytes = ((size_t)1 << job->log_n) * sizeof(uint64_t);
	struct launches l = { .log_n = job->log_n, .r = CUDA_SUCCESS };
	struct gpu_plan plan = {
		.log_n = job->log_n,
		.n_inv = job->n_inv,
		.shift = job->shift,
		.shift_inv = job->shift_inv,
		.z_inv = job->z_inv,
		.tw = job->tw_dev,
		.tw_inv = job->tw_inv_dev,
		.extra_rounds = job->extra_rounds,
	};
	char call[64];

	if (bind_ctx(err, len))
		return -1;
	CU_TRY(drv.cuMemcpyHtoD_v2(dptr(job->dev_a), job->host_a, bytes), "cuMemcpyHtoD_v2");
	CU_TRY(drv.cuMemcpyHtoD_v2(dptr(job->dev_b), job->host_b, bytes), "cuMemcpyHtoD_v2");
	CU_TRY(drv.cuMemcpyHtoD_v2(dptr(job->dev_c), job->host_c, bytes), "cuMemcpyHtoD_v2");
	gpu_plan_h(&driver_ops, &l, &plan, job->dev_a, job->dev_b, job->dev_c);
	if (l.r != CUDA_SUCCESS) {
		snprintf(call, sizeof(call), "cuLaunchKernel (%s)", kernel_names[l.failed]);
		return fail(l.r, call, err, len);
	}
	/* a kernel's own failure surfaces here */
	CU_TRY(drv.cuCtxSynchronize(), "cuCtxSynchronize");
	CU_TRY(drv.cuMemcpyDtoH_v2(job->host_a, dptr(job->dev_a), bytes), "cuMemcpyDtoH_v2");
	return 0;
}
