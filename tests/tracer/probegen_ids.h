/* SPDX-License-Identifier: BSD-2-Clause */
/* probegen's classes and stages: a program other than the prover implementing the contract. */
#ifndef PROBEGEN_IDS_H
#define PROBEGEN_IDS_H

#define PROBEGEN_CLASSES(X) X(0, small) X(1, big) X(2, huge) X(3, meta) X(4, scratch) X(5, misc)
#define PROBEGEN_STAGES(X)                                                                     \
	X(0, born, entry) X(1, work, plain) X(2, wait, plain) X(3, ship, plain) X(4, end, terminal)

#define PROBEGEN_NCLASSES 6
#define PROBEGEN_NSTAGES 5
#define PROBEGEN_ENTRY_MASK 0x1u
#define PROBEGEN_TERMINAL_MASK 0x10u

#endif /* PROBEGEN_IDS_H */
