# SPDX-License-Identifier: BSD-2-Clause
# Test programs: each tests/<area>/tests.mk appends its binaries ($(TESTS_DIR)/test_*) to
# TEST_BINS. Under SAN=1 the same names land in build/san/tests/, sanitized.
TESTS_DIR := $(BUILD)/tests
include $(wildcard tests/*/tests.mk)

tests: $(TEST_BINS)
