#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Probe arguments in every operand form the compilers write, read by the real BPF programs
# through inflight's own spec map (contract/usdt_args.c, bpf/usdt_args.bpf.h), by both attach
# mechanisms: tests/attach/args_target.c built -O2 and -O0 (PIE) and -O2 without PIE, each
# traced under `--` with uprobe_multi links and with perf-event uprobes (INFLIGHT_ATTACH), its
# summary compared exactly with the values the program passed: one class per operand form,
# so a form read wrong shows in that class's count or bytes, a buffer read wrong as an
# unmatched free. A site with an operand inflight does not read (thread-local storage) must
# be skipped with a warning naming it, and the others still counted exactly. Needs root.
source "$(dirname "$0")/lib.sh"
INFLIGHT=$BUILD/inflight
A=$BUILD/tests/attach
needs_root
command -v jq >/dev/null || skip_all "needs jq"

ROUNDS=3
# per round: 8 counted allocs (the byte form has two sites), 8 frees, 14 stage events; the
# peak is every buffer of a round, all held by their owners in stage `hold`
want=$(jq -nc --argjson r $ROUNDS '{events: {buf_alloc: (8 * $r), buf_free: (8 * $r),
	stage: (14 * $r)},
	peak: {bytes: 33000, bufs: 8, seq: 15, classes: {reg: {bufs: 1, bytes: 1000},
		glob: {bufs: 1, bytes: 2000}, stack: {bufs: 1, bytes: 3000},
		indexed: {bufs: 1, bytes: 4000}, byte: {bufs: 2, bytes: 10000},
		konst: {bufs: 1, bytes: 6000}, symaddr: {bufs: 1, bytes: 7000}},
		stages: [{stage: "hold", owners: 7, bufs: 8, bytes: 33000}]},
	unmatched: {free: {}, stage: {}}, exact: true, at_end: {bufs: 0, classes: {}}}')

# the forms each build must show in its notes (what the compiler wrote, from `list`)
declare -A FORMS=(
	[O2]='g_buf\(%rip\) .*-?[0-9]+\(%rsp\) .*\(%r[a-z0-9]+,%r[a-z0-9]+,8\) .*1@%ah .*1@%[a-d]l .*8@\$6000'
	[O0]='g_buf\(%rip\) .*-[0-9]+\(%rbp\) .*\(%r[a-z0-9]+,%r[a-z0-9]+\) .*1@%ah .*8@\$6000'
	[nopie]='g_buf\(%rip\) .*g_arr\(,%r[a-z0-9]+,8\) .*1@%ah .*8@\$g_obj '
)

for v in O2 O0 nopie; do
	bin=$A/args-$v
	if [ ! -x "$bin" ]; then
		not_ok "args-$v built" "no $bin: run make tests"
		continue
	fi
	notes=$("$INFLIGHT" list "$bin" | grep '^prover:buf_alloc' | tr '\n' ' ')
	check_match "args-$v: the notes hold the operand forms under test" "$notes" "${FORMS[$v]}"
	check_match "args-$v: list marks the TLS site skipped, with why" "$notes" \
		'8@%fs:40 [^<]*<- skipped: argument 1 .8@%fs:40.: a segment-relative operand'
	for mech in multi perf; do
		rm -f "$TMP/json"
		INFLIGHT_ATTACH=$mech "$INFLIGHT" --json -o "$TMP/json" -- "$bin" $ROUNDS >"$TMP/out" \
			2>"$TMP/err"
		rc=$?
		got=$(grep '"type":"summary"' "$TMP/json" | jq -c '.processes[0] | {events,
			peak: (.peak | {bytes, bufs, seq, classes,
				stages: [.stages[] | {stage, owners, bufs, bytes}]}),
			unmatched, exact, at_end: (.at_end | {bufs, classes})}')
		check_eq "args-$v ($mech): exit 0, the program's own output" \
			"$rc $(cat "$TMP/out")" "0 done $ROUNDS"
		check_eq "args-$v ($mech): every form read exactly" "$got" "$want"
		check_eq "args-$v ($mech): one warning, naming the skipped site and why" \
			"$(grep -c . "$TMP/err") $(grep -cE "^inflight: warning: .*args-$v: prover:buf_alloc site 0x[0-9a-f]+ skipped: argument 1 '8@%fs:40': a segment-relative operand \(thread-local storage\) is not read$" "$TMP/err")" \
			"1 1"
	done
done
finish
