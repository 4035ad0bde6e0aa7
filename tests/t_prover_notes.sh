#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# build/prover carries the contract: stapsdt notes for the three probes, each with a USDT
# semaphore (so disabled probes cost nothing), and the .note.inflight names note.
# build/prover-noprobes carries no probe at all.
source "$(dirname "$0")/lib.sh"
P=$BUILD/prover

notes=$(readelf -n "$P")
check_eq "readelf -n reads build/prover" "$?" 0
for probe in buf_alloc buf_free stage; do
	sites=$(printf '%s\n' "$notes" | grep -A2 "Name: $probe\$" | grep -o 'Semaphore: 0x[0-9a-f]*')
	n=$(printf '%s\n' "$sites" | grep -c Semaphore)
	sems=$(printf '%s\n' "$sites" | sort -u)
	check "$probe has probe sites ($n)" [ "$n" -ge 1 ]
	check_eq "$probe: all its sites share one semaphore" "$(printf '%s\n' "$sems" | wc -l)" 1
	check "$probe's semaphore address is not zero ($sems)" \
		[ "$(printf '%d' "${sems#Semaphore: }")" -ne 0 ]
done
check_eq "every stapsdt note is from provider prover" \
	"$(printf '%s\n' "$notes" | grep 'Provider:' | sort -u | tr -d ' ')" "Provider:prover"
# the partition story: every stage has a site (8 stage calls, one per transition)
check "stage fires from at least 8 sites" \
	[ "$(printf '%s\n' "$notes" | grep -c 'Name: stage$')" -ge 8 ]

check_match "the .note.inflight note is there, owner inflight" "$notes" \
	"^ +inflight +0x[0-9a-f]+"
objcopy -O binary --only-section=.note.inflight "$P" "$TMP/note"
text=$(strings -n 3 "$TMP/note")
check_match "the note declares contract version 1" "$text" "^inflight-contract 1$"
check_match "... provider prover" "$text" "^provider prover$"
check_match "... class 2 abc" "$text" "^class 2 abc$"
check_match "... class 8 gpu_abc" "$text" "^class 8 gpu_abc$"
check_match "... stage 1 wait_permit entry" "$text" "^stage 1 wait_permit entry$"
check_match "... stage 8 done terminal" "$text" "^stage 8 done terminal$"

np=$(readelf -n "$BUILD/prover-noprobes")
check_eq "prover-noprobes has no stapsdt note" "$(printf '%s\n' "$np" | grep -c stapsdt)" 0
finish
