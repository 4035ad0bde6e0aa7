#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight record` on real traced runs of the reference prover (a private copy): the
# incident (permit released before the send, channel of 1) and the fix, each rendered in
# every format and checked against the kernel's own final counters and against an
# independent decoder of the file (tests/record/recdump.py); compare shows the fix's peak
# reduction; a recording of a running process ended by Ctrl-C is complete. Needs root.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
needs_root
cp "$BUILD/prover" "$TMP/prover"
common=(--jobs 3 -n 3 --log-n 14 --partitions 6)

rec_run() { # NAME PROVER-ARGS...
	local name=$1
	shift
	"$I" record -q -o "$TMP/$name.rec" -- "$TMP/prover" "$@" >"$TMP/$name.out" 2>&1
	check_eq "$name: recorded, the command's exit status passed on" "$?" 0
}
rec_run incident --pw 4 --chan-cap 1 --permit-release after-synth "${common[@]}"
rec_run fix --pw 4 --chan-cap 4 --permit-release after-send "${common[@]}"

for name in incident fix; do
	r=$TMP/$name.rec
	out=$("$I" report "$r")
	check_match "$name: the replay of the events equals the kernel's final counters" "$out" \
		"check +the replay matches the kernel's final counters"
	check_match "$name: nothing lost" "$out" 'lost +none'
	check_eq "$name: folded equals the independent decoder's memory x time" \
		"$("$I" report "$r" --format folded | sort)" \
		"$(python3 "$ROOT/tests/record/recdump.py" "$r" folded | sort)"
	# each event names the thread that hit the probe: one per partition (18) and per job (3)
	# always, the GPU workers (2) and main besides when they fire, and never thread 0
	check_match "$name: events come from the prover's own threads, 21 to 24 of them" \
		"$(python3 "$ROOT/tests/record/recdump.py" "$r" threads)" '^threads 2[1-4], .*tid 0 False$'
	"$I" report "$r" --format json -o "$TMP/$name.json" 2>/dev/null
	check_eq "$name: peak and completions equal the independent decoder's" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print("peak", p["peak"]["bytes"], "at_us", int(round(p["peak"]["time_s"] * 1e6)), "done",
      p["completed"]["owners"])' "$TMP/$name.json")" "$(python3 "$ROOT/tests/record/recdump.py" "$r" summary)"
	check_eq "$name: 18 partitions and 3 jobs completed, all memory returned" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print({k: v["done"] for k, v in p["completed"]["by_kind"].items()}, p["at_end"]["bytes"],
      p["at_end"]["owners"])' "$TMP/$name.json")" "{'parse': 3, 'wait_permit': 18} 0 0"
	"$I" report "$r" -o "$TMP/$name.trace.json" 2>/dev/null
	check_eq "$name: chrome: every owner's stays, partitions through their stages" "$(python3 -c '
import json, sys, collections
ev = json.load(open(sys.argv[1]))["traceEvents"]
stays = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X" and e["cat"] == "owner":
        stays[e["args"]["owner"], e["args"]["life"]].append((e["ts"], e["name"]))
# by start, ties in the order of the file (a stay is written when it ends): two stays
# may start in one microsecond
seqs = [[n for _, n in sorted(v, key=lambda s: s[0])] for v in stays.values()]
parts = [v for v in seqs if v[0] == "wait_permit"]
ok = all(v[:3] == ["wait_permit", "synth", "chan_send"] and v[-1] == "finalize" for v in parts)
counters = {e["name"] for e in ev if e["ph"] == "C"}
print(len(seqs), len(parts), ok, sorted(counters))' "$TMP/$name.trace.json")" \
		"21 18 True ['bytes by class', 'bytes by stage', 'owners by stage', 'rss']"
	check_eq "$name: chrome counters at the peak's microsecond sum to the peak" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[2]))["processes"][0]
ev = json.load(open(sys.argv[1]))["traceEvents"]
pk = [e for e in ev if e["ph"] == "i"][0]
at = [e for e in ev if e["ph"] == "C" and e["name"] == "bytes by class" and e["ts"] <= pk["ts"]]
print(sum(max(at, key=lambda e: e["ts"])["args"].values()) == p["peak"]["bytes"],
      pk["args"]["time_s"] == p["peak"]["time_s"])' \
		"$TMP/$name.trace.json" "$TMP/$name.json")" "True True"
	check_eq "$name: csv at 10 ms steps: the largest step maximum is the peak" "$("$I" report "$r" \
		--format csv --step 10ms | awk -F, 'NR > 1 && $4 > m { m = $4 } END { print m }')" \
		"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["peak"]["bytes"])' "$TMP/$name.json")"
	"$I" report "$r" -o "$TMP/$name.svg" 2>/dev/null
	check "$name: svg well-formed" xmllint --noout "$TMP/$name.svg"
	check_match "$name: svg peak annotated" \
		"$(xmlstarlet sel -N s=http://www.w3.org/2000/svg -t -v '//s:g[@id="peak"]/s:text' "$TMP/$name.svg")" \
		'^peak [0-9.]+ [KMG]iB at [0-9]+\.[0-9]{3} s$'
done

# the pile-up: partitions waiting in chan_send in the incident, not after the fix
waiting() { python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print(max(max(r["owners"][p["timeline"]["stages"].index("chan_send")] for r in p["timeline"]["rows"]), 0))' "$1"; }
wi=$(waiting "$TMP/incident.json")
wf=$(waiting "$TMP/fix.json")
check "incident: partitions pile up in chan_send ($wi at once; the fix: $wf)" test "$wi" -gt "$((wf + 4))"
ratio=$("$I" compare --json "$TMP/incident.rec" "$TMP/fix.rec" | python3 -c '
import json, sys
m = {(x["group"], x["name"]): x for x in json.load(sys.stdin)["metrics"]}
print(m[("peak", "tracked total")]["ratio"])')
check "compare: the fix's tracked peak is below 0.8 of the incident's (B/A $ratio)" \
	python3 -c "import sys; sys.exit(0 if $ratio < 0.8 else 1)"
out=$("$I" compare "$TMP/incident.rec" "$TMP/fix.rec")
check_match "compare: text names both runs" "$out" '^B  .*fix\.rec$'
check_match "compare: the verdict names the peak's fall" "$out" '^  peak +[0-9.]+ [KM]iB -> [0-9.]+ [KM]iB \(-[0-9]+%\)'
check_match "compare: ... and the memory that left chan_send" "$out" '^  moved +memory x time from chan_send [0-9]+% -> [0-9]+%'
check_match "compare: the full command of each run, wrapped, never cut" \
	"$(printf '%s\n' "$out" | sed -n '/^B  /,/from its first event/p' | sed '1d;$d' |
		sed -E 's/^ +(pid [0-9]+: )?//' | tr '\n' ' ')" \
	'prover --pw 4 --chan-cap 4 --permit-release after-send --jobs 3 -n 3 --log-n 14 --partitions 6 $'

# -p PID, ended by SIGINT: the recording is complete (end record) and reads
"$TMP/prover" --pw 2 --jobs 1 -n 200 --log-n 12 --partitions 2 >/dev/null 2>&1 &
ppid=$!
sleep 0.3
"$I" record -q -o "$TMP/pid.rec" -p "$ppid" 2>"$TMP/pid.err" &
rpid=$!
sleep 1.5
kill -INT "$rpid"
wait "$rpid"
check_eq "record -p: Ctrl-C ends it with status 0" "$?" 0
kill "$ppid" 2>/dev/null
wait "$ppid" 2>/dev/null
out=$("$I" report "$TMP/pid.rec" 2>&1)
check_match "record -p: the interrupted recording is complete and consistent" "$out" \
	"check +the replay matches the kernel's final counters"
check_match "record -p: owners from before the recording are reported as such" "$out" \
	'completed [0-9]+ owners'
finish
