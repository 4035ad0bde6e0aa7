#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The reference prover's CUDA path (prover/gpu_driver.c) end to end without a GPU, on the
# stand-in libcuda.so.1 of tests/cuda/ (a test double: one device, "inflight stand-in", that
# loads the prover's PTX and emulates its four kernels on the host): its real driver calls,
# PTX load, launches and copies, traced by inflight. Requires the proofs to equal the CPU
# path's with every H check passed, and the libcuda view (class cuda_device, from the
# driver's memory calls) to equal the prover's own probes of its device memory exactly: the
# a/b/c device buffers (class gpu_abc) and the device twiddle table (class srs: the one srs
# buffer more than a --gpu=cpu run has), per stage at the peak and over the lifetime, and
# buffer for buffer by address in a recording. Then a driver that fails (the stand-in's
# failures on demand) and no driver at all: the prover's one-line refusals and fallbacks. Needs root; a prover built with nvcc (not the SAN=1 build).
source "$(dirname "$0")/lib.sh"
INFLIGHT=${INFLIGHT:-$BUILD/inflight}
P=$BUILD/prover
C=$BUILD/tests/cuda
needs_root
command -v jq >/dev/null || skip_all "needs jq"
for f in "$INFLIGHT" "$P" "$C/libcuda.so.1"; do
	[ -e "$f" ] || { not_ok "built: $f" "run make all tests"; finish; }
done
"$P" --gpu cuda -n 1 -p 1 --log-n 8 2>&1 | grep -q "this build has no CUDA support" &&
	skip_all "$P was built without CUDA (no nvcc, or SAN=1)"

# the work: 2 proofs of 3 partitions, n = 2^11: each device buffer (a, b, c) and the
# twiddle table (n/2 forward + n/2 inverse words) are 16 KiB
LOGN=11
BUF=$((8 << LOGN))
TW=$((2 * (1 << LOGN) / 2 * 8))
PARTS=6
work=(-n 2 -p 3 --log-n $LOGN --gpu-rounds 2 --h-check-every 1 --json)

# run NAME MODE: the prover traced with the stand-in findable; $TMP/NAME.{json,out,err}
run() {
	LD_LIBRARY_PATH=$C "$INFLIGHT" --json -o "$TMP/$1.json" -- "$P" --gpu "$2" "${work[@]}" \
		>"$TMP/$1.out" 2>"$TMP/$1.err"
	rc=$?
}
# cells FILE CLASS: "stage bufs bytes" of CLASS per stage at the peak, and the lifetime
cells() {
	jq -r --arg c "$2" 'select(.type == "summary") | .processes[0] |
		"peak \([.peak.stages[] | select(.classes[$c]) |
			"\(.stage) \(.classes[$c].bufs) \(.classes[$c].bytes)"] | join(","))",
		"lifetime \(.lifetime[$c] // {} | "\(.allocs)/\(.bytes_allocated) \(.frees)/\(.bytes_freed)")"' "$1"
}

run cuda cuda
check_eq "--gpu cuda on the stand-in: the prover completes" "$rc" 0
check_eq "... the GPU stage ran on the stand-in's device (its notice)" \
	"$(grep '^prover: GPU stage' "$TMP/cuda.err")" \
	"prover: GPU stage on CUDA device 0, inflight stand-in (sm_90)"
check_eq "... on cuda, every H check passed" \
	"$(jq -c '[.gpu, .h_checks_passed, .h_checks_total, .all_h_checks_passed]' "$TMP/cuda.out")" \
	"[\"cuda\",$PARTS,$PARTS,true]"
run cpu cpu
check_eq "--gpu cpu, the same work: completes, every H check passed" \
	"$rc $(jq -c '[.gpu, .h_checks_passed, .all_h_checks_passed]' "$TMP/cpu.out")" \
	"0 [\"cpu\",$PARTS,true]"
check_eq "the emulated kernels prove what the CPU proves (the same digest)" \
	"$(jq -r .digest "$TMP/cuda.out")" "$(jq -r .digest "$TMP/cpu.out")"
check_eq "the traced runs are exact, nothing failed, nothing left" \
	"$(jq -c 'select(.type == "summary") | .processes[0] | [.exact, .anomalies.cuda_failed, .at_end.bytes]' "$TMP/cuda.json" "$TMP/cpu.json" | tr '\n' ' ')" \
	"[true,0,0] [true,0,0] "

# the prover's own device memory: gpu_abc, and the twiddle table (srs: --gpu cpu has none)
check_eq "prover's probes: gpu_abc, 3 buffers in stage gpu at the peak, 3 a partition" \
	"$(cells "$TMP/cuda.json" gpu_abc)" \
	"peak gpu 3 $((3 * BUF))
lifetime $((3 * PARTS))/$((3 * PARTS * BUF)) $((3 * PARTS))/$((3 * PARTS * BUF))"
srs_cuda=$(cells "$TMP/cuda.json" srs)
srs_cpu=$(cells "$TMP/cpu.json" srs)
# "peak (none) B N,lifetime A/N F/N" of each, subtracted field by field
srs_delta=$(paste -d' ' <(echo "$srs_cuda" | tr ' /,' '\n\n\n') <(echo "$srs_cpu" | tr ' /,' '\n\n\n') |
	awk '$1 ~ /^[0-9]+$/ { printf "%d ", $1 - $2; next } { printf "%s ", $1 }')
check_eq "prover's probes: the device twiddle table, the one srs buffer beyond --gpu cpu's" \
	"$srs_delta" "peak (none) 1 $TW lifetime 1 $TW 1 $TW "
# libcuda's view of the same run
check_eq "libcuda's view: cuda_device per stage at the peak and over the lifetime" \
	"$(cells "$TMP/cuda.json" cuda_device)" \
	"peak gpu 3 $((3 * BUF)),(none) 1 $TW
lifetime $((3 * PARTS + 1))/$((3 * PARTS * BUF + TW)) $((3 * PARTS + 1))/$((3 * PARTS * BUF + TW))"
# ... equal to the probes' sum, cell by cell, whatever the numbers
check_eq "libcuda's view = gpu_abc + the twiddle srs, per stage at the peak and lifetime" \
	"$(jq -c --argjson tw "$TW" 'select(.type == "summary") | .processes[0] |
		([.peak.stages[] | {(.stage): (.classes.cuda_device // {bufs: 0, bytes: 0})}] | add) ==
		([.peak.stages[] | {(.stage): (.classes.gpu_abc // {bufs: 0, bytes: 0})}] | add |
			.["(none)"].bufs += 1 | .["(none)"].bytes += $tw) and
		(.lifetime.cuda_device == (.lifetime.gpu_abc | .allocs += 1 | .frees += 1 |
			.bytes_allocated += $tw | .bytes_freed += $tw))' "$TMP/cuda.json")" true

# buffer for buffer: every driver allocation is one the prover probed at the same address
# with the same size (gpu_abc, or the srs twiddle table), and none is left over
rm -f "$TMP/cuda.rec"
LD_LIBRARY_PATH=$C "$INFLIGHT" record -q -o "$TMP/cuda.rec" -- "$P" --gpu cuda "${work[@]}" \
	>/dev/null 2>&1
check_eq "record: the CUDA run recorded" "$?" 0
pairs=$(python3 - "$ROOT/tests/record" "$TMP/cuda.rec" <<'PY'
import collections, sys
sys.path.insert(0, sys.argv[1])
import recdump
rec = recdump.parse(sys.argv[2])
cuda, probed = collections.Counter(), {}
for e in rec["events"]:
    _pid, _seq, _late, _ts, etype, cid, flags, _slot, addr, size, _owner, _tid = e
    if etype != 0 or flags & 6:
        continue
    if cid == 16:
        cuda[(addr, size)] += 1
    else:
        name = rec["classes"].get(cid, "cls%d" % cid)
        probed.setdefault(name, collections.Counter())[(addr, size)] += 1
left = cuda.copy()
by = {}
for name in ("gpu_abc", "srs"):
    common = left & probed.get(name, collections.Counter())
    by[name] = sum(common.values())
    left -= common
print("cuda_device %d: gpu_abc %d, srs %d, unpaired %d" %
      (sum(cuda.values()), by["gpu_abc"], by["srs"], sum(left.values())))
PY
)
check_eq "record: each cuda_device allocation is a probed buffer (same address and size)" \
	"$pairs" "cuda_device $((3 * PARTS + 1)): gpu_abc $((3 * PARTS)), srs 1, unpaired 0"

# --- a driver that fails: each failure one line naming the call and the CUresult's name
small=(-n 1 -p 1 --log-n 10)
jit="CUDA device 0 unusable: cuModuleLoadData: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"
out=$(INFLIGHT_STANDIN_FAIL=cuModuleLoadData LD_LIBRARY_PATH=$C "$P" --gpu cuda "${small[@]}" 2>&1 >/dev/null)
check_eq "the driver refuses the PTX: --gpu cuda refused (exit 6), naming the call" \
	"$? $out" "6 prover: --gpu=cuda: $jit"
out=$(INFLIGHT_STANDIN_FAIL=cuModuleLoadData LD_LIBRARY_PATH=$C "$P" --gpu auto "${small[@]}" 2>&1 >/dev/null)
check_eq "... --gpu auto falls back to the model, saying why" \
	"$? $(printf '%s\n' "$out" | grep -cF "prover: GPU stage on a MODELLED device ($jit): ")" "0 1"
out=$(INFLIGHT_STANDIN_FAIL=cuLaunchKernel:k_scale LD_LIBRARY_PATH=$C "$P" --gpu cuda "${small[@]}" 2>&1 >/dev/null)
check_eq "a launch fails: the GPU stage fails (exit 5), naming the call, kernel and CUresult" \
	"$? $(echo "$out" | tail -n 1)" \
	"5 prover: GPU stage failed: CUDA cuLaunchKernel (k_scale): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)"

# --- without a driver: the prover says so in one line and falls back, or refuses cuda
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	skip "no libcuda.so.1 findable: --gpu cuda refused" "this host has a libcuda.so.1"
	skip "no libcuda.so.1 findable: --gpu auto falls back to the model" "this host has a libcuda.so.1"
else
	nodrv="no CUDA driver: libcuda.so.1: cannot open shared object file: No such file or directory"
	out=$(env -u LD_LIBRARY_PATH "$P" --gpu cuda -n 1 -p 1 --log-n 10 2>&1 >/dev/null)
	check_eq "no libcuda.so.1 findable: --gpu cuda refused (exit 6), one line saying why" \
		"$? $out" "6 prover: --gpu=cuda: $nodrv"
	out=$(env -u LD_LIBRARY_PATH "$P" --gpu auto -n 1 -p 1 --log-n 10 2>&1 >/dev/null)
	check_match "no libcuda.so.1 findable: --gpu auto falls back to the model, saying why" \
		"$? $out" "^0 prover: GPU stage on a MODELLED device \($nodrv\)"
fi
# a library of that name that is not a CUDA driver
mkdir "$TMP/notcuda"
ln -s "$(ldd "$P" | awk '/libjson-c/ { print $3 }')" "$TMP/notcuda/libcuda.so.1"
out=$(LD_LIBRARY_PATH=$TMP/notcuda "$P" --gpu cuda -n 1 -p 1 --log-n 10 2>&1 >/dev/null)
check_eq "a libcuda.so.1 without the driver's entry points: refused, naming the first missing" \
	"$? $out" "6 prover: --gpu=cuda: no usable CUDA driver: libcuda.so.1 has no cuGetErrorName"
finish
