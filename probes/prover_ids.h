/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reference prover's buffer classes and stages: the one source of truth for their ids
 * and names. Enums, name tables and the ELF note are all generated from these lists.
 */
#ifndef PROVER_IDS_H
#define PROVER_IDS_H

#define PROVER_CLASSES(X)                                                                      \
	X(0, c1_data)                                                                          \
	X(1, srs)                                                                              \
	X(2, abc)                                                                              \
	X(3, aux)                                                                              \
	X(4, input)                                                                            \
	X(5, density)                                                                          \
	X(6, pending)                                                                          \
	X(7, proof)                                                                            \
	X(8, gpu_abc)

/* entry: an owner's first stage; terminal: ends the owner (buffers still held leak) */
#define PROVER_STAGES(X)                                                                       \
	X(0, parse, entry)                                                                     \
	X(1, wait_permit, entry)                                                               \
	X(2, synth, plain)                                                                     \
	X(3, chan_send, plain)                                                                 \
	X(4, gpu_queue, plain)                                                                 \
	X(5, gpu, plain)                                                                       \
	X(6, finalize, plain)                                                                  \
	X(7, assemble, plain)                                                                  \
	X(8, done, terminal)

#define PROVER__CLASS_ENUM(id, name) CLS_##name = id,
#define PROVER__STAGE_ENUM(id, name, flag) STAGE_##name = id,
enum prover_class { PROVER_CLASSES(PROVER__CLASS_ENUM) CLS__COUNT };
enum prover_stage { PROVER_STAGES(PROVER__STAGE_ENUM) STAGE__COUNT };

_Static_assert(CLS__COUNT <= 16, "the contract allows at most 16 classes");
_Static_assert(STAGE__COUNT <= 16, "the contract allows at most 16 stages");

#endif /* PROVER_IDS_H */
