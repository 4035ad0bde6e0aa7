#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What inflight leaves behind when it exits (attach/detach.c), by both attach mechanisms
# (INFLIGHT_ATTACH): the kernel's uprobe teardown happens in a child that outlives inflight,
# so the child must hold no terminal and no file of ours (a pipe reading inflight's output
# gets its end at once), be reaped by our shell (no zombie), and leave a target that keeps
# running (-p) with its semaphores back at 0. And the semaphores must be really raised where
# the program reads them (attach/sema.c): a process whose RELRO copy is still writable
# (stopped at its exec) has the LLD layout's semaphore raised in the wrong copy, which must be
# said (exit 14), as must -b on such a binary. Speeds are the benchmark's (docs/attach.md),
# not this file's. Needs root.
source "$(dirname "$0")/lib.sh"
INFLIGHT=$BUILD/inflight
A=$BUILD/tests/attach
P=$BUILD/tests/programs
PEEK=$A/sema_peek
needs_root
for f in "$PEEK" "$A/stopped_exec" "$P/c-inline-sites/example" "$P/c-bfd-O2/example" \
	"$P/sdt-lld/example"; do
	[ -x "$f" ] || { not_ok "built: $f" "run make tests"; finish; }
done

wait_line() { # FILE REGEX: up to 30 s
	for _ in $(seq 3000); do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done
	return 1
}
# the detaching children of this shell (CLONE_PARENT: ours, not inflight's)
detachers() { ps -o pid=,comm= --ppid $$ | awk '$2 == "inflight-detach" {print $1}'; }
# until no detaching child is left, up to 120 s (perf-event uprobes: a grace period each)
wait_detachers() {
	for _ in $(seq 1200); do [ -z "$(detachers)" ] && return 0; sleep 0.1; done
	return 1
}
# until PID's semaphores all read 0, up to 120 s; prints the last reading
wait_sema_zero() {
	local v
	for _ in $(seq 1200); do
		v=$("$PEEK" "$1" 2>&1)
		[ "$v" = "buf_alloc=0 buf_free=0 stage=0" ] && break
		sleep 0.1
	done
	echo "$v"
}

# --- -- CMD: the child holds nothing of ours, is reaped by us ---
for mech in perf multi; do
	t0=$SECONDS
	# not under timeout(1) nor in $(...): the child is a child of inflight's parent
	INFLIGHT_ATTACH=$mech "$INFLIGHT" -- "$P/c-inline-sites/example" --items 6 >"$TMP/out" 2>&1
	rc=$?
	check_eq "$mech: -- CMD ends with the command's status, the summary printed" \
		"$rc $(grep -c '^inflight summary: pid' "$TMP/out")" "0 1"
	kids=$(detachers)
	if [ "$mech" = perf ]; then
		# 12 sites: seconds of grace periods, so the child is most likely still at it;
		# whether it is is the scheduler's business, what it is when it is not
		check "$mech: at most one detaching child, a child of the calling shell ($kids)" \
			test "$(wc -w <<<"$kids")" -le 1
		kid=$(awk '{print $1}' <<<"$kids")
		# /proc/PID/stat: field 6 the session, 7 the controlling terminal
		read -r sess tty < <(sed 's/^.*) //' "/proc/$kid/stat" 2>/dev/null | awk '{print $4, $5}')
		if [ -n "$kid" ] && [ -n "$sess" ]; then
			check_eq "$mech: the child leads its own session, with no terminal" \
				"$sess $tty" "$kid 0"
		else
			echo "# $mech: the detaching child was done before it could be looked at"
		fi
	fi
	wait_detachers
	check_eq "$mech: the detaching child is gone, reaped (no zombie of ours)" \
		"$(detachers)$(ps -o stat= --ppid $$ | grep -c Z)" "0"
	echo "# $mech: -- CMD and its detach took $((SECONDS - t0)) s"
done
# a reader of inflight's output ($(...), a pipe) has its end when inflight exits, not when
# the child is done: the child is still at work when the output is in (it keeps no file of
# ours; by the time it works, in its exit, it holds none at all)
out=$(INFLIGHT_ATTACH=perf "$INFLIGHT" -- "$P/c-inline-sites/example" --items 6 2>&1)
ours=0
for p in $(pgrep -x inflight-detach); do
	[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$(readlink -f "$INFLIGHT")" ] && ours=$((ours + 1))
done
# (the child still at work then is likely, not certain: how long it takes is not asserted)
check_eq "perf: \$(inflight -- CMD) returns with the whole output, one detaching child at most" \
	"$(grep -c '^inflight summary: pid' <<<"$out") $((ours <= 1))" "1 1"
wait_detached

# --- -p PID: a target that keeps running gets its semaphores back at 0 ---
for mech in perf multi inline; do
	mkfifo "$TMP/in"
	"$P/c-bfd-O2/example" --items 6 --hold-before <"$TMP/in" >"$TMP/prog" 2>&1 &
	ppid=$!
	exec {fd}>"$TMP/in"
	wait_line "$TMP/prog" '^holding$'
	env=(INFLIGHT_ATTACH="${mech/inline/multi}")
	[ "$mech" = inline ] && env+=(INFLIGHT_DETACH=inline)
	# the last round's err says "tracing" too, until this inflight's shell truncates it
	rm -f "$TMP/err"
	env "${env[@]}" "$INFLIGHT" -p "$ppid" >"$TMP/out" 2>"$TMP/err" &
	ipid=$!
	wait_line "$TMP/err" '^inflight: tracing'
	check_eq "$mech: -p: every semaphore raised where the program reads it" \
		"$("$PEEK" "$ppid")" "buf_alloc=1 buf_free=1 stage=1"
	kill -INT "$ipid"
	wait "$ipid"
	rc=$?
	if [ "$mech" = inline ]; then # no child: inflight itself waited for the kernel
		check_eq "inline: -p: exit 0, the semaphores at 0 as inflight exits" \
			"$rc $("$PEEK" "$ppid")" "0 buf_alloc=0 buf_free=0 stage=0"
	else
		check_eq "$mech: -p: exit 0, the semaphores back at 0 once the child is done" \
			"$rc $(wait_sema_zero "$ppid")" "0 buf_alloc=0 buf_free=0 stage=0"
	fi
	echo >&"$fd"
	exec {fd}>&-
	wait "$ppid"
	check_eq "$mech: -p: the target runs on to its end, untraced" \
		"$? $(tail -1 "$TMP/prog")" "0 done items=6 checksum=0x89d95b067de8b2de"
	rm -f "$TMP/in"
	wait_detachers
done

# --- a file rewritten in place while the child still holds its probes ---
# The kernel keeps with each probe the instruction it replaced, read from the file, and puts
# its breakpoint at that offset into every process that maps the file: one started from a
# file rewritten in place (cp over it: the same inode) while the probes are still registered
# runs the old instruction there. Here the two builds have their sites at the same offsets, a
# 1-byte nop at each in the first and a 5-byte one in the second: run under a probe of the
# first, the second resumes inside its nop and dies (SIGILL, every time before the lease).
# The file's read lease, taken before inflight exits and held until the child has closed the
# links, makes the copy's open wait for them.
N1=$A/example-nop1 N5=$A/example-nop5
sites() { readelf -n "$1" | grep -o 'Location: 0x[0-9a-f]*' | tr '\n' ' '; }
at_site() { od -An -tx1 -j "$(($(sites "$1" | awk '{print $2}')))" -N 5 "$1" | tr -d ' \n'; }
check_eq "rewrite: the two builds' sites at the same offsets" "$(sites "$N5")" "$(sites "$N1")"
check_eq "rewrite: a 1-byte nop at the first build's first site, a 5-byte one at the second's" \
	"$(at_site "$N1" | cut -c1-2) $(at_site "$N5")" "90 0f1f440000"
for mech in perf multi; do
	cp "$N1" "$TMP/rewritten"
	INFLIGHT_ATTACH=$mech "$INFLIGHT" -- "$TMP/rewritten" --items 6 >"$TMP/out" 2>&1
	rc=$?
	locks=$(cat /proc/locks)
	kid=$(detachers | head -n 1)
	# the child still holds the file after the look at the locks: the lease was there then
	if [ -n "$kid" ] && ls -l "/proc/$kid/fd" 2>/dev/null | grep -q -- "-> $TMP/rewritten\$"; then
		check_match "$mech: the attached file has a read lease while the child works" "$locks" \
			"LEASE +ACTIVE +READ +[0-9]+ [0-9a-f]+:[0-9a-f]+:$(stat -c %i "$TMP/rewritten") "
	else
		echo "# $mech: the detaching child was done before its lease could be looked at"
	fi
	# at once, as a script that stops a service, copies its new build and starts it would
	cp "$N5" "$TMP/rewritten"
	"$TMP/rewritten" --items 6 >"$TMP/prog" 2>&1
	check_eq "$mech: -- CMD ended, its file rewritten in place at once: the new build runs right" \
		"$rc $? $(tail -1 "$TMP/prog")" "0 0 done items=6 checksum=0x89d95b067de8b2de"
	wait_detachers
done

# --- semaphores that are not raised where the program reads them: said, exit 14 ---
mkfifo "$TMP/in"
"$A/stopped_exec" "$P/sdt-lld/example" --items 6 <"$TMP/in" >"$TMP/se" 2>&1 &
spid=$!
exec {fd}>"$TMP/in"
wait_line "$TMP/se" '^stopped [0-9]+$'
target=$(awk '/^stopped/ {print $2}' "$TMP/se")
"$INFLIGHT" -p "$target" >"$TMP/out" 2>"$TMP/err"
rc=$?
check_eq "LLD layout, attached while RELRO is still writable: exit 14, one line" \
	"$rc $(grep -c . "$TMP/err")" "14 1"
check_match "... saying which semaphore, why, and what to change" "$(cat "$TMP/err")" \
	'^inflight: .*sdt-lld/example: the semaphore of prover:buf_alloc at 0x[0-9a-f]+ reads 0 after the attach: it shares its page with RELRO .*; relink with -z norelro'
echo >&"$fd"
exec {fd}>&-
wait "$spid"
check_eq "... and the program runs to its end" "$(tail -1 "$TMP/se")" "exit 0"
rm -f "$TMP/in"
"$INFLIGHT" -b "$P/sdt-lld/example" >"$TMP/out" 2>"$TMP/err"
rc=$?
check_eq "LLD layout under -b: exit 14, one line" "$rc $(grep -c . "$TMP/err")" "14 1"
check_match "... saying -b cannot enable its probes, and what to change" "$(cat "$TMP/err")" \
	'shares its page with RELRO .* so -b cannot enable its probes \(-p PID and -- CMD can\); relink'
wait_detachers
finish
