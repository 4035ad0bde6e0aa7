#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/gpu-check.sh where it can run without a GPU: its command line (help, a bad
# option) and its NO GPU answer, a distinct exit status and one plain line, both from the
# driver check and, with --assume-gpu, from the prover's own CUDA probe. The checks it makes
# on a GPU host (cuda vs cpu digests, gpu_abc in stage gpu) run here too, whole, against the
# stand-in driver; only a real driver's JIT and a real device need one: docs/prover.md.
source "$(dirname "$0")/lib.sh"
G=$ROOT/scripts/gpu-check.sh
export GPU_CHECK_OUT=$TMP/gpu-check

out=$("$G" --help)
check_eq "--help exits 0" "$?" 0
check_match "--help: usage" "$out" "^Usage: scripts/gpu-check.sh \[--no-build\] \[--assume-gpu\]$"
check_match "--help: the exit statuses, NO GPU distinct" "$out" "^77 NO GPU \(no NVIDIA device"
check_match "--help: PASS and FAIL" "$out" "^Exit status: 0 PASS; 1 FAIL"

err=$("$G" --frobnicate 2>&1 >/dev/null)
check_eq "a bad option: exit 2" "$?" 2
check_eq "... one line naming it" "$err" "gpu-check: --frobnicate: unknown option; see --help"

if [ -e /dev/nvidiactl ] || nvidia-smi -L >/dev/null 2>&1; then
	skip "no-GPU answer from the driver check" "this host has an NVIDIA driver"
	skip "no-GPU answer from the prover's probe" "this host has an NVIDIA driver"
	finish
fi
out=$("$G" 2>&1)
rc=$?
check_eq "no driver: exit 77, before building anything" "$rc:$(test -e "$GPU_CHECK_OUT" && echo built)" "77:"
check_eq "... one line, saying so plainly" "$out" \
	"gpu-check: NO GPU: no NVIDIA driver on this host (no /dev/nvidiactl, nvidia-smi fails or is missing); nothing was checked"

out=$(BUILD=$BUILD "$G" --assume-gpu --no-build 2>&1)
rc=$?
check_eq "--assume-gpu: the prover's probe answers: exit 77" "$rc" 77
check_match "... one line with the prover's reason" "$out" \
	"^gpu-check: NO GPU: the prover finds no usable CUDA device: .+; nothing was checked$"
check_eq "... and nothing else printed" "$(printf '%s\n' "$out" | wc -l)" 1

# the sanitized build has no CUDA: with a GPU present that is a failure, not an absent GPU
if [ -x "$ROOT/build/san/prover" ]; then
	out=$(BUILD=$ROOT/build/san "$G" --assume-gpu --no-build 2>&1)
	check_eq "a prover built without CUDA: exit 1" "$?" 1
	check_match "... FAIL, saying the build has no CUDA" "$out" \
		"^gpu-check: FAIL: .*/build/san/prover was built without CUDA \(no nvcc at build time\)"
else
	skip "a prover built without CUDA is a FAIL" "no build/san/prover (make SAN=1 all)"
	skip "... saying why" "no build/san/prover"
fi

# the whole check against the stand-in driver of tests/cuda/ (it loads the prover's PTX and
# emulates its kernels on the host): the script's every step, though no real JIT or GPU
if [ "$(id -u)" != 0 ]; then
	skip "the whole check on the stand-in driver: PASS" "needs root (the traced runs)"
	skip "a driver that cannot load the PTX: FAIL" "needs root"
elif [ ! -e "$BUILD/tests/cuda/libcuda.so.1" ] ||
	"$BUILD/prover" --gpu cuda -n 1 -p 1 --log-n 8 2>&1 | grep -q "no CUDA support"; then
	skip "the whole check on the stand-in driver: PASS" "no CUDA build or no stand-in (make all tests)"
	skip "a driver that cannot load the PTX: FAIL" "no CUDA build or no stand-in"
else
	out=$(LD_LIBRARY_PATH=$BUILD/tests/cuda BUILD=$BUILD "$G" --assume-gpu --no-build 2>&1)
	check_match "the whole check on the stand-in driver: PASS, libcuda's view exact" \
		"$? $(printf '%s\n' "$out" | tail -n 1)" \
		"^0 gpu-check: PASS: on CUDA device 0, inflight stand-in \(sm_90\): cuda = cpu .* libcuda's cuda_device is gpu_abc plus the twiddle table \(31 allocations, 16252928 B;"
	out=$(INFLIGHT_STANDIN_FAIL=cuModuleLoadData LD_LIBRARY_PATH=$BUILD/tests/cuda BUILD=$BUILD \
		"$G" --assume-gpu --no-build 2>&1)
	check_eq "a driver that cannot load the prover's PTX: FAIL (exit 1), not NO GPU" \
		"$? $out" "1 gpu-check: FAIL: the driver cannot load the prover's PTX (a driver older than the nvcc that built it?): CUDA device 0 unusable: cuModuleLoadData: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"
fi

out=$(BUILD=$TMP/nowhere "$G" --assume-gpu --no-build 2>&1)
check_eq "--no-build without a build: exit 1" "$?" 1
check_eq "... naming what is missing" "$out" \
	"gpu-check: FAIL: $TMP/nowhere/prover is missing (run without --no-build, or make it)"
finish
