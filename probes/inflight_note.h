/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Embeds a program's class and stage names in its ELF file as a note, so that a tracer can
 * name them for any program that implements the contract (see probes/README.md).
 *
 * Usage, in exactly one translation unit of the traced program:
 *   #define MY_CLASSES(X) X(0, c1_data) X(1, srs) ...
 *   #define MY_STAGES(X)  X(0, parse, entry) X(1, synth, plain) ... X(8, done, terminal)
 *   INFLIGHT_NAMES_NOTE(my_names, "prover", MY_CLASSES, MY_STAGES);
 *
 * The note: section ".note.inflight", owner "inflight", type INFLIGHT_NOTE_TYPE; its
 * descriptor is NUL-terminated text, one declaration per line:
 *   inflight-contract 1
 *   provider prover
 *   class <id> <name>
 *   stage <id> <name> <flag>       flag: entry | terminal | plain
 */
#ifndef INFLIGHT_NOTE_H
#define INFLIGHT_NOTE_H

#define INFLIGHT_NOTE_TYPE 0x31464e49u /* "INF1" */
#define INFLIGHT_CONTRACT_VERSION 1
#define INFLIGHT_MAX_IDS 16 /* class and stage ids are < 16 */

#define INFLIGHT__STR(x) #x
#define INFLIGHT__XSTR(x) INFLIGHT__STR(x)
#define INFLIGHT__CLASS_LINE(id, name) "class " #id " " #name "\n"
#define INFLIGHT__STAGE_LINE(id, name, flag) "stage " #id " " #name " " #flag "\n"
#define INFLIGHT__COUNT1(...) +1
#define INFLIGHT__MAXID(id, ...) +((id) >= INFLIGHT_MAX_IDS)

#define INFLIGHT_NAMES_NOTE(sym, provider, CLASSES, STAGES)                                    \
	_Static_assert(0 CLASSES(INFLIGHT__MAXID) == 0, "class ids must be < 16");             \
	_Static_assert(0 STAGES(INFLIGHT__MAXID) == 0, "stage ids must be < 16");              \
	__attribute__((section(".note.inflight"), aligned(4), used)) static const struct {     \
		unsigned int namesz, descsz, type;                                             \
		char name[12];                                                                 \
		char desc[(sizeof(INFLIGHT__NOTE_TEXT(provider, CLASSES, STAGES)) + 3) & ~3u]; \
	} sym = { 9, sizeof(INFLIGHT__NOTE_TEXT(provider, CLASSES, STAGES)), INFLIGHT_NOTE_TYPE, \
		  "inflight", INFLIGHT__NOTE_TEXT(provider, CLASSES, STAGES) }

#define INFLIGHT__NOTE_TEXT(provider, CLASSES, STAGES)                                         \
	"inflight-contract " INFLIGHT__XSTR(INFLIGHT_CONTRACT_VERSION) "\n"                    \
	"provider " provider "\n" CLASSES(INFLIGHT__CLASS_LINE) STAGES(INFLIGHT__STAGE_LINE)

#endif /* INFLIGHT_NOTE_H */
