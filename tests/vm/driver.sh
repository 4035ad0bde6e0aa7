#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel matrix's in-guest driver: inflight's real-BPF checks on whatever kernel runs it
# (in a qemu guest booted by tests/vm/boot.sh, or directly for the host row). Sections:
#   env     BTF, tracefs, the kernel's identity
#   load    the BPF programs load and attach and count a probegen script exactly
#   tracer  build/tests/test_tracer: scripted exactness against the reference model
#   prover  the reference prover traced live (-b) and recorded (--) in the same run: the
#           recording's replay against the kernel's final counters, the live session's
#           counts, the incident's pile-up and the fix; the recording and the live summary
#           go to the host, whose independent decoder checks the recorded events against
#           both sessions' kernel counters (tests/vm/matrix.sh, check_rec.py)
#   priv    what inflight says as nobody with and without CAP_SYS_ADMIN, against what this
#           kernel's version implies (uprobes need it since v6.16 and its stable backports)
#   cuda    libcuda's memory calls on the stand-in driver, linked and dlopen'd, exact
#   ring    the flight recorder: a dump on SIGUSR1 holding what was in flight at it
#   images  an application and two libraries, the same ids in each, counted apart, exact
#   stress  (not in the default list: the matrix boots it on its own, with two vCPUs) 4 threads
#           flat out, three runs live, one sharing owners and one recorded: every hit
#           counted, none given up
# Output: the protocol on fd 3 (a copy on stdout), one line each:
#   ok - DESC | not ok - DESC (WHY) | # NOTE | time NAME SECONDS | kernel UNAME-R
#   load-failed INFLIGHT-ERROR | verifier LAST-LINE | file NAME, base64 lines, end NAME | done
# Each step runs under its own timeout, below the guest's, so a hang is named.
# Usage: driver.sh [SECTION...]   (env INFL_BIN: inflight, prover, tests/{test_tracer,probegen})
# Exits 1 when a check failed.
set -u
BIN=${INFL_BIN:-/opt/inflight}
I=$BIN/inflight
PG=$BIN/tests/probegen
W=$(mktemp -d "${TMPDIR:-/tmp}/inflight-kernel.XXXXXX")
chmod 755 "$W" # nobody must reach the copies
trap 'rm -rf "$W"' EXIT
{ true >&3; } 2>/dev/null || exec 3>/dev/null
# vm_hold_tracepoints (beside this file here and in a guest's /vm)
# shellcheck source=tests/vm/hold.sh
source "$(dirname "${BASH_SOURCE[0]}")/hold.sh"

# every line goes through here; a failed check leaves a mark for the exit status
emit() {
	printf '%s\n' "$*" >&3
	printf '%s\n' "$*"
	[[ $* == "not ok"* ]] && : >"$W/failed"
	return 0
}
ok() { emit "ok - $1"; }
not_ok() { local w=${2:-}; w=${w//$'\n'/ | }; emit "not ok - $1${w:+ ($w)}"; }
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
check_match() { if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1" "no match for /$3/ in '$(printf '%s' "$2" | head -c 300)'"; fi; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d" "failed: $*"; fi; }
note() { emit "# $*"; }
now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# send_file NAME PATH: a file for the host, base64 between markers (protocol only)
send_file() { { echo "file $1"; base64 "$2"; echo "end $1"; } >&3; }
# wait_for SECONDS FILE REGEX PID: until FILE matches, PID has gone or time is up
wait_for() {
	local end=$((SECONDS + $1))
	until grep -Eq -- "$3" "$2" 2>/dev/null; do
		[ "$SECONDS" -ge "$end" ] && return 1
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.1
	done
}

# The upstream version this kernel is built from (Debian puts it in uname -v), as a number
# MMmmmpppp for comparisons.
upstream() {
	local v
	v=$(uname -v | sed -n 's/.*Debian \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p')
	[ -n "$v" ] || v=$(uname -r | sed -n 's/^\([0-9]*\.[0-9]*\)\(\.[0-9]*\)\{0,1\}.*/\1\2/p')
	echo "$v"
}
vnum() { awk -F. '{ printf "%d%03d%04d\n", $1, $2, $3 }' <<<"$1"; }

# Does creating a uprobe need CAP_SYS_ADMIN here? Upstream ba677dbe77af (v6.16), backported
# to 5.10.240, 5.15.189, 6.1.146, 6.6.99 and 6.12.39.
uprobes_need_admin() {
	local v n series min
	v=$(upstream)
	n=$(vnum "$v")
	[ "$n" -ge "$(vnum 6.16.0)" ] && return 0
	series=${v%.*}
	case $series in
	5.10) min=5.10.240 ;; 5.15) min=5.15.189 ;; 6.1) min=6.1.146 ;; 6.6) min=6.6.99 ;;
	6.12) min=6.12.39 ;; *) return 1 ;;
	esac
	[ "$n" -ge "$(vnum $min)" ]
}

# Before 5.11 (upstream 97306be45fbe) BPF maps count against RLIMIT_MEMLOCK, which an
# unprivileged user cannot raise: the service runs with LimitMEMLOCK=infinity there.
memlock_counts() { [ "$(vnum "$(upstream)")" -lt "$(vnum 5.11.0)" ]; }

# as_nobody CAPS CMD...: CMD as nobody:nogroup with exactly CAPS (e.g. +bpf,+perfmon; "": none),
# its RLIMIT_MEMLOCK unlimited where the kernel counts BPF memory against it
as_nobody() {
	local caps=$1
	shift
	memlock_counts && ulimit -l unlimited
	if [ -n "$caps" ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="-all,$caps" \
			--ambient-caps="$caps" --bounding-set="-all,$caps" "$@"
	else
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			--bounding-set=-all "$@"
	fi
}

prepare() {
	cp "$I" "$W/inflight"
	cp "$PG" "$W/probegen"
	cp "$BIN/prover" "$W/prover"
	chmod 755 "$W"/inflight "$W"/probegen "$W"/prover
	printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' \
		>"$W/run.txt"
	chmod 644 "$W/run.txt"
}

sec_env() {
	emit "kernel $(uname -r)"
	emit "# uname -v: $(uname -v); upstream $(upstream); $(nproc) cpus;" \
		"$(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
	check "BTF at /sys/kernel/btf/vmlinux" test -s /sys/kernel/btf/vmlinux
	# libbpf creates uprobes through the uprobe PMU (perf_event_open), not tracefs
	check "uprobe PMU at /sys/bus/event_source/devices/uprobe" \
		test -s /sys/bus/event_source/devices/uprobe/type
	note "tracefs: $(grep -c tracefs /proc/mounts) mounted; kmem:rss_stat:" \
		"$(ls -d /sys/kernel/tracing/events/kmem/rss_stat 2>/dev/null || echo 'not visible')"
}

sec_load() {
	local rc out l
	out=$(timeout 120 "$W/inflight" -- "$W/probegen" script "$W/run.txt" 2>"$W/load.err")
	rc=$?
	check_eq "load: inflight -- probegen exits 0 (BPF programs loaded and attached)" "$rc" 0
	check_match "load: exact event counts" "$out" "events: buf_alloc 2, buf_free 1, stage 3$"
	check_match "load: one buffer left in flight (8 KiB)" "$out" \
		"in flight at exit: 8.00 KiB in 1 buffer, 1 owner"
	[ "$rc" = 0 ] && return
	emit "load-failed $(grep '^inflight:' "$W/load.err" | tail -n 1) (exit $rc)"
	# libbpf's log and the verifier's message, for whoever fixes the kernel side: the
	# relocations libbpf could not resolve, its failures, the end of each verifier log
	timeout 120 "$W/inflight" -v -- "$W/probegen" script "$W/run.txt" >/dev/null 2>"$W/verbose.err"
	{
		# "relo #N: <byte_off> [T] struct mm_struct.rss_stat (...)" then "relo #N: no
		# matching targets found": one line per program and field that did not resolve
		awk '/^libbpf: prog .*: relo #[0-9]+: <[a-z_]+>/ {
				k = $3 " " $4; sub(/^.*relo #[0-9]+: /, ""); what[k] = $0; next }
			/^libbpf: prog .*: relo #[0-9]+: no matching targets/ {
				k = $3 " " $4; line = "libbpf: prog " $3 " unresolved: " what[k]
				if (!seen[line]++) print line; next }
			/^libbpf: .*(failed|[Ee]rror|not supported|unsupported)/ && !seen[$0]++' \
			"$W/verbose.err" | head -n 30
		awk '/-- BEGIN PROG LOAD LOG --/ { n = 0; p = 1; print; next }
			/-- END PROG LOAD LOG --/ { s = n > 25 ? n - 25 : 0
				if (s) print "... (" s " lines)"
				for (i = s; i < n; i++) print l[i]; p = 0; next }
			p { l[n++] = $0 }' "$W/verbose.err"
	} | sed 's/^/# v: /' | while IFS= read -r l; do emit "$l"; done
	# the verifier's last word on the first program it refused
	l=$(awk '/-- BEGIN PROG LOAD LOG --/ { p = 1; next }
		/-- END PROG LOAD LOG --/ { if (last != "") { print last; exit } p = 0; next }
		p && !/^processed [0-9]+ insns/ && !/^[ \t]*$/ { last = $0 }' "$W/verbose.err")
	[ -n "$l" ] && emit "verifier $l"
	send_file verbose.log "$W/verbose.err"
}

sec_tracer() {
	local rc
	(cd "$W" && timeout 200 "$BIN/tests/test_tracer" >"$W/tracer.out" 2>"$W/tracer.err")
	rc=$?
	awk '
		/^ok [0-9]+ - .*# SKIP/ { sub(/^ok [0-9]+ - /, ""); print "not ok - tracer: " $0 " (skipped: the kernel matrix runs everything)"; n++; next }
		/^ok [0-9]+ - / { sub(/^ok [0-9]+ - /, ""); print "ok - tracer: " $0; n++; next }
		/^not ok [0-9]+ - / { sub(/^not ok [0-9]+ - /, ""); print "not ok - tracer: " $0; n++; next }
		/^1\.\.[0-9]+$/ { plan = substr($0, 4) }
		END {
			if (plan == "") print "not ok - tracer: printed its plan (it ended early)"
			else if (plan != n) print "not ok - tracer: planned " plan " checks, reported " n
			else print "ok - tracer: all " n " planned checks reported"
		}' "$W/tracer.out" | while IFS= read -r l; do emit "$l"; done
	check_eq "tracer: test_tracer exit status" "$rc" 0
}

# abc holders at the peak: partitions holding a/b/c = abc buffers / 3
abc_holders() { jq -r '.processes[0] | [.peak.stages[].classes.abc.bufs // 0] | add / 3 | floor' <<<"$1"; }

# exactness NAME JSON-PROCESS: the prover's figures are exact on every kernel, PREEMPT_RT too,
# where a uprobe handler can be preempted anywhere: with BPF atomics no hit waits for another
# (bpf/acct.bpf.h); before 5.17 a hit that finds its process's lock held is queued for its
# holder, not given up on. Sets EXACTNESS.
exactness() {
	local what=$1 p=$2 exact
	exact=$(jq -r '.exact' <<<"$p" 2>/dev/null)
	check_eq "prover: $what: exact, no anomalies" \
		"$exact $(jq -c '.anomalies | with_entries(select(.value != 0))' <<<"$p" 2>&1)" "true {}"
	EXACTNESS=$([ "$exact" = true ] && echo exact || echo bad)
}

sec_prover() {
	# the modelled GPU 10 times slower than its default: the emulated CPU's synthesis must
	# still outrun it for the incident's pile-up
	local args="--proofs 2 --pw 6 --chan-cap 1 --permit-release after-synth --gpu-rounds 3 --log-n 14 --gpu-rate 10"
	local t rc live rj out pile lp ex
	t=$(now)
	# -b on the private copy: the live session sees the same run the recording does
	"$W/inflight" --json -b "$W/prover" >"$W/live.json" 2>"$W/live.err" &
	lp=$!
	if ! wait_for 120 "$W/live.err" tracing "$lp"; then
		not_ok "prover: inflight -b attached" "$(tail -n 1 "$W/live.err")"
	fi
	# shellcheck disable=SC2086
	timeout 150 "$W/inflight" record -q -o "$W/incident.rec" -- "$W/prover" $args \
		>"$W/rec.out" 2>"$W/rec.err"
	rc=$?
	kill -INT "$lp" 2>/dev/null
	wait "$lp"
	emit "time prover-incident $(since "$t")"
	check_eq "prover: incident recorded, the prover's exit status passed on" "$rc" 0
	[ "$rc" = 0 ] || note "record: $(tail -n 2 "$W/rec.err" | tr '\n' ' ')"
	live=$(tail -n 1 "$W/live.json")
	out=$("$W/inflight" report "$W/incident.rec" 2>&1)
	rj=$("$W/inflight" report "$W/incident.rec" --format json 2>/dev/null)
	exactness recorded "$(jq -c '.processes[0]' <<<"$rj" 2>/dev/null)"
	ex=$EXACTNESS
	check_match "prover: the recording's replay equals the kernel's final counters" \
		"$(grep -E '^ +check ' <<<"$out")" "check +the replay matches the kernel's final counters"
	check_match "prover: recording lost nothing" "$out" 'lost +none'
	[ "$ex" = exact ] && check_eq "prover: recorded: 2 jobs and 20 partitions completed, all memory returned" \
		"$(jq -c '.processes[0] | [(.completed.by_kind | map_values(.done)), .at_end.bytes, .at_end.owners]' <<<"$rj")" \
		'[{"parse":2,"wait_permit":20},0,0]'
	check_eq "prover: live: one process traced" "$(jq '.processes | length' <<<"$live" 2>/dev/null)" 1
	exactness live "$(jq -c '.processes[0]' <<<"$live" 2>/dev/null)"
	ex=$EXACTNESS
	if [ "$ex" = exact ]; then
		check_eq "prover: live: nothing in flight after a clean run" \
			"$(jq -r '.processes[0].at_end | "\(.bytes) \(.bufs) \(.owners)"' <<<"$live")" "0 0 0"
		check_eq "prover: live: every owner that started is done" \
			"$(jq -r '.processes[0].owners | "\(.started) \(.done)"' <<<"$live")" "22 22"
		check_eq "prover: live: no unmatched events" \
			"$(jq -r '.processes[0] | [.unmatched.free[]?.bufs, .unmatched.stage[]?] | add // 0' <<<"$live")" 0
	fi
	check_eq "prover: the pile-up sits in chan_send (the incident's diagnosis)" \
		"$(jq -r '.processes[0].peak.stages | max_by(.bytes) | .stage' <<<"$live")" chan_send
	pile=$(abc_holders "$live")
	check "prover: after-synth: ${pile:-?} partitions hold a/b/c at the peak, above pw+cap+gw=9" \
		test "${pile:-0}" -gt 9
	# the peak is compared within one session only (the recording's own kernel counters
	# against its events, on the host): two sessions may order racing events differently
	[ -s "$W/incident.rec" ] && send_file incident.rec "$W/incident.rec"
	printf '%s\n' "$live" >"$W/live.last"
	[ -n "$live" ] && send_file live.json "$W/live.last"

	t=$(now)
	# shellcheck disable=SC2086
	timeout 150 "$W/inflight" --json -o "$W/fix.json" -- "$W/prover" \
		${args/after-synth/after-send} >/dev/null 2>"$W/fix.err"
	live=$(tail -n 1 "$W/fix.json" 2>/dev/null)
	emit "time prover-fix $(since "$t")"
	pile=$(abc_holders "$live")
	check "prover: after-send: ${pile:-?} partitions hold a/b/c at the peak, within pw+cap+gw=9" \
		test -n "$pile" -a "${pile:-99}" -le 9
	exactness fix "$(jq -c '.processes[0]' <<<"$live" 2>/dev/null)"
	ex=$EXACTNESS
	[ "$ex" = exact ] && check_eq "prover: after-send: nothing in flight at the end" \
		"$(jq -r '.processes[0].at_end.bytes' <<<"$live" 2>/dev/null)" 0
}

sec_priv() {
	local rc out multi
	if memlock_counts; then
		# what a capable but not root inflight says there with the default limit
		out=$( (ulimit -l 64 && setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all,+bpf,+perfmon,+sys_admin --ambient-caps=+bpf,+perfmon,+sys_admin \
			--bounding-set=-all,+bpf,+perfmon,+sys_admin \
			"$W/inflight" -- "$W/probegen" script "$W/run.txt") 2>"$W/p0.err")
		rc=$?
		check_eq "priv: RLIMIT_MEMLOCK 64 KiB on $(upstream) (before 5.11): exit 3" "$rc" 3
		check_match "priv: ... the line names RLIMIT_MEMLOCK and how to raise it" \
			"$(cat "$W/p0.err")" "RLIMIT_MEMLOCK.*ulimit -l unlimited"
		check_eq "priv: ... the command was not started" "$out" ""
	fi
	out=$(as_nobody +bpf,+perfmon,+sys_admin "$W/inflight" -- "$W/probegen" script "$W/run.txt" 2>"$W/p1.err")
	rc=$?
	check_eq "priv: as nobody with CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN: exit 0" "$rc" 0
	[ "$rc" = 0 ] || note "priv: $(tail -n 1 "$W/p1.err")"
	check_match "priv: ... exact event counts" "$out" "events: buf_alloc 2, buf_free 1, stage 3$"
	out=$(as_nobody "" "$W/inflight" -- "$W/probegen" script "$W/run.txt" 2>"$W/p2.err")
	check_eq "priv: no capabilities: exit 3" "$?" 3
	check_match "priv: ... names CAP_BPF and CAP_PERFMON" "$(cat "$W/p2.err")" \
		"missing CAP_BPF and CAP_PERFMON"
	check_eq "priv: ... the command was not started" "$out" ""
	out=$(as_nobody +bpf,+perfmon "$W/inflight" -- "$W/probegen" script "$W/run.txt" 2>"$W/p3.err")
	rc=$?
	note "priv: without CAP_SYS_ADMIN, upstream $(upstream): exit $rc: $(head -n 1 "$W/p3.err")"
	# the mechanism this kernel gets (attach/usdt_attach.c, said by -v): uprobe_multi links
	# need no CAP_SYS_ADMIN; perf-event uprobes do where ba677dbe77af is (docs/attach.md)
	multi=$("$W/inflight" -v -- "$W/probegen" script "$W/run.txt" 2>&1 |
		grep -c 'sites attached by uprobe_multi')
	if [ "$multi" != 0 ]; then
		check_eq "priv: CAP_BPF+CAP_PERFMON suffice on $(upstream) (uprobe_multi links): exit 0" \
			"$rc" 0
		check_match "priv: ... exact event counts" "$out" "events: buf_alloc 2, buf_free 1, stage 3$"
	elif uprobes_need_admin; then
		check_eq "priv: uprobes need CAP_SYS_ADMIN on $(upstream) (ba677dbe77af): without it, exit 3" "$rc" 3
		check_match "priv: ... the line says CAP_SYS_ADMIN is missing" "$(cat "$W/p3.err")" \
			"missing CAP_SYS_ADMIN"
		check_eq "priv: ... one line" "$(wc -l <"$W/p3.err")" 1
	else
		check_eq "priv: CAP_BPF+CAP_PERFMON suffice on $(upstream) (before ba677dbe77af): exit 0" "$rc" 0
		check_match "priv: ... exact event counts" "$out" "events: buf_alloc 2, buf_free 1, stage 3$"
	fi
}

# source_expect DIR: the known answers of tests/DIR/expect.sh, where the guest's image put them
# (vm/DIR_expect.sh) or in this tree
source_expect() {
	local f
	for f in "$(dirname "$0")/$1_expect.sh" "$(dirname "$0")/../$1/expect.sh"; do
		[ -f "$f" ] && source "$f" && return
	done
}

# libcuda's memory calls on this kernel: the stand-in driver, linked and dlopen'd, every
# number as tests/t_cuda.sh asserts them (tests/cuda/expect.sh)
sec_cuda() {
	local got rc
	source_expect cuda
	if ! declare -F proj >/dev/null; then
		not_ok "cuda: the expected numbers (tests/cuda/expect.sh) are here"
		return
	fi
	"$I" --json -o "$W/cuda.json" -- "$BIN/tests/cuda/cuda_workers" >"$W/cuda.out" 2>&1
	rc=$?
	got=$(proj "$W/cuda.json")
	check_eq "cuda: linked libcuda: every call counted per owner and stage, exactly" \
		"$rc $got" "0 $want_workers"
	"$I" --json -o "$W/cudadl.json" -- "$BIN/tests/cuda/cuda_workers_dlopen" \
		"$BIN/tests/cuda/libcuda.so.1" >"$W/cudadl.out" 2>&1
	rc=$?
	got=$(proj "$W/cudadl.json")
	check_eq "cuda: libcuda loaded with dlopen(): the same numbers" "$rc $got" "0 $want_workers"
}

# Several images in one process on this kernel (kernels without BPF cookies find a site's
# spec, and so its image's slots, by its file and offset): an application with two
# libraries, the same ids in all three, each counted apart under its own names, exactly as
# tests/t_attach_images.sh asserts them (tests/images/expect.sh)
sec_images() {
	local got rc row lib2 d=$BIN/tests/images
	IMAGES_INFLIGHT_H=$(dirname "$0")/inflight.h
	[ -f "$IMAGES_INFLIGHT_H" ] || IMAGES_INFLIGHT_H=$(dirname "$0")/../../bpf/inflight.h
	source_expect images
	if ! declare -F images_expect >/dev/null; then
		not_ok "images: the expected numbers (tests/images/expect.sh) are here"
		return
	fi
	for row in two-libs plain; do
		lib2=libaux.so
		[ "$row" = plain ] && lib2=libplain.so
		"$I" --json -o "$W/img-$row.json" -- "$d/$row/app" --items 5 --lib2 "$d/$row/$lib2" \
			>"$W/img-$row.out" 2>&1
		rc=$?
		got=$(grep '"type":"summary"' "$W/img-$row.json" | images_project)
		check_eq "images: $row: each image's classes and stages apart, exactly" "$rc $got" \
			"0 $(images_expect "$row" 5)"
	done
}

# child_of PID: a child of PID (the guest has no pgrep): field 4 of /proc/N/stat is its parent
child_of() {
	local d
	for d in /proc/[0-9]*; do
		[ "$(sed 's/^.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f2)" = "$1" ] && echo "${d#/proc/}" && return
	done
}

# The flight recorder on this kernel: a ring, SIGUSR1 while the program holds its buffers,
# the dump written, and its replay exact with what was in flight then
sec_ring() {
	local rec pg dump
	printf 'stage 5 0\nalloc 0x10 1 1000 5\nalloc 0x11 0 500 5\ngate\nfree 0x10 1 1000\n' \
		>"$W/ring.txt"
	mkdir -p "$W/dumps"
	"$W/inflight" record --ring 30s --dump-after 0 --dump-dir "$W/dumps" -- "$W/probegen" \
		script "$W/ring.txt" >"$W/ring.out" 2>"$W/ring.err" &
	rec=$!
	if ! wait_for 120 "$W/ring.out" '^gated' "$rec"; then
		not_ok "ring: the recorder started and the program reached its gate" \
			"$(tail -n 3 "$W/ring.err")"
		kill -INT "$rec" 2>/dev/null
		wait "$rec"
		return
	fi
	kill -USR1 "$rec"
	wait_for 120 "$W/ring.err" 'flight recorder: wrote ' "$rec"
	pg=$(child_of "$rec")
	if [ -n "$pg" ]; then
		kill -USR1 "$pg"
	else
		kill -INT "$rec" # (the check below says it)
	fi
	wait "$rec"
	check_eq "ring: the recorder ends with its command" "$?" 0
	dump=$(ls "$W"/dumps/*-signal.infl 2>/dev/null | head -n 1)
	check_eq "ring: one dump, on SIGUSR1, holding what was in flight at it, exact" \
		"$(ls "$W"/dumps | wc -l) $("$W/inflight" report "$dump" -f json 2>/dev/null |
			jq -c '[.recording.dump.trigger, .processes[0].at_end.bytes,
				.processes[0].at_end.bufs, .processes[0].exact]')" '1 ["signal",1500,2,true]'
	# (its self-check against the kernel's final counters: on 5.10 the dump ends without
	# them, "recording cut short", still to be found; said, not asserted, until it is)
	note "ring: the dump's self-check: $("$W/inflight" report "$dump" 2>&1 |
		sed -n 's/^ *check *//p')"
}

# Processes contending at once under one session, 4 threads each, flat out: 12 must all be
# exact where BPF has atomics (5.17+: no lock, no queue); before 5.17 the queues behind the
# locks are drawn from a pool of 16 queue maps, and 8 processes (half of it: room for claims
# in flight) must.
stress_procs() {
	local cpus=$1 procs=12 n=1000 v job tracer rel=$(uname -r)
	local major=${rel%%.*} minor=${rel#*.}
	minor=${minor%%.*}
	[ "$major" -lt 5 ] || { [ "$major" = 5 ] && [ "$minor" -lt 17 ]; } && procs=8
	cp "$W/probegen" "$W/probegen-procs"
	"$W/inflight" --no-rss --json -o "$W/procs.json" -b "$W/probegen-procs" >/dev/null \
		2>"$W/procs.err" &
	tracer=$!
	for _ in $(seq 3000); do grep -q "tracing" "$W/procs.err" && break; sleep 0.01; done
	for _ in $(seq "$procs"); do
		timeout 200 "$W/probegen-procs" hammer 4 "$n" >/dev/null 2>&1 &
	done
	for job in $(jobs -p); do [ "$job" = "$tracer" ] || wait "$job"; done
	kill -INT "$tracer"
	wait "$tracer"
	v=$(jq -c --argjson want $((5 * 4 * n)) -s '[.[-1].processes[] |
		select((.events | add) != $want or .anomalies.lock_timeouts != 0 or
		       .anomalies.contention_lost != 0 or .anomalies.pool_waits != 0 or
		       (.exact | not)) |
		{pid, events: (.events | add), anomalies: (.anomalies | with_entries(select(.value != 0)))}]
		| length as $bad | "\($bad) of '"$procs"'" + (if $bad > 0 then " \(.[0:3])" else "" end)' \
		"$W/procs.json" 2>&1)
	check_eq "stress: $cpus vCPUs, $procs processes of 4 threads under one session: every hit counted, no wait for the pool, none given up, exact" \
		"$v" "\"0 of $procs\""
	v=$(jq -s '.[-1].processes | length' "$W/procs.json" 2>&1)
	check_eq "stress: $cpus vCPUs, $procs processes under one session: all of them seen" "$v" "$procs"
}

# The stress row (the matrix boots it with two vCPUs, 4 threads to them): probegen's hammer
# fires the contract flat out, 100,000 hits a run, where a thread is preempted in the middle
# of a hit (PREEMPT_RT), or its vCPU stalled by the loaded host. Every run must count every
# hit, give up none and be exact; one more run, of 10,000 hits, is recorded and sent back for the
# host's independent decoder to replay its peak (tests/vm/matrix.sh: vm_check_stress). Not
# more: the guest's serial line is slow, and 6.1-rt with two vCPUs disabled the line's
# interrupt ("irq 3: nobody cared") while sending 3 MiB of base64, and once 600 KiB
# (tests/vm/boot.sh: noirqdebug). Without RSS (--no-rss): what this row tests is contention,
# and 6.12-rt with two emulated vCPUs once took a fault in trace_rss_stat for an Oops
# ("int3"), the kernel patching the tracepoint's call site as a session attached while
# another CPU ran it, and panicked. The session's other tracepoints are held for the same
# reason (tests/vm/hold.sh).
sec_stress() {
	local r v n=5000 cpus
	cpus=$(grep -c '^processor' /proc/cpuinfo)
	emit "kernel $(uname -r)"
	note "stress: $cpus vCPUs, 4 threads"
	# guests only (the host row's CPUs are real): there it must hold all 8
	[ -n "${INFL_GUEST:-}" ] &&
		check_eq "stress: two probes held on each tracepoint a session attaches" \
			"$(vm_hold_tracepoints)" 8
	for r in 1 2 3; do
		timeout 240 "$W/inflight" --no-rss --json -o "$W/stress.json" -- "$W/probegen" hammer 4 "$n" \
			>/dev/null 2>"$W/stress.err"
		v=$(tail -n 1 "$W/stress.json" 2>/dev/null | jq -c '.processes[0] |
			[(.events | add), .anomalies.lock_timeouts + .anomalies.contention_lost, .exact,
			 .at_end.bytes, .owners.done]')
		check_eq "stress: $cpus vCPUs, 4 threads, run $r: every hit counted, none given up, exact" \
			"$v" "[100000,0,true,0,20000]"
		[ "$v" = "[100000,0,true,0,20000]" ] ||
			note "stress: run $r: anomalies $(tail -n 1 "$W/stress.json" 2>/dev/null |
				jq -c '.processes[0].anomalies | with_entries(select(.value != 0))')"
	done
	# the threads sharing two owners that retire and start again under each other's feet
	timeout 240 "$W/inflight" --no-rss --json -o "$W/stress.json" -- "$W/probegen" churn 4 "$n" \
		>/dev/null 2>"$W/stress.err"
	v=$(tail -n 1 "$W/stress.json" 2>/dev/null | jq -c '.processes[0] |
		[(.events | add), .anomalies.lock_timeouts + .anomalies.contention_lost, .exact,
		 .at_end.bytes, .at_end.owners]')
	check_eq "stress: $cpus vCPUs, 4 threads sharing 2 owners: every hit counted, exact, nothing left" \
		"$v" "[100000,0,true,0,0]"
	[ "$v" = "[100000,0,true,0,0]" ] ||
		note "stress: sharing 2 owners: anomalies $(tail -n 1 "$W/stress.json" 2>/dev/null |
			jq -c '.processes[0].anomalies | with_entries(select(.value != 0))')"
	stress_procs "$cpus"
	timeout 240 "$W/inflight" record -q --no-rss -o "$W/stress.rec" -- "$W/probegen" hammer 4 500 \
		>/dev/null 2>"$W/stress.err"
	v=$("$W/inflight" report "$W/stress.rec" --format json 2>/dev/null | jq -c '.processes[0] |
		[(.events | add), .anomalies.lock_timeouts + .anomalies.contention_lost, .exact]')
	check_eq "stress: $cpus vCPUs, 4 threads, recorded: every hit counted, none given up, exact" \
		"$v" "[10000,0,true]"
	[ -s "$W/stress.rec" ] && send_file stress.rec "$W/stress.rec"
}

t_all=$(now)
t_prep=$t_all
# in a guest, its uptime when the driver starts is the boot's cost
[ -n "${INFL_GUEST:-}" ] && emit "time boot $(cut -d' ' -f1 /proc/uptime)"
prepare
emit "time prepare $(since "$t_prep")"
sections=${*:-env load tracer prover priv cuda ring images}
for s in $sections; do
	case $s in
	env | load | tracer | prover | priv | cuda | ring | images | stress)
		t=$(now)
		"sec_$s"
		emit "time $s $(since "$t")"
		;;
	*) not_ok "driver: section '$s'" "unknown: use env load tracer prover priv cuda ring images stress" ;;
	esac
done
emit "time driver $(since "$t_all")"
emit "done"
[ ! -e "$W/failed" ]
