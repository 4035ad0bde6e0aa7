#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench: measures inflight side by side with its peers and writes the results
# file docs/bench.md (medians with their spread, ratios within a round) and the raw figures
# (build/bench/results/raw.csv, copied to docs/bench-raw.csv). About 10-15 minutes on 2 cores.
# Usage: scripts/bench.sh [SECTION...]; sections (each is bench/SECTION.sh): probe_cost
#        scaling scaling_vm sharing_cost lock_stall attach_latency prover_overhead loader_cost rss_cost record_ceiling
#        attach_teardown offline_memory ring_overhead cuda_cost (default: all).
#        BENCH_INFLIGHT_BASELINE=PATH: an inflight built before a change, side by side (the results file
#        names its path, and its commit when it lies in a git work tree); BENCH_INFLIGHT_BASELINE_DESC: what
#        it is, in words, for the results file (BENCH_BASELINE_WHAT, its older name, still works).
#        BENCH_REPS (5) rounds, BENCH_SECONDS (1) per probe-cost run; more in the sections.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ALL_SECTIONS=(probe_cost scaling scaling_vm sharing_cost lock_stall attach_latency prover_overhead loader_cost rss_cost
	record_ceiling attach_teardown offline_memory ring_overhead cuda_cost)
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=("${ALL_SECTIONS[@]}")

if [ "$(id -u)" != 0 ]; then
	echo "bench: run as root: the tracers need CAP_BPF and CAP_PERFMON" >&2
	exit 3
fi
make --no-print-directory ${BENCH_MAKEFLAGS:-} bench-progs || exit

source bench/lib.sh
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
echo "section,config,threads,rep,metric,value" >"$RAW"
: >"$NOTES"
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo +dirty)"
	echo "kernel=$(uname -r)"
	echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "cpus=$(nproc)"
	# what a kernel call costs follows them: section sharing_cost's lookups
	echo "srso=$(cat /sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow 2>/dev/null || echo unknown)"
	echo "spectre_v2=$(cat /sys/devices/system/cpu/vulnerabilities/spectre_v2 2>/dev/null || echo unknown)"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "reps=$REPS"
	echo "prover_reps=${BENCH_PROVER_REPS:-7}"
	echo "rss_reps=${BENCH_RSS_REPS:-7}"
	echo "seconds_per_run=$SECONDS_PER_RUN"
	echo "attach_reps=${BENCH_ATTACH_REPS:-3}"
	if [ -n "${BENCH_INFLIGHT_BASELINE:-}" ]; then
		echo "baseline_path=$BENCH_INFLIGHT_BASELINE"
		echo "baseline_commit=$(baseline_commit "$BENCH_INFLIGHT_BASELINE")"
		echo "baseline_what=${BENCH_INFLIGHT_BASELINE_DESC:-${BENCH_BASELINE_WHAT:-}}"
	fi
} >"$OUTDIR/env.txt"

for s in "${sections[@]}"; do
	[ -f "bench/$s.sh" ] || { echo "bench: no section $s" >&2; exit 2; }
	echo "bench: $s" >&2
	source "bench/$s.sh"
	start=$SECONDS
	"$s"
	echo "section_seconds_$s=$((SECONDS - start))" >>"$OUTDIR/env.txt"
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUTDIR/env.txt"

bench/report.sh "$OUTDIR" >docs/bench.md || exit
# the raw figures travel with the results file while they stay small
if [ "$(stat -c %s "$RAW")" -lt 262144 ]; then
	cp "$RAW" docs/bench-raw.csv
fi
echo "bench: results in docs/bench.md, raw figures in $RAW" >&2
