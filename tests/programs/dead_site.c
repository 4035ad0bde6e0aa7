// SPDX-License-Identifier: BSD-2-Clause
/*
 * A probe site in a function nobody calls, linked into the matrix's --gc-sections rows: the
 * linker removes the function, and a note left behind would point into nothing. With
 * probes/inflight_probes.h the site's keep reference holds the function (its note stays
 * true); with <sys/sdt.h> (-DDEAD_SDT, the dtrace path) lld and mold drop the code and keep
 * the note.
 */
#include <stdint.h>
#ifdef DEAD_SDT
#include "prover_probes.h"
#else
#include "inflight_probes.h"
#endif

void example_dead_site(uint64_t owner);

void example_dead_site(uint64_t owner)
{
#ifdef DEAD_SDT
	if (PROVER_STAGE_ENABLED())
		PROVER_STAGE(owner, 0);
#else
	inflight_stage(owner, 0);
#endif
}
