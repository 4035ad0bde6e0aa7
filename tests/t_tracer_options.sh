#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The tracing options of the kernel side, end to end through the CLI: the contract's stages
# named on the command line (--terminal-stages, --entry-stages), --no-rss in every output,
# --no-follow, and what each refuses.
source "$(dirname "$0")/lib.sh"
needs_root
I=$BUILD/inflight
PG=$BUILD/tests/probegen
lacks() { ! grep -q -- "$1" <<<"$2"; } # lacks TEXT OUTPUT
# jrun ARGS...: inflight --json -o FILE ARGS (the JSON apart from the command's output): the JSON
jrun() { rm -f "$TMP/j"; "$I" --json -o "$TMP/j" "$@" >/dev/null 2>"$TMP/err"; cat "$TMP/j"; }

# stage 3 (ship) is plain in probegen's note; named terminal, owner 1 ends there
printf 'stage 1 0\nalloc 16 1 4096 1\nstage 1 3\nfree 16 1 4096\nstage 2 0\nstage 2 4\n' >"$TMP/ship.txt"
out=$(jrun -- "$PG" script "$TMP/ship.txt")
check_eq "names note only: one owner done (end is terminal)" \
	"$(jq -c '.processes[0].owners' <<<"$out")" '{"started":2,"done":1}'
out=$(jrun --terminal-stages ship,end -- "$PG" script "$TMP/ship.txt")
check_eq "--terminal-stages ship,end: both owners done" \
	"$(jq -c '.processes[0].owners' <<<"$out")" '{"started":2,"done":2}'
out=$(jrun --terminal-stages 3 -- "$PG" script "$TMP/ship.txt")
check_eq "--terminal-stages by id: the owner in ship done, the one in end lives on" \
	"$(jq -c '[.processes[0].owners, .processes[0].at_end.owners, .no_terminal_stage]' <<<"$out")" \
	'[{"started":2,"done":1},1,false]'
out=$(jrun --entry-stages work -- "$PG" script "$TMP/ship.txt")
check_eq "--entry-stages work: owners first seen in born are from before (unmatched)" \
	"$(jq -c '[.processes[0].owners.started, .processes[0].unmatched.stage]' <<<"$out")" '[0,{"born":2}]'
"$I" --terminal-stages nosuch -- "$PG" script "$TMP/ship.txt" >/dev/null 2>"$TMP/err"
check_eq "--terminal-stages with an unknown name: exit 2" "$?" 2
check_match "... one line naming it, pointing at inflight list" "$(cat "$TMP/err")" \
	"^inflight: --terminal-stages 'nosuch': no such stage; .*inflight list"
check_eq "... and only one line" "$(wc -l <"$TMP/err")" 1

# a binary whose note has no terminal stage: list and the summary warn
printf 'stage 1 0\nalloc 16 1 64 1\nfree 16 1 64\n' >"$TMP/one.txt"
out=$("$I" --entry-stages 0 --terminal-stages 0 -- "$PG" script "$TMP/one.txt" 2>&1)
check "a terminal stage named: no warning" lacks "no stage is terminal" "$out"
check_match "list warns when the names note has no terminal stage (no note)" \
	"$("$I" list "$BUILD/tests/loader_sdt_partial" 2>&1)" "no stage is terminal"

# --no-rss: every output says so, none shows an RSS figure
out=$(jrun --no-rss -- "$PG" script "$TMP/ship.txt")
check_eq "--no-rss: JSON rss_off" "$(jq -r '.rss_off' <<<"$out")" "not followed (--no-rss)"
check_eq "--no-rss: no RSS figure" "$(jq -c '.processes[0].rss | [.bytes, .peak_bytes]' <<<"$out")" '[0,0]'
out=$("$I" --no-rss -- "$PG" script "$TMP/ship.txt" 2>&1)
check_match "--no-rss: the summary says so" "$out" "^  rss: not followed \(--no-rss\)$"
out=$(jrun -i 20ms --no-rss -- "$PG" script "$TMP/ship.txt")
check_match "--no-rss: the timeline says so" "$(head -n 1 <<<"$out")" '"rss_off":"not followed \(--no-rss\)"'
out=$("$I" -- "$PG" script "$TMP/ship.txt" 2>&1)
check "without it: no such line" lacks "rss: not followed" "$out"

# --no-follow is for -p and --
"$I" --no-follow -b "$PG" >/dev/null 2>"$TMP/err"
check_eq "--no-follow with -b: exit 2" "$?" 2
check_match "... one line" "$(cat "$TMP/err")" "^inflight: --no-follow with -b: "
finish
