// SPDX-License-Identifier: BSD-2-Clause
/*
 * Binaries that break the probe contract, for the loader's readers and error paths:
 *   -DVARIANT_BAD_ARGS: all three probes, but `stage` takes 1 argument instead of 2;
 *   -DVARIANT_PARTIAL:  only buf_alloc, plus a names note whose class id is out of range.
 */
#include <sys/sdt.h>
#include "inflight_note.h"

#ifdef VARIANT_PARTIAL
#define BAD_TEXT "inflight-contract 1\nprovider prover\nclass 99 huge\n"
__attribute__((section(".note.inflight"), aligned(4), used)) static const struct {
	unsigned int namesz, descsz, type;
	char name[12];
	char desc[(sizeof(BAD_TEXT) + 3) & ~3u];
} bad_names = { 9, sizeof(BAD_TEXT), INFLIGHT_NOTE_TYPE, "inflight", BAD_TEXT };
#endif

int main(int argc, char **argv)
{
	long x = argc;

	(void)argv;
	DTRACE_PROBE4(prover, buf_alloc, x, x, x, x);
#ifdef VARIANT_BAD_ARGS
	DTRACE_PROBE3(prover, buf_free, x, x, x);
	DTRACE_PROBE1(prover, stage, x);
#endif
	return 0;
}
