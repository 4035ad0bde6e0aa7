#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Least privilege (issue 5, item 1): inflight run as the unprivileged user nobody with only the
# capabilities attaching needs works and counts exactly; once attached it holds no capability
# at all (CapEff 0) and still reads its maps; with a capability missing it says which in one
# line and exits 3; the command it starts does not inherit its capabilities.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen
printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' \
	>"$TMP/run.txt"
printf 'stage 1 0\nalloc 16 1 4096 1\ngate\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' >"$TMP/gate.txt"
chmod 644 "$TMP"/*.txt

# 1. the full set: a spawned command, traced from its first instruction, counted exactly
out=$(as_nobody "$ATTACH_CAPS" "$TMP/inflight" -- "$TMP/probegen" script "$TMP/run.txt" 2>"$TMP/err1")
rc=$?
check_eq "as nobody with ${ATTACH_CAPS}: exit status is the command's" "$rc" 0
check_match "as nobody: exact event counts" "$out" "events: buf_alloc 2, buf_free 1, stage 3$"
check_match "as nobody: one buffer left in flight (8 KiB, class big)" "$out" \
	"in flight at exit: 8.00 KiB in 1 buffer, 1 owner"

# 2. -p: after the attach the loader holds no capability, and still reads its maps
loader_dropped() { [ "$(cap_eff "$1")" = 0000000000000000 ]; }

# trace_gated OWNER CAPS TAG: -p on a gated probegen run by OWNER (root|nobody); checks that
# the loader ends up with empty capability sets and counts the events after the gate
trace_gated() {
	local owner=$1 caps=$2 tag=$3 pg tr
	rm -f "$TMP/pg.out" # a previous run's "gated" must not pass for this one's
	if [ "$owner" = nobody ]; then
		nobody_argv ""
		"${NOBODY[@]}" "$TMP/probegen" script "$TMP/gate.txt" >"$TMP/pg.out" &
	else
		"$TMP/probegen" script "$TMP/gate.txt" >"$TMP/pg.out" &
	fi
	pg=$!
	bg_track "$pg"
	wait_until 5 file_has "$TMP/pg.out" '^gated' || not_ok "$tag: probegen reached its gate"
	nobody_argv "$caps"
	"${NOBODY[@]}" "$TMP/inflight" -p "$pg" >"$TMP/out2" 2>"$TMP/err2" &
	tr=$!
	bg_track "$tr"
	if wait_until 10 loader_dropped "$tr"; then
		ok "$tag: CapEff is 0 once attached"
		check_eq "$tag: permitted, inheritable and ambient sets empty too" \
			"$(grep -E '^Cap(Prm|Inh|Amb):' "/proc/$tr/status" | awk '{print $2}' | sort -u)" \
			0000000000000000
	else
		not_ok "$tag: CapEff is 0 once attached" "$(cat "$TMP/err2")"
		not_ok "$tag: permitted, inheritable and ambient sets empty too"
	fi
	kill -USR1 "$pg"
	wait "$tr"
	check_eq "$tag: exits 0 when the target ends" "$?" 0
	check_match "$tag: events after the attach counted, capabilities dropped" \
		"$(cat "$TMP/out2")" "events: buf_alloc 0, buf_free 1, stage 2$"
	wait "$pg"
}
trace_gated nobody "$ATTACH_CAPS" "-p of nobody's own process"
trace_gated root "$ATTACH_CAPS,+sys_ptrace" "-p of root's process with CAP_SYS_PTRACE"

# another user's process without CAP_SYS_PTRACE: /proc/PID/exe and maps are out of reach
"$TMP/probegen" spin 5000 >/dev/null &
pg=$!
bg_track "$pg"
as_nobody "$ATTACH_CAPS" "$TMP/inflight" -p "$pg" >"$TMP/out5" 2>"$TMP/err5"
check_eq "-p of root's process without CAP_SYS_PTRACE: exit 3" "$?" 3
check_eq "... one line on stderr" "$(wc -l <"$TMP/err5")" 1
check_match "... naming CAP_SYS_PTRACE" "$(cat "$TMP/err5")" "CAP_SYS_PTRACE"
kill "$pg"
wait "$pg" 2>/dev/null

# 3. missing capabilities: one line naming them, exit 3
try_caps() { # CAPS -> rc, stderr in $TMP/errc
	as_nobody "$1" "$TMP/inflight" -- "$TMP/probegen" script "$TMP/run.txt" >"$TMP/outc" 2>"$TMP/errc"
}
try_caps ""
check_eq "no capabilities: exit 3" "$?" 3
check_eq "no capabilities: one line" "$(wc -l <"$TMP/errc")" 1
check_match "no capabilities: names CAP_BPF and CAP_PERFMON" "$(cat "$TMP/errc")" \
	"missing CAP_BPF and CAP_PERFMON"
check_eq "no capabilities: the command was not started" "$(cat "$TMP/outc")" ""
try_caps +bpf
check_eq "CAP_BPF alone: exit 3" "$?" 3
check_match "CAP_BPF alone: names CAP_PERFMON only" "$(cat "$TMP/errc")" "missing CAP_PERFMON \("
try_caps +perfmon
check_eq "CAP_PERFMON alone: exit 3" "$?" 3
check_match "CAP_PERFMON alone: names CAP_BPF only" "$(cat "$TMP/errc")" "missing CAP_BPF \("
try_caps +bpf,+perfmon
rc=$?
if [ "$rc" = 0 ]; then
	ok "CAP_BPF+CAP_PERFMON suffice on this kernel (uprobes before Linux 6.16)"
	ok "(no CAP_SYS_ADMIN message to check)"
	ok "(no second line to check)"
else
	check_eq "CAP_BPF+CAP_PERFMON on a kernel whose uprobes need CAP_SYS_ADMIN: exit 3" "$rc" 3
	check_match "... the line names CAP_SYS_ADMIN" "$(cat "$TMP/errc")" "CAP_SYS_ADMIN"
	check_eq "... one line" "$(wc -l <"$TMP/errc")" 1
fi

# 4. the spawned command runs with the user's privileges, not the loader's capabilities
nobody_argv "$ATTACH_CAPS"
"${NOBODY[@]}" "$TMP/inflight" -- "$TMP/probegen" script "$TMP/gate.txt" >"$TMP/out4" 2>"$TMP/err4" &
tr=$!
bg_track "$tr"
wait_until 10 file_has "$TMP/out4" '^gated' || not_ok "spawned probegen reached its gate"
child=$(pgrep -P "$tr" | head -n 1)
bg_track "$child"
check_eq "spawned command: no effective capabilities" "$(cap_eff "$child")" 0000000000000000
check_eq "spawned command: no ambient capabilities" \
	"$(awk '/^CapAmb:/ {print $2}' "/proc/$child/status")" 0000000000000000
check_eq "loader: no capabilities once the command runs" "$(cap_eff "$tr")" 0000000000000000
kill -USR1 "$child"
wait "$tr"
check_eq "spawned command under reduced privileges: exit status 0" "$?" 0

finish
