#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The seed story's three variants (prover/story.sh) in both scenes, on the MODELLED host and
# device: for each seed of SEEDS (default "1 2 3"), REPS runs (default 2) of each variant,
# the variants taking turns so that a noisy machine weighs on all three alike. Prints, per
# scene and variant, the median and range (min-max) of the peak RSS, proofs/min and the
# device's busy time; each fix's proofs/min against the incident's of the same seed and
# run (median and range of the paired change); the proofs/min by the model's clock (the
# modelled makespan: the same every run of a seed); and the spread between runs of one
# seed (the run-to-run noise of the wall clock, which the seeded model keeps small). A run in which real work did not
# fit in its modelled time (an overrun: the machine starved the prover) measures the
# machine, not the model: it is run again, up to RETRIES times (default 3), and the table
# says how many were (reruns) and how many overruns the kept runs still had. Speeds are
# figures for a benchmark, never for a test.
# Usage: prover/incident.sh [EXTRA PROVER OPTIONS...]   (they come last, so they win)
# e.g. SEEDS="1 2 3 4 5" REPS=1 prover/incident.sh; SCENES=cost prover/incident.sh
set -euo pipefail
EXTRA=("$@")
cd "$(dirname "$0")/.."
source prover/story.sh
PROVER=${PROVER:-build/prover}
SEEDS=${SEEDS:-1 2 3}
REPS=${REPS:-2}
RETRIES=${RETRIES:-3}
read -r -a scenes <<<"${SCENES:-${STORY_SCENES[*]}}"

[ -x "$PROVER" ] || { echo "incident.sh: $PROVER not built; run: make prover" >&2; exit 2; }
case $REPS in '' | *[!0-9]* | 0) echo "incident.sh: REPS=$REPS: not a count" >&2; exit 2 ;; esac
case $RETRIES in '' | *[!0-9]*) echo "incident.sh: RETRIES=$RETRIES: not a count" >&2; exit 2 ;; esac
for s in $SEEDS; do
	case $s in *[!0-9]*) echo "incident.sh: SEEDS: '$s' is not a seed" >&2; exit 2 ;; esac
done
for scene in "${scenes[@]}"; do
	[ -n "${STORY_SCENE_ARGS[$scene]+x}" ] || {
		echo "incident.sh: SCENES: '$scene' is not one of: ${STORY_SCENES[*]}" >&2
		exit 2
	}
done

field() { # field JSON NAME [N]: the Nth number or string called NAME in the JSON summary
	printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | sed -n "${3:-1}p" | cut -d: -f2 | tr -d '"'
}

# one_run SCENE RUN SEED: the JSON summary of one run, again while it overran (RETRIES
# times at most); sets `reran` to the number of runs thrown away
one_run() {
	local sargs args out try
	read -r -a sargs <<<"${STORY_SCENE_ARGS[$1]}"
	read -r -a args <<<"${STORY_ARGS[$2]}"
	reran=0
	for ((try = 0; try <= RETRIES; try++)); do
		out=$("$PROVER" "${STORY_COMMON[@]}" "${sargs[@]}" "${args[@]}" --model-seed "$3" \
			"${EXTRA[@]}" --json 2>/dev/null) || {
			echo "incident.sh: $1 $2, seed $3: the prover failed" >&2
			exit 1
		}
		[ "$(overruns "$out")" = 0 ] && break
		[ "$try" -lt "$RETRIES" ] && reran=$((reran + 1))
	done
	[ "$(field "$out" all_h_checks_passed)" = true ] || {
		echo "incident.sh: $1 $2, seed $3: H checks failed" >&2
		exit 1
	}
	json=$out
}

overruns() { echo $(($(field "$1" overruns 1) + $(field "$1" overruns 2))); }

# one line per kept run: scene variant seed rep rss ppm busy overruns reruns model-ppm
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for scene in "${scenes[@]}"; do
	for seed in $SEEDS; do
		for ((rep = 1; rep <= REPS; rep++)); do
			for run in "${STORY_RUNS[@]}"; do
				one_run "$scene" "$run" "$seed"
				echo "$scene $run $seed $rep $(field "$json" peak_rss_mib)" \
					"$(field "$json" proofs_per_min) $(field "$json" busy_pct)" \
					"$(overruns "$json") $reran" \
					"$(awk -v n="$(field "$json" proofs)" -v m="$(field "$json" makespan_s)" \
						'BEGIN { printf "%.2f", n * 60 / m }')" >>"$runs"
			done
		done
	done
done

echo "pw $STORY_PW; seeds $SEEDS, $REPS runs each; median (min-max); the host and the GPU are" \
	"MODELLED"
for scene in "${scenes[@]}"; do
	echo
	echo "scene $scene: ${STORY_SCENE_WHAT[$scene]}"
	echo "  prover ${STORY_COMMON[*]} ${STORY_SCENE_ARGS[$scene]} ${EXTRA[*]}"
	awk -v scene="$scene" -v order="${STORY_RUNS[*]}" '
	function stats(list,   n, v, i, j, t, m) {	# "median (min-max)" of a space-separated list
		n = split(list, v, " ")
		for (i = 2; i <= n; i++)	# insertion sort, numerically
			for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		return sprintf(fmt, m, v[1], v[n])
	}
	$1 == scene {
		rss[$2] = rss[$2] " " $5; ppm[$2] = ppm[$2] " " $6; busy[$2] = busy[$2] " " $7
		ovr[$2] += $8; rer[$2] += $9; p[$2, $3, $4] = $6; seeds[$3] = 1; reps[$4] = 1
		mp[$2] = mp[$2] " " $10
	}
	END {
		nv = split(order, vs, " ")
		printf "%-9s%-20s%-20s%-21s%-9s%-6s%s\n", "variant", "peak RSS MiB", "proofs/min",
			"vs incident", "model", "busy", "overruns"
		for (k = 1; k <= nv; k++) {
			v = vs[k]; d = ""
			for (s in seeds) for (r in reps) d = d " " (p[v, s, r] / p[vs[1], s, r] - 1) * 100
			fmt = "%.1f (%.1f-%.1f)"; a = stats(rss[v]); b = stats(ppm[v])
			fmt = "%.1f"; c = stats(busy[v]); m = stats(mp[v])
			fmt = "%+.1f%% (%+.1f..%+.1f)"; e = k == 1 ? "-" : stats(d)
			printf "%-9s%-20s%-20s%-21s%-9s%-6s%d/%d\n", v, a, b, e, m, c, ovr[v], rer[v]
		}
		worst = 0
		for (k = 1; k <= nv; k++) for (s in seeds) {
			lo = hi = ""
			for (r in reps) {
				x = p[vs[k], s, r]
				if (lo == "" || x < lo) lo = x
				if (hi == "" || x > hi) hi = x
			}
			if ((hi - lo) / hi * 100 > worst) worst = (hi - lo) / hi * 100
		}
		printf "run to run (the same seed): proofs/min within %.2f%%; model: proofs/min by the\n", worst
		printf "model'"'"'s clock (median), the same every run of a seed; busy: the device'"'"'s %% of\n"
		printf "the wall time (median); overruns: in the kept runs / runs thrown away for them\n"
	}' "$runs"
done
