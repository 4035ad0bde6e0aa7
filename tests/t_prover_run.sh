#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Whole runs of build/prover: the default run (on the modelled device here, where there is no
# CUDA), the three variants of the story (same proofs whatever the schedule), the CPU path,
# file input, the probe-free build, --untracked-mb, SIGINT.
source "$(dirname "$0")/lib.sh"
P=$BUILD/prover

json_field() { printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | cut -d: -f2 | tr -d '"'; }

out=$("$P" 2>"$TMP/err")
check_eq "the default run exits 0" "$?" 0
check_match "... proves 3 proofs of 10 partitions" "$out" "^proofs +3 \(30 partitions\)$"
if [ -e /dev/nvidiactl ]; then
	check_match "... every H check passed (CUDA: all, inline)" "$out" \
		"^H checks +30/30 passed \(every partition, inline\)$"
else
	check_match "... 1 partition in 10 checked after the run, all passed (modelled device)" \
		"$out" "^H checks +3/3 passed \(1 partition in 10, after the run\)$"
	check_match "... the summary marks the device MODELLED" "$out" \
		"^device +MODELLED, [0-9.]+ ms \+-35% per partition at 100 Mop/s, busy [0-9.]+%$"
	check_match "... with its overruns" "$out" "^ +overruns [0-9]+ \(the real work took"
	check_match "... and so does the announcement" "$(cat "$TMP/err")" \
		"^prover: GPU stage on a MODELLED device \(no CUDA (driver|device)"
fi
check_match "... reports wall time, proofs/min and peak RSS" "$out" "^peak RSS +[0-9.]+ MiB$"
check_match "... proofs/min" "$out" "^proofs/min +[0-9.]+$"
check_eq "... announces the GPU stage in one line" "$(grep -c 'GPU stage on' "$TMP/err")" 1

small=(--log-n 10 --partitions 4 -n 3 --jobs 3 --pw 2 --h-check-every 1)
declare -A digest
for v in "after-synth 1" "after-send 1" "after-send 2"; do
	set -- $v
	j=$("$P" "${small[@]}" --permit-release "$1" --chan-cap "$2" --json 2>/dev/null)
	check_eq "$1, chan-cap $2: exit 0" "$?" 0
	check_eq "$1, chan-cap $2: all 12 H checks passed" \
		"$(json_field "$j" h_checks_passed)/$(json_field "$j" all_h_checks_passed)" "12/true"
	check_eq "$1, chan-cap $2: the JSON echoes the policy" "$(json_field "$j" permit_release)" "$1"
	digest[$v]=$(json_field "$j" digest)
done
check_eq "the same proofs whatever the schedule (after-synth vs after-send)" \
	"${digest[after-synth 1]}" "${digest[after-send 1]}"
check_eq "... (chan-cap 1 vs 2)" "${digest[after-send 1]}" "${digest[after-send 2]}"

"$P" gen-c1 -o "$TMP/c1.json" --partitions 4
j=$("$P" --log-n 10 -n 3 -i "$TMP/c1.json" --gw 1 --json 2>/dev/null)
check_eq "a gen-c1 file with the defaults proves like the in-memory input" \
	"$(json_field "$j" digest)" "${digest[after-send 1]}"
"$P" gen-c1 -o "$TMP/c1b.json" --partitions 4 --seed 2
j=$("$P" --log-n 10 -n 3 -i "$TMP/c1b.json" --json 2>/dev/null)
check "another seed gives other proofs" [ "$(json_field "$j" digest)" != "${digest[after-send 1]}" ]

j=$("$BUILD/prover-noprobes" "${small[@]}" --json 2>/dev/null)
check_eq "prover-noprobes proves the same" "$(json_field "$j" digest)" "${digest[after-send 1]}"

# the CPU path: H computed for real on the cores, every partition checked inline
for v in "after-synth 1" "after-send 2"; do
	set -- $v
	j=$("$P" "${small[@]}" --gpu cpu --permit-release "$1" --chan-cap "$2" --json 2>/dev/null)
	check_eq "--gpu cpu, $1: 12 H checks inline, all passed" \
		"$(json_field "$j" h_checks_passed)/$(json_field "$j" h_checks_after_run)/$(json_field "$j" gpu)" \
		"12/false/cpu"
	digest[cpu $1]=$(json_field "$j" digest)
done
check_eq "--gpu cpu: the same proofs whatever the schedule" "${digest[cpu after-synth]}" \
	"${digest[cpu after-send]}"

base=$(json_field "$("$P" --log-n 10 -n 1 --json 2>/dev/null)" peak_rss_mib)
more=$(json_field "$("$P" --log-n 10 -n 1 --untracked-mb 64 --json 2>/dev/null)" peak_rss_mib)
check "--untracked-mb 64 adds 64 MiB of resident memory ($base -> $more MiB)" \
	awk -v a="$base" -v b="$more" 'BEGIN { d = b - a; exit !(d >= 63 && d <= 66) }'

# SIGINT: no new jobs, the ones in flight finish, the summary is printed
"$P" --log-n 8 --partitions 2 -n 100000 --jobs 1 >"$TMP/int.out" 2>/dev/null &
pid=$!
# signal only once the handler is in place (SigCgt has SIGINT's bit), then let it work a bit
for _ in $(seq 100); do
	cgt=$(awk '/^SigCgt:/{print $2}' "/proc/$pid/status" 2>/dev/null)
	[ -n "$cgt" ] && (((16#$cgt >> 1) & 1)) && break
	sleep 0.1
done
sleep 0.5
kill -INT "$pid"
wait "$pid"
check_eq "SIGINT ends the run with exit 0" "$?" 0
n=$(awk '/^proofs /{print $2}' "$TMP/int.out")
check "... after some proofs, not all ($n)" test "${n:-0}" -gt 0 -a "${n:-0}" -lt 100000
parts=$((2 * ${n:-0}))
checks=$(((parts + 9) / 10)) # the modelled device's default: 1 partition in 10
if [ -e /dev/nvidiactl ]; then checks=$parts; fi
check_match "... 1 in 10 of their partitions checked, all passed" "$(cat "$TMP/int.out")" \
	"^H checks +$checks/$checks passed "
finish
