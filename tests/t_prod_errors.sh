#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Exit codes and messages of the production paths, each one line
# `inflight: WHAT: WHY; HINT` with the real reason: a target that exits while inflight attaches
# is 7 "exited" (it was 10 "No such file or directory" 7 times in 8), a kernel thread is
# refused plainly (12), root without CAP_SYS_PTRACE and a pid namespace of its own say what is
# missing (3), a full disk on stdout and on -o says "No space left on device" (9; it said
# "Input/output error"), a symlink at -o says it is one (9; it said "File exists"), an
# unreadable recording names the reason and a hint (8). Hostile bytes in the names quoted
# by a message come out escaped.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
needs_root

copy_bins inflight probegen
printf 'stage 1 0\nalloc 16 1 4096 1\nfree 16 1 4096\nstage 1 4\n' >"$TMP/run.txt"
"$TMP/inflight" record -q -o "$TMP/run.rec" -- "$TMP/probegen" script "$TMP/run.txt" >/dev/null 2>&1

# one_line TAG RC WANT_RC FILE REGEX: the exit status, one line on stderr, and its words
one_line() {
	check_eq "$1: exit $3" "$2" "$3"
	check_eq "$1: one line" "$(wc -l <"$4")" 1
	check_match "$1: says why" "$(cat "$4")" "$5"
}

# --- a target that exits while inflight attaches: 7, never 10 ------------------------------
# the target is the child of a `sleep` that never reaps it, so once it ends it stays a zombie
# (its pid cannot be reused meanwhile; the shell may still reap one that ends before its exec);
# it spins 0 to 440 ms, while inflight takes 50 to 200 ms to attach here: it exits before,
# during and after the attach
codes=""
n7=0
bad=""
for ms in 0 40 80 120 160 200 240 280 320 360 400 440; do
	rm -f "$TMP/pid"
	sh -c "'$TMP/probegen' spin $ms >/dev/null & echo \$! >'$TMP/pid'; exec sleep 2" >/dev/null &
	bg_track $!
	wait_until 5 test -s "$TMP/pid"
	pid=$(cat "$TMP/pid")
	"$TMP/inflight" -p "$pid" >"$TMP/race.out" 2>"$TMP/race.err"
	rc=$?
	codes="$codes $ms:$rc"
	case $rc in
	# traced: a summary with its events, or (it spun its last probe before the attach
	# was done, and exited after it) the summary that says no probe was hit
	0) grep -qE "events:|^inflight summary: no traced process hit a probe; tracing ended: target exited$" \
		"$TMP/race.out" || bad="$bad $ms(0 without a summary: $(head -c 200 "$TMP/race.out"))" ;;
	6) # the shell reaped it before inflight looked: a pid that no longer exists
		grep -q "^inflight: no such process: $pid; " "$TMP/race.err" || bad="$bad $ms(rc 6: $(cat "$TMP/race.err"))" ;;
	7)
		n7=$((n7 + 1))
		echo "# spin $ms ms: $(cat "$TMP/race.err")"
		[ "$(wc -l <"$TMP/race.err")" = 1 ] && grep -q "exited" "$TMP/race.err" ||
			bad="$bad $ms($(cat "$TMP/race.err"))"
		;;
	*) bad="$bad $ms(rc $rc: $(cat "$TMP/race.err"))" ;;
	esac
done
echo "# spin ms:exit status of inflight -p:$codes"
check_eq "a target exiting before or during the attach: 7 and one line saying it exited, or traced (0), or gone before inflight looked (6)" "$bad" ""
check "... at least once it exited first ($n7 of 12)" test "$n7" -ge 1

# --- a kernel thread ------------------------------------------------------------------------
"$TMP/inflight" -p 2 >/dev/null 2>"$TMP/kt.err"
one_line "-p 2 (kthreadd)" "$?" 12 "$TMP/kt.err" "pid 2 is a kernel thread \(kthreadd\): it runs no program"

# --- root without CAP_SYS_PTRACE (a container's default) ----------------------------------------
"$TMP/probegen" spin 20000 >/dev/null &
spin=$!
bg_track "$spin"
setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace "$TMP/inflight" -p "$spin" >/dev/null 2>"$TMP/pt.err"
one_line "root without CAP_SYS_PTRACE, -p of a process with more capabilities" "$?" 3 "$TMP/pt.err" \
	"cannot read its executable \(Permission denied\).*needs CAP_SYS_PTRACE; inflight runs as root without CAP_SYS_PTRACE"
check_match "... and offers -b" "$(cat "$TMP/pt.err")" "trace the binary with -b PATH"
kill "$spin"

# --- a pid namespace of its own -------------------------------------------------------------
unshare -p -f --mount-proc "$TMP/inflight" -- "$TMP/probegen" script "$TMP/run.txt" >"$TMP/ns.out" 2>"$TMP/ns.err"
one_line "inflight in a pid namespace of its own" "$?" 3 "$TMP/ns.err" \
	"runs in a pid namespace of its own \(pid:\[[0-9]+\]\): the kernel names processes by their host pids.*--pid=host"
check_eq "... and the command was not started" "$(cat "$TMP/ns.out")" ""

# --- a full disk: stdout, -o ---------------------------------------------------------------------
for c in "trace" "trace -i 10ms"; do
	"$TMP/inflight" ${c#trace} -- "$TMP/probegen" script "$TMP/run.txt" >/dev/full 2>"$TMP/full.err"
	one_line "inflight $c >/dev/full" "$?" 9 "$TMP/full.err" "stdout: No space left on device: the output is incomplete; free some space"
done
# --json with -- CMD writes to -o (never to the command's stdout)
"$TMP/inflight" --json -o /dev/full -- "$TMP/probegen" script "$TMP/run.txt" 2>"$TMP/full.err"
one_line "inflight --json -o /dev/full" "$?" 9 "$TMP/full.err" "/dev/full: No space left on device: the output is incomplete; free some space"
"$TMP/inflight" list "$TMP/probegen" >/dev/full 2>"$TMP/full.err"
one_line "inflight list >/dev/full" "$?" 9 "$TMP/full.err" "stdout: No space left on device"
for f in text csv json svg folded chrome; do
	"$TMP/inflight" report --format $f "$TMP/run.rec" >/dev/full 2>"$TMP/full.err"
	one_line "report --format $f >/dev/full" "$?" 9 "$TMP/full.err" "to stdout: No space left on device"
done
"$TMP/inflight" compare "$TMP/run.rec" "$TMP/run.rec" >/dev/full 2>"$TMP/full.err"
one_line "compare >/dev/full" "$?" 9 "$TMP/full.err" "to stdout: No space left on device"
netns_up || not_ok "a private network namespace"
in_ns "$TMP/inflight" serve --listen 127.0.0.1:0 -- "$TMP/probegen" script "$TMP/run.txt" \
	>/dev/full 2>"$TMP/full.err"
rc=$?
grep -v '^inflight: serving' "$TMP/full.err" >"$TMP/full2.err"
one_line "serve >/dev/full (its final summary)" "$rc" 9 "$TMP/full2.err" "stdout: No space left on device"

mkdir "$TMP/small"
unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$TMP/small' &&
	dd if=/dev/zero of='$TMP/small/pad' bs=4k count=15 2>/dev/null
	'$TMP/inflight' record -q -o '$TMP/small/r.rec' -- '$TMP/probegen' storm 20000 >/dev/null 2>'$TMP/rec.err'
	echo \$? >'$TMP/rec.rc'
	'$TMP/inflight' report '$TMP/run.rec' -o '$TMP/small/r.txt' 2>'$TMP/rep.err'
	echo \$? >'$TMP/rep.rc'"
one_line "record -o FILE on a full disk" "$(cat "$TMP/rec.rc")" 9 "$TMP/rec.err" "No space left on device"
one_line "report -o FILE on a full disk" "$(cat "$TMP/rep.rc")" 9 "$TMP/rep.err" \
	"cannot write text report to .*/small/r.txt: No space left on device"

# --- a symlink at -o ----------------------------------------------------------------------------
echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/planted"
"$TMP/inflight" record -q -o "$TMP/planted" -- "$TMP/probegen" script "$TMP/run.txt" >/dev/null 2>"$TMP/ln.err"
one_line "record -o SYMLINK" "$?" 9 "$TMP/ln.err" \
	"cannot create .*/planted: it is a symbolic link, and a recording is never written through one; remove it, or add --force"
check_eq "... its target untouched" "$(cat "$TMP/victim")" precious

# --- unreadable recordings --------------------------------------------------------------------
cp "$TMP/run.rec" "$TMP/locked.rec"
chmod 600 "$TMP/locked.rec"
as_nobody "" "$TMP/inflight" report "$TMP/locked.rec" >/dev/null 2>"$TMP/rd.err"
one_line "report of a recording nobody may not read" "$?" 8 "$TMP/rd.err" \
	"cannot read recording .*locked.rec: Permission denied; recordings are created mode 0640"
"$TMP/inflight" report "$TMP/nothing-here.rec" >/dev/null 2>"$TMP/rd.err"
one_line "report of a missing file" "$?" 8 "$TMP/rd.err" "No such file or directory; check the path"
"$TMP/inflight" report "$TMP" >/dev/null 2>"$TMP/rd.err"
one_line "report of a directory" "$?" 8 "$TMP/rd.err" "Is a directory; give a recording file"
head -c 300 /dev/urandom >"$TMP/noise.rec"
"$TMP/inflight" report "$TMP/noise.rec" >/dev/null 2>"$TMP/rd.err"
one_line "report of random bytes" "$?" 8 "$TMP/rd.err" "bad magic.*; not a recording of .inflight record.$"

# --- hostile bytes in a quoted name: escaped, still one line --------------------------------------
evil=$'\e]0;owned\a\e[2J'$'\n''inflight: fake line'
"$TMP/inflight" -- "$TMP/$evil" >/dev/null 2>"$TMP/evil.err"
one_line "-- a command named with ESC, BEL and a newline" "$?" 12 "$TMP/evil.err" \
	'cannot run .*\\x1b\]0;owned\\x07\\x1b\[2J\\ninflight: fake line: No such file'
check "... no raw control byte reaches the terminal" test "$(tr -d '\n' <"$TMP/evil.err" | tr -d '[:print:]' | wc -c)" = 0
finish
