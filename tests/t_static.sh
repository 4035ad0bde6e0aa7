#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The shipped binary, build/static/inflight (musl, static; `make static`), where the build
# host's libraries are not: in a Debian 11 root (glibc 2.31, older than the build host's
# 2.36; debootstrap, cached outside the repository) and in an empty root that holds only
# the binary, a static probegen and /proc, /sys, /dev. In each: it starts, traces exactly
# (known answers from probegen's threads and scripts), records and reports, serves
# Prometheus (libmicrohttpd linked in), and `--user NAME` works where /etc/passwd has the
# user (musl reads it itself) and fails with one line where there is none. Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"
source "$ROOT/tests/roots.sh"
needs_root
SBIN=$ROOT/build/static
[ -x "$SBIN/inflight" ] && [ -x "$SBIN/probegen" ] || skip_all "build/static/inflight missing: make static"
command -v unshare >/dev/null && command -v curl >/dev/null || skip_all "unshare or curl missing (scripts/install-deps.sh test)"

# --- the file itself --------------------------------------------------------------------
check_match "file(1): statically linked" "$(file -b "$SBIN/inflight")" "statically linked"
check_eq "no interpreter, no NEEDED library" \
	"$(readelf -ld "$SBIN/inflight" | grep -cE 'INTERP|\(NEEDED\)')" 0
check_eq "no symbol versions (no glibc)" "$(readelf -V "$SBIN/inflight" | grep -c 'GLIBC_')" 0

# The probegen runs: `threads 4 50` (4 owners, 200 buffers, all freed) and a script that
# leaves one 8 KiB buffer in flight; gate.txt stops at a gate with it held (serve, --user).
printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' \
	>"$TMP/run.txt"
printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\ngate\nfree 17 2 8192\nstage 1 4\n' \
	>"$TMP/gate.txt"

# stage ROOT DIR: the binaries and scripts into ROOT/DIR
stage_into() {
	mkdir -p "$1$2"
	cp "$SBIN/inflight" "$SBIN/probegen" "$TMP/run.txt" "$TMP/gate.txt" "$1$2/"
}

# has WHAT FILE LINE...: each LINE appears verbatim in FILE
has() {
	local what=$1 file=$2 line
	shift 2
	for line in "$@"; do
		if grep -qxF -- "$line" "$file"; then ok "$what: '$line'"; else
			not_ok "$what: '$line'" "not in: $(tr '\n' '|' <"$file")"
		fi
	done
}

# traces ROOT DIR NAME: the exact runs, a recording and its report, in ROOT (files in DIR)
traces() {
	local root=$1 d=$2 name=$3 rc nrec
	in_root "$root" "$d/inflight" --version >"$TMP/v" 2>&1
	check_eq "$name: inflight --version runs" "$?:$(cut -d' ' -f1 "$TMP/v")" "0:inflight"
	in_root "$root" "$d/inflight" -- "$d/probegen" threads 4 50 >"$TMP/t" 2>"$TMP/te"
	rc=$?
	check_eq "$name: trace 4 threads: exit 0, nothing on stderr" "$rc:$(cat "$TMP/te")" "0:"
	has "$name: 4 threads exact" "$TMP/t" "  events: buf_alloc 200, buf_free 200, stage 12" \
		"  owners: 4 started, 4 done" "in flight at exit: nothing" "anomalies: none"
	in_root "$root" "$d/inflight" record -o "$d/run.infl" -- "$d/probegen" script \
		"$d/run.txt" >/dev/null 2>"$TMP/re"
	# records: the 6 probe events, the exit and the RSS changes, whose number follows the
	# page faults of the program's start (how many pages fault-around finds in the page
	# cache), not the tracer: the report must name the same number
	check_match "$name: record: exit 0, every event" "$?:$(cat "$TMP/re")" \
		'^0:inflight: recorded [0-9]+ event records \(0 lost\)'
	nrec=$(sed -n 's/^inflight: recorded \([0-9]*\) event records.*/\1/p' "$TMP/re")
	in_root "$root" "$d/inflight" report "$d/run.infl" --format text >"$TMP/rep" 2>&1
	check_match "$name: report: 6 probe events, the records recorded" "$(cat "$TMP/rep")" \
		"^pid [0-9]+ \\(probegen\\): 6 probe events \\(${nrec:-none} records\\), 1 owner$"
	has "$name: report, exact" "$TMP/rep" \
		"  at the end 1 owner live, 8.00 KiB in 1 buffer still tracked" \
		"  check    the replay matches the kernel's final counters"
}

# serves ROOT DIR NAME: serve on a free loopback port while probegen waits at its gate
serves() {
	local root=$1 d=$2 name=$3 sv port pg body
	: >"$root$d/sv.out"
	in_root "$root" "$d/inflight" serve --listen 127.0.0.1:0 -- "$d/probegen" script "$d/gate.txt" \
		>"$root$d/sv.out" 2>"$root$d/sv.err" &
	sv=$!
	bg_track "$sv"
	if ! wait_until 20 file_has "$root$d/sv.out" '^gated'; then
		not_ok "$name: serve started probegen" "$(cat "$root$d/sv.err")"
		kill "$sv" 2>/dev/null
		return
	fi
	port=$(sed -n 's|^inflight: serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$root$d/sv.err")
	pg=$(pgrep -f -- "^$d/probegen script $d/gate.txt" | head -n 1)
	body=$(curl -sS "http://127.0.0.1:$port/metrics")
	check_eq "$name: serve: the held buffer (huge, work)" \
		"$(metric "$body" "inflight_buffer_bytes{pid=\"$pg\",class=\"huge\",stage=\"work\"}")" 8192
	check_eq "$name: serve: alloc events" \
		"$(metric "$body" "inflight_events_total{pid=\"$pg\",probe=\"buf_alloc\"}")" 2
	kill -USR1 "$pg"
	wait_until 30 gone "$sv"
	wait "$sv"
	check_eq "$name: serve ends with the command, exit 0" "$?" 0
}

# user_runs ROOT DIR NAME: `--user nobody`: probegen runs as uid 65534, traced exactly
user_runs() {
	local root=$1 d=$2 name=$3 in pg rc
	: >"$root$d/u.out"
	in_root "$root" "$d/inflight" --user nobody -- "$d/probegen" script "$d/gate.txt" \
		>"$root$d/u.out" 2>"$root$d/u.err" &
	in=$!
	bg_track "$in"
	if ! wait_until 20 file_has "$root$d/u.out" '^gated'; then
		not_ok "$name: --user nobody started probegen" "$(cat "$root$d/u.err")"
		kill "$in" 2>/dev/null
		return
	fi
	pg=$(pgrep -f -- "^$d/probegen script $d/gate.txt" | head -n 1)
	check_eq "$name: --user nobody: probegen's uid" \
		"$(awk '/^Uid:/ { print $2 }' "/proc/$pg/status")" 65534
	kill -USR1 "$pg"
	wait "$in"
	rc=$?
	check_eq "$name: --user nobody: exit 0" "$rc" 0
	has "$name: --user nobody: exact" "$root$d/u.out" "  events: buf_alloc 2, buf_free 2, stage 3" \
		"in flight at exit: nothing"
}

# --- Debian 11 ---------------------------------------------------------------------------
if bull=$(bullseye_root); then
	check_match "the Debian 11 root has glibc 2.31" \
		"$(in_root "$bull" /lib/x86_64-linux-gnu/libc.so.6 2>&1 | head -n 1)" 'GLIBC 2\.31'
	bd=/tmp/inflight-static.$$
	trap '_prod_cleanup; rm -rf "${bull:?}$bd"' EXIT
	stage_into "$bull" "$bd"
	traces "$bull" "$bd" bullseye
	serves "$bull" "$bd" bullseye
	user_runs "$bull" "$bd" bullseye
else
	not_ok "a Debian 11 root (debootstrap bullseye into $INFLIGHT_CACHE)"
fi

# --- an empty root ------------------------------------------------------------------------
empty=$TMP/empty
stage_into "$empty" /
check_eq "the empty root: nothing but the files and the mount points" \
	"$(in_root "$empty" /inflight --version >/dev/null && ls "$empty" | tr '\n' ' ')" \
	"dev gate.txt inflight probegen proc run.txt sys "
traces "$empty" "" empty
serves "$empty" "" empty
in_root "$empty" /inflight --user nobody -- /probegen script /run.txt >/dev/null 2>"$TMP/ue"
check_eq "empty root: --user nobody without /etc/passwd: exit 2" "$?" 2
check_eq "... in one line naming the user" "$(cat "$TMP/ue")" \
	"inflight: --user 'nobody': no such user; give a user name or a numeric uid"
mkdir -p "$empty/etc"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
	>"$empty/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$empty/etc/group"
user_runs "$empty" "" "empty root with /etc/passwd"
finish
