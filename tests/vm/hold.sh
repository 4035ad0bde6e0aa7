# SPDX-License-Identifier: BSD-2-Clause
# Sourced in a guest with more than one vCPU (the stress rows, the bench's scaling guest).
#
# vm_hold_tracepoints: two probes held on each tracepoint an inflight session attaches, for
# as long as the guest runs; prints how many of the 8 it holds. The kernel patches a
# tracepoint's call sites when its first probe comes or its last goes (the static key) and
# when it goes from one probe to two (the static call), and the emulator's vCPUs do not take
# code patched under them reliably: with two vCPUs 6.12-rt died of an "Oops: int3" in
# trace_rss_stat as a session attached, and once (in CI, its oops not kept, most likely the
# same) of a fatal exception in interrupt between two stress sessions, never with one. Held by
# ftrace's own events, in two trace instances with tracing off (one probe each, recording
# nothing), a session's attach and detach only change the list of probes. Guests only: real
# CPUs take patched code as the kernel expects, and a host's tracefs is left be.
vm_hold_tracepoints() {
	local t=/sys/kernel/tracing i e held=0
	[ -n "${INFL_GUEST:-}" ] || return 0
	for i in "$t" "$t/instances/held"; do
		mkdir -p "$i" 2>/dev/null
		echo 0 >"$i/tracing_on" 2>/dev/null
		for e in sched/sched_process_exit sched/sched_process_exec sched/sched_process_fork \
			oom/mark_victim; do
			echo 1 >"$i/events/$e/enable" 2>/dev/null && held=$((held + 1))
		done
	done
	echo "$held"
}
