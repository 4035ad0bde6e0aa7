# SPDX-License-Identifier: BSD-2-Clause
# The loader's unit tests (formatting, the ELF note readers, number parsing, rendering of
# synthetic snapshots) and the small binaries they and tests/t_loader_*.sh read or trace.
LOADER_TARGET := $(TESTS_DIR)/loader_probe_target
LOADER_VARIANTS := $(TESTS_DIR)/loader_sdt_bad_args $(TESTS_DIR)/loader_sdt_partial
LOADER_TEST_CFLAGS := -Ibpf -Ibpf/loader -Itests -Iprobes \
	-DTEST_BIN_DIR='"$(TESTS_DIR)"'
LOADER_TEST_PROGS := fmt names usdt parse render errors images

# offline code: each test links the offline library (an archive: only what it calls), and
# test_parse the attach options' parser (argp, no libbpf)
LOADER_TEST_OBJS_parse := $(LOADER_DIR)/cmd/attach_opts.o $(LOADER_DIR)/attach/caps.o
LOADER_TEST_LIBS_render := -ljson-c

TEST_BINS += $(LOADER_TARGET) $(LOADER_VARIANTS) \
	$(addprefix $(TESTS_DIR)/test_loader_,$(LOADER_TEST_PROGS))

$(LOADER_TARGET): tests/loader/probe_target.c probes/prover_trace.h $(PROBES_H) $(PROBES_O) \
		$(PROBES_NAMES_O)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROBES_CFLAGS) $< $(PROBES_O) $(PROBES_NAMES_O) $(LDFLAGS) -o $@

$(TESTS_DIR)/loader_sdt_%: tests/loader/sdt_variant.c probes/inflight_note.h | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Iprobes -DVARIANT_$(shell echo $* | tr a-z A-Z) $< $(LDFLAGS) -o $@

define LOADER_TEST_RULE
$(TESTS_DIR)/test_loader_$(1): tests/loader/test_$(1).c tests/check.h \
		$(LOADER_TEST_OBJS_$(1)) $(LOADER_OFFLINE_LIB) | $(LOADER_TARGET) $(LOADER_VARIANTS)
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CFLAGS) $$(LOADER_TEST_CFLAGS) $$< $(LOADER_TEST_OBJS_$(1)) \
		$$(LOADER_OFFLINE_LIB) $$(LDFLAGS) \
		$$(OFFLINE_LIBS) $(LOADER_TEST_LIBS_$(1)) -o $$@
endef
$(foreach t,$(LOADER_TEST_PROGS),$(eval $(call LOADER_TEST_RULE,$(t))))
