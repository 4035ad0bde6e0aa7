# SPDX-License-Identifier: BSD-2-Clause
# libcuda's memory calls without a GPU (tests/t_cuda.sh): a stand-in libcuda.so.1 with the
# driver API's signatures (libcuda.c, cuda_api.h), a program with the contract and worker
# threads on several owners that links it (cuda_workers) or loads it with dlopen()
# (cuda_workers_dlopen), and one without the contract that links it (cuda_plain). Subjects
# of the test, built plainly (not under SAN=1), each found through its RUNPATH. The library
# is built under SAN=1 too, plainly: bench/cuda_loop links it. The library also emulates the
# prover's four kernels with prover/gpu_plan.h compiled for the host (tests/t_prover_cuda.sh).
CUDA_TESTS := $(TESTS_DIR)/cuda
CUDA_CFLAGS := -g -O2 $(WARN) -std=gnu11 -Iprobes -Itests/cuda

$(CUDA_TESTS)/libcuda.so.1: tests/cuda/libcuda.c tests/cuda/cuda_api.h prover/gpu_plan.h \
		prover/field.h | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_CFLAGS) -Iprover -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 \
		-pthread $< -o $@
	$(Q)ln -sf libcuda.so.1 $(@D)/libcuda.so

ifneq ($(SAN),1)

$(CUDA_TESTS)/cuda_workers: tests/cuda/cuda_workers.c tests/cuda/cuda_api.h tests/cuda/gate.h \
		probes/inflight_probes.h $(CUDA_TESTS)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(CUDA_CFLAGS) $< -pthread -L$(CUDA_TESTS) -Wl,-rpath,'$$ORIGIN' -lcuda -o $@

$(CUDA_TESTS)/cuda_workers_dlopen: tests/cuda/cuda_workers.c tests/cuda/cuda_api.h tests/cuda/gate.h \
		probes/inflight_probes.h | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_CFLAGS) -DCUDA_DLOPEN $< -pthread -ldl -o $@

$(CUDA_TESTS)/cuda_plain: tests/cuda/cuda_plain.c tests/cuda/cuda_api.h tests/cuda/gate.h \
		$(CUDA_TESTS)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(CUDA_CFLAGS) $< -L$(CUDA_TESTS) -Wl,-rpath,'$$ORIGIN' -lcuda -o $@

TEST_BINS += $(CUDA_TESTS)/libcuda.so.1 $(CUDA_TESTS)/cuda_workers \
	$(CUDA_TESTS)/cuda_workers_dlopen $(CUDA_TESTS)/cuda_plain
endif
