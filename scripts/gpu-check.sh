#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The reference prover's CUDA path on a GPU host, in one prepared run (a few minutes):
# builds, proves the same input with --gpu=cuda and with --gpu=cpu and requires the same
# proof digest and every H check passed on both, records a CUDA run with inflight and
# requires device memory (class gpu_abc) in the gpu stage and nowhere else, and libcuda's
# view of the same run (class cuda_device) to equal the prover's own device buffers. The
# prover calls the driver API itself (prover/gpu_driver.c, libcuda.so.1 opened at run time,
# no CUDA runtime) and its kernels are PTX that this host's driver JIT-compiles for its
# device: this is the check that they run on a real one. Ends with one
# line: "gpu-check: PASS: ..." or "gpu-check: FAIL: WHY", or "gpu-check: NO GPU: WHY" on a
# host without an NVIDIA device or driver.
set -uo pipefail
cd "$(dirname "$0")/.."

EXIT_PASS=0 EXIT_FAIL=1 EXIT_USAGE=2 EXIT_NO_GPU=77 # 77: the usual "cannot run here"
BUILD=${BUILD:-build}
OUT=${GPU_CHECK_OUT:-$BUILD/gpu-check}
build=1 assume_gpu=0

usage() {
	cat <<EOF
Usage: scripts/gpu-check.sh [--no-build] [--assume-gpu]
Checks the prover's CUDA path on this host: the same input proved with --gpu=cuda and
--gpu=cpu must give the same proof digest with every H check passed, and a CUDA run
traced by inflight (record, then the folded report) must show class gpu_abc (device
memory) in stage gpu only, and libcuda's allocations (class cuda_device) to be exactly
the gpu_abc buffers and the twiddle table. Needs root (BPF) for the traced run. Output
in $OUT/.

  --no-build     use $BUILD/prover and $BUILD/inflight as they are (default: make them)
  --assume-gpu   skip the driver check (no /dev/nvidiactl, no nvidia-smi): the prover's
                 own CUDA probe decides
  -h, --help     this text

Exit status: $EXIT_PASS PASS; $EXIT_FAIL FAIL (the last line says why); $EXIT_USAGE bad command line;
$EXIT_NO_GPU NO GPU (no NVIDIA device or driver here: nothing was checked).
EOF
}

for arg in "$@"; do
	case $arg in
	--no-build) build=0 ;;
	--assume-gpu) assume_gpu=1 ;;
	-h | --help) usage; exit $EXIT_PASS ;;
	*) echo "gpu-check: $arg: unknown option; see --help" >&2; exit $EXIT_USAGE ;;
	esac
done

pass() { echo "gpu-check: PASS: $*"; exit $EXIT_PASS; }
fail() { echo "gpu-check: FAIL: $*"; exit $EXIT_FAIL; }
no_gpu() { echo "gpu-check: NO GPU: $*; nothing was checked"; exit $EXIT_NO_GPU; }

json_field() { printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'; }

if [ "$assume_gpu" = 0 ] && [ ! -e /dev/nvidiactl ] && ! nvidia-smi -L >/dev/null 2>&1; then
	no_gpu "no NVIDIA driver on this host (no /dev/nvidiactl, nvidia-smi fails or is missing)"
fi

mkdir -p "$OUT" || fail "cannot create $OUT"
if [ "$build" = 1 ]; then
	echo "gpu-check: building (make prover inflight; log in $OUT/build.log)"
	make prover inflight >"$OUT/build.log" 2>&1 || fail "the build failed: see $OUT/build.log"
fi
P=$BUILD/prover
I=$BUILD/inflight
for bin in "$P" "$I"; do
	[ -x "$bin" ] || fail "$bin is missing (run without --no-build, or make it)"
done

ldd "$P" | grep -q 'libcudart\|libcuda\.' &&
	fail "$P links a CUDA library; it should open libcuda.so.1 at run time only"

# the prover's own probe: exit 6 says why CUDA is not usable (no driver, no device, a
# driver that cannot JIT the prover's PTX, or a build without nvcc: the last two are
# failures here, not an absent GPU)
"$P" --gpu cuda -n 1 --partitions 1 --log-n 10 >"$OUT/probe.out" 2>"$OUT/probe.err"
rc=$?
if [ "$rc" = 6 ]; then
	why=$(sed -n 's/^prover: --gpu=cuda: //p' "$OUT/probe.err" | head -n 1)
	case $why in
	*"no CUDA support"*) fail "$P was built without CUDA (no nvcc at build time): $why" ;;
	*cuModuleLoadData* | *cuModuleGetFunction*)
		fail "the driver cannot load the prover's PTX (a driver older than the nvcc" \
			"that built it?): $why" ;;
	*) no_gpu "the prover finds no usable CUDA device: ${why:-exit 6}" ;;
	esac
fi
[ "$rc" = 0 ] || fail "a one-partition CUDA run failed (exit $rc): $(tail -n 1 "$OUT/probe.err")"
device=$(sed -n 's/^prover: GPU stage on //p' "$OUT/probe.err" | head -n 1)
echo "gpu-check: device: $device; the kernels JIT-compiled by its driver from the embedded PTX"

# 1. the same input on CUDA and on the CPU: the same proofs, every H checked
"$P" gen-c1 -o "$OUT/c1.json" --partitions 10 --seed 7 || fail "gen-c1 failed"
work=(-i "$OUT/c1.json" -n 2 --jobs 2 --log-n 16 --gpu-rounds 2 --h-check-every 1 --json)
for mode in cuda cpu; do
	"$P" --gpu "$mode" "${work[@]}" >"$OUT/$mode.json" 2>"$OUT/$mode.err" ||
		fail "--gpu=$mode run failed (exit $?): $(tail -n 1 "$OUT/$mode.err")"
	j=$(cat "$OUT/$mode.json")
	[ "$(json_field "$j" gpu)" = "$mode" ] || fail "--gpu=$mode ran on '$(json_field "$j" gpu)'"
	[ "$(json_field "$j" all_h_checks_passed)" = true ] &&
		[ "$(json_field "$j" h_checks_passed)" = 20 ] ||
		fail "--gpu=$mode: H checks $(json_field "$j" h_checks_passed)/$(json_field "$j" h_checks_total), want 20/20"
done
dc=$(json_field "$(cat "$OUT/cuda.json")" digest)
dp=$(json_field "$(cat "$OUT/cpu.json")" digest)
[ -n "$dc" ] && [ "$dc" = "$dp" ] || fail "proof digests differ: cuda $dc, cpu $dp"
echo "gpu-check: cuda and cpu prove the same: digest $dc, 20/20 H checks each" \
	"($(json_field "$(cat "$OUT/cuda.json")" wall_s) s vs $(json_field "$(cat "$OUT/cpu.json")" wall_s) s)"

# 2. a CUDA run recorded: device memory lives in the gpu stage, and only there
rm -f "$OUT/cuda.infl"
"$I" record -q -o "$OUT/cuda.infl" -- "$P" --gpu cuda -i "$OUT/c1.json" -n 1 --log-n 16 \
	>"$OUT/record.out" 2>"$OUT/record.err" ||
	fail "inflight record of a CUDA run failed (exit $?; root needed): $(tail -n 1 "$OUT/record.err")"
"$I" report "$OUT/cuda.infl" --format folded -o "$OUT/cuda.folded" 2>"$OUT/report.err" ||
	fail "inflight report failed: $(tail -n 1 "$OUT/report.err")"
in_gpu=$(awk '$1 == "gpu;gpu_abc" { print $2 }' "$OUT/cuda.folded")
elsewhere=$(awk -F'[; ]' '$2 == "gpu_abc" && $1 != "gpu"' "$OUT/cuda.folded")
[ -n "$in_gpu" ] && [ "$in_gpu" -gt 0 ] ||
	fail "no gpu_abc (device memory) in stage gpu in the recording ($OUT/cuda.folded)"
[ -z "$elsewhere" ] || fail "gpu_abc outside stage gpu: $(echo "$elsewhere" | tr '\n' ' ')"

# 3. the same run seen through libcuda (attach/cuda.c): every gpu_abc buffer is a driver
# allocation made just before its probe and freed just after, by the thread that moved its
# owner to gpu, so cuda_device covers gpu_abc in stage gpu (in byte-ms); the one driver
# allocation beyond gpu_abc's is the prover's twiddle table (n/2 + n/2 words; probed as
# srs), and no runtime allocates behind it: the counts and bytes are equal, exactly
# (tests/t_prover_cuda.sh checks the same on the stand-in driver). The totals and the peak
# come from a live trace of the same work (its JSON summary): a report of a recording
# carries no lifetime totals.
tw_bytes=$((2 * (1 << 16) / 2 * 8))
dev_gpu=$(awk '$1 == "gpu;cuda_device" { print $2 }' "$OUT/cuda.folded")
rm -f "$OUT/cuda.trace.json"
"$I" --json -o "$OUT/cuda.trace.json" -- "$P" --gpu cuda -i "$OUT/c1.json" -n 1 --log-n 16 \
	>"$OUT/trace.out" 2>"$OUT/trace.err" ||
	fail "inflight's trace of a CUDA run failed (exit $?): $(tail -n 1 "$OUT/trace.err")"
cuda_view=$(python3 - "$OUT/cuda.trace.json" "$tw_bytes" <<'PY'
import json, sys
summary = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
p, tw = summary["processes"][0], int(sys.argv[2])
life, an = p["lifetime"], p["anomalies"]
d, g = life.get("cuda_device", {}), life.get("gpu_abc", {})
# at the peak, per stage: cuda_device = gpu_abc, plus the twiddle table in (none)
def cells(cls):
    return {s["stage"]: (s["classes"][cls]["bufs"], s["classes"][cls]["bytes"])
            for s in p["peak"]["stages"] if cls in s["classes"]}
want = cells("gpu_abc")
n, b = want.get("(none)", (0, 0))
want["(none)"] = (n + 1, b + tw)
peak_ok = cells("cuda_device") == want
print(d.get("allocs", 0), g.get("allocs", 0), d.get("bytes_allocated", 0),
      g.get("bytes_allocated", 0), d.get("frees", 0), g.get("frees", 0),
      an.get("cuda_failed", 0), str(p.get("exact")).lower(), str(peak_ok).lower(),
      ",".join("%s:%d/%d" % (k, *v) for k, v in sorted(cells("cuda_device").items())))
PY
) || fail "cannot read $OUT/cuda.trace.json"
read -r d_allocs g_allocs d_bytes g_bytes d_frees g_frees failed exact peak_ok peak_cells \
	<<<"$cuda_view"
echo "gpu-check: libcuda view: cuda_device $d_allocs allocs $d_bytes B, gpu_abc $g_allocs allocs" \
	"$g_bytes B, $failed failed calls, exact $exact; at the peak cuda_device $peak_cells;" \
	"stage gpu: cuda_device ${dev_gpu:-0}, gpu_abc $in_gpu byte-ms"
[ "$exact" = true ] || fail "the traced CUDA run is not exact ($OUT/cuda.trace.json)"
[ "$failed" = 0 ] || fail "$failed CUDA memory calls failed in the traced run"
[ "$d_allocs" = $((g_allocs + 1)) ] && [ "$d_frees" = $((g_frees + 1)) ] &&
	[ "$d_bytes" = $((g_bytes + tw_bytes)) ] ||
	fail "libcuda's device allocations ($d_allocs/$d_bytes B, $d_frees frees) are not the gpu_abc probes' plus the twiddle table ($((g_allocs + 1))/$((g_bytes + tw_bytes)) B, $((g_frees + 1)) frees)"
[ "$peak_ok" = true ] ||
	fail "at the peak, cuda_device ($peak_cells) is not gpu_abc per stage plus the twiddle table in (none) ($OUT/cuda.trace.json)"
[ -n "$dev_gpu" ] && [ "$dev_gpu" -ge "$in_gpu" ] ||
	fail "cuda_device in stage gpu (${dev_gpu:-none} byte-ms) does not cover gpu_abc ($in_gpu byte-ms)"
pass "on $device: cuda = cpu (digest $dc, 20/20 H checks each); gpu_abc seen in stage gpu" \
	"only ($in_gpu byte-ms); libcuda's cuda_device is gpu_abc plus the twiddle table" \
	"($d_allocs allocations, $d_bytes B; $dev_gpu byte-ms in stage gpu)"
