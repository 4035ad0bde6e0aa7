/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The model's stand-in for the kernel's types: bpf/'s headers include "vmlinux.h", and in
 * user space the types they use come from the UAPI headers.
 */
#ifndef INFLIGHT_MODEL_VMLINUX_H
#define INFLIGHT_MODEL_VMLINUX_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#endif /* INFLIGHT_MODEL_VMLINUX_H */
