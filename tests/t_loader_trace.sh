#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight` end to end with real BPF: the probe target (known answers) traced in every attach
# mode, the timeline, JSON, exit codes and signals, then the reference prover. Needs root.
source "$(dirname "$0")/lib.sh"
INFLIGHT=$BUILD/inflight
TARGET=$BUILD/tests/loader_probe_target
needs_root

# summary_has DESCRIPTION FILE LINE...: each LINE appears verbatim in FILE
summary_has() {
	local what=$1 file=$2 line
	shift 2
	for line in "$@"; do
		if grep -qxF -- "$line" "$file"; then ok "$what: '$line'"; else
			not_ok "$what: '$line'" "not in $(sed 's/^/|/' "$file")"
		fi
	done
}

# waits until FILE holds the line "holding": the target's hold began, its probes all fired
wait_holding() {
	for _ in $(seq 1000); do
		grep -qx holding "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# waits until PID runs the executable PATH (a forked shell has not always exec'd yet)
wait_exec() {
	for _ in $(seq 500); do
		[ "$(readlink "/proc/$1/exe")" = "$(readlink -f "$2")" ] && return 0
		sleep 0.01
	done
	return 1
}

# --- spawned command: known answers ---
timeout 60 "$INFLIGHT" -- "$TARGET" 3 >"$TMP/spawn" 2>"$TMP/err"
check_eq "spawn: exit status of the command" "$?" 0
check_eq "spawn: nothing on stderr" "$(cat "$TMP/err")" ""
summary_has "spawn" "$TMP/spawn" \
	"  exited with status 0; tracing ended: command exited" \
	"  events: buf_alloc 3, buf_free 3, stage 9" \
	"  owners: 3 started, 3 done" \
	"  parse            1      1  4.00 KiB  c1_data 1/4.00K" \
	"in flight at exit: nothing" \
	"leak candidates: none" \
	"unmatched events (from before the attach): none" \
	"anomalies: none"
# the header, its wrapped lines joined again (a long checkout path wraps the command)
check_eq "spawn: header names the command" \
	"$(awk 'NR == 1 { h = $0; next } /^    / { sub(/^    /, " "); h = h $0; next }
		{ print h; exit }' "$TMP/spawn" | sed -E 's/pid [0-9]+/pid N/')" \
	"inflight summary: pid N: $TARGET 3"
check_match "spawn: the peak, set by the 2nd event" "$(cat "$TMP/spawn")" \
	'^peak: 4.00 KiB in 1 buffer at \+[0-9.]+ s \(event 2\)$'
check_match "spawn: dwell of parse" "$(cat "$TMP/spawn")" '^  parse: 3 left, mean '
check_match "spawn: dwell of synth" "$(cat "$TMP/spawn")" '^  synth: 3 left, mean '

timeout 60 "$INFLIGHT" -- "$TARGET" 1 7 >"$TMP/out" 2>&1
check_eq "spawn: the command's exit status 7 is ours" "$?" 7
summary_has "spawn, status 7" "$TMP/out" "  exited with status 7; tracing ended: command exited"

# --- JSON ---
timeout 60 "$INFLIGHT" --json -o "$TMP/json" -- "$TARGET" 2
check_eq "json: exit 0" "$?" 0
check_eq "json: one line" "$(wc -l <"$TMP/json")" 1
json=$(cat "$TMP/json")
check_match "json: a summary, schema 2, its clock named" "$json" \
	'^\{"schema":2,"type":"summary","clock":\{"origin":"first probe event","origin_pid":[0-9]+,"origin_mono_ns":[0-9]+\},"reason":"command exited","torn":0,"procs_map_full":0,"rss_off":null,"no_terminal_stage":false,"processes":\['
check_match "json: events" "$json" '"events":\{"buf_alloc":2,"buf_free":2,"stage":6\}'
check_match "json: exit status" "$json" '"exited":true,"exit_status":0,"exit_signal":null,'
check_match "json: the peak" "$json" '"peak":\{"bytes":4096,"bufs":1,'
check_match "json: nothing at the end" "$json" '"at_end":\{"bytes":0,"bufs":0,"owners":0,'
check_match "json: exact" "$json" '"exact":true\}\]\}$'

# --- the timeline: the final snapshot always comes before the summary ---
timeout 60 "$INFLIGHT" -i 10ms -- "$TARGET" 2 >"$TMP/live"
check_eq "timeline: exit 0" "$?" 0
last=$(sed -n '/^inflight summary/q;p' "$TMP/live" | grep -E '^(pid|peak|total) ' | tail -3)
check_match "timeline: a final table" "$last" '^pid [0-9]+  \+[0-9.]+s  tracked 0 B  '
check_match "timeline: its total row" "$last" \
	'total +0 +0 +0( +-)*'
check_match "timeline: peak and the exit" "$last" '^peak 4.00 KiB at \+[0-9.]+s  probe events 10  exited$'
timeout 60 "$INFLIGHT" -i 10ms --json -o "$TMP/livej" -- "$TARGET" 2
check_match "timeline json: interval lines first" "$(head -1 "$TMP/livej")" '^\{"schema":2,"type":"interval","clock":'
check_match "timeline json: the summary last" "$(tail -1 "$TMP/livej")" '^\{"schema":2,"type":"summary",'
check_eq "timeline json: every line an object" "$(grep -vc '^{.*}$' "$TMP/livej")" 0

# --- SIGTERM: passed on to the command; the summary shows what it held ---
"$INFLIGHT" -- "$TARGET" --hold-ms 20000 1 >"$TMP/term" 2>&1 &
ipid=$!
check "SIGTERM: the command reached its hold" wait_holding "$TMP/term"
kill -TERM "$ipid"
wait "$ipid"
check_eq "SIGTERM: exit 128+15 (the command died of it)" "$?" 143
summary_has "SIGTERM" "$TMP/term" \
	"  killed by SIGTERM; tracing ended: terminated (SIGTERM)" \
	"in flight at exit: 1.00 MiB in 1 buffer, 1 owner" \
	"  done             1      1  1.00 MiB  aux 1/1.00M" \
	"leak candidates: 1 owner in a terminal stage holds 1 buffer, 1.00 MiB" \
	"  aux 1/1.00M"

# --- the command SIGKILLed: its buffers are reported as held at exit ---
"$INFLIGHT" -- "$TARGET" --hold-ms 20000 1 >"$TMP/kill" 2>&1 &
ipid=$!
check "SIGKILL: the command reached its hold" wait_holding "$TMP/kill"
kill -KILL "$(pgrep -P "$ipid")"
wait "$ipid"
check_eq "SIGKILL: exit 128+9" "$?" 137
summary_has "SIGKILL" "$TMP/kill" \
	"  killed by SIGKILL; tracing ended: command exited" \
	"in flight at exit: 1.00 MiB in 1 buffer, 1 owner"

# --- -p PID: the target waits for the attach, runs, exits (the earlier runs' probes gone) ---
wait_detached
"$TARGET" --wait-attach 2 &
tpid=$!
wait_exec "$tpid" "$TARGET"
timeout 60 "$INFLIGHT" -p "$tpid" >"$TMP/pid" 2>&1
check_eq "-p: exit 0 when the target exits" "$?" 0
wait "$tpid"
check_eq "-p: the target saw the attach (not 99)" "$?" 0
summary_has "-p" "$TMP/pid" \
	"inflight summary: pid $tpid: $(readlink -f "$TARGET")" \
	"  exited; tracing ended: target exited" \
	"  events: buf_alloc 2, buf_free 2, stage 6"

# --- -p PID, Ctrl-C while the target still holds a buffer ---
wait_detached
"$TARGET" --wait-attach --hold-ms 20000 1 >"$TMP/hold" &
tpid=$!
wait_exec "$tpid" "$TARGET"
"$INFLIGHT" -p "$tpid" >"$TMP/int" 2>&1 &
ipid=$!
check "SIGINT: the target reached its hold" wait_holding "$TMP/hold"
kill -INT "$ipid"
wait "$ipid"
check_eq "SIGINT: exit 0" "$?" 0
summary_has "SIGINT" "$TMP/int" \
	"  still running; tracing ended: interrupted (SIGINT)" \
	"in flight at the end: 1.00 MiB in 1 buffer, 1 owner"
check "SIGINT: the target keeps running" kill -0 "$tpid"
kill "$tpid"
wait "$tpid" 2>/dev/null

# --- -b PATH: processes of a private copy, kept apart by pid ---
cp "$TARGET" "$TMP/pt"
"$INFLIGHT" -b "$TMP/pt" >"$TMP/bin" 2>"$TMP/bin.err" &
ipid=$!
"$TMP/pt" --wait-attach 2 &
a=$!
"$TMP/pt" --wait-attach 3 &
b=$!
wait "$a"
check_eq "-b: first process saw the attach" "$?" 0
wait "$b"
check_eq "-b: second process saw the attach" "$?" 0
kill -INT "$ipid"
wait "$ipid"
check_eq "-b: exit 0 after Ctrl-C" "$?" 0
check_eq "-b: once attached, one line on stderr" "$(cat "$TMP/bin.err")" \
	"inflight: tracing $TMP/pt; Ctrl-C ends and prints the summary"
check_eq "-b: two summaries" "$(grep -c '^inflight summary: pid' "$TMP/bin")" 2
for p in "$a:2, buf_free 2, stage 6" "$b:3, buf_free 3, stage 9"; do
	check_eq "-b: events of pid ${p%%:*}" \
		"$(sed -n "/^inflight summary: pid ${p%%:*}: /,/events/p" "$TMP/bin" | tail -1)" \
		"  events: buf_alloc ${p#*:}"
done
# (with its status when inflight's pidfd of the process read it before the shell reaped it:
# Linux 6.15+, a matter of timing)
check_eq "-b: both exited by themselves, before the end" \
	"$(grep -cE '^  exited( with status 0)? at \+[0-9]+\.[0-9]{3} s; tracing ended later: interrupted \(SIGINT\)$' "$TMP/bin")" 2
check_eq "-b: each summary names its clock" \
	"$(grep -c '^  times: seconds since the first probe event (pid [0-9]*)$' "$TMP/bin")" 2

# --- -b across restarts: exited processes leave the kernel maps (--max-procs 2 is enough
# for three) and still reach the summary; the timeline shows when they have left ---
"$INFLIGHT" --json -i 20ms --max-procs 2 -b "$TMP/pt" >"$TMP/rs" 2>"$TMP/rs.err" &
ipid=$!
for _ in $(seq 500); do grep -q tracing "$TMP/rs.err" && break; sleep 0.01; done
"$TMP/pt" 2 &
a=$!
"$TMP/pt" 3 &
b=$!
wait "$a" "$b"
seen=$(wc -l <"$TMP/rs")
gone=""
for _ in $(seq 500); do # an interval after both exits with no process left
	tail -n +$((seen + 1)) "$TMP/rs" | jq -e 'select(.processes == [])' >/dev/null 2>&1 &&
		gone=yes && break
	sleep 0.01
done
check_eq "-b restarts: both processes left the maps" "$gone" yes
"$TMP/pt" 1 &
c=$!
wait "$c"
kill -INT "$ipid"
wait "$ipid"
check_eq "-b restarts: exit 0" "$?" 0
final=$(tail -n 1 "$TMP/rs")
check_match "-b restarts: the summary is last" "$final" '^\{"schema":2,"type":"summary","clock":\{[^}]*\},"reason":"interrupted \(SIGINT\)","torn":0,"procs_map_full":0,'
check_eq "-b restarts: three processes in it" \
	"$(python3 -c 'import json, sys; print(len(json.load(sys.stdin)["processes"]))' <<<"$final")" 3
for p in "$a:2,\"buf_free\":2,\"stage\":6" "$b:3,\"buf_free\":3,\"stage\":9" \
	"$c:1,\"buf_free\":1,\"stage\":3"; do
	check_match "-b restarts: events of pid ${p%%:*}" "$final" \
		"\"pid\":${p%%:*},[^{]*\"events\":\\{\"buf_alloc\":${p#*:}\\}"
done

# --- the reference prover, one proof of 10 partitions ---
timeout 120 "$INFLIGHT" -- "$BUILD/prover" -n 1 -p 10 --log-n 12 >"$TMP/prover" 2>"$TMP/err"
check_eq "prover: exit 0" "$?" 0
sed -n '/^inflight summary/,$p' "$TMP/prover" >"$TMP/psum"
summary_has "prover" "$TMP/psum" \
	"  exited with status 0; tracing ended: command exited" \
	"  owners: 11 started, 11 done" \
	"in flight at exit: nothing" \
	"leak candidates: none" \
	"unmatched events (from before the attach): none" \
	"anomalies: none"
ev=$(grep '^  events: ' "$TMP/psum")
allocs=$(echo "$ev" | sed -E 's/.*buf_alloc ([0-9]+),.*/\1/')
frees=$(echo "$ev" | sed -E 's/.*buf_free ([0-9]+),.*/\1/')
check_eq "prover: every buffer allocated was freed" "$frees" "$allocs"
check "prover: buffers were allocated ($allocs)" test "$allocs" -gt 10
check_match "prover: a peak with its composition" "$(cat "$TMP/psum")" \
	'^peak: [0-9.]+ [KMG]iB in [0-9]+ buffers at \+[0-9.]+ s \(event [0-9]+\)$'
for stage in parse wait_permit synth chan_send gpu_queue gpu finalize assemble; do
	check_match "prover: dwell of $stage" "$(cat "$TMP/psum")" "^  $stage: [0-9]+ left, mean "
done
check_match "prover: 10 partitions left synth" "$(cat "$TMP/psum")" '^  synth: 10 left, mean '

finish
