#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The seed story's three variants, scaled down, same work each: the incident (permit released
# after synthesis, channel capacity 1), fix 1 (released after the send) and fix 2 (released
# after the send, capacity = pw). Prints peak RSS and proofs/min for each as a table.
# Usage: prover/incident.sh [EXTRA PROVER OPTIONS...]   (they come last, so they win)
# e.g. on a CUDA host, where the GPU stage is fast: prover/incident.sh --gpu-rounds 200
set -euo pipefail
EXTRA=("$@")
cd "$(dirname "$0")/.."
PROVER=${PROVER:-build/prover}
PW=${PW:-12}
PROOFS=${PROOFS:-6}
common=(--pw "$PW" --proofs "$PROOFS" --jobs "$PROOFS" --partitions 10 --log-n 18
	--gpu-rounds 2 --json)

[ -x "$PROVER" ] || { echo "incident.sh: $PROVER not built; run: make prover" >&2; exit 2; }

field() { # field JSON NAME
	printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | cut -d: -f2 | tr -d '"'
}

printf '%-44s %12s %11s %9s\n' "variant (pw=$PW, $PROOFS proofs x 10)" "peak RSS MiB" \
	"proofs/min" "H checks"
for v in "after-synth 1" "after-send 1" "after-send $PW"; do
	set -- $v
	out=$("$PROVER" "${common[@]}" --permit-release "$1" --chan-cap "$2" \
		"${EXTRA[@]}" 2>/dev/null)
	printf '%-44s %12s %11s %9s\n' "--permit-release $1 --chan-cap $2" \
		"$(field "$out" peak_rss_mib)" "$(field "$out" proofs_per_min)" \
		"$(field "$out" h_checks_passed)/$(field "$out" h_checks_total)"
done
