# SPDX-License-Identifier: BSD-2-Clause
# Production readiness: the exporter's exposition (test_prom), the fuzz targets of outside
# input (names notes, CLI numbers, strings on their way out) as corpus replays in the suite and as libFuzzer programs
# under `make fuzz`, and the helpers of the shell tests tests/t_prod_*.sh.
PROD_CFLAGS := $(filter-out -MMD -MP,$(LOADER_CFLAGS)) -Itests

# test_prom: the exporter's rendering, offline code only (no BPF)
$(TESTS_DIR)/test_prom: tests/production/test_prom.c tests/check.h bpf/loader/live/prom.h \
		$(LOADER_OFFLINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROD_CFLAGS) $< $(LOADER_OFFLINE_LIB) $(OFFLINE_LIBS) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/test_prom

# test_sanitize: util/sanitize.c and the JSON escaping that shares its decoder
$(TESTS_DIR)/test_sanitize: tests/production/test_sanitize.c tests/check.h \
		bpf/loader/util/sanitize.h $(LOADER_OFFLINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROD_CFLAGS) $< $(LOADER_OFFLINE_LIB) $(OFFLINE_LIBS) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/test_sanitize

# test_serve_guard: the exporter's connection guard (cmd/, no libmicrohttpd, no BPF)
$(TESTS_DIR)/test_serve_guard: tests/production/test_serve_guard.c tests/check.h \
		bpf/loader/cmd/serve_guard.h $(LOADER_DIR)/cmd/serve_guard.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROD_CFLAGS) $< $(LOADER_DIR)/cmd/serve_guard.o $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/test_serve_guard

# exec_target: a traced command that execs another program (the privilege tests)
$(TESTS_DIR)/exec_target: tests/production/exec_target.c probes/prover_trace.h $(PROBES_H) \
		$(PROBES_O) $(PROBES_NAMES_O)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROBES_CFLAGS) $< $(PROBES_O) $(PROBES_NAMES_O) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/exec_target

# hostile_rec: crafted recordings (ESC sequences, newlines, bad UTF-8 in every string)
$(TESTS_DIR)/hostile_rec: tests/production/hostile_rec.c $(LOADER_OFFLINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROD_CFLAGS) $< $(LOADER_OFFLINE_LIB) $(OFFLINE_LIBS) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/hostile_rec

# http_attack: bounded loopback attacks on the exporter, with a scraper beside them
$(TESTS_DIR)/http_attack: tests/production/http_attack.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/http_attack

# Fuzz targets of outside input. In the suite: test_fuzz_NAME replays the committed corpus
# tests/fuzz/corpus_NAME and deterministic mutants of it (built normally and under SAN=1).
# `make fuzz`: the same targets under libFuzzer (clang, ASan, UBSan), FUZZ_SECONDS each,
# new inputs kept in build/fuzz/corpus_NAME (copy the interesting ones into the corpus).
FUZZ_SECONDS ?= 60
FUZZ_SRCS_names := $(LOADER_OFFLINE_SRCS)
FUZZ_SRCS_numbers := $(LOADER_OFFLINE_SRCS)
FUZZ_SRCS_output := $(LOADER_OFFLINE_SRCS)
FUZZ_TARGETS := names numbers output

define fuzz_rules
$$(TESTS_DIR)/test_fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/production/fuzz_replay.c \
		$$(FUZZ_SRCS_$(1)) $$(LOADER_OFFLINE_HDRS) | $$(DEPS_STAMP)
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CFLAGS) $$(PROD_CFLAGS) -DFUZZ_CORPUS='"tests/fuzz/corpus_$(1)"' \
		$$(filter %.c,$$^) $$(OFFLINE_LIBS) $$(LDFLAGS) -o $$@

$$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $$(FUZZ_SRCS_$(1)) $$(LOADER_OFFLINE_HDRS) | $$(DEPS_STAMP)
	$$(call msg,FUZZ-CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE $$(WARN) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $$(PROD_CFLAGS) $$(filter %.c,$$^) \
		$$(OFFLINE_LIBS) -o $$@
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rules,$(t))))

.PHONY: fuzz-production
fuzz: fuzz-production
fuzz-production: $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_TARGETS))
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/fuzz/corpus_$$t; \
		echo "  FUZZ     $$t for $(FUZZ_SECONDS) s"; \
		$(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			$(BUILD)/fuzz/corpus_$$t tests/fuzz/corpus_$$t >$(BUILD)/fuzz/$$t.log 2>&1 || \
			{ tail -n 40 $(BUILD)/fuzz/$$t.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^Done' $(BUILD)/fuzz/$$t.log; \
	done

TEST_BINS += $(addprefix $(TESTS_DIR)/test_fuzz_,$(FUZZ_TARGETS))
