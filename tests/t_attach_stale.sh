#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A process that a departed tracer left its breakpoints in (attach/sema.h, sema__settle). A
# tracer that covers every process of a binary (perf, bpftrace, `inflight --` and -p, which
# follow children) while one starts has the kernel raise a semaphore the program does not
# read, or raise it once for two breakpoints: when the site's page is mapped twice (LLD,
# mold) or the semaphore's page is shared with RELRO. Once that tracer ends, the kernel
# cannot lower it for each breakpoint and leaves them in place; the next tracer finds them,
# the kernel does not raise the semaphore for it, and its probes would never fire.
# tests/programs/sema_stale leaves a process in that state; `inflight -p` must then raise
# each semaphore to its breakpoints (said, one line a probe), count the rest of the run
# exactly, and leave the process clean when it ends (every semaphore 0, no breakpoint: the
# kernel's books balanced). A layout the kernel handles (bfd) is the control: nothing
# to raise, nothing said. By both attach mechanisms; run again against the sanitized loader.
# Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/programs/expect.sh"
INFLIGHT=$BUILD/inflight
P=$ROOT/build/tests/programs # the programs are the plain build's also when BUILD is build/san
STALE=$P/sema_stale
FACTS=$ROOT/tests/programs/elf_facts.py
needs_root
command -v jq >/dev/null || skip_all "needs jq"
for f in "$STALE" "$P/sdt-lld/example" "$P/c-mold/example" "$P/sdt/example"; do
	[ -x "$f" ] || { not_ok "built: $f" "run make tests"; finish; }
done

wait_line() { # FILE REGEX: up to 30 s
	for _ in $(seq 3000); do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done
	return 1
}
state() { "$FACTS" state "$1" "$2" | tr '\n' ' ' | sed 's/ $//'; } # ELF PID: one line
# every probe's semaphore equal to its breakpoints, and (STALE) whether some read fewer
balanced() { awk '{for (i = 2; i <= NF; i += 3) {s = $(i); b = $(i + 1); sub("sema=", "", s);
	sub("int3=", "", b); if (s != b) exit 1}}' <<<"$1"; }
clean() { [ -z "$(sed -E 's/[a-z_]+ sema=0 int3=0 ?//g' <<<"$1")" ]; }
# every probe's semaphore at 0 with breakpoints at its sites
stale() { [ -z "$(sed -E 's/[a-z_]+ sema=0 int3=[1-9][0-9]* ?//g' <<<"$1")" ]; }

start_stale() { # ELF: the held process, in $hold (sema_stale's pid) and $pid; $fd the hold
	rm -f "$TMP/in" "$TMP/stale.out"
	mkfifo "$TMP/in"
	"$STALE" "$("$FACTS" sites "$1")" "$1" --items 6 --threads 1 --hold-round 2 \
		<"$TMP/in" >"$TMP/stale.out" 2>&1 &
	hold=$!
	exec {fd}>"$TMP/in"
	wait_line "$TMP/stale.out" '^released [0-9]+$' || return 1
	pid=$(sed -n 's/^released //p' "$TMP/stale.out")
}

release() { echo >&"$fd"; exec {fd}>&-; wait "$hold"; }

# ROW MECHANISM RAISED: RAISED the probes whose semaphore the attach must raise (all or none)
for spec in "sdt-lld multi 3" "sdt-lld perf 3" "c-mold multi 3" "sdt multi 0"; do
	# shellcheck disable=SC2086
	set -- $spec
	row=$1 mech=$2 want=$3 elf=$P/$1/example
	tag="$row ($mech)"

	# 1. the run: counted exactly from the attach on, each raise said
	if ! start_stale "$elf"; then
		not_ok "$tag: the process is held with its tracer gone" "$(head -2 "$TMP/stale.out")"
		release
		continue
	fi
	before=$(state "$elf" "$pid")
	if [ "$want" = 0 ]; then
		check "$tag: a departed tracer leaves it clean ($before)" clean "$before"
	else
		check "$tag: a departed tracer leaves breakpoints its semaphores do not count ($before)" \
			stale "$before"
	fi
	INFLIGHT_ATTACH=$mech "$INFLIGHT" --json -p "$pid" >"$TMP/run.json" 2>"$TMP/run.err" &
	ipid=$!
	wait_line "$TMP/run.err" '^inflight: tracing'
	during=$(state "$elf" "$pid")
	check "$tag: attached, every semaphore counts its breakpoints ($during)" balanced "$during"
	said="^inflight: warning: .*: pid $pid: the semaphore of prover:[a-z_]+ read [0-9]+ for the"
	said+=" kernel's [1-9] breakpoints at its sites \(left by a tracer that ended after the"
	said+=" process started.*\); raised to [1-9], which the kernel takes back at the detach$"
	said=$(grep -cE "$said" "$TMP/run.err")
	check_eq "$tag: each raise said in one line" "$said" "$want"
	release
	wait "$ipid"
	rc=$?
	check_eq "$tag: inflight -p ends with the program, exit 0" "$rc" 0
	check_eq "$tag: the program's own output" "$(grep -v '^released' "$TMP/stale.out")" \
		"$(printf 'holding\n%s' "$(expect_output 6)")"
	check_eq "$tag: the rest of the run counted exactly (late attach in round 2)" \
		"$(grep '"type":"summary"' "$TMP/run.json" | tail -1 | project)" \
		"$(expect_procs late 6 1 0 2)"

	# 2. the end: inflight gone, the kernel takes back exactly what it and we raised
	if ! start_stale "$elf"; then
		not_ok "$tag: the second process is held" "$(head -2 "$TMP/stale.out")"
		release
		continue
	fi
	INFLIGHT_ATTACH=$mech "$INFLIGHT" -p "$pid" >"$TMP/end.out" 2>"$TMP/end.err" &
	ipid=$!
	wait_line "$TMP/end.err" '^inflight: tracing'
	kill -INT "$ipid"
	wait "$ipid"
	# the detach is a child's (attach/detach.h): up to 120 s for its grace periods
	for _ in $(seq 1200); do
		after=$(state "$elf" "$pid")
		clean "$after" && break
		sleep 0.1
	done
	check "$tag: once inflight ends, no breakpoint and every semaphore 0 ($after)" clean "$after"
	release
	check_eq "$tag: the process then runs to its end, untraced" "$?" 0
done
finish
