#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Hostile strings on their way out: a comm written through /proc/PID/comm,
# a command line and a path holding ESC sequences, BEL, newlines and invalid UTF-8, and a
# crafted recording with such host, argv, binary, comm and cmdline, or with such a class name.
# Every output - the summary, the timeline, the report in every format, compare, the exporter,
# error and status lines - must stay inert: no control byte but its own newlines, valid
# UTF-8, no C1 control or bidi override, the strings shown as visible escapes (JSON keeps
# them exactly, escaped as JSON). A recording whose names break the contract is refused.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
needs_root

copy_bins inflight probegen
cp "$BUILD/tests/hostile_rec" "$TMP/hostile_rec"
# ESC OSC title, BEL, clear screen, a newline with a fake error line, a C1 CSI, a bidi override,
# a byte that is no UTF-8
EVIL=$'\e]0;owned\a\e[2J\ninflight: fake\r\xc2\x9b31m\xe2\x80\xae\xff'
SHOWN='\\x1b\]0;owned\\x07\\x1b\[2J\\ninflight: fake\\r\\u009b31m\\u202e\\xff'

# inert FILE...: no control byte but \n and \t, no DEL, C1 control, line/paragraph separator or
# bidi override, and valid UTF-8
inert() {
	! LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]' "$@" &&
		cat "$@" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1
}

# --- a crafted recording: every string field hostile ------------------------------------------
"$TMP/hostile_rec" "$TMP/evil.rec" strings
for f in text csv json chrome folded svg; do
	"$TMP/inflight" report --format $f "$TMP/evil.rec" >"$TMP/r.$f" 2>"$TMP/r.$f.err"
	check_eq "report --format $f of a hostile recording: exit 0" "$?" 0
	check "... its output is inert" inert "$TMP/r.$f" "$TMP/r.$f.err"
done
check_match "text: the command shown escaped" "$(cat "$TMP/r.text")" "^command    prover $SHOWN$"
check_match "text: the comm shown escaped" "$(cat "$TMP/r.text")" "^pid 4242 \(c$SHOWN\): [0-9]+ probe events? \(3 records\)"
check_eq "text: one line per header field (the newline did not make two)" \
	"$(grep -c 'inflight: fake' "$TMP/r.text")" 3
check_eq "json: parses, and keeps the command exactly (the bad byte as U+FFFD)" \
	"$(jq -r .recording.command "$TMP/r.json" | od -An -c | tr -d ' \n')" \
	"$(printf '%s' "prover ${EVIL%$'\xff'}"$'\xef\xbf\xbd\n' | od -An -c | tr -d ' \n')"
check "chrome: parses" jq -e .traceEvents "$TMP/r.chrome"
check_match "folded: one well-formed line" "$(cat "$TMP/r.folded")" '^born;big [0-9]+$'
check "svg: well-formed XML" xmllint --noout "$TMP/r.svg"
"$TMP/inflight" compare "$TMP/evil.rec" "$TMP/evil.rec" >"$TMP/cmp.out" 2>&1
check_eq "compare of hostile recordings: exit 0" "$?" 0
check "... inert" inert "$TMP/cmp.out"
check_match "... the command escaped" "$(cat "$TMP/cmp.out")" "^   pid 4242: prover \\\\x1b"

"$TMP/hostile_rec" "$TMP/names.rec" names
"$TMP/inflight" report "$TMP/names.rec" >"$TMP/n.out" 2>"$TMP/n.err"
check_eq "a recording whose class name breaks the contract: refused (exit 8)" "$?" 8
check_eq "... one line" "$(wc -l <"$TMP/n.err")" 1
check_match "... saying so" "$(cat "$TMP/n.err")" "class 0: a name outside the contract's \[A-Za-z0-9_.:-\]"
check_eq "... and nothing on stdout" "$(cat "$TMP/n.out")" ""

# --- a live process with a hostile comm --------------------------------------------------------
# anyone may set their own comm (prctl, /proc/self/comm); the kernel sets it at exec from the
# file's name, which may hold any byte but '/': a copy of probegen named so sets it here
# two gates: the events come after the first (once inflight is attached), the exit after the
# second (once it was scraped)
printf 'stage 1 0\nalloc 16 1 4096 1\ngate\nfree 16 1 4096\nstage 1 4\ngate\n' >"$TMP/gate.txt"
COMM=$'\e]0;x\a\n\xc2\x9b\xff'
cp "$TMP/probegen" "$TMP/$COMM"
"$TMP/$COMM" script "$TMP/gate.txt" >"$TMP/pg.out" &
pg=$!
bg_track "$pg"
wait_until 5 file_has "$TMP/pg.out" '^gated'
check_eq "the comm is hostile" "$(od -An -tx1 "/proc/$pg/comm" | tr -d ' \n')" 1b5d303b78070ac29bff0a
netns_up || not_ok "a private network namespace"
"${IN_NS[@]}" "$TMP/inflight" serve -p "$pg" >"$TMP/sv.out" 2>"$TMP/sv.err" &
sv=$!
bg_track "$sv"
wait_until 10 file_has "$TMP/sv.err" '^inflight: serving' || not_ok "serve -p" "$(cat "$TMP/sv.err")"
"$TMP/inflight" record -q -o "$TMP/live.rec" -p "$pg" >/dev/null 2>"$TMP/rec.err" &
rec=$!
bg_track "$rec"
attached() { grep -Eq '^CapEff:\s+0+$' "/proc/$rec/status"; }
wait_until 10 attached || not_ok "record -p attached" "$(cat "$TMP/rec.err")"
kill -USR1 "$pg"
seen() { in_ns curl -s http://127.0.0.1:9464/metrics | grep -q "^inflight_process_info{pid=\"$pg\""; }
wait_until 10 seen || not_ok "the exporter sees the process" "$(cat "$TMP/sv.err")"
in_ns curl -s http://127.0.0.1:9464/metrics >"$TMP/scrape"
check "the exposition is inert" inert "$TMP/scrape"
check_match "... the comm label escaped" "$(cat "$TMP/scrape")" \
	"^inflight_process_info\{pid=\"$pg\",binary=\"[^\"]*\",comm=\"\\\\\\\\x1b\]0;x\\\\\\\\x07\\\\\\\\n\\\\\\\\u009b\\\\\\\\xff\",command=\"[^\"]*\",start_time=\"[0-9]+\"\} 1$"
check "... and Prometheus's own linter takes it" sh -c "promtool check metrics <'$TMP/scrape' >/dev/null 2>&1"
kill -USR1 "$pg"
wait "$pg"
wait "$rec"
wait "$sv"
check "serve's final summary is inert" inert "$TMP/sv.out" "$TMP/sv.err"
"$TMP/inflight" report "$TMP/live.rec" >"$TMP/live.txt" 2>&1
check "a recording of it reports inert" inert "$TMP/live.txt"
check_match "... with the comm escaped" "$(cat "$TMP/live.txt")" '^pid [0-9]+ \(\\x1b\]0;x\\x07\\n\\u009b\\xff\)'

# --- a hostile command line and path ----------------------------------------------------------------
mkdir "$TMP/$EVIL"
cp "$TMP/probegen" "$TMP/$EVIL/probegen"
printf 'stage 1 0\nalloc 16 1 4096 1\nfree 16 1 4096\nstage 1 4\n' >"$TMP/$EVIL/run.txt"
"$TMP/inflight" -- "$TMP/$EVIL/probegen" script "$TMP/$EVIL/run.txt" >"$TMP/t.out" 2>"$TMP/t.err"
check_eq "trace -- a hostile path: exit 0" "$?" 0
check "... the summary is inert" inert "$TMP/t.out" "$TMP/t.err"
check_match "... its header shows the command escaped" "$(cat "$TMP/t.out")" "^inflight summary: pid [0-9]+: .*$SHOWN/probegen"
"$TMP/inflight" --json -o "$TMP/j.out" -- "$TMP/$EVIL/probegen" script "$TMP/$EVIL/run.txt" \
	>/dev/null 2>"$TMP/j.err"
check "--json: inert" inert "$TMP/j.out" "$TMP/j.err"
check_eq "--json: the binary kept exactly" "$(grep '"type":"summary"' "$TMP/j.out" | jq -r '.processes[0].binary' | od -An -tx1 | tr -d ' \n')" \
	"$(printf '%s' "$TMP/${EVIL%$'\xff'}"$'\xef\xbf\xbd/probegen\n' | od -An -tx1 | tr -d ' \n')"
"$TMP/inflight" -i 10ms -- "$TMP/$EVIL/probegen" script "$TMP/$EVIL/run.txt" >"$TMP/i.out" 2>&1
check "the timeline: inert" inert "$TMP/i.out"
"$TMP/inflight" record -o "$TMP/cmd.rec" -- "$TMP/$EVIL/probegen" script "$TMP/$EVIL/run.txt" \
	>/dev/null 2>"$TMP/r.err"
"$TMP/inflight" report "$TMP/cmd.rec" >"$TMP/cmd.txt" 2>&1
check "record and report of it: inert" inert "$TMP/cmd.txt" "$TMP/r.err"
# the command whole, wrapped between words at 79 columns (never cut): join its lines
cmd=$(sed -n '/^command/,/^binary/p' "$TMP/cmd.txt" | sed '$d')
check_match "... the command escaped, whole" "$(printf '%s\n' "$cmd" | sed -E 's/^(command)? +//' | tr '\n' ' ')" \
	'/\\x1b\]0;owned\\x07\\x1b\[2J\\ninflight: fake\\r\\u009b31m\\u202e\\xff/probegen script '
check_eq "... its lines are its own: the file's newline made none" \
	"$(printf '%s\n' "$cmd" | grep -vc '^command    \|^           [^ ]')" 0
"$TMP/inflight" list "$TMP/$EVIL/probegen" >"$TMP/l.out" 2>&1
check "list of it: inert" inert "$TMP/l.out"
"$TMP/inflight" -b "$TMP/$EVIL/probegen" >"$TMP/b.out" 2>"$TMP/b.err" &
tr=$!
bg_track "$tr"
wait_until 10 file_has "$TMP/b.err" '^inflight: tracing' || not_ok "-b of the hostile path" "$(cat "$TMP/b.err")"
check_eq "-b: the tracing line is one line" "$(wc -l <"$TMP/b.err")" 1
check "... and inert" inert "$TMP/b.err"
kill -INT "$tr"
wait "$tr"
"$TMP/inflight" -- "$TMP/$EVIL/nothing" >/dev/null 2>"$TMP/e.err"
check_eq "an error naming it: exit 12" "$?" 12
check_eq "... one line" "$(wc -l <"$TMP/e.err")" 1
check "... inert" inert "$TMP/e.err"
finish
