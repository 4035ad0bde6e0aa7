#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Least privilege: inflight run as the unprivileged user
# nobody with only the capabilities attaching needs works and counts exactly; once attached it
# holds no capability at all (CapEff 0) and still reads its maps; with a capability missing it
# says which in one line and exits 3; the command it starts does not inherit its capabilities,
# not even at its own next exec as root (the bounding set is dropped, SECBIT_NOROOT locked,
# NoNewPrivs set: before, the re-exec'd command held CapEff 000001fffeffffff); --user and sudo
# make inflight and its command an unprivileged user; setuid programs under NoNewPrivs.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

copy_bins inflight probegen
cp "$BUILD/tests/exec_target" "$TMP/exec_target"
chmod 755 "$TMP/exec_target"
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

# 5. the command's own exec: what a re-exec'd program holds (it reads its own status)
# status_of OUTPUT FIELD: the field's value in a /proc/PID/status dump
status_of() { awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); gsub(/\t/, " "); print }' <<<"$1"; }
zero=0000000000000000
out=$("$TMP/inflight" -- "$TMP/exec_target" cat /proc/self/status 2>"$TMP/err5")
check_eq "root's -- command re-exec'd: exit 0" "$?" 0
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	check_eq "root's -- command after its own exec: $f empty" "$(status_of "$out" $f)" $zero
done
check_eq "... NoNewPrivs set" "$(status_of "$out" NoNewPrivs)" 1
check_eq "... still uid 0, a root without capabilities" "$(status_of "$out" Uid)" "0 0 0 0"
check_match "... and traced: its probes counted" "$out" "events: buf_alloc 1, buf_free 1, stage 1$"

out=$("$TMP/inflight" --user nobody -- "$TMP/exec_target" cat /proc/self/status 2>"$TMP/err6")
check_eq "--user nobody: exit 0" "$?" 0
check_eq "--user nobody: the command runs as nobody" "$(status_of "$out" Uid)" "65534 65534 65534 65534"
check_eq "--user nobody: with nobody's group" "$(status_of "$out" Gid)" \
	"$(id -g nobody) $(id -g nobody) $(id -g nobody) $(id -g nobody)"
check_eq "--user nobody: no capability after its exec" \
	"$(for f in CapInh CapPrm CapEff CapBnd CapAmb; do status_of "$out" $f; done | sort -u)" $zero

# 6. inflight itself once attached, -- and --user: the user, no capability, NoNewPrivs
"$TMP/inflight" --user nobody -- "$TMP/probegen" script "$TMP/gate.txt" >"$TMP/out7" 2>"$TMP/err7" &
tr=$!
bg_track "$tr"
wait_until 10 file_has "$TMP/out7" '^gated' || not_ok "--user: the command reached its gate" "$(cat "$TMP/err7")"
child=$(pgrep -P "$tr" | head -n 1)
bg_track "$child"
became() { [ "$(awk '/^Uid:/ { print $2 $3 $4 $5 }' "/proc/$1/status")" = 65534655346553465534 ]; }
check "--user nobody: inflight becomes nobody once attached" wait_until 10 became "$tr"
st=$(cat "/proc/$tr/status")
check_eq "... with every capability set empty, the bounding set too" \
	"$(for f in CapInh CapPrm CapEff CapBnd CapAmb; do status_of "$st" $f; done | sort -u)" $zero
check_eq "... and NoNewPrivs" "$(status_of "$st" NoNewPrivs)" 1
check_eq "... its command is nobody's too" "$(awk '/^Uid:/ { print $2 }' "/proc/$child/status")" 65534
kill -USR1 "$child"
wait "$tr"
check_eq "--user nobody: exits with the command's status 0" "$?" 0
check_match "--user nobody: counted exactly, after dropping to nobody" "$(cat "$TMP/out7")" \
	"events: buf_alloc 1, buf_free 1, stage 3$"

# 7. under sudo: -p drops to the user who ran sudo; a -- command keeps its uid (root, no caps)
"$TMP/probegen" script "$TMP/gate.txt" >"$TMP/pg8.out" &
pg=$!
bg_track "$pg"
wait_until 5 file_has "$TMP/pg8.out" '^gated'
SUDO_UID=65534 SUDO_GID=$(id -g nobody) SUDO_USER=nobody "$TMP/inflight" -p "$pg" >"$TMP/out8" 2>"$TMP/err8" &
tr=$!
bg_track "$tr"
check "sudo, -p: inflight becomes the user who ran sudo once attached" wait_until 10 became "$tr"
check_eq "... with no capability" "$(awk '/^CapEff:/ { print $2 }' "/proc/$tr/status")" $zero
kill -USR1 "$pg"
wait "$tr"
check_eq "sudo, -p: exit 0" "$?" 0
check_match "sudo, -p: the events after the attach counted as nobody" "$(cat "$TMP/out8")" \
	"events: buf_alloc 0, buf_free 1, stage 2$"
out=$(SUDO_UID=65534 SUDO_GID=$(id -g nobody) SUDO_USER=nobody "$TMP/inflight" -- "$TMP/exec_target" \
	cat /proc/self/status 2>/dev/null)
check_eq "sudo, --: the command keeps root's uid" "$(status_of "$out" Uid)" "0 0 0 0"
check_eq "sudo, --: and no capability" "$(status_of "$out" CapEff)" $zero

# 8. setuid programs run by the command: NoNewPrivs ignores the bit; --allow-new-privs honours
# it, and still no capability comes (empty bounding set, SECBIT_NOROOT locked)
cp "$(command -v cat)" "$TMP/suid-cat"
chown root:root "$TMP/suid-cat"
chmod 4755 "$TMP/suid-cat"
out=$("$TMP/inflight" --user nobody -- "$TMP/exec_target" "$TMP/suid-cat" /proc/self/status 2>/dev/null)
check_eq "setuid-root program under NoNewPrivs: runs as nobody, the bit ignored" \
	"$(status_of "$out" Uid)" "65534 65534 65534 65534"
out=$("$TMP/inflight" --user nobody --allow-new-privs -- "$TMP/exec_target" "$TMP/suid-cat" \
	/proc/self/status 2>/dev/null)
check_eq "--allow-new-privs: the setuid bit works (euid 0)" "$(status_of "$out" Uid)" "65534 0 0 0"
check_eq "--allow-new-privs: but no capability comes with it" \
	"$(for f in CapPrm CapEff CapBnd; do status_of "$out" $f; done | sort -u)" $zero
check_eq "--allow-new-privs: no NoNewPrivs" "$(status_of "$out" NoNewPrivs)" 0

# 9. --user mistakes: one line each
"$TMP/inflight" --user no-such-user-here -- "$TMP/probegen" script "$TMP/run.txt" >/dev/null 2>"$TMP/err9"
check_eq "--user NOSUCH: exit 2" "$?" 2
check_eq "--user NOSUCH: one line naming it" "$(grep -c "no-such-user-here': no such user" "$TMP/err9")/$(wc -l <"$TMP/err9")" "1/1"
as_nobody "$ATTACH_CAPS" "$TMP/inflight" --user root -- "$TMP/probegen" script "$TMP/run.txt" >/dev/null 2>"$TMP/err10"
check_eq "--user without CAP_SETUID: exit 3" "$?" 3
check_match "... naming CAP_SETUID and CAP_SETGID" "$(cat "$TMP/err10")" "needs CAP_SETUID and CAP_SETGID"

finish
