// SPDX-License-Identifier: BSD-2-Clause
/*
 * A stand-in for the CUDA driver library, libcuda.so.1, for machines without a GPU: the
 * memory functions inflight attaches to, with the driver API's signatures (cuda_api.h),
 * allocating for real (malloc) so that every pointer is distinct while live. A request above
 * STANDIN_MAX_BYTES (or of 0 bytes) fails as the driver's do, so that failed calls can be
 * counted; a free of NULL succeeds and frees nothing. No function calls another exported
 * one: the real driver's entry points are not nested either, and a test must count each
 * call once.
 */
#include <pthread.h>
#include <stdlib.h>
#include "cuda_api.h"

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
