#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `report --format html` opened in headless Chromium (tests/viewer/html_report.mjs): the page
# makes no request at all (everything inline), raises no error, and what it shows equals
# the JSON report of the same recording: the peak's table, dwell per stage, the tooltip under
# the pointer at the peak and at a known instant after zooming with the wheel (the scripted
# recording of tests/record/scenario.h: known answers), both modes' series, pan and reset.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/viewer/setup.sh"
I=$BUILD/inflight
"$BUILD/tests/rec_synth" "$TMP/s.rec"
"$I" report "$TMP/s.rec" -o "$TMP/s.html" 2>"$TMP/err"
check_match "report -o X.html writes the HTML report" "$(cat "$TMP/err")" '^inflight: wrote HTML report to '
"$I" report "$TMP/s.rec" --format json -o "$TMP/s.json" 2>/dev/null
check_eq "the page names no outside resource (src, href, url)" \
	"$(grep -oE '(src|href)="[^"]*"|url\(' "$TMP/s.html" | wc -l)" 0
out=$(TMPDIR=$TMP timeout 120 node "$ROOT/tests/viewer/html_report.mjs" "$V/node_modules" \
	"$TMP/s.html" 0.21 0.155 2>&1)
printf '%s\n' "$out" | cut -c1-400 | sed 's/^/# /'
printf '%s' "$out" | tail -n 1 >"$TMP/shown.json"
q() { python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); p = r['processes'][0]
print($1)" "$TMP/shown.json" "$TMP/s.json"; }
check_eq "the page loads without an error" "$(q 'd["error"]')" None
check_eq "... and makes no request: it is offline" "$(q 'd["requests"]')" "[]"
check_eq "peak table: the JSON's peak bytes and time" \
	"$(q 'd["tables"]["peak_bytes"], d["tables"]["peak_time_s"]')" \
	"$(q 'str(p["peak"]["bytes"]), "%.6f" % p["peak"]["time_s"]')"
check_eq "peak table: each stage's bytes as in the JSON" \
	"$(q 'sorted((x["stage"], int(x["bytes"])) for x in d["tables"]["peak"])')" \
	"$(q 'sorted((s["stage"], s["bytes"]) for s in p["peak"]["stages"])')"
check_eq "dwell table: each stage's stays and mean as in the JSON" \
	"$(q 'sorted((x["stage"], int(x["stays"]), float(x["mean_ms"])) for x in d["tables"]["dwell"] if int(x["stays"]))')" \
	"$(q 'sorted((x["stage"], x["count"], x["mean_ns"] / 1e6) for x in p["dwell"])')"
check_eq "the command shown whole" "$(q 'd["tables"]["command"]')" "$(q 'p["command"]')"
check_eq "hover at the peak (zoomed in with the wheel): the JSON's peak and composition" \
	"$(q 'd["hover"][0]["shown"], int(d["hover"][0]["total"]), sorted((x["name"], int(x["bytes"])) for x in d["hover"][0]["rows"])')" \
	"$(q '"block", p["peak"]["bytes"], sorted((s["stage"], s["bytes"]) for s in p["peak"]["stages"] if s["bytes"])')"
check_eq "hover at 155 ms: 1800 bytes, chan_send 800 with 2 owners (scenario.h)" \
	"$(q 'd["hover"][1]["total"], [(x["name"], x["bytes"], x["text"][2]) for x in d["hover"][1]["rows"]]')" \
	"1800 [('chan_send', '800', '2 owners'), ('(none)', '1000', '0 owners')]"
check "the wheel zoomed in: the view spans under a tenth of the run" \
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["hover"][1]["view"]; sys.exit(0 if v[1] - v[0] < 0.06 else 1)' "$TMP/shown.json"
check "a drag to the left shows later times" \
	python3 -c 'import json, sys; z = json.load(open(sys.argv[1]))["zoomed"]; sys.exit(0 if z["panned"][0] > z["before"][0] else 1)' "$TMP/shown.json"
check_eq "'whole run' shows the whole run again" "$(q 'd["zoomed"]["whole"], d["zoomed"]["range"]')" \
	"[0, 0.6] showing 0 s to 600.0 ms (600.0 ms)"
check_eq "by stage: the stages of the JSON report, stacked from (none) up" "$(q 'd["modes"]["stage"]')" \
	"['(none)', 'synth', 'chan_send', 'gpu', 'finalize']"
check_eq "by class: the classes that held bytes" "$(q 'd["modes"]["class"]')" \
	"$(q '[c["class"] for c in p["class_peaks"]]')"
check_eq "the legend names each stage drawn and the RSS line (the recording followed RSS)" \
	"$(q 'd["legend"]')" "['finalize', 'gpu', 'chan_send', 'synth', '(none)', 'RSS']"
# a crafted recording: its strings cannot break out of the page
"$BUILD/tests/rec_synth" "$TMP/h.rec" hostile
"$I" report "$TMP/h.rec" -o "$TMP/h.html" 2>/dev/null
check_eq "hostile strings: no escape byte, one </script> per script" \
	"$(grep -c $'\x1b' "$TMP/h.html") $(grep -o '</script>' "$TMP/h.html" | wc -l)" "0 2"
finish
