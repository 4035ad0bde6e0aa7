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
check_match "text: memory x time share of chan_send" "$out" '^  chan_send +108 B +14\.6% +2 +135 ms$'
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
	'^pid,t_s,tracked_bytes,max_bytes,rss_bytes,bytes_srs,bytes_abc,bytes_aux,bytes_pending,owners_parse,'
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
st = {s["stage"]: s for s in p["stages"]}
print(p["peak"]["bytes"], p["peak"]["t_s"], p["completed"]["owners"],
      st["chan_send"]["mean_dwell_ms"], st["synth"]["byte_ms"], p["check"]["mismatches"])
' "$TMP/s.json")" "2000 0.21 3 135.0 56000 0"

# folded: the hand-computed byte-ms, and the same from the independent decoder
folded=$("$I" report "$TMP/s.rec" --format folded | sort)
expect=$(printf '%s\n' "(none);srs 500000" "chan_send;abc 81000" "chan_send;aux 27000" \
	"finalize;aux 8000" "finalize;pending 16000" "gpu;abc 24000" "gpu;aux 10000" \
	"gpu;pending 16000" "synth;abc 42000" "synth;aux 14000" | sort)
check_eq "folded: memory x time per stage;class (byte-ms)" "$folded" "$expect"
check_eq "folded: equals the independent decoder's integral" "$folded" \
	"$(python3 "$ROOT/tests/record/recdump.py" "$TMP/s.rec" folded | sort)"

# chrome
"$I" report "$TMP/s.rec" -o "$TMP/s.trace.json" 2>/dev/null
check_eq "chrome: counters at known instants, slices per owner, metadata" "$(python3 -c '
import json, sys, collections
ev = json.load(open(sys.argv[1]))["traceEvents"]
def counter(name, us):
    c = [e for e in ev if e["ph"] == "C" and e["name"] == name and e["ts"] <= us]
    return max(c, key=lambda e: e["ts"])["args"]
owners = counter("owners by stage", 155000)
byclass = counter("bytes by class", 210000)
lanes = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "b":
        lanes[e["id"]].append(e["name"])
slices = sorted(len(v) - 1 for v in lanes.values())
p101 = [v for v in lanes.values() if v[0].startswith("owner 0x101")][0][1:]
meta = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name")
ends = sum(1 for e in ev if e["ph"] == "e")
print(owners["chan_send"], owners["parse"], byclass["abc"], byclass["pending"], byclass["srs"],
      slices, ",".join(p101), meta, ends == sum(len(v) for v in lanes.values()))
' "$TMP/s.trace.json")" "2 1 600 200 1000 [2, 5, 5] wait_permit,synth,chan_send,gpu,finalize ['prover'] True"

# svg
"$I" report "$TMP/s.rec" -o "$TMP/s.svg" 2>/dev/null
check "svg: well-formed XML" xmllint --noout "$TMP/s.svg"
check_eq "svg: the peak annotated with its value and time" \
	"$(xmlstarlet sel -N s=http://www.w3.org/2000/svg -t -v '//s:g[@id="peak"]/s:text' "$TMP/s.svg")" \
	"peak 1.95 KiB at 0.210 s"
check_eq "svg: one area per class, an RSS line, a lane per stage" \
	"$(xmlstarlet sel -N s=http://www.w3.org/2000/svg -t -v 'count(//s:g[@class="areas"]/s:path)' \
		-o ' ' -v 'count(//s:path[@class="rss"])' -o ' ' \
		-v 'count(//s:g[@class="lanes"]/s:rect)' "$TMP/s.svg")" "4 1 7"

# compare: the slow run is A; the same work in half the time is B
cmp=$("$I" compare --json "$TMP/slow.rec" "$TMP/s.rec")
check_eq "compare: peak ratio 1, throughput ratio 2, dwell ratio 0.5" "$(printf '%s' "$cmp" | python3 -c '
import json, sys
m = {(x["group"], x["name"]): x for x in json.load(sys.stdin)["metrics"]}
print(m[("peak", "tracked total")]["ratio"], m[("owners done per minute", "all")]["ratio"],
      m[("mean dwell by stage", "synth")]["ratio"])')" "1.0 2.0 0.5"
out=$("$I" compare "$TMP/slow.rec" "$TMP/s.rec")
check_match "compare: text table with B/A" "$out" '^  tracked total +1\.95 KiB +1\.95 KiB +1\.00$'
check_eq "compare: under 80 columns" "$(printf '%s\n' "$out" | awk 'length > 79' | wc -l)" 0

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
check_match "... named corrupt" "$out" '^inflight: .*flip\.rec: corrupt record [0-9]+ at offset [0-9]+: checksum mismatch$'
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
finish
