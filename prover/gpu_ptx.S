/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernels' PTX (prover/gpu_kernels.cu through nvcc -ptx; GPU_PTX_FILE, set by
 * prover/build.mk), embedded as it is, NUL-terminated: cuModuleLoadData takes PTX as a
 * C string. The driver JIT-compiles it for the device at run time (prover/gpu_driver.c).
 */
	.section .rodata
	.globl	gpu_kernels_ptx
	.type	gpu_kernels_ptx, @object
	.balign	8
gpu_kernels_ptx:
	.incbin	GPU_PTX_FILE
	.byte	0
	.size	gpu_kernels_ptx, . - gpu_kernels_ptx
	.section .note.GNU-stack, "", @progbits
