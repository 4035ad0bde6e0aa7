/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The part of the CUDA driver API that inflight attaches to, and the part the reference
 * prover's CUDA path calls (prover/gpu_driver.c), declared from its public documentation
 * (types as their sizes are on x86_64): what the stand-in libcuda.so.1 (libcuda.c) exports
 * and the test programs call. Not NVIDIA's header: the prover is built against that one,
 * so a prototype wrong here shows as a failed run of the prover on the stand-in.
 */
#ifndef INFLIGHT_TEST_CUDA_API_H
#define INFLIGHT_TEST_CUDA_API_H

#include <stddef.h>

typedef int CUresult; /* an enum in the driver's header: 0 is CUDA_SUCCESS */
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_INVALID_IMAGE 200
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_PTX 218
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES 701

typedef unsigned long long CUdeviceptr; /* the _v2 ABI: 64 bits */
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUmemAllocationProp_st CUmemAllocationProp; /* only passed by pointer here */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef int CUdevice_attribute; /* an enum in the driver's header; the values used: */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X 2
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X 5
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

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

/* the rest of what the prover's CUDA path calls: initialization, device 0, its primary
 * context, a module from PTX, copies, launches */
CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorString(CUresult error, const char **str);
CUresult cuInit(unsigned int flags);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxSynchronize(void);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y,
			unsigned int grid_z, unsigned int block_x, unsigned int block_y,
			unsigned int block_z, unsigned int shared_bytes, CUstream stream,
			void **params, void **extra);

/* the stand-in's own rule, for the tests: a request above this fails, out of memory */
#define STANDIN_MAX_BYTES (1ull << 30)
/* its one device */
#define STANDIN_DEVICE_NAME "inflight stand-in"
/* a failure on demand, for the tests of a caller's error path: "cuModuleLoadData" fails
 * every module load (CUDA_ERROR_INVALID_PTX), "cuLaunchKernel:NAME" every launch of kernel
 * NAME (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES). The memory calls never read it. */
#define STANDIN_FAIL_ENV "INFLIGHT_STANDIN_FAIL"

#endif /* INFLIGHT_TEST_CUDA_API_H */
