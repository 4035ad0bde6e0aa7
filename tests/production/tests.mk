# SPDX-License-Identifier: BSD-2-Clause
# Production readiness: the exporter's exposition (test_prom), the fuzz targets of outside
# input (names notes, CLI numbers) as corpus replays in the suite and as libFuzzer programs
# under `make fuzz`, and the helpers of the shell tests tests/t_prod_*.sh.
PROD_CFLAGS := $(LOADER_CFLAGS) -Itests

# test_prom: prom.o and what it calls, no BPF
PROM_TEST_OBJS := $(addprefix $(LOADER_DIR)/,prom.o names.o fmt.o live.o)

$(TESTS_DIR)/test_prom: tests/production/test_prom.c tests/check.h $(PROM_TEST_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROD_CFLAGS) $< $(PROM_TEST_OBJS) $(LOADER_LIBS) $(LDFLAGS) -o $@

TEST_BINS += $(TESTS_DIR)/test_prom
