#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo: the incident of the seed story diagnosed with inflight, then its two fixes, on
# the reference prover with everything but the work MODELLED (prover/story.sh): a host on
# which each synthesizing partition has cores of its own and a GPU of its own, both at
# cuzk's figures 50 times shorter and seeded, so the story is the same on every machine and
# nearly the same every run. Each variant: the same work, the same durations:
#   the incident: permit released after synthesis, GPU channel of capacity 1;
#   fix 1: the permit held until the send (channel still of capacity 1);
#   fix 2 (kept): permit released after the send, channel capacity = pw.
# Two scenes, because the pile-up and fix 1's cost need opposite balances in this pipeline
# (docs/prover.md): "pileup", synthesis at cuzk's 29 s a partition (alone) outrunning the
# GPU, the incident traced live as partitions pile up in chan_send; and "cost", synthesis at
# 36.5 s (under load) with the GPU keeping up, where fix 1's held permits cost throughput.
# Each run is recorded; the recordings are rendered (SVG, HTML, Chrome trace, folded
# stacks) and compared (text with its verdict, JSON, SVG). Everything lands in DEMO_OUT
# (default build/demo), named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_OUT:-build/demo}
INFLIGHT=build/inflight
source prover/story.sh # the scenes and variants, shared with prover/incident.sh

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

# ---- THE COMPARE: the one place that calls `inflight compare` --------------------------
# Today's compare takes two recordings (A, B): the incident against each fix, per scene; the
# full tables go to files, the lines that tell the story to the screen. When compare takes
# several runs and prints a verdict, replace this function's body with that one call.
compare_runs() { # SCENE
	local scene=$1 fix
	banner "Scene $scene: the incident against each fix, from the recordings"
	for fix in fix1 fix2; do
		echo "\$ inflight compare $scene-incident.infl $scene-$fix.infl"
		"$INFLIGHT" compare "$OUT/$scene-incident.infl" "$OUT/$scene-$fix.infl" \
			>"$OUT/compare-$scene-$fix.txt"
		"$INFLIGHT" compare --json "$OUT/$scene-incident.infl" "$OUT/$scene-$fix.infl" \
			>"$OUT/compare-$scene-$fix.json"
		"$INFLIGHT" compare "$OUT/$scene-incident.infl" "$OUT/$scene-$fix.infl" \
			-o "$OUT/compare-$scene-$fix.svg" 2>/dev/null
		# the verdict: what changed at the peak, where memory x time moved, throughput
		sed -n '/^verdict/,/^$/p' "$OUT/compare-$scene-$fix.txt"
	done
}
# ---- end of THE COMPARE ------------------------------------------------------------------

overruns_in() { awk '/^ +overruns/ { n += $2 } END { print n + 0 }' "$1"; }

# traced_run SCENE RUN: one variant traced (live for the incident's pile-up) and recorded;
# once more if real work overran its modelled time (the machine starved the prover: that
# run shows the machine, not the model)
traced_run() {
	local scene=$1 run=$2 sargs args live=() try n
	read -r -a sargs <<<"${STORY_SCENE_ARGS[$scene]}"
	read -r -a args <<<"${STORY_ARGS[$run]}"
	[ "$scene-$run" = pileup-incident ] && live=(-i 3s) # the pile-up, as it grows
	for try in 1 2; do
		echo "\$ inflight ${live[*]:+${live[*]} }-- prover ${STORY_COMMON[*]} ${sargs[*]} ${args[*]}"
		record_while "$scene-$run" "$INFLIGHT" "${live[@]}" -- "$OUT/prover" \
			"${STORY_COMMON[@]}" "${sargs[@]}" "${args[@]}" | tee "$OUT/$scene-$run.txt"
		n=$(overruns_in "$OUT/$scene-$run.txt")
		[ "$n" = 0 ] || [ "$try" = 2 ] && break
		echo "(demo: $n overruns, the machine starved the prover; running it once more)"
	done
}

banner "The question: how many of each large buffer are in flight, and in which stage?"
for scene in "${STORY_SCENES[@]}"; do
	banner "Scene $scene: ${STORY_SCENE_WHAT[$scene]}"
	for run in "${STORY_RUNS[@]}"; do
		banner "$scene: ${STORY_WHAT[$run]}"
		traced_run "$scene" "$run"
	done
	compare_runs "$scene"
done

for scene in "${STORY_SCENES[@]}"; do
	for run in "${STORY_RUNS[@]}"; do
		r=$OUT/$scene-$run
		"$INFLIGHT" report "$r.infl" -o "$r.svg"
		"$INFLIGHT" report "$r.infl" -o "$r.html"
		"$INFLIGHT" report "$r.infl" --format chrome -o "$r.trace.json"
		"$INFLIGHT" report "$r.infl" --format folded -o "$r.folded"
		"$INFLIGHT" report "$r.infl" >"$r.report.txt"
	done
done

banner "The prover's own figures (host and GPU MODELLED; one run each, seed 1)"
printf '%-7s %-9s %12s %11s %12s %12s %9s\n' scene variant "peak RSS MiB" proofs/min \
	"vs incident" "device busy" overruns
for scene in "${STORY_SCENES[@]}"; do
	for run in "${STORY_RUNS[@]}"; do
		f=$OUT/$scene-$run.txt
		ppm=$(awk '/^proofs\/min/ { print $2 }' "$f")
		[ "$run" = incident ] && base=$ppm
		printf '%-7s %-9s %12s %11s %12s %12s %9s\n' "$scene" "$run" \
			"$(awk '/^peak RSS/ { print $3 }' "$f")" "$ppm" \
			"$(awk -v a="$ppm" -v b="$base" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')" \
			"$(sed -n 's/^device .*busy \([0-9.]*%\).*/\1/p' "$f")" \
			"$(overruns_in "$f")"
	done
done
echo "(overruns: real work that did not fit in its modelled time, a starved machine; the"
echo " figures of such a run are not the model's. prover/incident.sh measures the same over"
echo " several seeds and runs: docs/prover.md)"

banner "Written to $OUT/"
echo "  {pileup,cost}-{incident,fix1,fix2}.svg         bytes by class, owners per stage, RSS, the peak"
echo "  {pileup,cost}-{incident,fix1,fix2}.html        the report in one offline page, for a browser"
echo "  {pileup,cost}-{incident,fix1,fix2}.trace.json  open in ui.perfetto.dev or speedscope"
echo "  {pileup,cost}-{incident,fix1,fix2}.folded      flamegraph.pl / speedscope: memory x time"
echo "  {pileup,cost}-{incident,fix1,fix2}.infl        the recordings: inflight report FILE"
echo "  {pileup,cost}-{incident,fix1,fix2}.report.txt  inflight report of each recording"
echo "  {pileup,cost}-{incident,fix1,fix2}.txt         the live trace and the prover's summary"
echo "  compare-{pileup,cost}-fix{1,2}.{txt,json,svg}  the incident against each fix"
