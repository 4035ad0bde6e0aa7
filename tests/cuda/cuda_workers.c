// SPDX-License-Identifier: BSD-2-Clause
/*
 * A program with the contract that also allocates through the CUDA driver API (the stand-in
 * libcuda.so.1, cuda_api.h), linked or (-DCUDA_DLOPEN) loaded with dlopen() after its start.
 * Every number tests/t_cuda.sh asserts follows from this file:
 *   main thread, no owner named: cuMemAllocPitch 1000 x 10 rows (pitch 1024: 10240 bytes,
 *   kept), cuMemCreate 2 MiB + cuMemRelease, cuMemAllocAsync 3000 + cuMemFreeAsync,
 *   cuMemAllocFromPoolAsync 5000 + cuMemFree, cuMemHostAlloc 6000 + cuMemFreeHost,
 *   cuMemFree(0), and one cuMemCreate too big (failed);
 *   THREADS workers, worker t owning owner t+1: stage load; buf_alloc input 1000 bytes;
 *   cuMemAlloc (t+1) MiB; cuMemAllocHost 4096; stage gpu; cuMemAllocManaged 8192;
 *   cuMemAlloc 2 GiB (failed); all wait for each other (the peak: everything above held,
 *   every owner in gpu); then cuMemFreeHost, cuMemFree of the managed memory, buf_free of
 *   the input; the device memory stays, with its owner in gpu.
 * With CUDA_WORKERS_GATE set it then says "gated" and waits for SIGUSR1 (a scrape of a live
 * process).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_api.h"
#include "gate.h"
#include "inflight_probes.h"

#define CUDA_CLASSES(X) X(0, input)
#define CUDA_STAGES(X) X(0, load, entry) X(1, gpu, plain) X(2, done, terminal)
INFLIGHT_CONTRACT(CUDA_CLASSES, CUDA_STAGES);

#define THREADS 4
#define MIB (1ull << 20)

/* the driver's functions, linked or looked up */
static struct {
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*free)(CUdeviceptr);
	CUresult (*free_async)(CUdeviceptr, CUstream);
	CUresult (*host_alloc)(void **, size_t, unsigned int);
	CUresult (*alloc_host)(void **, size_t);
	CUresult (*free_host)(void *);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			   unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
} cu;

static void *sym(void *h, const char *name)
{
	void *f = dlsym(h, name);

	if (!f) {
		fprintf(stderr, "cuda_workers: %s: %s\n", name, dlerror());
		exit(2);
	}
	return f;
}

#ifdef CUDA_DLOPEN
#define GET(field, name) cu.field = sym(h, #name)
#else
#define GET(field, name) cu.field = name /* linked: the calls go through the PLT */
#endif

static void load_driver(const char *lib)
{
#ifdef CUDA_DLOPEN
	void *h = dlopen(lib, RTLD_NOW);

	if (!h) {
		fprintf(stderr, "cuda_workers: %s\n", dlerror());
		exit(2);
	}
#else
	(void)lib;
	(void)sym;
#endif
	GET(alloc, cuMemAlloc_v2);
	GET(pitch, cuMemAllocPitch_v2);
	GET(managed, cuMemAllocManaged);
	GET(async, cuMemAllocAsync);
	GET(pool, cuMemAllocFromPoolAsync);
	GET(free, cuMemFree_v2);
	GET(free_async, cuMemFreeAsync);
	GET(host_alloc, cuMemHostAlloc);
	GET(alloc_host, cuMemAllocHost_v2);
	GET(free_host, cuMemFreeHost);
	GET(create, cuMemCreate);
	GET(release, cuMemRelease);
}

static void must(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "cuda_workers: %s: CUresult %d\n", what, r);
		exit(3);
	}
}

static pthread_barrier_t all_held;
static CUdeviceptr kept[THREADS];

static void *worker(void *arg)
{
	unsigned long t = (unsigned long)arg;
	uint64_t owner = t + 1;
	char *input = malloc(1000);
	CUdeviceptr d, m, big;
	void *h;

	inflight_stage(owner, 0);
	inflight_buf_alloc((uintptr_t)input, 0, 1000, owner);
	must(cu.alloc(&d, (t + 1) * MIB), "cuMemAlloc");
	must(cu.alloc_host(&h, 4096), "cuMemAllocHost");
	inflight_stage(owner, 1);
	must(cu.managed(&m, 8192, 1), "cuMemAllocManaged");
	if (cu.alloc(&big, 2048 * MIB) == CUDA_SUCCESS)
		exit(4); /* the stand-in refuses it */
	pthread_barrier_wait(&all_held);
	must(cu.free_host(h), "cuMemFreeHost");
	must(cu.free(m), "cuMemFree (managed)");
	inflight_buf_free((uintptr_t)input, 0, 1000);
	free(input);
	kept[t] = d;
	return NULL;
}

static void main_thread_calls(void)
{
	CUmemGenericAllocationHandle hd;
	CUdeviceptr p, a, b;
	size_t pitch;
	void *hh;

	must(cu.pitch(&p, &pitch, 1000, 10, 4), "cuMemAllocPitch");
	if (pitch != 1024)
		exit(5);
	must(cu.create(&hd, 2 * MIB, NULL, 0), "cuMemCreate");
	must(cu.release(hd), "cuMemRelease");
	must(cu.async(&a, 3000, NULL), "cuMemAllocAsync");
	must(cu.free_async(a, NULL), "cuMemFreeAsync");
	must(cu.pool(&b, 5000, NULL, NULL), "cuMemAllocFromPoolAsync");
	must(cu.free(b), "cuMemFree");
	must(cu.host_alloc(&hh, 6000, 0), "cuMemHostAlloc");
	must(cu.free_host(hh), "cuMemFreeHost");
	must(cu.free(0), "cuMemFree(0)");
	if (cu.create(&hd, 4096 * MIB, NULL, 0) == CUDA_SUCCESS)
		exit(4);
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];

	load_driver(argc > 1 ? argv[1] : "libcuda.so.1");
	main_thread_calls();
	pthread_barrier_init(&all_held, NULL, THREADS);
	for (unsigned long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 6;
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	printf("cuda_workers: %d workers done\n", THREADS);
	gate("CUDA_WORKERS_GATE");
	return 0;
}
