#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# probes/inflight_probes.h's link-time words: a program that uses the probes but forgot
# INFLIGHT_CONTRACT fails to link with an undefined symbol that names INFLIGHT_CONTRACT (gcc,
# g++, clang); one that has it twice fails naming the same; one that has it once links,
# carries both names of each semaphore at one address, and `inflight list` finds the contract.
source "$(dirname "$0")/lib.sh"
cat >"$TMP/use.c" <<'C'
#include "inflight_probes.h"
int main(void) { inflight_buf_alloc(1, 0, 10, 1); inflight_buf_free(1, 0, 10); inflight_stage(1, 0); return 0; }
C
cat >"$TMP/contract.c" <<'C'
#include "inflight_probes.h"
#define CLASSES(X) X(0, input)
#define STAGES(X) X(0, read, entry) X(1, done, terminal)
INFLIGHT_CONTRACT(CLASSES, STAGES);
C
for cc in gcc g++ clang; do
	lang=()
	[ "$cc" = g++ ] && lang=(-x c++)
	"$cc" "${lang[@]}" -I"$ROOT/probes" "$TMP/use.c" -o "$TMP/a.out" 2>"$TMP/err"
	check_eq "$cc, no INFLIGHT_CONTRACT: the link fails" "$?" 1
	check_eq "$cc: each undefined semaphore names INFLIGHT_CONTRACT" \
		"$(grep -o "undefined reference to \`[A-Za-z_]*'" "$TMP/err" | sort -u | tr '\n' ' ')" \
		"undefined reference to \`prover_buf_alloc_semaphore__define_with_INFLIGHT_CONTRACT' undefined reference to \`prover_buf_free_semaphore__define_with_INFLIGHT_CONTRACT' undefined reference to \`prover_stage_semaphore__define_with_INFLIGHT_CONTRACT' "
done
cp "$TMP/contract.c" "$TMP/contract2.c"
gcc -I"$ROOT/probes" "$TMP/use.c" "$TMP/contract.c" "$TMP/contract2.c" -o "$TMP/a.out" 2>"$TMP/err"
check_eq "INFLIGHT_CONTRACT in two files: the link fails" "$?" 1
check_match "... naming INFLIGHT_CONTRACT" "$(cat "$TMP/err")" \
	"multiple definition of \`prover_buf_alloc_semaphore__define_with_INFLIGHT_CONTRACT'"
gcc -I"$ROOT/probes" "$TMP/use.c" "$TMP/contract.c" -o "$TMP/a.out" 2>"$TMP/err"
check_eq "INFLIGHT_CONTRACT once: it links" "$?" 0
sym() { nm "$TMP/a.out" | awk -v s="$1" '$3 == s { print $1 }'; }
check_eq "both names of the buf_alloc semaphore, one address" \
	"$(sym prover_buf_alloc_semaphore__define_with_INFLIGHT_CONTRACT)" "$(sym prover_buf_alloc_semaphore)"
check "... which is not empty" test -n "$(sym prover_buf_alloc_semaphore)"
"$BUILD/inflight" list "$TMP/a.out" >"$TMP/list"
check_eq "inflight list: the contract is complete" "$?" 0
check_match "... every probe has its semaphore" "$(cat "$TMP/list")" \
	'^contract  buf_alloc: 1 site, buf_free: 1 site, stage: 1 site \(complete\)$'
finish
