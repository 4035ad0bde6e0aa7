# SPDX-License-Identifier: BSD-2-Clause
# Kernel side: bpf/*.bpf.c -> CO-RE object -> skeleton. User side: every bpf/loader/*.c linked
# into one binary, libbpf/libelf/zlib/zstd static so it needs only libc on a production host.
BPF_DIR := $(BUILD)/bpf
LOADER_DIR := $(BUILD)/loader
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BPF_DIR)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BPF_DIR)/%.skel.h,$(BPF_SRCS))
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf -I/usr/include/$(shell uname -m)-linux-gnu

LOADER_SRCS := $(wildcard bpf/loader/*.c)
LOADER_OBJS := $(patsubst bpf/loader/%.c,$(LOADER_DIR)/%.o,$(LOADER_SRCS))
LOADER_CFLAGS := -Ibpf -Ibpf/loader -Iprobes -I$(BPF_DIR) -MMD -MP
LOADER_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -Wl,-Bdynamic

bpf: $(BPF_SKELS)
inflight: $(BUILD)/inflight

$(BPF_DIR)/%.bpf.o: bpf/%.bpf.c bpf/inflight.h $(wildcard bpf/*.bpf.h) | $(DEPS_STAMP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.raw
	$(Q)$(BPFTOOL) gen object $@ $@.raw
	$(Q)rm -f $@.raw

$(BPF_DIR)/%.skel.h: $(BPF_DIR)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@

$(LOADER_DIR)/%.o: bpf/loader/%.c $(BPF_SKELS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LOADER_CFLAGS) -c $< -o $@

$(BUILD)/inflight: $(LOADER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LOADER_LIBS) -o $@

# keep the CO-RE objects: tests and the benchmark load them too
.SECONDARY: $(BPF_OBJS)

# objects of the loader minus main.o, for test programs that link parts of it
LOADER_LIB_OBJS := $(filter-out $(LOADER_DIR)/main.o,$(LOADER_OBJS))

-include $(LOADER_OBJS:.o=.d)
