# SPDX-License-Identifier: BSD-2-Clause
# The seed story's three variants, scaled down: the one definition that scripts/demo.sh and
# prover/incident.sh share (sourced, not run). Everything is MODELLED (docs/prover.md): the
# host (each synthesizing partition as if on cores of its own, its time from its
# constraints, +-20% per partition) and the GPU (its time from the work, +-35%: cuzk's
# 1.8-3.75 s), both at cuzk's figures 50 times shorter, seeded, so a run is nearly
# deterministic and every variant of a seed gets the same durations. 12 synthesis permits,
# 2 GPU workers, 10 partitions of 2^17 constraints (4 MiB each once synthesized) per proof,
# every proof admitted at once; the H of 1 partition in 30 checked after the run. Two scenes, because in this pipeline the pile-up and fix 1's
# cost need opposite balances (docs/prover.md, "The incident, measured"):
#   pileup  synthesis at cuzk's 29 s a partition alone: 12 permits outrun the GPU, so the
#           incident piles up and the fixes bound it; fix 1 costs nothing;
#   cost    synthesis at cuzk's 36.5 s under load: the GPU keeps up on average, so nothing
#           piles up far, and fix 1's held permits cost throughput.
# shellcheck disable=SC2034 # the variables are for the scripts that source this file
STORY_PW=${PW:-12}
STORY_COMMON=(--gpu model --host model --pw "$STORY_PW" --partitions 10 --log-n 17
	--h-check-every 30)
STORY_SCENES=(pileup cost)
declare -A STORY_SCENE_ARGS=(
	[pileup]="--proofs 18 --jobs 18 --synth-rate 219"
	[cost]="--proofs 12 --jobs 12"
)
declare -A STORY_SCENE_WHAT=(
	[pileup]="synthesis outruns the GPU (cuzk's 29 s a partition, alone; GPU 1.8-3.75 s)"
	[cost]="the GPU keeps up (cuzk's 36.5 s a partition, under load; GPU 1.8-3.75 s)"
)
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
