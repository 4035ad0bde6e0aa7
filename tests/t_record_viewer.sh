#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A real viewer opens inflight's Chrome trace: speedscope (the npm package's own page) in
# headless Chromium through playwright-core. The packages are installed from the lock file
# tests/viewer/package-lock.json into build/viewer (npm ci). The trace of the scripted
# recording (tests/record/scenario.h) must load without error as one profile per stage
# lane, each weighing the time that stage had owners in it: known answers.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/viewer/setup.sh"
"$BUILD/tests/rec_synth" "$TMP/s.rec"
"$BUILD/inflight" report "$TMP/s.rec" --format chrome -o "$TMP/scenario.trace.json" 2>/dev/null
out=$(TMPDIR=$TMP timeout 120 node "$ROOT/tests/viewer/speedscope_load.mjs" "$V/node_modules" \
	"$TMP/scenario.trace.json" 2>&1)
printf '%s\n' "$out" | cut -c1-600 | sed 's/^/# /'
printf '%s' "$out" | tail -n 1 >"$TMP/shown.json"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$TMP/shown.json"; }
check_eq "speedscope loaded the trace without an error" "$(field 'd["error"]')" None
check_eq "speedscope names the page after the file" "$(field 'd["title"]')" \
	"scenario.trace.json - speedscope"
check_eq "speedscope shows a profile per stage lane and per owner lane (2 partitions, 1 job)" \
	"$(field 'len(d["profiles"])')" 10
check_match "... named by process and lane" "$(field '"|".join(d["profiles"])')" \
	'owners from wait_permit #2 \(tid 20001\).*prover \(pid 4242\), stage chan_send \(tid 103\)'
# what it drew: every slice of every lane at depth 0 (no staircase), each exactly as written
check_eq "speedscope draws every lane flat: no slice nested in another" \
	"$(field 'sum(1 for p in d["drawn"] for s in p["slices"] if s[3] != 0)')" 0
check_eq "speedscope's slices are the trace's, lane by lane (name, start, end)" "$(python3 -c '
import json, sys, collections
shown = json.load(open(sys.argv[1]))["drawn"]
ev = json.load(open(sys.argv[2]))["traceEvents"]
want = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        want[e["tid"]].append((e["name"], e["ts"], e["ts"] + e["dur"]))
bad = 0
for p in shown:
    tid = int(p["name"].rsplit("(tid ", 1)[1].rstrip(")"))
    w = sorted(want[tid], key=lambda x: x[1])
    base = w[0][1]
    got = [(s[0].split(" {")[0], s[1] + base, s[2] + base) for s in p["slices"]]
    bad += got != w
print(bad, len(shown))' "$TMP/shown.json" "$TMP/scenario.trace.json")" "0 10"
# known answers (tests/record/scenario.h): chan_send held 1 owner from 100 ms, 2 from 150 ms,
# 1 from 200 ms to 320 ms; owner 0x101 waited 20-30 ms, synthesized to 100, sent to 200
check_eq "speedscope's chan_send lane: 1, 2, then 1 owner, 220 ms in all" "$(python3 -c '
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["drawn"] if "tid 103" in p["name"]][0]
print([(s[0].split(" {")[0], s[2] - s[1]) for s in p["slices"]])' "$TMP/shown.json")" \
	"[('1 in chan_send', 50000), ('2 in chan_send', 50000), ('1 in chan_send', 120000)]"
check_eq "speedscope's lane of partition 0x101: its five stays in order" "$(python3 -c '
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["drawn"] if "tid 20000" in p["name"]][0]
print([(s[0].split(" {")[0], s[2] - s[1]) for s in p["slices"]])' "$TMP/shown.json")" \
	"[('wait_permit', 10000), ('synth', 70000), ('chan_send', 100000), ('gpu', 60000), ('finalize', 50000)]"
# the time each stage held at least one owner: parse 10-420 ms, wait_permit 20-30 and
# 50-60, synth 30-150, chan_send 100-320 (tests/record/scenario.h)
for w in "stage parse (tid 100)	410.00ms" "stage wait_permit (tid 101)	20.00ms" \
	"stage synth (tid 102)	120.00ms" "stage chan_send (tid 103)	220.00ms"; do
	check_match "speedscope weighs ${w%%	*}: ${w##*	}" "$(field 'd["body"]')" "${w//(/\\(}"
done
# folded stacks: speedscope reads them too
"$BUILD/inflight" report "$TMP/s.rec" --format folded -o "$TMP/scenario.folded" 2>/dev/null
out=$(TMPDIR=$TMP timeout 120 node "$ROOT/tests/viewer/speedscope_load.mjs" "$V/node_modules" \
	"$TMP/scenario.folded" 2>&1)
printf '%s\n' "$out" | cut -c1-600 | sed 's/^/# /'
printf '%s' "$out" | tail -n 1 >"$TMP/shown.json"
check_eq "speedscope loads the folded stacks too" "$(field 'd["error"]') $(field 'd["title"]')" \
	"None scenario.folded - speedscope"
finish
