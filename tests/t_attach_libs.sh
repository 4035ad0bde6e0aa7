#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Binaries that are not the target's executable (attach/libs.c, attach/watch.c), by both
# attach mechanisms: the contract in a library the program links (DT_NEEDED) or loads with
# dlopen() after the attach, and in a program the target becomes with exec: each counted
# exactly from its first event (tests/programs/expect.sh), the dlopen()ing or exec'ing process
# stopped until the loader has attached and continued it. A wrapper without the contract that
# execs the program (sh -c 'exec ...') is traced through it. The program matrix runs the
# library rows under -p and -b too. Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/programs/expect.sh"
INFLIGHT=$BUILD/inflight
P=$BUILD/tests/programs
A=$BUILD/tests/attach
needs_root
command -v jq >/dev/null || skip_all "needs jq"
for f in "$P/so-needed/example" "$P/so-dlopen/example" "$P/c-bfd-O2/example" "$A/exec_chain"; do
	[ -x "$f" ] || { not_ok "built: $f" "run make tests"; finish; }
done

# CMD...: traced under --; its projected summary in $got, its output in $out, exit in $rc
run() {
	rm -f "$TMP/json"
	"$INFLIGHT" --json -o "$TMP/json" -- "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	got=$(grep '"type":"summary"' "$TMP/json" | project)
	out=$(cat "$TMP/out")
}

full6=$(expect_procs full 6 1 0 0)
for mech in multi perf; do
	export INFLIGHT_ATTACH=$mech
	run "$P/so-needed/example" --items 6
	check_eq "$mech: a linked library's probes, counted exactly" "$rc $got $out" \
		"0 $full6 $(expect_output 6)"
	run "$P/so-dlopen/example" --items 6 --lib "$P/so-dlopen/libexample.so"
	check_eq "$mech: a library loaded after the attach (dlopen), every event counted" \
		"$rc $got $out" "0 $full6 $(expect_output 6)"
	check_match "$mech: ... the program without the contract is traced for what it loads" \
		"$(cat "$TMP/err")" 'so-dlopen/example carries none of the contract.s probes: tracing what it loads \(dlopen\) or runs \(exec\)'
	run sh -c "exec '$P/c-bfd-O2/example' --items 6"
	check_eq "$mech: a shell that execs the program: the program counted exactly" \
		"$rc $got $out" "0 $full6 $(expect_output 6)"
	rm -f "$TMP/json"
	"$INFLIGHT" --json -o "$TMP/json" -- "$A/exec_chain" "$P/c-bfd-O2/example" --items 6 \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	images=$(grep '"type":"summary"' "$TMP/json" | jq -c '[.processes[] | {events,
		at_end: .at_end.bufs, exact}] | sort_by(tojson)')
	check_eq "$mech: exec into another instrumented program: both images, exact" \
		"$rc $images" \
		'0 [{"events":{"buf_alloc":19,"buf_free":19,"stage":24},"at_end":0,"exact":true},{"events":{"buf_alloc":2,"buf_free":1,"stage":2},"at_end":1,"exact":true}]'
	check_eq "$mech: ... one pid for both" \
		"$(grep '"type":"summary"' "$TMP/json" | jq '[.processes[].pid] | unique | length')" 1
	wait_detached
done
unset INFLIGHT_ATTACH
finish
