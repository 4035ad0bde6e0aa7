# SPDX-License-Identifier: BSD-2-Clause
# The kernel side's protocol compiled for user space (tests/model/shim/ stands in for
# vmlinux.h and libbpf's bpf_helpers.h) and run by threads preempted at every shared access.
# The BPF headers are built with clang's -Wall for the BPF target: here gcc also sees their
# unused parameters and clang's unroll pragma.
MODEL_CFLAGS := -Itests/model/shim -Ibpf -Itests -Wno-unused-parameter -Wno-unknown-pragmas
MODEL_BPF_HEADERS := bpf/acct.bpf.h bpf/hit.bpf.h bpf/owners.bpf.h bpf/once.bpf.h \
	bpf/inflight.h

TEST_BINS += $(TESTS_DIR)/test_model_acct

$(TESTS_DIR)/test_model_acct: tests/model/test_model_acct.c tests/model/model_kernel.c \
		tests/model/model_kernel.h tests/model/shim/vmlinux.h \
		tests/model/shim/bpf/bpf_helpers.h tests/check.h $(MODEL_BPF_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(MODEL_CFLAGS) $(filter %.c,$^) $(LDFLAGS) -lpthread -o $@
