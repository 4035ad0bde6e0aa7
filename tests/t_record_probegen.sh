#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight record` of probegen (tests/tracer/probegen.c), a program other than the prover
# implementing the contract: a scripted run with known answers (a late-attach owner, a free
# of a buffer never allocated, which traced from its start is a double free as the live
# summary says, a rejected class id, a double alloc, an owner retired by its last free), and a probe
# storm through a ring buffer far too small, whose losses must be recorded as such, and one
# through rings that hold it while the recorder is stopped, which must not be woken per event.
# Needs root.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
needs_root
cp "$BUILD/tests/probegen" "$TMP/probegen"

"$I" record -q -o "$TMP/known.rec" -- "$TMP/probegen" script "$ROOT/tests/record/probegen_known.txt" \
	>/dev/null 2>&1
check_eq "scripted run recorded" "$?" 0
"$I" report "$TMP/known.rec" --format json -o "$TMP/known.json" 2>/dev/null
# the peak: the double alloc of 0x11 counts its new buffer (200 bytes) at its place and the
# one it replaces (100) until the free that follows it (recording format 1.6), both in `work`
check_eq "known answers: peak, its composition, anomalies, completions" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
peak = {s["stage"]: {c: v["bytes"] for c, v in s["classes"].items()} for s in p["peak"]["stages"]}
print(p["peak"]["bytes"], peak, p["unmatched"], p["anomalies"]["double_free"], p["anomalies"]["bad_class"],
      p["anomalies"]["dup_alloc"], p["completed"]["owners"],
      (p["at_end"]["bytes"], p["at_end"]["bufs"], p["at_end"]["owners"]), p["check"],
      [c["name"] for c in d["recording"]["classes"]])' "$TMP/known.json")" \
	"6600 {'work': {'small': 300, 'huge': 5000}, 'wait': {'meta': 300}, '(none)': {'big': 1000}} {'free': {}, 'stage': {'wait': 1}} 1 1 1 2 (0, 0, 0) {'mismatches': 0, 'first': ''} ['small', 'big', 'huge', 'meta', 'scratch', 'misc']"
"$I" report "$TMP/known.rec" --format chrome -o "$TMP/known.trace.json" 2>/dev/null
check_eq "chrome lanes: owner 1 born, work, end (until its last free); owner 2 wait" \
	"$(python3 -c '
import json, sys, collections
stays = collections.defaultdict(list)
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] == "X" and e["cat"] == "owner":
        stays[e["args"]["owner"]].append((e["ts"], e["name"]))
print(sorted([n for _, n in sorted(v)] for v in stays.values()))' "$TMP/known.trace.json")" \
	"[['born', 'work', 'end'], ['wait']]"
check_eq "folded equals the independent decoder's" \
	"$("$I" report "$TMP/known.rec" --format folded | sort)" \
	"$(python3 "$ROOT/tests/record/recdump.py" "$TMP/known.rec" folded | sort)"

# a storm through rings of 4 KiB (a CPU's each) while the recorder is stopped: all but a
# ring's worth of its events cannot be kept, and the file says so (a recorder that runs may
# keep up with one storming thread, even through rings this small)
"$I" record -q --ring-size 4096 -o "$TMP/storm.rec" -- "$TMP/probegen" storm 100000 gate \
	>"$TMP/storm.out" 2>&1 &
rp=$!
for ((i = 0; i < 1000; i++)); do grep -q gated "$TMP/storm.out" && break; sleep 0.01; done
gp=$(pgrep -P "$rp" -x probegen)
kill -STOP "$rp"
kill -USR1 "$gp"
for ((i = 0; i < 1000; i++)); do grep -q "^storm: " "$TMP/storm.out" && break; sleep 0.01; done
kill -CONT "$rp"
wait "$rp"
check_eq "storm recorded, with the recorder stopped while it ran" "$? $(grep -c "^storm: 500000 events" "$TMP/storm.out")" "0 1"
"$I" report "$TMP/storm.rec" --format json -o "$TMP/storm.json" 2>/dev/null
read -r gaps kernel exact < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print(p["lost"]["seq_gaps"], p["lost"]["kernel"], p["exact"])' "$TMP/storm.json")
check "storm: lost events are seen as gaps in seq ($gaps) and recorded by the kernel ($kernel)" \
	test "$gaps" -gt 0 -a "$kernel" -ge "$gaps"
kept=$(python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import recdump
print(sum(1 for e in recdump.parse(sys.argv[2])["events"] if e[4] <= 2))' "$ROOT/tests/record" "$TMP/storm.rec")
check_eq "storm: every one of the 500000 probe events is recorded ($kept) or a gap" \
	"$((kept + gaps))" 500000
check_eq "storm: the report is marked approximate" "$exact" False
check_match "storm: the text report says so" "$("$I" report "$TMP/storm.rec")" \
	'lost +[0-9]+ events \([0-9]+ in the kernel, 0 in user space\): figures after the first loss are approximate'
# approximate, but never absurd: a stage move after lost frees must not wrap a byte count
# below zero (it once showed "born 5.63 EiB x s" for a storm of 4 KiB buffers)
absurd=$("$I" report "$TMP/storm.rec" | grep -cE '[0-9.]+ (PiB|EiB)')
check_eq "storm: no byte figure wrapped below zero" "$absurd" 0
# the same storm through rings that hold it, the recorder stopped all along: nothing lost, and
# the recorder is woken as each quarter of a ring fills, not by every event past the first
# quarter (a wake-up is an interrupt the firing CPU sends itself, counted in the IRQ work row
# of /proc/interrupts, which the host's other work leaves still; before, one an event: 67239)
iwi() {
	awk '$1 == "IWI:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; seen = 1 }
		END { print seen ? n : "none" }' /proc/interrupts
}
check_match "the host counts IRQ work interrupts" "$(iwi)" '^[0-9]+$'
# rings of 8 MiB each (the size asked is all the possible CPUs' rings together): 100000 events
# of 64 bytes fit in one, which wakes it at 2, 4 and 6 MiB
lag_bytes=$(python3 -c '
import sys
n = 0
for part in open("/sys/devices/system/cpu/possible").read().strip().split(","):
    a, _, b = part.partition("-")
    n += int(b or a) - int(a) + 1
t = 8 << 20
while t < (8 << 20) * n:
    t *= 2
print(t)')
"$I" record -q --bpf-ring-size "$lag_bytes" -o "$TMP/lag.rec" -- "$TMP/probegen" storm 20000 gate \
	>"$TMP/lag.out" 2>&1 &
rp=$!
for ((i = 0; i < 1000; i++)); do grep -q gated "$TMP/lag.out" && break; sleep 0.01; done
gp=$(pgrep -P "$rp" -x probegen)
kill -STOP "$rp"
w0=$(iwi)
kill -USR1 "$gp"
for ((i = 0; i < 1000; i++)); do grep -q "^storm: " "$TMP/lag.out" && break; sleep 0.01; done
w1=$(iwi)
kill -CONT "$rp"
wait "$rp"
check_eq "lagging recorder: the storm recorded" \
	"$? $(grep -c "^storm: 100000 events" "$TMP/lag.out")" "0 1"
"$I" report "$TMP/lag.rec" --format json -o "$TMP/lag.json" 2>/dev/null
check_eq "lagging recorder: nothing lost, exact" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print(p["lost"]["seq_gaps"], p["lost"]["kernel"], p["exact"], p["check"]["mismatches"])' \
	"$TMP/lag.json")" "0 0 True 0"
check "lagging recorder: IRQ work interrupts while 100000 events waited: $((w1 - w0)) (< 100)" \
	test "$((w1 - w0))" -lt 100
finish
