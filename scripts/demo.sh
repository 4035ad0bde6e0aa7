#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo: the incident of the seed story, diagnosed with inflight, then the fix.
# 1. the reference prover with the original bug (permit released after synthesis, GPU channel
#    of capacity 1, GPU slower than synthesis), traced live: the per-stage timeline shows
#    partitions piling up in chan_send holding a/b/c + aux, and the summary the peak's
#    composition; the same run is recorded.
# 2. the fix (permit released after the send, channel capacity = pw), traced and recorded.
# 3. both recordings rendered (SVG, Chrome trace) and compared.
# Everything lands in DEMO_OUT (default build/demo), named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_OUT:-build/demo}
INFLIGHT=build/inflight
common=(--pw 12 --jobs 4 --proofs 4 --log-n 18 --gpu-rounds 3)
incident=("${common[@]}" --permit-release after-synth --chan-cap 1)
fixed=("${common[@]}" --permit-release after-send --chan-cap 12)

rm -rf "$OUT"
mkdir -p "$OUT"
# A private copy: the recorder attaches by binary and must see only this demo's prover.
cp build/prover "$OUT/prover"

banner() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# record_while NAME CMD...: records every run of $OUT/prover into $OUT/NAME.infl while CMD
# runs (CMD traces the same run live), then stops the recorder.
record_while() {
	local name=$1 rec
	shift
	"$INFLIGHT" record -o "$OUT/$name.infl" -b "$OUT/prover" 2>"$OUT/$name.rec.log" &
	rec=$!
	for _ in $(seq 100); do
		grep -q "recording" "$OUT/$name.rec.log" 2>/dev/null && break
		kill -0 "$rec" 2>/dev/null || { cat "$OUT/$name.rec.log" >&2; return 1; }
		sleep 0.05
	done
	"$@"
	kill -INT "$rec"
	wait "$rec"
}

banner "The question: how many of each large buffer are in flight, and in which stage?"
echo "The reference prover, with the incident's bug: pw=12 synthesis permits, released as"
echo "soon as synthesis ends, a GPU channel of capacity 1 and a GPU slower than synthesis."
echo "\$ inflight -i 3s -- prover ${incident[*]}"
record_while incident "$INFLIGHT" -i 3s -- "$OUT/prover" "${incident[@]}"

banner "The fix: the permit is held until the send, and the channel holds pw partitions"
echo "\$ inflight -- prover ${fixed[*]}"
record_while fixed "$INFLIGHT" -- "$OUT/prover" "${fixed[@]}"

banner "Incident vs fix, from the recordings"
echo "\$ inflight compare incident.infl fixed.infl"
"$INFLIGHT" compare "$OUT/incident.infl" "$OUT/fixed.infl" | tee "$OUT/compare.txt"
for run in incident fixed; do
	"$INFLIGHT" report "$OUT/$run.infl" -o "$OUT/$run.svg"
	"$INFLIGHT" report "$OUT/$run.infl" --format chrome -o "$OUT/$run.trace.json"
	"$INFLIGHT" report "$OUT/$run.infl" --format folded -o "$OUT/$run.folded"
done
"$INFLIGHT" compare --json "$OUT/incident.infl" "$OUT/fixed.infl" >"$OUT/compare.json"

banner "Written to $OUT/"
echo "  incident.svg, fixed.svg              open in a browser: bytes by class, owners per stage, RSS, the peak"
echo "  incident.trace.json, fixed.trace.json  open in ui.perfetto.dev or speedscope"
echo "  incident.folded, fixed.folded        flamegraph.pl / speedscope: memory x time by stage;class"
echo "  incident.infl, fixed.infl            the recordings: inflight report FILE [--format ...]"
echo "  compare.txt, compare.json            the side-by-side table"
