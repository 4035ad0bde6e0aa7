#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo: the incident of the seed story diagnosed with inflight, then its two fixes, on
# the reference prover with its MODELLED GPU (a device of its own whose kernel time comes
# from the work and uses no CPU, so synthesis keeps the two cores as on a real host; the
# same story on every machine, CUDA or not). Same work in each variant:
# 1. the incident: permit released after synthesis, GPU channel of capacity 1, the device
#    slower than synthesis; traced live: partitions pile up in chan_send holding a/b/c + aux;
# 2. fix 1: the permit held until the send (channel still of capacity 1);
# 3. fix 2 (kept): permit released after the send, channel capacity = pw.
# Each run is recorded; the recordings are rendered (SVG, Chrome trace, folded stacks) and
# compared. Everything lands in DEMO_OUT (default build/demo), named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_OUT:-build/demo}
INFLIGHT=build/inflight
source prover/story.sh # the variants' options, shared with prover/incident.sh

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
for run in "${STORY_RUNS[@]}"; do
	read -r -a args <<<"${STORY_ARGS[$run]}"
	banner "${STORY_WHAT[$run]^}"
	live=()
	[ "$run" = incident ] && live=(-i 3s) # the pile-up, as it grows
	echo "\$ inflight ${live[*]} -- prover ${STORY_COMMON[*]} ${args[*]}"
	record_while "$run" "$INFLIGHT" "${live[@]}" -- "$OUT/prover" "${STORY_COMMON[@]}" \
		"${args[@]}" | tee "$OUT/$run.txt"
done

for run in "${STORY_RUNS[@]}"; do
	"$INFLIGHT" report "$OUT/$run.infl" -o "$OUT/$run.svg"
	"$INFLIGHT" report "$OUT/$run.infl" --format chrome -o "$OUT/$run.trace.json"
	"$INFLIGHT" report "$OUT/$run.infl" --format folded -o "$OUT/$run.folded"
	"$INFLIGHT" report "$OUT/$run.infl" >"$OUT/$run.report.txt"
done

# ---- THE COMPARE: the one place that calls `inflight compare` --------------------------
# Today's compare takes two recordings (A, B): the incident against each fix. When compare
# takes several runs and prints a verdict, replace this function's body with that one call.
compare_runs() {
	banner "Incident vs fix 1, then incident vs fix 2, from the recordings"
	echo "\$ inflight compare incident.infl fix1.infl"
	"$INFLIGHT" compare "$OUT/incident.infl" "$OUT/fix1.infl" | tee "$OUT/compare-fix1.txt"
	echo "\$ inflight compare incident.infl fix2.infl"
	"$INFLIGHT" compare "$OUT/incident.infl" "$OUT/fix2.infl" | tee "$OUT/compare-fix2.txt"
	"$INFLIGHT" compare --json "$OUT/incident.infl" "$OUT/fix1.infl" >"$OUT/compare-fix1.json"
	"$INFLIGHT" compare --json "$OUT/incident.infl" "$OUT/fix2.infl" >"$OUT/compare-fix2.json"
}
compare_runs
# ---- end of THE COMPARE ------------------------------------------------------------------

banner "The prover's own figures (MODELLED device)"
printf '%-9s %13s %11s %12s\n' variant "peak RSS MiB" proofs/min "device busy"
for run in "${STORY_RUNS[@]}"; do
	printf '%-9s %13s %11s %12s\n' "$run" \
		"$(awk '/^peak RSS/ { print $3 }' "$OUT/$run.txt")" \
		"$(awk '/^proofs\/min/ { print $2 }' "$OUT/$run.txt")" \
		"$(sed -n 's/^device .*busy \([0-9.]*%\).*/\1/p' "$OUT/$run.txt")"
done

banner "Written to $OUT/"
echo "  {incident,fix1,fix2}.svg          open in a browser: bytes by class, owners per stage, RSS, the peak"
echo "  {incident,fix1,fix2}.trace.json   open in ui.perfetto.dev or speedscope"
echo "  {incident,fix1,fix2}.folded       flamegraph.pl / speedscope: memory x time by stage;class"
echo "  {incident,fix1,fix2}.infl         the recordings: inflight report FILE [--format ...]"
echo "  {incident,fix1,fix2}.report.txt   inflight report of each recording"
echo "  {incident,fix1,fix2}.txt          the live trace and the prover's summary"
echo "  compare-fix{1,2}.{txt,json}       the incident against each fix"
