# SPDX-License-Identifier: BSD-2-Clause
# The tracer's integration tests: probegen fires scripted probes, test_tracer checks the
# real BPF aggregation against the reference model.
PROBEGEN := $(TESTS_DIR)/probegen
TRACER_SESSION_OBJS := $(LOADER_ATTACH_OBJS) $(LOADER_OFFLINE_LIB)

$(PROBEGEN): tests/tracer/probegen.c tests/tracer/probegen_ids.h probes/inflight_note.h \
		$(PROBES_H) $(PROBES_O)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROBES_CFLAGS) -Itests/tracer $< $(PROBES_O) -lpthread $(LDFLAGS) -o $@

TRACER_TEST_DEPS := tests/tracer/model.c tests/tracer/model.h tests/tracer/compare.h tests/check.h \
	$(TRACER_SESSION_OBJS)

# test_tracer: the accounting against the model; test_lifecycle: fork, exec, restarts
$(TESTS_DIR)/test_tracer $(TESTS_DIR)/test_lifecycle: $(TESTS_DIR)/test_%: tests/tracer/test_%.c \
		$(TRACER_TEST_DEPS) | $(PROBEGEN)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LOADER_CFLAGS) -I$(BPF_DIR) -Itests -Itests/tracer $(filter %.c,$^) \
		$(TRACER_SESSION_OBJS) $(LOADER_LIBS) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/test_tracer $(TESTS_DIR)/test_lifecycle $(PROBEGEN)

# the snapshot's map walk against a real hash map whose elements come and go meanwhile
$(TESTS_DIR)/test_map_walk: tests/tracer/test_map_walk.c tests/check.h $(TRACER_SESSION_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LOADER_CFLAGS) -Itests $< $(LOADER_DIR)/attach/map_walk.o \
		$(LOADER_LIBS) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/test_map_walk
