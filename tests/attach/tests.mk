# SPDX-License-Identifier: BSD-2-Clause
# The attach mechanics' test programs (tests/t_attach_*.sh): probe sites reading their
# arguments in every operand form (args_target.c: -O2 and -O0 PIE, -O2 without PIE), a
# program stopped right after its exec (stopped_exec.c), a reader of a process's semaphores
# (sema_peek.c), and the argument decoder's unit test (test_attach_args.c). The targets are
# subjects and built plainly; the tools and the unit test follow SAN=1 like any test.
ATTACH_TESTS := $(TESTS_DIR)/attach
ATTACH_ARGS_DEPS := tests/attach/args_target.c probes/inflight_probes.h | $(DEPS_STAMP)
ATTACH_ARGS_CFLAGS := -g $(WARN) -std=gnu11 -Iprobes

$(ATTACH_TESTS)/args-O2: $(ATTACH_ARGS_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ATTACH_ARGS_CFLAGS) -O2 $< -o $@

$(ATTACH_TESTS)/args-O0: $(ATTACH_ARGS_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ATTACH_ARGS_CFLAGS) -O0 $< -o $@

$(ATTACH_TESTS)/args-nopie: $(ATTACH_ARGS_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ATTACH_ARGS_CFLAGS) -O2 -fno-pie -no-pie $< -o $@

TEST_BINS += $(ATTACH_TESTS)/args-O2 $(ATTACH_TESTS)/args-O0 $(ATTACH_TESTS)/args-nopie

# the argument decoder, offline (the same code list and the attach use)
$(TESTS_DIR)/test_attach_args: tests/attach/test_attach_args.c tests/check.h \
		$(LOADER_OFFLINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Ibpf -Ibpf/loader -Itests $< $(LOADER_OFFLINE_LIB) $(LDFLAGS) \
		$(OFFLINE_LIBS) -o $@

TEST_BINS += $(TESTS_DIR)/test_attach_args

# the semaphores of a process, read where it reads them (with the loader's attach/sema.c)
$(ATTACH_TESTS)/sema_peek: tests/attach/sema_peek.c bpf/loader/attach/sema.c \
		bpf/loader/attach/sema.h $(LOADER_OFFLINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Ibpf -Ibpf/loader $< bpf/loader/attach/sema.c $(LOADER_OFFLINE_LIB) \
		$(LDFLAGS) $(OFFLINE_LIBS) -o $@

TEST_BINS += $(ATTACH_TESTS)/sema_peek

$(ATTACH_TESTS)/stopped_exec: tests/attach/stopped_exec.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) -o $@

TEST_BINS += $(ATTACH_TESTS)/stopped_exec

# a program with the contract that execs another (the example's names)
$(ATTACH_TESTS)/exec_chain: tests/attach/exec_chain.c probes/inflight_probes.h \
		probes/examples/pipeline.h | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ATTACH_ARGS_CFLAGS) -O2 -Iprobes/examples $< -o $@

TEST_BINS += $(ATTACH_TESTS)/exec_chain

# the example built twice, the same but for the size of its sites' nop (1 byte, then 5):
# the same sites at the same offsets, another instruction at each. What an in-place rewrite
# of an attached file puts under probes the kernel still holds (t_attach_exit.sh).
EX_NOP_DEPS := probes/examples/example.c probes/examples/pipeline.c \
	probes/examples/pipeline.h probes/inflight_probes.h | $(DEPS_STAMP)
EX_NOP_BUILD = $(CC) -g $(WARN) -std=gnu11 -D_GNU_SOURCE -Iprobes -Iprobes/examples -O2 \
	probes/examples/example.c probes/examples/pipeline.c -pthread

$(ATTACH_TESTS)/example-nop1: $(EX_NOP_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(EX_NOP_BUILD) -o $@

$(ATTACH_TESTS)/example-nop5: $(EX_NOP_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(EX_NOP_BUILD) '-DINFLIGHT_P__NOP=".byte 0x0f, 0x1f, 0x44, 0x00, 0x00"' -o $@

TEST_BINS += $(ATTACH_TESTS)/example-nop1 $(ATTACH_TESTS)/example-nop5
