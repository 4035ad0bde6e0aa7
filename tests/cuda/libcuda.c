// SPDX-License-Identifier: BSD-2-Clause
/*
 * A stand-in for the CUDA driver library, libcuda.so.1, for machines without a GPU. It is a
 * TEST DOUBLE, not a driver: nothing here runs on a GPU.
 *
 * The memory functions inflight attaches to, with the driver API's signatures (cuda_api.h),
 * allocate for real (malloc) so that every pointer is distinct while live. A request above
 * STANDIN_MAX_BYTES (or of 0 bytes) fails as the driver's do, so that failed calls can be
 * counted; a free of NULL succeeds and frees nothing. They need no cuInit and no context
 * (the test programs call them bare).
 *
 * The calls the reference prover's CUDA path makes (prover/gpu_driver.c) are here too, so
 * that its real driver calls, PTX load, launches and copies run end to end without a GPU:
 * cuInit; one device, STANDIN_DEVICE_NAME, compute capability 9.0; its primary context,
 * current per thread as the driver's (copies, module loads and launches without one fail
 * with CUDA_ERROR_INVALID_CONTEXT); cuModuleLoadData of a PTX image (text starting with
 * PTX's header that declares the prover's four kernels, each with the parameter list this
 * file reads); cuModuleGetFunction for those four names (CUDA_ERROR_NOT_FOUND for any
 * other); device memory is host memory (cuMemAlloc's), so the copies are memcpy; and
 * cuLaunchKernel EMULATES the named kernel: it runs a host copy of it (the same
 * prover/gpu_plan.h per-thread functions the PTX was compiled from, here compiled for the
 * host) for every thread of the grid, gridDim x blockDim, one after the other, before it
 * returns, reading the kernel's parameters from kernelParams by the kernel's signature.
 * It emulates exactly these four kernels and nothing else: no other PTX is run. A module
 * load or a kernel's launches fail on demand (STANDIN_FAIL_ENV, cuda_api.h).
 *
 * No function calls another exported one: the real driver's entry points are not nested
 * either, and a test must count each call once.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_api.h"
#include "gpu_plan.h" /* prover/: the kernels' per-thread functions */

#define EXPORT __attribute__((visibility("default"), noinline))

static CUresult alloc_ptr(void **out, size_t bytes)
{
	void *p;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!bytes || bytes > STANDIN_MAX_BYTES)
		return bytes ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	p = malloc(bytes);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = p;
	return CUDA_SUCCESS;
}

static CUresult alloc_dev(CUdeviceptr *dptr, size_t bytes)
{
	void *p = NULL;
	CUresult r = alloc_ptr(dptr ? &p : NULL, bytes);

	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(unsigned long)p;
	return r;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return alloc_dev(dptr, bytesize);
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width_bytes,
				   size_t height, unsigned int element_size)
{
	/* rows padded to 512 bytes, as a device's texture alignment would */
	size_t p = (width_bytes + 511) & ~(size_t)511;
	CUresult r;

	if (!pitch || !height || (element_size != 4 && element_size != 8 && element_size != 16))
		return CUDA_ERROR_INVALID_VALUE;
	r = alloc_dev(dptr, p * height);
	if (r == CUDA_SUCCESS)
		*pitch = p;
	return r;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	(void)flags;
	return alloc_dev(dptr, bytesize);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
	(void)stream;
	return alloc_dev(dptr, bytesize);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					CUstream stream)
{
	(void)pool;
	(void)stream;
	return alloc_dev(dptr, bytesize);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	free((void *)(unsigned long)dptr);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	free((void *)(unsigned long)dptr);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	(void)flags;
	return alloc_ptr(pp, bytesize);
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return alloc_ptr(pp, bytesize);
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}

/* VMM handles: numbers, never addresses (the real driver's are opaque too) */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static CUmemGenericAllocationHandle next_handle = 0x100;

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			    const CUmemAllocationProp *prop, unsigned long long flags)
{
	(void)prop;
	if (!handle || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!size || size > STANDIN_MAX_BYTES)
		return size ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&handle_lock);
	*handle = next_handle++;
	pthread_mutex_unlock(&handle_lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	return handle ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* --- the prover's CUDA path: device, context, module, copies, launches ------------------- */

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
	  "a PTX JIT compilation failed" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	  "too many resources requested for launch" },
};

/* whether STANDIN_FAIL_ENV asks this call (and kernel) to fail */
static bool fail_asked(const char *call, const char *kernel)
{
	const char *want = getenv(STANDIN_FAIL_ENV);
	size_t n = strlen(call);

	if (!want || strncmp(want, call, n))
		return false;
	if (!kernel)
		return want[n] == 0;
	return want[n] == ':' && !strcmp(want + n + 1, kernel);
}

static int error_index(CUresult code)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == code)
			return (int)i;
	return -1;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **str)
{
	int i = error_index(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].name;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **str)
{
	int i = error_index(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].text;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static bool initialized; /* set by cuInit, never cleared */

EXPORT CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	__atomic_store_n(&initialized, true, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

static CUresult device_ok(CUdevice dev)
{
	if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
	if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = device_ok(ordinal);

	if (r == CUDA_SUCCESS && !device)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*device = 0;
	return r;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = device_ok(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", STANDIN_DEVICE_NAME);
	return CUDA_SUCCESS;
}

/* the launch limits are a real device's; the rest is what a Hopper part reports */
#define MAX_THREADS_PER_BLOCK 1024
#define MAX_GRID_X 0x7fffffffu

EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult r = device_ok(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
		*value = MAX_THREADS_PER_BLOCK;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		*value = (int)MAX_GRID_X;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*value = 132;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*value = 9;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*value = 0;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE; /* not emulated */
	}
}

/* the one context, the device's primary one, current per thread */
struct CUctx_st {
	int device;
};
static struct CUctx_st primary_ctx;
static __thread CUcontext current_ctx;

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = device_ok(dev);

	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*pctx = &primary_ctx;
	return r;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx && ctx != &primary_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

static CUresult need_ctx(void)
{
	if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	return current_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

EXPORT CUresult cuCtxSynchronize(void)
{
	return need_ctx(); /* every launch has run to its end before it returned */
}

/* the kernels: what each thread of prover/gpu_kernels.cu does, with the same bounds */
static void *dev_ptr(void *param)
{
	return (void *)(uintptr_t)*(const CUdeviceptr *)param;
}

static void run_bit_reverse(void **p, size_t i)
{
	unsigned log_n = *(const unsigned *)p[1];

	if (i < ((size_t)1 << log_n))
		gpu_bit_reverse_thread(dev_ptr(p[0]), log_n, i);
}

static void run_butterfly(void **p, size_t t)
{
	unsigned log_n = *(const unsigned *)p[2], log_half = *(const unsigned *)p[3];

	if (t < ((size_t)1 << (log_n - 1)))
		gpu_butterfly_thread(dev_ptr(p[0]), dev_ptr(p[1]), log_n, log_half, t);
}

static void run_scale(void **p, size_t j)
{
	if (j < *(const size_t *)p[1])
		gpu_scale_thread(dev_ptr(p[0]), *(const uint64_t *)p[2], *(const uint64_t *)p[3],
				 j);
}

static void run_pointwise_h(void **p, size_t i)
{
	if (i < *(const size_t *)p[3])
		gpu_pointwise_h_thread(dev_ptr(p[0]), dev_ptr(p[1]), dev_ptr(p[2]),
				       *(const uint64_t *)p[4], i);
}

#define MAX_PARAMS 5
static const struct kernel {
	const char *name;
	unsigned nparams;
	unsigned bits[MAX_PARAMS]; /* each parameter's width, as the PTX must declare it */
	void (*run)(void **params, size_t thread_index);
} kernels[] = {
	{ "k_bit_reverse", 2, { 64, 32 }, run_bit_reverse },
	{ "k_butterfly", 4, { 64, 64, 32, 32 }, run_butterfly },
	{ "k_scale", 4, { 64, 64, 64, 64 }, run_scale },
	{ "k_pointwise_h", 5, { 64, 64, 64, 64, 64 }, run_pointwise_h },
};
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

/* a function handle is its kernel; handed out by cuModuleGetFunction only */
struct CUfunc_st {
	const struct kernel *k;
};
static const struct CUfunc_st functions[] = {
	{ &kernels[0] }, { &kernels[1] }, { &kernels[2] }, { &kernels[3] },
};
_Static_assert(sizeof(functions) / sizeof(functions[0]) == NKERNELS, "a handle a kernel");

struct CUmod_st {
	unsigned magic;
};
#define MODULE_MAGIC 0x9e7a0d01u

static const char *skip_space(const char *s)
{
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
		if (s[0] != '/' || s[1] != '/')
			return s;
		while (*s && *s != '\n') /* a comment line, as nvcc's header is */
			s++;
	}
}

/* ".entry NAME(" with the parameters this file reads: ".param .u64 NAME_param_0," ... */
static bool entry_matches(const char *ptx, const struct kernel *k)
{
	char want[64];
	const char *s, *end;
	unsigned n = 0;

	snprintf(want, sizeof(want), ".entry %s(", k->name);
	s = strstr(ptx, want);
	if (!s)
		return false;
	s += strlen(want);
	end = strchr(s, ')');
	if (!end)
		return false;
	while ((s = strstr(s, ".param")) && s < end) {
		unsigned bits = 0;
		char type = 0;

		s = skip_space(s + strlen(".param"));
		if (sscanf(s, ".%c%u", &type, &bits) != 2 || n == MAX_PARAMS ||
		    !strchr("usb", type) || bits != k->bits[n])
			return false;
		n++;
	}
	return n == k->nparams;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	static struct CUmod_st the_module = { MODULE_MAGIC };
	const char *ptx = image, *s;
	CUresult r = need_ctx();

	if (r != CUDA_SUCCESS)
		return r;
	if (!module || !ptx)
		return CUDA_ERROR_INVALID_VALUE;
	if (fail_asked("cuModuleLoadData", NULL))
		return CUDA_ERROR_INVALID_PTX;
	/* PTX is text: its first directive is .version, then .target and .address_size */
	s = skip_space(ptx);
	if (strncmp(s, ".version ", 9) || !strstr(s, "\n.target ") ||
	    !strstr(s, "\n.address_size 64")) {
		fprintf(stderr, "libcuda stand-in: cuModuleLoadData: not a PTX image\n");
		return CUDA_ERROR_INVALID_IMAGE;
	}
	for (size_t i = 0; i < NKERNELS; i++)
		if (!entry_matches(s, &kernels[i])) {
			fprintf(stderr, "libcuda stand-in: cuModuleLoadData: the PTX has no kernel "
				"%s with the %u parameters it emulates\n", kernels[i].name,
				kernels[i].nparams);
			return CUDA_ERROR_INVALID_PTX;
		}
	*module = &the_module;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	CUresult r = need_ctx();

	if (r != CUDA_SUCCESS)
		return r;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!hmod || hmod->magic != MODULE_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	for (size_t i = 0; i < NKERNELS; i++)
		if (!strcmp(name, kernels[i].name)) {
			*hfunc = (CUfunction)&functions[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

/* device memory is host memory: cuMemAlloc's */
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
	CUresult r = need_ctx();

	if (r != CUDA_SUCCESS)
		return r;
	if (bytes && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, bytes);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
	CUresult r = need_ctx();

	if (r != CUDA_SUCCESS)
		return r;
	if (bytes && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	return CUDA_SUCCESS;
}

/* every thread of the grid, in order; each finds its index as the kernels do, from x */
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y,
			       unsigned int grid_z, unsigned int block_x, unsigned int block_y,
			       unsigned int block_z, unsigned int shared_bytes, CUstream stream,
			       void **params, void **extra)
{
	CUresult r = need_ctx();
	const struct kernel *k;

	if (r != CUDA_SUCCESS)
		return r;
	if (!f || f < functions || f >= functions + NKERNELS || stream)
		return CUDA_ERROR_INVALID_HANDLE; /* the default stream only */
	k = f->k;
	if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z ||
	    grid_x > MAX_GRID_X || grid_y > 65535 || grid_z > 65535 ||
	    (unsigned long long)block_x * block_y * block_z > MAX_THREADS_PER_BLOCK ||
	    shared_bytes || !params || extra)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < k->nparams; i++)
		if (!params[i])
			return CUDA_ERROR_INVALID_VALUE;
	if (fail_asked("cuLaunchKernel", k->name))
		return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	for (unsigned long long zy = 0; zy < (unsigned long long)grid_z * grid_y; zy++)
		for (size_t bx = 0; bx < grid_x; bx++)
			for (unsigned long long tzy = 0;
			     tzy < (unsigned long long)block_z * block_y; tzy++)
				for (size_t tx = 0; tx < block_x; tx++)
					k->run(params, bx * block_x + tx);
	return CUDA_SUCCESS;
}
