#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# One clock (docs/json.md): one run of the reference prover, traced by three tracers at once
# (a live text summary, a live JSON timeline, a recording), and the time of its peak read
# from every output: the live JSON's last interval and its summary, the live text summary,
# the report's JSON, text, SVG, HTML and Chrome trace, and compare. Within one tracer the
# number is the same to the microsecond; between the live tracers and the recorder (separate
# BPF programs that each read the clock at the same probe hits) within a millisecond.
# Needs root.
source "$(dirname "$0")/lib.sh"
I=$BUILD/inflight
needs_root
cp "$BUILD/prover" "$TMP/prover"
wait_line() { for _ in $(seq 500); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done; return 1; }
"$I" record -o "$TMP/run.infl" -b "$TMP/prover" 2>"$TMP/rec.err" &
rec=$!
"$I" -b "$TMP/prover" >"$TMP/live.txt" 2>"$TMP/live.err" &
live=$!
"$I" --json -i 50ms -o "$TMP/live.json" -b "$TMP/prover" 2>"$TMP/livej.err" &
livej=$!
wait_line "$TMP/rec.err" recording && wait_line "$TMP/live.err" tracing &&
	wait_line "$TMP/livej.err" tracing
check_eq "three tracers attached" "$?" 0
"$TMP/prover" --pw 6 --jobs 2 --proofs 2 --log-n 14 --permit-release after-synth --chan-cap 1 \
	>/dev/null 2>&1
check_eq "the prover ran" "$?" 0
sleep 0.3
kill -INT "$rec" "$live" "$livej"
wait "$rec" "$live" "$livej"
"$I" report "$TMP/run.infl" -f json -o "$TMP/r.json" 2>/dev/null
"$I" report "$TMP/run.infl" -o "$TMP/r.txt" 2>/dev/null
"$I" report "$TMP/run.infl" -o "$TMP/r.svg" 2>/dev/null
"$I" report "$TMP/run.infl" -o "$TMP/r.html" 2>/dev/null
"$I" report "$TMP/run.infl" -f chrome -o "$TMP/r.trace.json" 2>/dev/null
"$I" compare --json "$TMP/run.infl" "$TMP/run.infl" -o "$TMP/c.json" 2>/dev/null

# every number, in seconds, from the text it is shown in
python3 - "$TMP" >"$TMP/times" <<'PY'
import json, re, sys
t = sys.argv[1]
lines = [json.loads(l) for l in open(t + "/live.json")]
summary = lines[-1]
intervals = [l for l in lines if l["type"] == "interval" and l["processes"]]
pid = json.load(open(t + "/r.json"))["processes"][0]["pid"]
def proc(o):
    return [p for p in o["processes"] if p["pid"] == pid][0]
live_text = re.search(r"^peak: .* at \+([0-9.]+) s \(event", open(t + "/live.txt").read(), re.M)
rep = proc(json.load(open(t + "/r.json")))
text = re.search(r"^  peak +.* at ([0-9.]+) s \(event", open(t + "/r.txt").read(), re.M)
svg = re.search(r'class="label"[^>]*>peak [^<]* at ([0-9.]+) s<', open(t + "/r.svg").read())
html = re.search(r'data-time-s="([0-9.]+)"', open(t + "/r.html").read())
ev = json.load(open(t + "/r.trace.json"))["traceEvents"]
chrome = [e for e in ev if e["ph"] == "i" and e["name"].startswith("peak ")][0]
cmp = json.load(open(t + "/c.json"))["a"]["runs"][0]
print("live_interval", proc(intervals[-1])["peak"]["time_s"])
print("live_summary", proc(summary)["peak"]["time_s"])
print("live_text", live_text.group(1))
print("report_json", rep["peak"]["time_s"])
print("report_text", text.group(1))
print("svg", svg.group(1))
print("html", html.group(1))
print("chrome_us", chrome["ts"])
print("compare", cmp["peak_time_s"])
print("bytes", proc(summary)["peak"]["bytes"], rep["peak"]["bytes"])
PY
cat "$TMP/times" | sed 's/^/# /'
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/times"; }
check "every output gave its peak time" test "$(wc -l <"$TMP/times")" -eq 10
check_eq "the live JSON: the last interval's peak time is the summary's" "$(v live_interval)" "$(v live_summary)"
# the text and JSON tracers are two: their clock reads of one hit differ by microseconds, which
# may fall on either side of a rounding
check "the live text summary prints 3 decimals, the live JSON's time within a millisecond ($(v live_text) s, $(v live_summary) s)" \
	python3 -c "import re, sys; t = '$(v live_text)'; sys.exit(0 if re.fullmatch(r'[0-9]+\.[0-9]{3}', t) and abs(float(t) - $(v live_summary)) < 0.0015 else 1)"
check_eq "the recording: report JSON and compare, to the microsecond" "$(v compare)" "$(v report_json)"
check_eq "... the Chrome trace's peak instant, in microseconds" "$(v chrome_us)" \
	"$(python3 -c "print(round($(v report_json) * 1e6))")"
check_eq "... the HTML report's peak table" "$(v html)" "$(printf '%.6f' "$(v report_json)")"
check_eq "... the text report and the SVG (3 decimals)" "$(v report_text) $(v svg)" \
	"$(printf '%.3f %.3f' "$(v report_json)" "$(v report_json)")"
check_eq "live and recorded: the same peak, in bytes" \
	"$(awk '$1 == "bytes" { print ($2 == $3) }' "$TMP/times")" 1
check "live and recorded: the same instant within a millisecond ($(v live_summary) s, $(v report_json) s)" \
	python3 -c "import sys; sys.exit(0 if abs($(v live_summary) - $(v report_json)) < 0.001 else 1)"
check_match "the live text summary names its clock" "$(cat "$TMP/live.txt")" \
	'^  times: seconds since the first probe event \(pid [0-9]+\)$'
check_match "the live JSON names its clock" "$(tail -n 1 "$TMP/live.json")" \
	'"clock":\{"origin":"first probe event","origin_pid":[0-9]+,"origin_mono_ns":[0-9]+\}'
check_match "the text report names its clock" "$(cat "$TMP/r.txt")" '^clock +t = 0 s is the first probe event'
finish
