#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `inflight report` and `compare` on the scripted recording of tests/record/scenario.h (known
# answers): every format rendered and its content checked (counter values at known
# instants, slices per owner, folded totals, the SVG well-formed with its peak annotated),
# the bad-file and bad-output paths, and report running with no privileges at all.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
chmod 755 "$TMP"
"$BUILD/tests/rec_synth" "$TMP/s.rec"
"$BUILD/tests/rec_synth" "$TMP/slow.rec" slow
"$BUILD/tests/rec_synth" "$TMP/drop.rec" drop

# text
out=$("$I" report "$TMP/s.rec")
check_match "text: the exact peak, its time and event" "$out" \
	'peak +1\.95 KiB tracked in 6 buffers at 0\.210 s \(event 15\)'
check_match "text: peak composition, gpu row" "$out" '^  gpu +1 +600B +\. +300B +100B +200B$'
check_match "text: memory x time share of chan_send, in its unit" "$out" \
	'^  chan_send +108 B x s +14\.6% +2 +135 ms$'
check_match "text: the memory x time column headed as its values read" "$out" \
	'^  stage +memory x time +share +stays +mean dwell$'
# names wider than a column go whole on two staggered lines, each ending at its column
check_eq "text: the timeline's stage columns headed with whole names" \
	"$(printf '%s\n' "$out" | grep -B1 '^  time s ' | head -n 2)" \
	"$(printf '%29s%6s%12s%12s%12s\n%s\n' '' parse synth gpu assemble \
		'  time s  bytes    max    rss wait_permit   chan_send    finalize')"
check_eq "text: the peak's class columns headed with whole names" \
	"$(printf '%s\n' "$out" | grep -B1 '^  at peak ' | head -n 2)" \
	"$(printf '%31s%12s\n%s\n' srs aux '  at peak     owner bytes         abc     pending')"
check_match "text: probe events and records named apart, one plural each" "$out" \
	'^pid 4242 \(prover\): 30 probe events \(34 records\), 3 owners$'
check_match "html: the facts line counts owners in the plural, done too" \
	"$("$I" report "$TMP/s.rec" --format html 2>/dev/null)" \
	'; 3 owners, 3 done</div>$'
check_match "text: a single free is one free" "$out" \
	'^  late attach: 1 free \(50 B\) and 0 owners from before the recording$'
check_match "text: completions by first stage" "$out" '3 owners \(1 from parse, 2 from wait_permit\)'
check_match "text: the replay agrees with the final counters" "$out" \
	"check +the replay matches the kernel's final counters"
check_eq "text: under 80 columns" "$(printf '%s\n' "$out" | awk 'length > 79' | wc -l)" 0
out=$("$I" report "$TMP/drop.rec")
check_match "text: a lost event is reported" "$out" 'lost +1 events \(1 in the kernel'

# csv: rows at the end of each 100 ms step
csv=$("$I" report "$TMP/s.rec" --format csv --step 100ms)
hdr=$(printf '%s\n' "$csv" | head -1)
check_match "csv: header names classes and stages" "$hdr" \
	'^pid,time_s,tracked_bytes,max_bytes,rss_bytes,bytes_srs,bytes_abc,bytes_aux,bytes_pending,owners_parse,'
col() { printf '%s\n' "$hdr" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
row() { printf '%s\n' "$csv" | awk -F, -v t="$1" '$2 == t'; }
check_eq "csv: at 0.2 s 1800 bytes tracked" "$(row 0.2 | cut -d, -f3)" 1800
check_eq "csv: at 0.2 s two owners in chan_send" "$(row 0.2 | cut -d, -f"$(col owners_chan_send)")" 2
check_eq "csv: the peak is the max of [0.2, 0.3)" "$(row 0.3 | cut -d, -f4)" 2000
check_eq "csv: abc at 0.3 s" "$(row 0.3 | cut -d, -f"$(col bytes_abc)")" 300
check_eq "csv: 6 rows and a header" "$(printf '%s\n' "$csv" | wc -l)" 7

# json
"$I" report "$TMP/s.rec" --format json -o "$TMP/s.json" 2>"$TMP/err"
check_match "json: says where it wrote" "$(cat "$TMP/err")" "^inflight: wrote JSON report to $TMP/s.json"
check_eq "json: peak, time, completions, dwell, memory x time" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
st = {s["stage"]: s for s in p["memory_x_time"]}
print(p["peak"]["bytes"], p["peak"]["time_s"], p["completed"]["owners"],
      st["chan_send"]["mean_dwell_ms"], st["synth"]["byte_ms"], p["check"]["mismatches"])
' "$TMP/s.json")" "2000 0.21 3 135.0 56000 0"
check_eq "json: the live summary's keys, the same figures (schema 2)" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"][0]
print(d["schema"], d["clock"]["origin_pid"], p["pid"], p["command"], p["exit_status"], p["events"],
      p["owners"], p["peak"]["bufs"], p["peak"]["seq"], p["peak"]["rss_bytes"],
      [s["stage"] for s in p["peak"]["stages"]], p["rss"]["peak_bytes"], p["rss"]["peak_time_s"],
      p["at_end"]["bytes"], [(x["stage"], x["count"]) for x in p["dwell"]][:3],
      p["unmatched"]["free"], p["exact"])
' "$TMP/s.json")" "2 4242 4242 prover --scripted 0 {'buf_alloc': 7, 'buf_free': 8, 'stage': 15} {'started': 3, 'done': 3} 6 15 2600 ['parse', 'chan_send', 'gpu', '(none)'] 2600 0.16 0 [('parse', 1), ('wait_permit', 2), ('synth', 2)] {'input': {'bufs': 1, 'bytes': 50}} True"
check_eq "json: owner kinds kept apart: proof jobs (parse) and partitions (wait_permit)" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
print({k: (v["done"], v["per_minute"]) for k, v in p["completed"]["by_kind"].items()})
' "$TMP/s.json")" "{'parse': (1, 120.0), 'wait_permit': (2, 240.0)}"

# folded: the hand-computed byte-ms, and the same from the independent decoder
folded=$("$I" report "$TMP/s.rec" --format folded | sort)
expect=$(printf '%s\n' "(none);srs 500000" "chan_send;abc 81000" "chan_send;aux 27000" \
	"finalize;aux 8000" "finalize;pending 16000" "gpu;abc 24000" "gpu;aux 10000" \
	"gpu;pending 16000" "synth;abc 42000" "synth;aux 14000" | sort)
check_eq "folded: memory x time per stage;class (byte-ms)" "$folded" "$expect"
check_eq "folded: equals the independent decoder's integral" "$folded" \
	"$(python3 "$ROOT/tests/record/recdump.py" "$TMP/s.rec" folded | sort)"

# chrome: integer microseconds on the report's clock; owners on lanes; no slice overlaps
"$I" report "$TMP/s.rec" -o "$TMP/s.trace.json" 2>/dev/null
check_eq "chrome: counters at known instants, stays per owner, metadata" "$(python3 -c '
import json, sys, collections
ev = json.load(open(sys.argv[1]))["traceEvents"]
def counter(name, us):
    c = [e for e in ev if e["ph"] == "C" and e["name"] == name and e["ts"] <= us]
    return max(c, key=lambda e: e["ts"])["args"]
owners = counter("owners by stage", 155000)
byclass = counter("bytes by class", 210000)
stays = collections.defaultdict(list)
for e in sorted((e for e in ev if e["ph"] == "X" and e["cat"] == "owner"), key=lambda e: e["ts"]):
    stays[e["args"]["owner"]].append(e["name"])
meta = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name")
ints = all(isinstance(e.get(k, 0), int) for e in ev for k in ("ts", "dur"))
print(owners["chan_send"], owners["parse"], byclass["abc"], byclass["pending"], byclass["srs"],
      sorted(len(v) for v in stays.values()), ",".join(stays["0x101"]), meta, ints)
' "$TMP/s.trace.json")" "2 1 600 200 1000 [2, 5, 5] wait_permit,synth,chan_send,gpu,finalize ['prover'] True"
check_eq "chrome: lanes by owner kind (2 partitions at once, 1 job), none overlapping" "$(python3 -c '
import json, sys, collections
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        lanes[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
overlaps = sum(1 for v in lanes.values() for a, b in zip(sorted(v), sorted(v)[1:]) if b[0] < a[1])
print(sorted(n for n in names.values() if n.startswith("owners")), overlaps)
' "$TMP/s.trace.json")" "['owners from parse #1', 'owners from wait_permit #1', 'owners from wait_permit #2'] 0"
check_eq "chrome: stage occupancy chan_send: 1 from 100 ms, 2 from 150, 1 from 200 to 320" "$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print([(e["name"], e["ts"], e["ts"] + e["dur"]) for e in ev if e["ph"] == "X" and e["tid"] == 103])
' "$TMP/s.trace.json")" "[('1 in chan_send', 100000, 150000), ('2 in chan_send', 150000, 200000), ('1 in chan_send', 200000, 320000)]"
check_eq "chrome: the peak instant at 210000 us with its composition" "$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pk = [e for e in ev if e["ph"] == "i"][0]
print(pk["ts"], pk["args"]["bytes"], pk["args"]["time_s"], pk["args"]["by_stage"])
' "$TMP/s.trace.json")" "210000 2000 0.21 {'chan_send': 400, 'gpu': 600, '(none)': 1000}"

# svg: bytes by stage and by class on one scale, owners per stage, the peak and its composition
"$I" report "$TMP/s.rec" -o "$TMP/s.svg" 2>/dev/null
check "svg: well-formed XML" xmllint --noout "$TMP/s.svg"
X() { xmlstarlet sel -N s=http://www.w3.org/2000/svg -t "$@" "$TMP/s.svg"; }
check_eq "svg: the peak annotated with its value and time" \
	"$(X -v '//s:g[@id="peak"]/s:text[@class="label"]')" "peak 1.95 KiB at 0.210 s"
check_eq "svg: an area per stage and per class, RSS in both, a lane per stage" \
	"$(X -v 'count(//s:g[@id="by-stage"]/s:path)' -o ' ' -v 'count(//s:g[@id="by-class"]/s:path)' \
		-o ' ' -v 'count(//s:path[@class="rss"])' -o ' ' -v 'count(//s:g[@class="lanes"]/s:rect)')" \
	"5 4 2 7"
check_eq "svg: stages stacked from (none) up, in pipeline order" \
	"$(X -m '//s:g[@id="by-stage"]/s:path' -v '@data-series' -o ',')" "(none),synth,chan_send,gpu,finalize,"
check_eq "svg: the peak's composition, largest stage first" \
	"$(X -m '//s:g[@class="composition"]/s:text[@class="row"]' -v '.' -n)" \
	"$(printf '%s\n' '■ (none) 1000 B, 0 owners: srs 1000B' \
		'■ gpu 600 B, 1 owner: abc 300B, pending 200B, aux 100B' \
		'■ chan_send 400 B, 1 owner: abc 300B, aux 100B')"
check_match "svg: the clock named under the time axis" "$(X -v '//s:text')" \
	'seconds since the first probe event \(pid 4242\)'

# compare: the slow run is A; the same work in half the time is B
cmp=$("$I" compare --json "$TMP/slow.rec" "$TMP/s.rec")
check_eq "compare: peak ratio 1, throughput ratio 2, dwell ratio 0.5" "$(printf '%s' "$cmp" | python3 -c '
import json, sys
m = {(x["group"], x["name"]): x for x in json.load(sys.stdin)["metrics"]}
print(m[("peak", "tracked total")]["ratio"],
      m[("owners done per minute, by kind", "from wait_permit")]["ratio"],
      m[("mean dwell by stage", "synth")]["ratio"])')" "1.0 2.0 0.5"
out=$("$I" compare "$TMP/slow.rec" "$TMP/s.rec")
check_match "compare: text table with B/A" "$out" '^  tracked total +1\.95 KiB +1\.95 KiB +1\.00$'
check_eq "compare: under 80 columns" "$(printf '%s\n' "$out" | awk 'length > 79' | wc -l)" 0
check_match "compare: ring records named as records, not probe events" "$out" \
	'^  event records +34 +34 +1\.00$'
check_match "compare: the program's own duration" "$out" \
	'^  program \(first event to exit\) +1\.20 s +600 ms +0\.50$'
check_eq "compare: proof jobs and partitions apart, no mixed 'all' rate" \
	"$(printf '%s\n' "$out" | sed -n '/^owners done per minute, by kind/,/^owners done, by/p' | sed '$d' | tr -s ' ')" \
	"$(printf '%s\n' 'owners done per minute, by kind' ' from parse 60.0 120.0 2.00' \
		' from wait_permit 120.0 240.0 2.00')"
check_match "compare: the verdict says throughput doubled" \
	"$out" 'throughput owners from wait_permit done per minute: 120\.0 -> 240\.0 \(\+100\.0%\)'
check_match "... and that one run a side gives no spread" "$out" 'one run per side: no spread between runs'
# several runs per side: the change judged against the spread between runs
"$BUILD/tests/rec_synth" "$TMP/s2.rec"
cmp=$("$I" compare --json "$TMP/slow.rec" "$TMP/slow.rec" vs "$TMP/s.rec" "$TMP/s2.rec")
check_eq "compare, 2 runs a side: throughput beyond a spread of 0, peak findings" \
	"$(printf '%s' "$cmp" | python3 -c '
import json, sys
d = json.load(sys.stdin)
f = {(x["what"], x["name"]): x for x in d["verdict"]["findings"]}
t = f[("throughput", "wait_permit")]
print(len(d["a"]["runs"]), len(d["b"]["runs"]), t["a"], t["b"], t["spread"], t["beyond_spread"],
      f[("peak", "tracked total")]["a"])')" "2 2 120.0 240.0 0.0 True 2000.0"
# the demo's kind of command, 160 characters: whole, wrapped between words
"$BUILD/tests/rec_synth" "$TMP/long.rec" long
out=$("$I" compare "$TMP/long.rec" "$TMP/s.rec")
full="/opt/provers/bin/prover --pw 12 --jobs 4 --proofs 4 --log-n 18 --gpu-rounds 3 --permit-release after-synth --chan-cap 1 --srs-cache=/var/cache/srs --c1=/data/c1/sector-0042.json"
check_eq "compare: a long command whole, never cut" \
	"$(printf '%s\n' "$out" | sed -n '2,/from its first event/p' | sed '$d' |
		sed -E 's/^ +(pid [0-9]+: )?//' | tr '\n' ' ' | sed 's/ $//')" "$full"
check_eq "... in lines under 80 columns" "$(printf '%s\n' "$out" | awk 'length > 79' | wc -l)" 0
check_eq "report: the long command whole" \
	"$("$I" report "$TMP/long.rec" | sed -n '/^command/,/^binary/p' | sed '$d' |
		sed -E 's/^(command)? +//' | tr '\n' ' ' | sed 's/ $//')" "$full"
# the compare chart: both sides on one time and byte scale
"$I" compare "$TMP/slow.rec" "$TMP/s.rec" -o "$TMP/cmp.svg" 2>/dev/null
check "compare svg: well-formed XML" xmllint --noout "$TMP/cmp.svg"
CX() { xmlstarlet sel -N s=http://www.w3.org/2000/svg -t "$@" "$TMP/cmp.svg"; }
check_eq "compare svg: one byte scale: both panels top at the same label" \
	"$(CX -m '//s:g[@class="axes"]' -v 's:text[@text-anchor="end"][last()]' -n | sort -u | wc -l)" 1
check_eq "compare svg: each side's peak at its own time" \
	"$(CX -v '//s:g[@id="peak-a"]/s:text[@class="label"]' -o '|' -v '//s:g[@id="peak-b"]/s:text[@class="label"]')" \
	"peak 1.95 KiB at 0.420 s|peak 1.95 KiB at 0.210 s"
check_eq "compare svg: one time scale: B's peak line at half A's x" "$(python3 -c '
import re, sys
s = open(sys.argv[1]).read()
x = [float(m) for m in re.findall(r"<g class=\"peak\" id=\"peak-[ab]\">\n<line x1=\"([0-9.]+)\"", s)]
print(round((x[1] - 90) / (x[0] - 90), 2))' "$TMP/cmp.svg")" 0.5
# each peak label clear of its composition box, on an opaque ground drawn after the RSS line
check_eq "compare svg: the peak labels clear of the composition boxes, over the RSS line" "$(python3 -c '
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
out = []
for side in "ab":
    side_g = root.find(".//s:g[@id=\"side-%s\"]" % side, ns)
    kids = list(side_g)
    g = side_g.find("s:g[@id=\"peak-%s\"]" % side, ns)
    box = g.find("s:g[@class=\"composition\"]/s:rect", ns)
    bx, by, bw, bh = (float(box.get(k)) for k in ("x", "y", "width", "height"))
    t = g.find("s:text[@class=\"label\"]", ns)
    w = len(t.text) * 7.6
    x0 = float(t.get("x")) - (w if t.get("text-anchor") == "end" else 0)
    ly = float(t.get("y"))
    clear = not (x0 < bx + bw and x0 + w > bx and ly - 13 < by + bh and ly + 4 > by)
    parts = list(g)
    ground = parts[parts.index(t) - 1].get("class") == "label-bg"
    rss = [k.get("class") for k in kids].index("rss") < kids.index(g)
    out.append("%s %s %s" % (clear, ground, rss))
print(" | ".join(out))' "$TMP/cmp.svg")" "True True True | True True True"

# no privileges needed: as nobody, with no capabilities
if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all true 2>/dev/null; then
	chmod 644 "$TMP/s.rec"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$I" report "$TMP/s.rec" --format folded 2>&1)
	check_eq "report runs as nobody without capabilities" "$(printf '%s\n' "$out" | sort)" "$expect"
else
	not_ok "setpriv can drop to nobody" "needed to prove report needs no privileges"
fi

# bad input: one line, exit 8; bad output: exit 9
head -c 1000 "$TMP/s.rec" >"$TMP/cut.rec"
out=$("$I" report "$TMP/cut.rec" 2>&1)
check_eq "a truncated recording: exit 8" "$?" 8
check_match "... with one line saying truncated" "$out" '^inflight: .*cut\.rec: truncated: record [0-9]+ at offset [0-9]+ needs'
check_eq "... and nothing else" "$(printf '%s\n' "$out" | wc -l)" 1
cp "$TMP/s.rec" "$TMP/flip.rec"
printf '\x55' | dd of="$TMP/flip.rec" bs=1 seek=300 conv=notrunc 2>/dev/null
out=$("$I" report "$TMP/flip.rec" 2>&1)
check_eq "a corrupt recording: exit 8" "$?" 8
check_match "... named corrupt, with the way out" "$out" \
	'^inflight: .*flip\.rec: corrupt record [0-9]+ at offset [0-9]+: checksum mismatch; add --partial'
out=$("$I" report /etc/passwd 2>&1)
check_eq "not a recording: exit 8" "$?" 8
check_match "... bad magic" "$out" 'not an inflight recording'
out=$("$I" report "$TMP/none.rec" 2>&1)
check_eq "no such file: exit 8" "$?" 8
ln -s "$TMP/s.rec" "$TMP/link.svg"
out=$("$I" report "$TMP/s.rec" -o "$TMP/link.svg" 2>&1)
check_eq "report never writes through a symlink: exit 9" "$?" 9
check_eq "... and the symlink's target still reads" "$("$I" report "$TMP/s.rec" -f folded | wc -l)" 10
out=$("$I" record -o "$TMP/s.rec" -- true 2>&1)
check_eq "record refuses an existing file before starting anything: exit 9" "$?" 9
check_match "... and says how to replace it" "$out" 'File exists; add --force'
out=$("$I" report "$TMP/s.rec" --format nope 2>&1)
check_eq "unknown format: exit 2" "$?" 2

# the magic first: a foreign stream is refused after its first bytes, not read whole
start=$(date +%s%N)
out=$(timeout 10 "$I" report /dev/zero 2>&1)
check_eq "report /dev/zero: exit 8" "$?" 8
check_match "... at once, one line: bad magic, what it starts with, the way out" "$out" \
	'^inflight: cannot read recording /dev/zero: not an inflight recording \(bad magic: it starts with "\.+", not "INFLREC"\); not a recording of `inflight record`$'
check "... in under 2 s ($((($(date +%s%N) - start) / 1000000)) ms)" test $((($(date +%s%N) - start) / 1000000)) -lt 2000
out=$("$I" report - <"$TMP/s.rec" --format folded | sort)
check_eq "a recording on stdin reads like a file" "$out" "$expect"
# a disk that filled up mid-record: --partial keeps every complete record before the cut
size=$(stat -c %s "$TMP/s.rec")
head -c $((size - 40)) "$TMP/s.rec" >"$TMP/full.rec"
out=$("$I" report "$TMP/full.rec" 2>&1)
check_eq "cut mid-record: refused without --partial, exit 8" "$?" 8
check_match "... with the way out" "$out" 'truncated: .*; add --partial to read the complete records'
"$I" report --partial "$TMP/full.rec" --format json -o "$TMP/full.json" 2>"$TMP/full.err"
check_eq "cut mid-record: --partial reads it, exit 0" "$?" 0
check_match "... and says what it set aside, in one line" "$(cat "$TMP/full.err")" \
	'^inflight: warning: .*full\.rec: cut short; read the [0-9]+ complete records before it: truncated: record [0-9]+ at offset [0-9]+ needs'
check_eq "... every event before the cut kept: the peak and the replay" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); p = d["processes"][0]
print(d["recording"]["complete"], d["recording"]["cut"] is not None, p["peak"]["bytes"], p["recorded_events"])' "$TMP/full.json")" \
	"False True 2000 34"
# report never writes over its recording
cp "$TMP/s.rec" "$TMP/keep.rec"
out=$("$I" report "$TMP/keep.rec" -o "$TMP/keep.rec" 2>&1)
check_eq "report -o its own input: refused, exit 2" "$?" 2
check_match "... saying so" "$out" 'keep\.rec is the input .*keep\.rec: writing there would destroy it; give -o another name'
check_eq "... and the recording is intact" "$(cmp -s "$TMP/s.rec" "$TMP/keep.rec" && echo same)" same
ln -f "$TMP/keep.rec" "$TMP/hardlink.txt"
"$I" report "$TMP/keep.rec" -o "$TMP/hardlink.txt" >/dev/null 2>&1
check_eq "... through another name of the same file too (exit 2, intact)" \
	"$?$(cmp -s "$TMP/s.rec" "$TMP/keep.rec" && echo same)" 2same
out=$("$I" compare "$TMP/keep.rec" "$TMP/s.rec" -o "$TMP/s.rec" 2>&1)
check_eq "compare -o one of its inputs: refused, exit 2" "$?" 2
# an unreadable recording: the real reason and a hint
if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all true 2>/dev/null; then
	chmod 600 "$TMP/keep.rec"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$I" report "$TMP/keep.rec" 2>&1)
	check_eq "unreadable recording: exit 8" "$?" 8
	check_match "... permission denied, and who may read it" "$out" \
		'^inflight: cannot read recording .*keep\.rec: Permission denied; recordings are created mode 0640: read it as its owner'
fi
# names outside the contract's characters are refused; strings are escaped everywhere
"$BUILD/tests/rec_synth" "$TMP/h.rec" hostile
for f in text csv json chrome folded svg html; do
	"$I" report "$TMP/h.rec" --format "$f" -o "$TMP/h.$f" 2>/dev/null
done
"$I" compare "$TMP/h.rec" "$TMP/s.rec" >"$TMP/h.cmp" 2>&1
check_eq "hostile strings: no escape byte in any output" \
	"$(cat "$TMP"/h.text "$TMP"/h.csv "$TMP"/h.json "$TMP"/h.chrome "$TMP"/h.folded "$TMP"/h.svg \
		"$TMP"/h.html "$TMP/h.cmp" | grep -c $'\x1b')" 0
check_match "... shown escaped in the text (util/sanitize.h)" "$(cat "$TMP/h.text")" \
	'^host +evil\\x1b\[31mhost\\r\\n'
check_eq "... the JSON parses and keeps the command exactly, as JSON escapes" "$(python3 -c '
import json, sys
print(repr(json.load(open(sys.argv[1]))["processes"][0]["command"]))' "$TMP/h.json")" \
	"'prover --x\\n\\x1b]0;pwned\\x07 \\x1b[2J'"
check "... the SVG is well-formed" xmllint --noout "$TMP/h.svg"
check_eq "... every text line of the report one line (no newline from the file)" \
	"$(cat "$TMP"/h.text "$TMP"/h.csv "$TMP"/h.json "$TMP"/h.chrome "$TMP"/h.folded "$TMP"/h.svg "$TMP"/h.html "$TMP/h.cmp" | grep -c '^fake line')" 0
finish
