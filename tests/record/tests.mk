# SPDX-License-Identifier: BSD-2-Clause
# Recording and rendering: C tests on scripted recordings (known answers), the reader's fuzz
# target (libFuzzer under `make fuzz`, a corpus replay in the suite) and rec_synth, which
# writes scripted recordings for the shell tests.
REC_TEST_HELPERS := tests/record/rec_script.c tests/record/scenario.c
REC_TEST_DEPS := $(REC_TEST_HELPERS) tests/record/rec_script.h tests/record/scenario.h \
	tests/check.h $(LOADER_LIB_OBJS)
REC_TEST_CFLAGS := -Ibpf -Ibpf/loader -I$(BPF_DIR) -Itests -Itests/record
REC_TEST_PROGS := test_rec_format test_timeline rec_synth

TEST_BINS += $(addprefix $(TESTS_DIR)/,$(REC_TEST_PROGS))

$(addprefix $(TESTS_DIR)/,$(REC_TEST_PROGS)): $(TESTS_DIR)/%: tests/record/%.c $(REC_TEST_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(REC_TEST_CFLAGS) $< $(REC_TEST_HELPERS) $(LOADER_LIB_OBJS) \
		$(LDFLAGS) $(LOADER_LIBS) -o $@
