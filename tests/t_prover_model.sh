#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The modelled GPU device from the outside: what the prover says about it (MODELLED in the
# announcement, the summary and the JSON, the kernel time of its work at --gpu-rate), the
# deferred H checks (1 partition in 10 by default, all passed), and the seed story's three
# variants on the same work, ordered by the prover's own peak RSS: with the device far
# slower than synthesis, the incident holds every synthesized partition, fix 2 its bound of
# 2 pw + gw, fix 1 its bound of pw + 1 + gw. Memory orderings only: no speed is asserted.
source "$(dirname "$0")/lib.sh"
P=$BUILD/prover

json_field() { printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'; }

# --- what it says -------------------------------------------------------------------------
out=$("$P" --gpu model --gpu-rate 50 --log-n 16 -n 3 --jobs 3 --pw 4 2>"$TMP/err")
check_eq "--gpu model: exit 0" "$?" 0
check_match "the announcement says MODELLED, the kernel time and the rate" "$(cat "$TMP/err")" \
	"^prover: GPU stage on a MODELLED device \(--gpu=model\): 81\.265 ms of kernel time per partition \(4\.06 Mop at 50 Mop/s\), no CPU used; H is checked after the run$"
check_eq "... in one line" "$(wc -l <"$TMP/err")" 1
check_match "the summary's device line says MODELLED" "$out" \
	"^device +MODELLED, 81\.26 ms per partition at 50 Mop/s, busy [0-9.]+%, [0-9]+ overruns$"
check_match "3 of 30 partitions' H checked after the run, all passed" "$out" \
	"^H checks +3/3 passed \(1 partition in 10, after the run\)$"
check_match "work line names gpu=model" "$out" "gpu=model$"

j=$("$P" --gpu model --gpu-rate 50 --log-n 16 -n 3 --jobs 3 --pw 4 --json 2>/dev/null)
check_eq "JSON: gpu model, 30 regions of 81.265 ms at 50 Mop/s" \
	"$(json_field "$j" gpu) $(json_field "$j" regions) $(json_field "$j" kernel_ms) $(json_field "$j" rate_mops) $(json_field "$j" modelled)" \
	"model 30 81.265 50 true"
check_eq "JSON: 3 H checks after the run, all passed" \
	"$(json_field "$j" h_checks_passed)/$(json_field "$j" h_checks_total) $(json_field "$j" h_checks_after_run) $(json_field "$j" all_h_checks_passed) $(json_field "$j" h_check_every)" \
	"3/3 true true 10"
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

# --- the three variants, the same work: peak RSS from the prover itself ---------------------
# 3 proofs x 10 partitions of 2 MiB (2^16 constraints), pw 4, gw 2; the device takes 81 ms
# a partition, synthesis a few ms: every variant stalls where its scheduling says
work=(--gpu model --gpu-rate 50 --log-n 16 -n 3 --jobs 3 --pw 4 --gw 2 --json)
declare -A rss
for v in "incident after-synth 1" "fix1 after-send 1" "fix2 after-send 4"; do
	read -r name rel cap <<<"$v"
	j=$("$P" "${work[@]}" --permit-release "$rel" --chan-cap "$cap" 2>/dev/null)
	check_eq "$name: exit 0, its 3 H checks passed" "$?/$(json_field "$j" all_h_checks_passed)" "0/true"
	rss[$name]=$(json_field "$j" peak_rss_mib)
	digest[${#digest[@]}]=$(json_field "$j" digest)
done
check "peak RSS: the incident (${rss[incident]} MiB) holds at least 8 MiB (4 partitions) more than fix 2 (${rss[fix2]} MiB)" \
	awk -v a="${rss[incident]}" -v b="${rss[fix2]}" 'BEGIN { exit !(a >= b + 8) }'
check "peak RSS: fix 2 (${rss[fix2]} MiB, pw + pw + gw = 10 partitions) above fix 1 (${rss[fix1]} MiB, pw + 1 + gw = 7)" \
	awk -v a="${rss[fix2]}" -v b="${rss[fix1]}" 'BEGIN { exit !(a > b) }'
check_eq "the three variants prove the same" "$(printf '%s\n' "${digest[@]}" | sort -u | wc -l)" 1
finish
