# SPDX-License-Identifier: BSD-2-Clause
# The reference prover: $(BUILD)/prover (probes on), $(BUILD)/prover-noprobes (the probe
# sites compiled out, for the disabled-probe-cost benchmark), and $(BUILD)/libprover-test.a
# (the same sources with the test-only observer hooks, for tests/prover/).
PROVER_LIB_SRCS := $(filter-out prover/main.c prover/cli.c prover/gpu_nocuda.c \
	prover/gpu_driver.c,$(wildcard prover/*.c))
PROVER_SRCS := $(PROVER_LIB_SRCS) prover/main.c prover/cli.c
PROVER_OBJ := $(BUILD)/prover-obj
PROVER_NP_OBJ := $(BUILD)/prover-noprobes-obj
PROVER_TEST_OBJ := $(BUILD)/prover-test-obj
PROVER_CFLAGS := $(CFLAGS) -Iprover -Iprobes -pthread -MMD -MP
PROVER_LIBS := -ljson-c -pthread

# The CUDA path is built whenever nvcc exists (CI keeps it compiling) but not under SAN=1: the
# kernels (gpu_kernels.cu) as PTX for a virtual architecture that every current driver JITs
# (compute_75, the oldest this nvcc targets), embedded by gpu_ptx.S; the host side
# (gpu_driver.c) on the driver API, opened with dlopen() at run time. No CUDA library is
# linked: the binary runs, and falls back, where there is no driver.
PROVER_CUDA := $(if $(NVCC),$(if $(filter 1,$(SAN)),,yes))
ifeq ($(PROVER_CUDA),yes)
PROVER_PTX := $(PROVER_OBJ)/gpu_kernels.ptx
PROVER_PTX_ARCH := compute_75
PROVER_GPU_O := $(PROVER_OBJ)/gpu_driver.o $(PROVER_OBJ)/gpu_ptx.o
PROVER_LIBS += -ldl
NVCC_FLAGS := -O2 -std=c++17 -Iprover -arch=$(PROVER_PTX_ARCH) -Werror all-warnings \
	-Xcompiler -Wall,-Wextra,-Werror
# cuda.h for the driver's types and prototypes only
$(PROVER_OBJ)/gpu_driver.o: PROVER_CFLAGS += -I$(dir $(NVCC))../include
else
PROVER_GPU_O := $(PROVER_OBJ)/gpu_nocuda.o
endif

PROVER_OBJS := $(PROVER_SRCS:prover/%.c=$(PROVER_OBJ)/%.o)
PROVER_NP_OBJS := $(PROVER_SRCS:prover/%.c=$(PROVER_NP_OBJ)/%.o)
PROVER_TEST_OBJS := $(PROVER_LIB_SRCS:prover/%.c=$(PROVER_TEST_OBJ)/%.o) \
	$(PROVER_TEST_OBJ)/gpu_nocuda.o

prover: $(BUILD)/prover $(BUILD)/prover-noprobes

$(BUILD)/prover: $(PROVER_OBJS) $(PROVER_GPU_O) $(PROBES_O) $(PROBES_NAMES_O)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(PROVER_LIBS) -o $@

$(BUILD)/prover-noprobes: $(PROVER_NP_OBJS) $(PROVER_GPU_O)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(PROVER_LIBS) -o $@

$(BUILD)/libprover-test.a: $(PROVER_TEST_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(PROVER_OBJ)/%.o: prover/%.c $(PROBES_H) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROVER_CFLAGS) $(PROBES_CFLAGS) -c $< -o $@

$(PROVER_NP_OBJ)/%.o: prover/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROVER_CFLAGS) -DPROVER_NO_PROBES -c $< -o $@

$(PROVER_TEST_OBJ)/%.o: prover/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROVER_CFLAGS) -DPROVER_NO_PROBES -DPROVER_TEST_OBSERVER -c $< -o $@

$(PROVER_PTX): prover/gpu_kernels.cu prover/gpu_plan.h prover/field.h prover/build.mk
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_FLAGS) -ptx $< -o $@

$(PROVER_OBJ)/gpu_ptx.o: prover/gpu_ptx.S $(PROVER_PTX)
	$(call msg,AS,$@)
	$(Q)$(CC) -c -DGPU_PTX_FILE='"$(PROVER_PTX)"' $< -o $@

-include $(wildcard $(PROVER_OBJ)/*.d $(PROVER_NP_OBJ)/*.d $(PROVER_TEST_OBJ)/*.d)
