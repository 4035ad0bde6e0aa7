# SPDX-License-Identifier: BSD-2-Clause
# The prover's unit tests: each links libprover-test.a (the prover built with the test-only
# observer hooks, see prover/build.mk) and tests/prover/observer.c.
PROVER_TEST_NAMES := field ntt hpoly gpu_plan c1 sync sched model
TEST_BINS += $(PROVER_TEST_NAMES:%=$(TESTS_DIR)/test_prover_%)

$(TESTS_DIR)/test_prover_%: tests/prover/test_%.c tests/prover/observer.c tests/prover/observer.h \
		tests/check.h $(BUILD)/libprover-test.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DPROVER_NO_PROBES -DPROVER_TEST_OBSERVER -Iprover -Iprobes -Itests \
		-Itests/prover -pthread $(filter %.c,$^) $(BUILD)/libprover-test.a -ljson-c \
		$(LDFLAGS) -o $@
