// SPDX-License-Identifier: BSD-2-Clause
/* The prover's class and stage names, carried in its ELF file for tracers to read. */
#include "inflight_note.h"
#include "prover_ids.h"

INFLIGHT_NAMES_NOTE(prover_inflight_names, "prover", PROVER_CLASSES, PROVER_STAGES);
