#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight -b` across many processes: every summary where -o asked (the retired past the 256
# kept too), each process named and on a named clock, and the live view's words about
# processes that have come and gone. Counts and exact strings, JSON read with python3.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
needs_root

copy_bins inflight probegen
# each run: owner 5 holds 64 KiB at its exit
printf 'stage 5 0\nalloc 32 2 65536 5\nalloc 33 0 512 5\nstage 5 2\nfree 33 0 512\n' >"$TMP/run.txt"

# start_b OUT ERR ARGS...: inflight ARGS -b probegen in the background, once attached
start_b() {
	local out=$1 err=$2
	shift 2
	"$TMP/inflight" "$@" -b "$TMP/probegen" >"$out" 2>"$err" &
	tr_pid=$!
	bg_track "$tr_pid"
	wait_until 10 file_has "$err" '^inflight: tracing ' || not_ok "inflight -b attaches" "$(cat "$err")"
}
stop_b() { kill -INT "$tr_pid"; wait "$tr_pid"; }

# --- 300 restarts, --json -o FILE: every summary in FILE, nothing on stdout ---------------
N=300
start_b "$TMP/a.stdout" "$TMP/a.err" --json -o "$TMP/a.jsonl"
for ((i = 0; i < N; i += 10)); do
	batch=()
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		"$TMP/probegen" script "$TMP/run.txt" &
		batch+=($!)
	done
	wait "${batch[@]}"
done
stop_b
check_eq "--json -o: exit 0 on SIGINT" "$?" 0
check_eq "--json -o: nothing on stdout (the retired's summaries too go to FILE)" \
	"$(wc -c <"$TMP/a.stdout")" 0
check_eq "--json -o: FILE holds every process's summary, $N" \
	"$(python3 -c '
import json, sys
pids = set()
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["type"] == "summary":
        pids.update(p["pid"] for p in o["processes"])
print(len(pids))' "$TMP/a.jsonl")" "$N"
check_eq "--json -o: the retired came before the end, each a summary of its own" \
	"$(python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
early = [o for o in objs[:-1] if o["type"] == "summary"]
print(len(early) > 0 and all(o["reason"] is None and len(o["processes"]) == 1 for o in early),
      objs[-1]["reason"] is not None)' "$TMP/a.jsonl")" "True True"

# --- the live view once the processes that hit probes have ended ---------------------------
start_b "$TMP/b.out" "$TMP/b.err" -i 20ms
"$TMP/probegen" script "$TMP/run.txt"
check "-i: the view says nothing runs now, once the process has ended" \
	wait_until 10 file_has "$TMP/b.out" '^no traced process is running now$'
stop_b
check_eq "-i: 'no traced process has hit a probe yet' only before the first table" \
	"$(awk '/^pid [0-9]+ / { seen = 1 } seen && /has hit a probe yet/ { n++ } END { print n + 0 }' \
		"$TMP/b.out")" 0
# (while it ran and in the interval after its end: once or twice, as the ticks fall)
check "-i: the process's table was shown" test "$(grep -c '^pid [0-9]* ' "$TMP/b.out")" -ge 1

# --- -b processes named: the summary (text, JSON) and two -b recordings compared ----------
# gated: the process runs until SIGUSR1, long enough to be seen and named from /proc (one
# that ends sooner is named from what the kernel read: below)
printf 'stage 5 0\nalloc 32 2 65536 5\ngate\nfree 32 2 65536\nstage 5 4\n' >"$TMP/g1.txt"
printf 'stage 5 0\nalloc 32 2 65536 5\nalloc 33 2 65536 5\ngate\nfree 32 2 65536\nfree 33 2 65536\nstage 5 4\n' >"$TMP/g2.txt"
# gated_run SCRIPT: one probegen run through its gate
gated_run() {
	"$TMP/probegen" script "$1" >"$TMP/gr.out" &
	local p=$!
	wait_until 10 file_has "$TMP/gr.out" '^gated$'
	sleep 0.3 # past inflight's next look at the maps (every 100 ms)
	kill -USR1 "$p"
	wait "$p"
}
start_b "$TMP/d.out" "$TMP/d.err" --json -o "$TMP/d.jsonl"
gated_run "$TMP/g1.txt"
stop_b
check_eq "-b --json: the process's comm, command and argv, read while it ran" \
	"$(python3 -c '
import json, sys
p = [json.loads(l) for l in open(sys.argv[1])][-1]["processes"][0]
print(p["comm"], "|", p["command"], "|", p["argv"])' "$TMP/d.jsonl")" \
	"probegen | $TMP/probegen script $TMP/g1.txt | ['$TMP/probegen', 'script', '$TMP/g1.txt']"
start_b "$TMP/e.out" "$TMP/e.err"
gated_run "$TMP/g2.txt"
stop_b
# (a long command line wraps between its words)
check_match "-b text summary: headed with the process's command line" \
	"$(sed -n '1,/^  [a-z]/p' "$TMP/e.out" | sed '$d' | tr '\n' ' ' | tr -s ' ')" \
	"^inflight summary: pid [0-9]+: $TMP/probegen script $TMP/g2\\.txt $"
check_match "-b: a process that ended by itself says how (its pidfd), and that tracing went on" \
	"$(cat "$TMP/e.out")" \
	'^  exited with status 0 at \+[0-9]+\.[0-9]{3} s; tracing ended later: interrupted \(SIGINT\)$'
check_eq "-b --json: its exit status" "$(python3 -c '
import json, sys
p = [json.loads(l) for l in open(sys.argv[1])][-1]["processes"][0]
print(p["exited"], p["exit_status"], p["exit_signal"])' "$TMP/d.jsonl")" "True 0 None"
start_b "$TMP/f.out" "$TMP/f.err"
"$TMP/probegen" script "$TMP/g1.txt" >"$TMP/gk.out" &
pk=$!
wait_until 10 file_has "$TMP/gk.out" '^gated$'
sleep 0.3
kill -KILL "$pk"
wait "$pk" 2>/dev/null
stop_b
check_match "-b: a process killed by a signal says which" "$(cat "$TMP/f.out")" \
	'^  killed by SIGKILL at \+[0-9]+\.[0-9]{3} s; tracing ended later: interrupted \(SIGINT\)$'
for n in 1 2; do
	"$TMP/inflight" record -o "$TMP/r$n.rec" -b "$TMP/probegen" 2>"$TMP/r$n.err" &
	tr_pid=$!
	bg_track "$tr_pid"
	wait_until 10 file_has "$TMP/r$n.err" '^inflight: recording ' || not_ok "record -b attaches" "$(cat "$TMP/r$n.err")"
	gated_run "$TMP/g$n.txt"
	stop_b
done
"$TMP/inflight" compare "$TMP/r1.rec" "$TMP/r2.rec" >"$TMP/cmp.txt"
# each side: "A  FILE", then "   pid N: COMMAND" (wrapped), then its duration
side() { awk -v s="$1" '/^[AB]  / { on = ($1 == s); next } on && /from its first event/ { exit }
	on { printf "%s ", $0 }' "$TMP/cmp.txt" | tr -s ' '; }
check_eq "compare of two -b recordings: A named by its command line" "$(side A)" \
	" pid $(sed -n 's/^   pid \([0-9]*\):.*/\1/p' "$TMP/cmp.txt" | head -n 1): $TMP/probegen script $TMP/g1.txt "
check_eq "report of a -b recording: the process's comm and words, kept in the recording" \
	"$("$TMP/inflight" report "$TMP/r1.rec" --format json | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
print(p["comm"], p["argv"])')" "probegen ['$TMP/probegen', 'script', '$TMP/g1.txt']"
check_eq "... and B by its own" "$(side B | sed 's/pid [0-9]*/pid N/')" \
	" pid N: $TMP/probegen script $TMP/g2.txt "

# --- anomalies said as they are seen: on stderr while the process runs, then in the summary --
# two allocs of class 20, one stage event of stage 17, then the gate (SIGUSR1 ends it)
printf 'stage 5 0\nalloc 32 20 65536 5\nalloc 33 20 512 5\nstage 5 17\ngate\nstage 5 2\n' >"$TMP/bad.txt"
"$TMP/inflight" -o "$TMP/c.out" -- "$TMP/probegen" script "$TMP/bad.txt" >"$TMP/c.pg" 2>"$TMP/c.err" &
tr_pid=$!
bg_track "$tr_pid"
check "probegen reached its gate" wait_until 10 file_has "$TMP/c.pg" '^gated$'
pg=$(pgrep -P "$tr_pid" -x probegen)
check "the anomalies are said on stderr while the process still runs" \
	wait_until 10 file_has "$TMP/c.err" 'stage id >= 16'
check_eq "... each kind once, the count first (not an id), then the id it refused" \
	"$(cat "$TMP/c.err")" \
	"$(printf 'inflight: warning: pid %s: %s (first seen)\n' \
		"$pg" '2 events with a class id >= 16 (the latest: 20)' \
		"$pg" '1 event with a stage id >= 16 (the latest: 17)')"
kill -USR1 "$pg"
wait "$tr_pid"
check_eq "-- probegen: exit 0" "$?" 0
check_eq "the summary says the same counts and ids" \
	"$(sed -n '/^anomalies: /,/^$/p' "$TMP/c.out" | sed '/^$/d')" \
	"anomalies: 2 events with a class id >= 16 (the latest: 20),
  1 event with a stage id >= 16 (the latest: 17)"

# --- -b processes that end before inflight looks: named from what the kernel read -----------
# (no gate: each run is over within milliseconds of its first probe hit, long before the
# loader's next look at the maps; the kernel read its comm and words when it made its record)
printf 'stage 5 0\nalloc 32 2 65536 5\nfree 32 2 65536\nstage 5 4\n' >"$TMP/quick.txt"
start_b "$TMP/q.out" "$TMP/q.err" --json -o "$TMP/q.jsonl"
for _ in 1 2 3; do
	"$TMP/probegen" script "$TMP/quick.txt" >/dev/null
done
stop_b
check_eq "-b: three processes over within milliseconds, each named (comm, command, argv)" \
	"$(jq -r 'select(.type == "summary") | .processes[] |
		"\(.comm) | \(.command) | \(.argv | join(","))"' "$TMP/q.jsonl" | sort -u)" \
	"probegen | $TMP/probegen script $TMP/quick.txt | $TMP/probegen,script,$TMP/quick.txt"
check_eq "... all three of them, each exact" \
	"$(jq -r 'select(.type == "summary") | [.processes[] | select(.exact)] | length' \
		"$TMP/q.jsonl")" 3

# ... and recorded: each PROC record names it, from the kernel's reading where /proc had
# nothing left (its words go with its memory before the recorder looks)
"$TMP/inflight" record -o "$TMP/q.infl" -b "$TMP/probegen" >"$TMP/qr.out" 2>"$TMP/qr.err" &
tr_pid=$!
bg_track "$tr_pid"
if wait_until 10 file_has "$TMP/qr.err" '^inflight: recording '; then
	for _ in 1 2 3; do
		"$TMP/probegen" script "$TMP/quick.txt" >/dev/null
	done
	stop_b
	check_eq "record -b: three processes over within milliseconds, each named in the recording" \
		"$("$TMP/inflight" report "$TMP/q.infl" --format json | jq -r '.processes[] |
			"\(.comm) | \(.command) | \(.argv | join(","))"' | sort | uniq -c |
			sed 's/^ *//')" \
		"3 probegen | $TMP/probegen script $TMP/quick.txt | $TMP/probegen,script,$TMP/quick.txt"
else
	not_ok "record -b attaches" "$(cat "$TMP/qr.err")"
fi

finish
