/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The part of the CUDA driver API that inflight attaches to, declared from its public
 * documentation (types as their sizes are on x86_64): what the stand-in libcuda.so.1
 * (libcuda.c) exports and the test programs call. Not NVIDIA's header.
 */
#ifndef INFLIGHT_TEST_CUDA_API_H
#define INFLIGHT_TEST_CUDA_API_H

#include <stddef.h>

typedef int CUresult; /* an enum in the driver's header: 0 is CUDA_SUCCESS */
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2

typedef unsigned long long CUdeviceptr; /* the _v2 ABI: 64 bits */
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUmemAllocationProp_st CUmemAllocationProp; /* only passed by pointer here */

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width_bytes, size_t height,
			    unsigned int element_size);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				 CUstream stream);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult cuMemFreeHost(void *p);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);

/* the stand-in's own rule, for the tests: a request above this fails, out of memory */
#define STANDIN_MAX_BYTES (1ull << 30)

#endif /* INFLIGHT_TEST_CUDA_API_H */
