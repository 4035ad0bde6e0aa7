#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The live timeline on a terminal: in tmux, `inflight -i` redraws one screen in place each
# interval (one frame on the screen however many intervals passed, its clock advancing),
# leaves the last frame and prints the summary under it; to a pipe the same tables follow
# each other as plain lines. Needs root.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
T=$BUILD/tests/loader_probe_target
needs_root
if ! command -v tmux >/dev/null; then
	not_ok "tmux is installed" "scripts/install-deps.sh test"
	# --json with -- CMD: the JSON never shares stdout with the command's own output
out=$("$I" --json -- "$T" 1 2>&1)
check_eq "--json -- CMD without -o: refused, exit 2" "$?" 2
check_match "... saying why and what to do" "$out" \
	'^inflight: --json with -- CMD: the JSON lines would share stdout with the command.s output; give -o FILE'
"$I" --json -i 50ms -o "$TMP/j.json" -- "$T" --hold-ms 300 1 >"$TMP/cmd.out" 2>"$TMP/cmd.err"
check_eq "--json -o FILE -- CMD: exit 0" "$?" 0
check_eq "... the command's output stays on stdout, alone" "$(cat "$TMP/cmd.out")" holding
check_eq "... FILE holds JSON lines only" "$(grep -vc '^{"schema":2,"type":"\(interval\|summary\)",' "$TMP/j.json")" 0
check_match "... intervals, then the summary" "$(tail -n 1 "$TMP/j.json")" '^\{"schema":2,"type":"summary"'
"$I" -o "$TMP/sum.txt" -- "$T" 1 >/dev/null 2>&1
check_match "-o FILE for text: the summary goes there" "$(head -n 1 "$TMP/sum.txt")" '^inflight summary: pid [0-9]+: '
ln -s "$TMP/sum.txt" "$TMP/link"
"$I" -o "$TMP/link" -- "$T" 1 >/dev/null 2>&1
check_eq "-o never writes through a symlink: exit 9" "$?" 9
finish
fi
S=inflight-tty-$$
trap 'tmux kill-session -t "$S" 2>/dev/null; rm -rf "$TMP"' EXIT
# the target holds a buffer for 4 s: some 40 intervals of 100 ms
tmux new-session -d -s "$S" -x 100 -y 50 \
	"$I -i 100ms -- $T --hold-ms 4000 1; echo INFLIGHT-DONE; sleep 30"
screen() { tmux capture-pane -p -t "$S"; }
# the first frame comes once the probes are attached (longer on a loaded machine)
for _ in $(seq 200); do screen | grep -q '^pid [0-9]' && break; sleep 0.05; done
frames=()
for i in 1 2 3; do
	frames+=("$(screen)")
	sleep 0.6
done
for f in 0 1 2; do
	check_eq "capture $((f + 1)): one frame on the screen, however many intervals passed" \
		"$(printf '%s\n' "${frames[$f]}" | grep -c '^inflight  every 100 ms')" 1
done
check_match "the frame names its clock" "${frames[0]}" \
	'^inflight  every 100 ms  times: seconds since the first probe event \(pid [0-9]+\)'
check_match "... and shows the table" "${frames[0]}" '^stage +owners +bufs +bytes'
t1=$(printf '%s\n' "${frames[0]}" | sed -nE 's/^pid [0-9]+  \+([0-9.]+)s.*/\1/p')
t3=$(printf '%s\n' "${frames[2]}" | sed -nE 's/^pid [0-9]+  \+([0-9.]+)s.*/\1/p')
check "the frame is redrawn: its clock advances ($t1 s, then $t3 s)" \
	python3 -c "import sys; sys.exit(0 if $t3 - $t1 > 0.5 else 1)"
check_eq "the frame starts at the top of the screen" "$(printf '%s\n' "${frames[2]}" | head -n 1 | cut -c1-18)" \
	"inflight  every 10"
for _ in $(seq 100); do screen | grep -q INFLIGHT-DONE && break; sleep 0.1; done
end=$(screen)
check_match "at the end: the summary under the last frame" "$(printf '%s\n' "$end" | tr '\n' '|')" \
	'inflight  every 100 ms.*\|peak [^|]*exited\|.*\|inflight summary: pid [0-9]+'
check_eq "... with the last frame still there, once" "$(printf '%s\n' "$end" | grep -c '^inflight  every 100 ms')" 1
# not a terminal: plain lines, one table per interval, no escape sequences
"$I" -i 100ms -- "$T" --hold-ms 1000 1 >"$TMP/plain" 2>&1
# (how many intervals pass is the scheduler's business: each must be a whole table, none
# earlier than the one before, and the last one says the process exited)
tables=$(grep -c '^pid ' "$TMP/plain")
check_eq "to a file: whole tables, one per interval ($tables of them)" \
	"$(grep -c '^stage  ' "$TMP/plain") $(grep -c '^peak .* probe events' "$TMP/plain")" \
	"$tables $tables"
check "... none earlier than the one before (the last may share its tick)" awk -v n="$tables" '
	/^pid / { t = substr($3, 2) + 0; if (seen && t < last) bad = 1; last = t; seen++ }
	END { exit !(n > 0 && seen == n && !bad) }' "$TMP/plain"
check "... the last one says the process exited" \
	sh -c "grep '^peak .* probe events' '$TMP/plain' | tail -n 1 | grep -q ' exited\$'"
check_eq "... and no escape sequence" "$(grep -c $'\x1b' "$TMP/plain")" 0
check_eq "... the clock named once" "$(grep -c '^inflight: times are seconds since the first probe event' "$TMP/plain")" 1
# --json with -- CMD: the JSON never shares stdout with the command's own output
out=$("$I" --json -- "$T" 1 2>&1)
check_eq "--json -- CMD without -o: refused, exit 2" "$?" 2
check_match "... saying why and what to do" "$out" \
	'^inflight: --json with -- CMD: the JSON lines would share stdout with the command.s output; give -o FILE'
"$I" --json -i 50ms -o "$TMP/j.json" -- "$T" --hold-ms 300 1 >"$TMP/cmd.out" 2>"$TMP/cmd.err"
check_eq "--json -o FILE -- CMD: exit 0" "$?" 0
check_eq "... the command's output stays on stdout, alone" "$(cat "$TMP/cmd.out")" holding
check_eq "... FILE holds JSON lines only" "$(grep -vc '^{"schema":2,"type":"\(interval\|summary\)",' "$TMP/j.json")" 0
check_match "... intervals, then the summary" "$(tail -n 1 "$TMP/j.json")" '^\{"schema":2,"type":"summary"'
"$I" -o "$TMP/sum.txt" -- "$T" 1 >/dev/null 2>&1
check_match "-o FILE for text: the summary goes there" "$(head -n 1 "$TMP/sum.txt")" '^inflight summary: pid [0-9]+: '
ln -s "$TMP/sum.txt" "$TMP/link"
"$I" -o "$TMP/link" -- "$T" 1 >/dev/null 2>&1
check_eq "-o never writes through a symlink: exit 9" "$?" 9
finish
