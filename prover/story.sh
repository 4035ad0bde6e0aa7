# SPDX-License-Identifier: BSD-2-Clause
# The seed story's three variants, scaled down: the one definition that scripts/demo.sh and
# prover/incident.sh share (sourced, not run). Same work in each variant: 6 proofs of 10
# partitions all admitted at once, 12 synthesis permits, 2^18 constraints per partition,
# on the MODELLED device (its kernel time, 145 ms per partition at 125 Mop/s, is about
# twice what synthesis takes per partition across two cores at --synth-rounds 20), so
# synthesis can run ahead of the device as it did on the real host.
# shellcheck disable=SC2034 # the variables are for the scripts that source this file
STORY_PW=${PW:-12}
STORY_PROOFS=${PROOFS:-6}
STORY_COMMON=(--gpu model --gpu-rate 125 --synth-rounds 20 --pw "$STORY_PW"
	--jobs "$STORY_PROOFS" --proofs "$STORY_PROOFS" --partitions 10 --log-n 18)
STORY_RUNS=(incident fix1 fix2)
declare -A STORY_ARGS=(
	[incident]="--permit-release after-synth --chan-cap 1"
	[fix1]="--permit-release after-send --chan-cap 1"
	[fix2]="--permit-release after-send --chan-cap $STORY_PW"
)
declare -A STORY_WHAT=(
	[incident]="the incident: permit released after synthesis, channel capacity 1"
	[fix1]="fix 1: permit held until the send, channel capacity 1"
	[fix2]="fix 2 (kept): permit released after the send, channel capacity = pw"
)
