# SPDX-License-Identifier: BSD-2-Clause
# The probe contract: prover.d -> header (dtrace -h) and semaphore object (dtrace -G).
PROBES_DIR := $(BUILD)/probes
PROBES_H := $(PROBES_DIR)/prover_probes.h
PROBES_O := $(PROBES_DIR)/prover_probes.o
PROBES_NAMES_O := $(PROBES_DIR)/prover_names.o
PROBES_CFLAGS := -Iprobes -I$(PROBES_DIR)

probes: $(PROBES_H) $(PROBES_O) $(PROBES_NAMES_O)

$(PROBES_H): probes/prover.d | $(DEPS_STAMP)
	$(call msg,DTRACE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)dtrace -C -h -s $< -o $@

$(PROBES_O): probes/prover.d | $(DEPS_STAMP)
	$(call msg,DTRACE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)CC="$(CC)" CFLAGS="$(filter -fsanitize%,$(CFLAGS))" dtrace -C -G -s $< -o $@

$(PROBES_NAMES_O): probes/prover_names.c probes/inflight_note.h probes/prover_ids.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(PROBES_CFLAGS) -c $< -o $@

# vmlinux.h is pinned; `make vmlinux` regenerates it from this host's kernel on purpose only.
vmlinux:
	$(Q)vmlinux/regen.sh
