#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Inside the scaling section's qemu guest (bench/scaling_vm.sh puts it at /vm/scaling.sh, with
# probe_loop and usdt_empty beside the static inflight): rounds of probe_loop under each
# listener, alternated as on the host, one protocol line per run on fd 3:
#   run CONFIG THREADS ROUND <probe_loop's line> [seen=A,F,S given_up=N exact=true|false]
# (the last three for inflight: what its JSON summary counted, against what the loop fired).
# Usage: scaling.sh ROUNDS SECONDS "THREADS..."  (env SVM_BENCH, SVM_INFLIGHT: where the bench
# programs and inflight are, for a run outside the guest: tests/t_bench_smoke.sh)
set -u
rounds=$1 secs=$2 threads=$3
B=${SVM_BENCH:-/opt/inflight/bench}
I=${SVM_INFLIGHT:-/opt/inflight/inflight}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
configs=(empty inflight locked)
# vm_hold_tracepoints (tests/vm/hold.sh, beside this script in the guest)
# shellcheck source=tests/vm/hold.sh
source "${SVM_HOLD:-/vm/hold.sh}"
echo "held $(vm_hold_tracepoints)" >&3
echo "kernel $(uname -r) cpus $(grep -c '^processor' /proc/cpuinfo)" >&3

# one run: probe_loop waits (up to 300 s: the verifier is slow under emulation) for its
# listener, fires for SECONDS, and the listener is stopped after it
run() {
	local cfg=$1 t=$2 lp tp i line extra=""
	"$B/probe_loop" -t "$t" -d "$secs" -w 0.3 -W 300 >"$W/pl.out" 2>"$W/pl.err" &
	lp=$!
	for ((i = 0; i < 200; i++)); do
		[ "$(readlink "/proc/$lp/exe")" = "$(readlink -f "$B/probe_loop")" ] && break
		sleep 0.01
	done
	case $cfg in
	empty) "$B/usdt_empty" "$lp" >"$W/tr.out" 2>&1 & tp=$! ;;
	inflight) "$I" --json --no-rss -p "$lp" >"$W/tr.out" 2>&1 & tp=$! ;;
	locked) "$I" --json --no-rss --accounting locked -p "$lp" >"$W/tr.out" 2>&1 & tp=$! ;;
	esac
	wait "$lp"
	kill -INT "$tp" 2>/dev/null
	wait "$tp"
	line=$(tail -n 1 "$W/pl.out")
	if [ "$cfg" != empty ]; then
		extra=$(grep '"type":"summary"' "$W/tr.out" | tail -n 1 | jq -r '.processes[0] |
			"seen=\([.events[]] | map(tostring) | join(",")) given_up=\(.anomalies.lock_timeouts + .anomalies.contention_lost) exact=\(.exact)"' 2>/dev/null)
	fi
	if [ -n "$line" ]; then
		echo "run $cfg $t $rep $line $extra" >&3
	else
		echo "failed $cfg $t $rep $(tail -n 2 "$W/pl.err" "$W/tr.out" | tr '\n' ' ' | cut -c1-300)" >&3
	fi
}

n=${#configs[@]}
for ((rep = 1; rep <= rounds; rep++)); do
	for t in $threads; do
		for ((i = 0; i < n; i++)); do
			run "${configs[$(((i + rep) % n))]}" "$t"
		done
	done
done
echo "done" >&3
