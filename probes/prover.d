/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The inflight probe contract, version 1: provider `prover`.
 * Turned into probes/prover_probes.h by systemtap's `dtrace -h` (every probe gets an
 * is-enabled semaphore) and into the semaphore object by `dtrace -G`.
 */
provider prover {
	/* buffer `buf` of class `cls` and size `bytes` now exists, owned by `owner` (0: none) */
	probe buf_alloc(uint64_t buf, uint32_t cls, uint64_t bytes, uint64_t owner);
	/* buffer `buf` is gone; class and size repeated for tracers that attached late */
	probe buf_free(uint64_t buf, uint32_t cls, uint64_t bytes);
	/* work item `owner` enters `stage`; every buffer it holds moves with it */
	probe stage(uint64_t owner, uint32_t stage);
};
