# SPDX-License-Identifier: BSD-2-Clause
# Kernel side: bpf/*.bpf.c -> CO-RE object -> skeleton.
#
# User side, bpf/loader/, in folders that follow the data (docs/architecture.md):
#   attach/     the session: load, attach, snapshot the kernel maps. The only code that
#               includes the skeleton or calls libbpf.
#   model/      what live output and rendering share: the snapshot, the figures, the clock,
#               a process's JSON shape, a recording replayed into a timeline, its columns.
#   live/       views of a snapshot: the live timeline, the summary, Prometheus.
#   recording/  the recording format, its writer and its reader.
#   analysis/   compare: two sets of recordings, their figures and a verdict.
#   render/     timeline -> text, csv, json, chrome, folded, svg, html; a comparison ->
#               text, json, svg.
#   contract/   what a traced binary carries: USDT notes, the names note.
#   util/       errors, number formatting and parsing, /proc.
#   cmd/        main and one file per subcommand, tying the others together.
# Everything but attach/ and cmd/ is the offline library, libinflight-offline.a: it must link
# without libbpf, and $(LOADER_DIR)/offline-check proves that on every build. The binary
# links libbpf, libelf, zlib and zstd statically and glibc dynamically: it needs the build
# host's glibc symbol versions (2.34 on Debian 12). Production hosts get the static musl
# build of the same sources, build/static/inflight (bpf/static.mk).
# libbpf is the pinned 1.5.0 that bpf/libbpf.mk builds from Debian's source; its headers come
# first on both sides so that they win over libbpf-dev's (1.1.2) in /usr/include/bpf.
ifndef LIBBPF_STAMP
include bpf/libbpf.mk
endif
BPF_DIR := $(BUILD)/bpf
LOADER_DIR := $(BUILD)/loader
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BPF_DIR)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BPF_DIR)/%.skel.h,$(BPF_SRCS))
BPF_CFLAGS := $(LIBBPF_CFLAGS) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Ibpf -I/usr/include/$(shell uname -m)-linux-gnu

LOADER_OFFLINE_DIRS := util contract recording model live render analysis
loader_objs = $(patsubst bpf/loader/%.c,$(LOADER_DIR)/%.o,$(wildcard $(1)))
LOADER_OFFLINE_OBJS := $(call loader_objs,$(LOADER_OFFLINE_DIRS:%=bpf/loader/%/*.c))
LOADER_ATTACH_OBJS := $(call loader_objs,bpf/loader/attach/*.c)
LOADER_CMD_OBJS := $(call loader_objs,bpf/loader/cmd/*.c)
LOADER_OBJS := $(LOADER_OFFLINE_OBJS) $(LOADER_ATTACH_OBJS) $(LOADER_CMD_OBJS)
LOADER_OFFLINE_LIB := $(LOADER_DIR)/libinflight-offline.a
# the same sources, for programs that compile them themselves (the libFuzzer targets)
LOADER_OFFLINE_SRCS := $(wildcard $(LOADER_OFFLINE_DIRS:%=bpf/loader/%/*.c))
LOADER_OFFLINE_HDRS := $(wildcard $(LOADER_OFFLINE_DIRS:%=bpf/loader/%/*.h))
# (the pinned libbpf's headers first: attach/ and the tests that drive a session use them)
LOADER_CFLAGS := $(LIBBPF_CFLAGS) -Ibpf -Ibpf/loader -Iprobes -MMD -MP
# The offline library is compiled without them: an include of a libbpf header or the skeleton
# there fails to compile (or, for libbpf-dev's copy in /usr/include/bpf, fails offline-check),
# not only to link.
# (-MD: the lists name system headers too, so offline-check sees libbpf-dev's)
$(LOADER_OFFLINE_OBJS): LOADER_CFLAGS := -Ibpf -Ibpf/loader -Iprobes -MD -MP
# what the offline library needs, and what the attach code adds
OFFLINE_LIBS := -Wl,-Bstatic -lelf -lz -lzstd -Wl,-Bdynamic -lm
LOADER_LIBS := $(LIBBPF_LDLIBS) -lm

bpf: $(BPF_SKELS)
inflight: $(BUILD)/inflight

# every header a BPF object includes is a prerequisite (clang writes the list: -MMD)
$(BPF_DIR)/%.bpf.o: bpf/%.bpf.c $(LIBBPF_STAMP) | $(DEPS_STAMP) $(BPF_DIR)/headers-check
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@.raw
	$(Q)$(BPFTOOL) gen object $@ $@.raw
	$(Q)rm -f $@.raw

# Every bpf/*.bpf.h is a module of its own: it compiles in a file that includes nothing
# else, and it defines no map and no global (all of them are inflight.bpf.c's), so that no
# include order matters and every state a header touches comes in as an argument.
BPF_HEADERS := $(wildcard bpf/*.bpf.h)
$(BPF_DIR)/headers-check: $(BPF_HEADERS) bpf/inflight.h $(LIBBPF_STAMP) | $(DEPS_STAMP)
	$(call msg,CHECK,every bpf/*.bpf.h compiles alone and defines no map or global)
	$(Q)mkdir -p $(@D)
	$(Q)for h in $(BPF_HEADERS); do \
		echo "#include \"$${h#bpf/}\"" | $(CLANG) $(BPF_CFLAGS) -fsyntax-only -x c - || { \
			echo "$$h: does not compile alone: a header includes what it uses" >&2; \
			exit 1; }; \
	done
	$(Q)! grep -nE 'SEC\("\.maps"\)|^(const )?volatile |^[a-z_0-9 ]+ [a-z_0-9]+(\[[^]]*\])? = ' \
		$(BPF_HEADERS) >&2 || { \
		echo "bpf/: a *.bpf.h defines a map or a global; they belong in inflight.bpf.c" >&2; \
		exit 1; }
	$(Q)touch $@

$(BPF_DIR)/%.skel.h: $(BPF_DIR)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@

# only attach/ sees the skeleton: a change of the BPF programs rebuilds it alone
$(LOADER_DIR)/attach/%.o: bpf/loader/attach/%.c $(BPF_SKELS) $(LIBBPF_STAMP) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LOADER_CFLAGS) -I$(BPF_DIR) -c $< -o $@

$(LOADER_DIR)/%.o: bpf/loader/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LOADER_CFLAGS) -c $< -o $@

$(LOADER_OFFLINE_LIB): $(LOADER_OFFLINE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

# Every object of the offline library linked in, with no libbpf to resolve against: a BPF
# call anywhere in it fails the build here.
$(LOADER_DIR)/offline-check: $(LOADER_OFFLINE_LIB)
	$(call msg,CHECK,offline library links without libbpf)
	$(Q)! grep -HE '(^|[ /])(bpf/(libbpf|bpf|btf|libbpf_common)\.h|[a-z_]+\.skel\.h)' \
		$(LOADER_OFFLINE_OBJS:.o=.d) >&2 || { \
		echo "bpf/loader: offline code includes a libbpf header or the skeleton; only attach/ may" >&2; \
		exit 1; }
	$(Q)printf 'int main(void) { return 0; }\n' > $@.c
	$(Q)$(CC) $(LDFLAGS) $@.c -Wl,--whole-archive $< -Wl,--no-whole-archive $(OFFLINE_LIBS) \
		-o $@ 2>$@.log || { cat $@.log >&2; \
		echo "bpf/loader: offline code (everything but attach/ and cmd/) references libbpf or the skeleton; only attach/ may" >&2; \
		exit 1; }

$(BUILD)/inflight: $(LOADER_CMD_OBJS) $(LOADER_ATTACH_OBJS) $(LOADER_OFFLINE_LIB) $(LIBBPF_A) \
		| $(LOADER_DIR)/offline-check
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(LOADER_CMD_OBJS) $(LOADER_ATTACH_OBJS) $(LOADER_OFFLINE_LIB) \
		$(LOADER_LIBS) -o $@

# keep the CO-RE objects: tests and the benchmark load them too
.SECONDARY: $(BPF_OBJS)

-include $(LOADER_OBJS:.o=.d) $(BPF_OBJS:.o=.d)
