#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The seed story's three variants (prover/story.sh), same work each, measured REPS times
# (default 5) in turn so that a noisy machine weighs on all three alike: the incident
# (permit released after synthesis, channel capacity 1), fix 1 (permit held until the send)
# and fix 2 (released after the send, capacity = pw). Prints, per variant, the median and
# the range (min-max) of the peak RSS, proofs/min and the MODELLED device's busy time,
# and the H checks. Speeds are figures for a benchmark, never for a test.
# Usage: prover/incident.sh [EXTRA PROVER OPTIONS...]   (they come last, so they win)
# e.g. REPS=9 prover/incident.sh; prover/incident.sh --gpu-rate 250 (a faster device)
set -euo pipefail
EXTRA=("$@")
cd "$(dirname "$0")/.."
source prover/story.sh
PROVER=${PROVER:-build/prover}
REPS=${REPS:-5}

[ -x "$PROVER" ] || { echo "incident.sh: $PROVER not built; run: make prover" >&2; exit 2; }
case $REPS in '' | *[!0-9]* | 0) echo "incident.sh: REPS=$REPS: not a count" >&2; exit 2 ;; esac

field() { # field JSON NAME: a number or string of the prover's one-line JSON summary
	printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'
}

# stats N...: "median (min-max)" of the numbers
stats() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f (%.1f-%.1f)", m, v[1], v[NR] }'
}

declare -A rss ppm busy checks
for ((rep = 1; rep <= REPS; rep++)); do
	for run in "${STORY_RUNS[@]}"; do
		read -r -a args <<<"${STORY_ARGS[$run]}"
		out=$("$PROVER" "${STORY_COMMON[@]}" "${args[@]}" "${EXTRA[@]}" --json 2>/dev/null) || {
			echo "incident.sh: $run, run $rep: the prover failed (exit $?)" >&2
			exit 1
		}
		rss[$run]+="$(field "$out" peak_rss_mib) "
		ppm[$run]+="$(field "$out" proofs_per_min) "
		busy[$run]+="$(field "$out" busy_pct) "
		checks[$run]="$(field "$out" h_checks_passed)/$(field "$out" h_checks_total)"
		[ "$(field "$out" all_h_checks_passed)" = true ] || {
			echo "incident.sh: $run, run $rep: H checks ${checks[$run]}" >&2
			exit 1
		}
	done
done

echo "pw=$STORY_PW, $STORY_PROOFS proofs x 10 partitions, $REPS runs each;" \
	"median (min-max); the device is MODELLED"
printf '%-70s\n' "${STORY_COMMON[*]} ${EXTRA[*]}"
printf '%-9s %-22s %-22s %-22s %s\n' variant "peak RSS MiB" proofs/min "device busy %" \
	"H checks"
for run in "${STORY_RUNS[@]}"; do
	# shellcheck disable=SC2086 # the lists are words on purpose
	printf '%-9s %-22s %-22s %-22s %s\n' "$run" "$(stats ${rss[$run]})" \
		"$(stats ${ppm[$run]})" "$(stats ${busy[$run]})" "${checks[$run]} (each run)"
done
