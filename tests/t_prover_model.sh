#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The modelled GPU and the modelled host from the outside: what the prover says about them
# (MODELLED in the announcements, the summary and the JSON, the mean times of their work
# at their rates, the spreads and the seed), the deferred H checks; the model's own
# figures, which are deterministic: the modelled synthesis time adds up the same for every
# variant of a seed, and the modelled makespan equals an independent model's
# (tests/prover/pipeline_des.py) for each variant; and the seed story's structure from the
# prover's own peak RSS, in partitions: fix 1 holds at most pw + 1 + gw of them, fix 2 more
# but at most 2 pw + gw, the incident more than both. No speed is asserted.
source "$(dirname "$0")/lib.sh"
P=$BUILD/prover
DES=$ROOT/tests/prover/pipeline_des.py

json_field() { # JSON NAME [N]: the Nth field called NAME
	printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | sed -n "${3:-1}p" | cut -d: -f2 | tr -d '"'
}

# --- what the device says -------------------------------------------------------------------
out=$("$P" --gpu model --gpu-rate 50 --log-n 16 -n 3 --jobs 3 --pw 4 2>"$TMP/err")
check_eq "--gpu model: exit 0" "$?" 0
check_match "the announcement says MODELLED, the kernel time, the spread, the rate, the seed" \
	"$(cat "$TMP/err")" \
	"^prover: GPU stage on a MODELLED device \(--gpu=model\): 81\.265 ms of kernel time per partition \+-35% \(4\.06 Mop at 50 Mop/s, seed 1\), no CPU used; H is checked after the run$"
check_eq "... in one line (the host is real)" "$(wc -l <"$TMP/err")" 1
check_match "the summary's device line says MODELLED" "$out" \
	"^device +MODELLED, 81\.26 ms \+-35% per partition at 50 Mop/s, busy [0-9.]+%$"
check_match "... then its overruns" "$out" \
	"^ +overruns [0-9]+ \(the real work took at most [0-9]+% of a kernel time\)$"
check_match "... then its makespan by the model's clock" "$out" \
	"^ +last region over [0-9]+\.[0-9]{3} s after the start, by the model's clock$"
check_match "3 of 30 partitions' H checked after the run, all passed" "$out" \
	"^H checks +3/3 passed \(1 partition in 10, after the run\)$"
check_match "work line names gpu=model host=real" "$out" "gpu=model host=real$"

j=$("$P" --gpu model --gpu-rate 50 --gpu-spread 10 --model-seed 7 --log-n 16 -n 3 --jobs 3 \
	--pw 4 --json 2>/dev/null)
check_eq "JSON: gpu model, 30 regions of 81.265 ms +-10% at 50 Mop/s, seed 7" \
	"$(json_field "$j" gpu) $(json_field "$j" regions) $(json_field "$j" kernel_ms) $(json_field "$j" spread_pct) $(json_field "$j" rate_mops) $(json_field "$j" seed) $(json_field "$j" modelled)" \
	"model 30 81.265 10 50 7 true"
check_eq "JSON: 3 H checks after the run, all passed" \
	"$(json_field "$j" h_checks_passed)/$(json_field "$j" h_checks_total) $(json_field "$j" h_checks_after_run) $(json_field "$j" all_h_checks_passed) $(json_field "$j" h_check_every)" \
	"3/3 true true 10"
check_eq "JSON: the host is real, no host model" \
	"$(json_field "$j" host) $(json_field "$j" host_model)" "real null"
busy=$(json_field "$j" busy_pct)
check "JSON: one device, so busy at most 100% of the wall time ($busy%)" \
	awk -v b="$busy" 'BEGIN { exit !(b > 0 && b <= 100) }'
check "JSON: the device's busy time fits in the wall time" awk -v b="$(json_field "$j" busy_s)" \
	-v w="$(json_field "$j" wall_s)" 'BEGIN { exit !(b > 0 && b <= w) }'

j=$("$P" --gpu model --gpu-rounds 3 --log-n 12 -n 1 --partitions 3 --h-check-every 2 --json 2>/dev/null)
check_eq "--gpu-rounds 3 adds 4 NTTs to the modelled work: 2^12 at 100 Mop/s" \
	"$(json_field "$j" kernel_ms)" "$(awk 'BEGIN { printf "%.3f", (11 * 2048 * 12 + 6 * 4096) / 1e5 }')"
check_eq "--h-check-every 2 on 3 partitions: 2 checked, passed" \
	"$(json_field "$j" h_checks_passed)/$(json_field "$j" h_checks_total)" "2/2"

j=$("$P" --gpu cpu --log-n 10 -n 1 --partitions 2 --json 2>/dev/null)
check_eq "--gpu cpu: no model in the JSON, checks inline" \
	"$(json_field "$j" gpu) $(json_field "$j" gpu_model) $(json_field "$j" h_checks_after_run)" \
	"cpu null false"

# --- what the host says -----------------------------------------------------------------------
out=$("$P" --gpu model --host model --log-n 12 -n 2 --jobs 2 --pw 4 2>"$TMP/err")
check_eq "--host model: exit 0" "$?" 0
check_match "the host's announcement says MODELLED, its time, spread, work, rate and seed" \
	"$(cat "$TMP/err")" \
	"^prover: synthesis on a MODELLED host \(--host=model\): 22\.805 ms per partition \+-20% \(3968 constraints x 1 rounds at 174k/s, seed 1\), each partition as if on cores of its own; the real witness is still computed$"
check_match "... with the modelled host, the device's default rate is the balanced one" \
	"$(cat "$TMP/err")" "\(0\.197 Mop at 155 Mop/s, seed 1\)"
check_match "the summary's host line says MODELLED" "$out" \
	"^host +MODELLED, 22\.80 ms \+-20% per synthesis at 174k constraints/s$"
check_match "... then its overruns" "$out" \
	"^ +overruns [0-9]+ \(the real work took at most [0-9]+% of a modelled time\)$"
check_match "work line names host=model" "$out" "gpu=model host=model$"
j=$("$P" --gpu model --host model --synth-rate 100 --synth-spread 5 --synth-rounds 2 \
	--model-seed 9 --log-n 12 -n 2 --jobs 2 --pw 4 --json 2>/dev/null)
check_eq "JSON: host model, 20 syntheses of 79.36 ms +-5% (2 rounds) at 100k/s, seed 9" \
	"$(json_field "$j" host) $(json_field "$j" modelled 2) $(json_field "$j" syntheses) $(json_field "$j" synth_ms) $(json_field "$j" spread_pct 2) $(json_field "$j" rate_kcps) $(json_field "$j" seed 2)" \
	"model true 20 79.360 5 100 9"
check_eq "... its H checks after the run, all passed" "$(json_field "$j" all_h_checks_passed)" true

# --- the model's figures are the model's: the same for the same seed -------------------------
small=(--gpu model --host model --log-n 12 --pw 4 --gw 2 -n 4 --jobs 4 --partitions 6)
declare -A modelled
for v in "after-synth 1" "after-send 1" "after-send 4"; do
	read -r rel cap <<<"$v"
	j=$("$P" "${small[@]}" --permit-release "$rel" --chan-cap "$cap" --json 2>/dev/null)
	modelled[$v]=$(json_field "$j" modelled_s)
done
check_eq "the modelled synthesis time adds up the same in every variant of seed 1" \
	"$(printf '%s\n' "${modelled[@]}" | sort -u | wc -l)" 1
j=$("$P" "${small[@]}" --model-seed 2 --json 2>/dev/null)
check "... and another with --model-seed 2 (${modelled[after-send 1]} s, then $(json_field "$j" modelled_s) s)" \
	[ "$(json_field "$j" modelled_s)" != "${modelled[after-send 1]}" ]

# the modelled makespan against an independent model of the same pipeline: they agree to
# the microsecond (docs/prover.md, "The model's clock"), overruns or not, unless a thread
# ran later than a whole synthesis or region (a stalled machine), so up to 3 runs of each
# case, until one agrees
des_case() { # NAME GPU-RATE RELEASE CAP
	local name=$1 rate=$2 rel=$3 cap=$4 want got=() j m
	local args=(--log-n 12 --pw 4 --gw 2 --proofs 4 --partitions 6 --synth-rate 40
		--gpu-rate "$rate" --chan-cap "$cap")
	want=$(python3 "$DES" "${args[@]}" --release "$rel")
	for _ in 1 2 3; do
		j=$("$P" --gpu model --host model --jobs 4 "${args[@]}" --permit-release "$rel" \
			--json 2>/dev/null)
		m=$(json_field "$j" makespan_s)
		got+=("$m/$(($(json_field "$j" overruns 1) + $(json_field "$j" overruns 2)))")
		awk -v w="$want" -v m="$m" 'BEGIN { exit !(m - w < 0.000002 && w - m < 0.000002) }' &&
			break
	done
	check "$name: the modelled makespan is the independent model's, $want s (runs/overruns: ${got[*]})" \
		awk -v w="$want" -v m="$m" 'BEGIN { exit !(m - w < 0.000002 && w - m < 0.000002) }'
}
des_case "synthesis-bound incident" 10 after-synth 1
des_case "synthesis-bound fix 1" 10 after-send 1
des_case "synthesis-bound fix 2" 10 after-send 4
des_case "device-bound incident" 6 after-synth 1
des_case "device-bound fix 1" 6 after-send 1

# --- the story's structure, from the prover's own peak RSS ------------------------------------
# 3 proofs x 10 partitions of 8 MiB (2^18 constraints), pw 4, gw 2, both modelled: synthesis
# 4 at a time, 50 ms each (+-20%), the device 30 ms (+-35%) a partition, so synthesis
# outruns it about 3 to 2 and every variant stalls where its scheduling says. The growth of
# the peak RSS past the set-up's, in partitions (what one holds, from the JSON), counts the
# partitions holding their a/b/c at once plus the rest: partitions past the GPU stage
# still hold aux and a pending buffer (3/8 of a partition) until their finalize ends, and
# the jobs' C1 data and the threads' stacks; under two partitions together.
work=(--gpu model --host model --synth-rate 5080 --gpu-rate 600 --log-n 18 -n 3 --jobs 3
	--pw 4 --gw 2 --json)
declare -A held digest ovr
for v in "incident after-synth 1" "fix1 after-send 1" "fix2 after-send 4"; do
	read -r name rel cap <<<"$v"
	for _ in 1 2 3; do # a starved run (overruns) lags the model in real time: again
		j=$("$P" "${work[@]}" --permit-release "$rel" --chan-cap "$cap" 2>/dev/null)
		rc=$?
		ovr[$name]=$(($(json_field "$j" overruns 1) + $(json_field "$j" overruns 2)))
		[ "${ovr[$name]}" = 0 ] && break
	done
	check_eq "$name: exit 0, its 3 H checks passed" "$rc/$(json_field "$j" all_h_checks_passed)" "0/true"
	held[$name]=$(awk -v p="$(json_field "$j" peak_rss_mib)" -v b="$(json_field "$j" rss_before_mib)" \
		-v s="$(json_field "$j" partition_bytes)" 'BEGIN { printf "%.2f", (p - b) * 1048576 / s }')
	digest[$name]=$(json_field "$j" digest)
done
check "fix 1 holds at most pw + 1 + gw = 7 partitions (${held[fix1]} partitions of memory, the rest included; ${ovr[fix1]} overruns)" \
	awk -v h="${held[fix1]}" 'BEGIN { exit !(h < 7 + 2) }'
check "fix 2 holds more, at most 2 pw + gw = 10 (${held[fix2]}; ${ovr[fix2]} overruns)" \
	awk -v h="${held[fix2]}" -v f="${held[fix1]}" 'BEGIN { exit !(h < 10 + 2 && h > f + 1) }'
check "the incident holds more than either bound (${held[incident]} of 30; ${ovr[incident]} overruns)" \
	awk -v h="${held[incident]}" 'BEGIN { exit !(h > 10 + 4) }'
check_eq "the three variants prove the same" "$(printf '%s\n' "${digest[@]}" | sort -u | wc -l)" 1
finish
