# SPDX-License-Identifier: BSD-2-Clause
# Recording and rendering: C tests on scripted recordings (known answers), the reader's fuzz
# target (libFuzzer under `make fuzz`, a corpus replay in the suite) and rec_synth, which
# writes scripted recordings for the shell tests.
REC_TEST_HELPERS := tests/record/rec_script.c tests/record/scenario.c
REC_TEST_DEPS := $(REC_TEST_HELPERS) tests/record/rec_script.h tests/record/scenario.h \
	tests/check.h $(LOADER_OFFLINE_LIB)
REC_TEST_CFLAGS := -Ibpf -Ibpf/loader -Itests -Itests/record
REC_TEST_PROGS := test_rec_format test_timeline rec_synth rec_gen

TEST_BINS += $(addprefix $(TESTS_DIR)/,$(REC_TEST_PROGS))

$(addprefix $(TESTS_DIR)/,$(REC_TEST_PROGS)): $(TESTS_DIR)/%: tests/record/%.c $(REC_TEST_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(REC_TEST_CFLAGS) $< $(REC_TEST_HELPERS) $(LOADER_OFFLINE_LIB) \
		$(LDFLAGS) $(OFFLINE_LIBS) -o $@

# The recording reader's fuzz target, on the pattern of tests/production/tests.mk: a corpus
# replay with deterministic mutants in the suite (test_fuzz_recfile), libFuzzer under
# `make fuzz` (build/fuzz/fuzz_recfile, FUZZ_SECONDS).
FUZZ_SRCS_recfile := $(LOADER_OFFLINE_SRCS)
FUZZ_REC_CFLAGS := -Ibpf -Ibpf/loader -Iprobes -Itests

$(TESTS_DIR)/test_fuzz_recfile: tests/fuzz/fuzz_recfile.c tests/production/fuzz_replay.c \
		$(FUZZ_SRCS_recfile) $(LOADER_OFFLINE_HDRS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(FUZZ_REC_CFLAGS) -DFUZZ_CORPUS='"tests/fuzz/corpus_recfile"' \
		$(filter %.c,$^) $(OFFLINE_LIBS) $(LDFLAGS) -o $@

$(BUILD)/fuzz/fuzz_recfile: tests/fuzz/fuzz_recfile.c $(FUZZ_SRCS_recfile) \
		$(LOADER_OFFLINE_HDRS) | $(DEPS_STAMP)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE $(WARN) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $(FUZZ_REC_CFLAGS) $(filter %.c,$^) $(OFFLINE_LIBS) -o $@

TEST_BINS += $(TESTS_DIR)/test_fuzz_recfile

.PHONY: fuzz-recfile
fuzz: fuzz-recfile
fuzz-recfile: $(BUILD)/fuzz/fuzz_recfile
	$(Q)mkdir -p $(BUILD)/fuzz/corpus_recfile
	@echo "  FUZZ     recfile for $(FUZZ_SECONDS) s"
	$(Q)$(BUILD)/fuzz/fuzz_recfile -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		-max_len=65536 $(BUILD)/fuzz/corpus_recfile tests/fuzz/corpus_recfile \
		>$(BUILD)/fuzz/recfile.log 2>&1 || { tail -n 40 $(BUILD)/fuzz/recfile.log; exit 1; }
	$(Q)grep -E '^stat::number_of_executed_units|^Done' $(BUILD)/fuzz/recfile.log
