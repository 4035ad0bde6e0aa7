# SPDX-License-Identifier: BSD-2-Clause
# Test programs: each tests/<area>/tests.mk appends its binaries ($(TESTS_DIR)/test_*) to
# TEST_BINS. Under SAN=1 the same names land in build/san/tests/, sanitized.
TESTS_DIR := $(BUILD)/tests
include $(wildcard tests/*/tests.mk)

tests: $(TEST_BINS) $(TESTS_DIR)/suite.list

# The C test programs this build made, one name a line: tests/run.sh runs exactly these and
# fails on one that is listed but missing, so a test that stops building is a failure, not a
# test that quietly stops running. Rewritten only when the list changes.
TEST_SUITE := $(sort $(notdir $(filter $(TESTS_DIR)/test_%,$(TEST_BINS))))
$(TESTS_DIR)/suite.list: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '%s\n' $(TEST_SUITE) > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

.PHONY: FORCE
FORCE:
