# SPDX-License-Identifier: BSD-2-Clause
# Benchmark programs, built into $(BUILD)/bench/ by `make bench-progs`; `make bench`
# runs scripts/bench.sh on them. probe_loop is built once per emitter (bench/emit.h).
BENCH_DIR := $(BUILD)/bench
# the pinned libbpf 1.5 (bpf/libbpf.mk), for the attach benchmark's loader, whatever the
# loader links; usdt_empty uses the loader's libbpf (LOADER_LIBS) and its headers
ifndef LIBBPF_STAMP
include bpf/libbpf.mk
endif
BENCH_CFLAGS := $(PROBES_CFLAGS) -Ibench -I$(BENCH_DIR) -pthread
BENCH_LOOP_SRCS := bench/probe_loop.c $(wildcard bench/*.h)
# the attach and teardown benchmark's targets: N probe sites each (bench/gen_sites.sh)
BENCH_SITES := 3 100 400
BENCH_SITES_PROGS := $(foreach n,$(BENCH_SITES),$(BENCH_DIR)/sites_$(n))
BENCH_PROGS := $(BENCH_DIR)/probe_loop $(BENCH_DIR)/probe_loop_noprobes \
	$(BENCH_DIR)/probe_loop_atomic $(BENCH_DIR)/probe_loop_lttng \
	$(BENCH_DIR)/usdt_empty $(BENCH_DIR)/stamp_exec $(BENCH_DIR)/measure \
	$(BENCH_DIR)/usdt_attach $(BENCH_SITES_PROGS) $(BENCH_DIR)/cuda_loop

.PHONY: bench-progs
bench-progs: $(BENCH_PROGS)

# the contract's probes, exactly as the prover fires them (with its names note)
$(BENCH_DIR)/probe_loop: $(BENCH_LOOP_SRCS) $(PROBES_H) $(PROBES_O) $(PROBES_NAMES_O)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(BENCH_CFLAGS) $< $(PROBES_O) $(PROBES_NAMES_O) $(LDFLAGS) -o $@

$(BENCH_DIR)/probe_loop_noprobes: $(BENCH_LOOP_SRCS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(BENCH_CFLAGS) -DPROVER_NO_PROBES $< $(LDFLAGS) -o $@

$(BENCH_DIR)/probe_loop_atomic: $(BENCH_LOOP_SRCS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(BENCH_CFLAGS) -DBENCH_ATOMIC $< $(LDFLAGS) -o $@

$(BENCH_DIR)/probe_loop_lttng: $(BENCH_LOOP_SRCS) bench/lttng_tp.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(BENCH_CFLAGS) -DBENCH_LTTNG $< bench/lttng_tp.c $(LDFLAGS) \
		-llttng-ust -ldl -o $@

# the floor: empty BPF programs on the same probes, with a minimal libbpf loader
$(BENCH_DIR)/usdt_empty.bpf.o: bench/usdt_empty.bpf.c $(LIBBPF_STAMP) | $(DEPS_STAMP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.raw
	$(Q)$(BPFTOOL) gen object $@ $@.raw
	$(Q)rm -f $@.raw

$(BENCH_DIR)/usdt_empty.skel.h: $(BENCH_DIR)/usdt_empty.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name usdt_empty_bpf > $@

$(BENCH_DIR)/usdt_empty: bench/usdt_empty.c $(BENCH_DIR)/usdt_empty.skel.h $(LIBBPF_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(if $(filter $(LIBBPF_A),$(LOADER_LIBS)),$(LIBBPF_CFLAGS)) \
		$(BENCH_CFLAGS) $< $(LDFLAGS) $(LOADER_LIBS) -o $@

# attach and teardown by mechanism (bench/attach_teardown.sh): always the pinned libbpf
.SECONDARY: $(BENCH_SITES_PROGS:=.c)
$(BENCH_DIR)/sites_%.c: bench/gen_sites.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)bench/gen_sites.sh $* > $@

$(BENCH_DIR)/sites_%: $(BENCH_DIR)/sites_%.c bench/sites_target.c bench/sites_target.h \
		$(PROBES_H) $(PROBES_O) $(PROBES_NAMES_O)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BENCH_CFLAGS) bench/sites_target.c $< $(PROBES_O) \
		$(PROBES_NAMES_O) $(LDFLAGS) -o $@

$(BENCH_DIR)/usdt_attach.bpf.o: bench/usdt_attach.bpf.c $(LIBBPF_STAMP) | $(DEPS_STAMP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(LIBBPF_CFLAGS) $(BPF_CFLAGS) -c $< -o $@.raw
	$(Q)$(BPFTOOL) gen object $@ $@.raw
	$(Q)rm -f $@.raw

$(BENCH_DIR)/usdt_attach.skel.h: $(BENCH_DIR)/usdt_attach.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name usdt_attach_bpf > $@

$(BENCH_DIR)/usdt_attach: bench/usdt_attach.c bench/usdt_sites.c bench/usdt_sites.h \
		$(BENCH_DIR)/usdt_attach.skel.h $(LIBBPF_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LIBBPF_CFLAGS) -I$(BENCH_DIR) -Ibench -pthread bench/usdt_attach.c \
		bench/usdt_sites.c $(LDFLAGS) $(LIBBPF_LDLIBS) -o $@

$(BENCH_DIR)/stamp_exec $(BENCH_DIR)/measure: $(BENCH_DIR)/%: bench/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) -o $@

# tests/t_bench_smoke.sh runs these, so the suite's `make tests` builds them; the LTTng
# variant needs liblttng-ust-dev (a bench dependency), so only where its header is installed
BENCH_HAVE_LTTNG := $(wildcard /usr/include/lttng/tracepoint.h /usr/include/*/lttng/tracepoint.h)
tests: $(filter-out $(if $(BENCH_HAVE_LTTNG),,$(BENCH_DIR)/probe_loop_lttng),$(BENCH_PROGS))

# libcuda's memory calls (section cuda_cost): the stand-in driver of tests/cuda/ beside it
$(BENCH_DIR)/cuda_loop: bench/cuda_loop.c tests/cuda/cuda_api.h $(TESTS_DIR)/cuda/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cp $(TESTS_DIR)/cuda/libcuda.so.1 $(@D)/libcuda.so.1
	$(Q)$(CC) $(CFLAGS) -Itests/cuda $< -L$(TESTS_DIR)/cuda -Wl,-rpath,'$$ORIGIN' -lcuda \
		$(LDFLAGS) -o $@
