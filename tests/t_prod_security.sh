#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Security: the BPF programs only read (every helper they call is on a
# read-only allow-list; never bpf_probe_write_user, id 36), recordings are created without
# following a symlink and without group or world write whatever the umask, and the loader
# built with ASan and UBSan traces, records, reports, lists and serves cleanly. (Loopback by
# default: t_prod_serve.sh. Fuzz targets: test_fuzz_* and the recording's.)
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/production/lib_prod.sh"

# --- the BPF object calls only helpers that read -------------------------------------------
obj=$BUILD/bpf/inflight.bpf.o
check "the CO-RE object is built" test -s "$obj"
dis=$(llvm-objdump -d "$obj")
calls=$(grep -cE '\bcall\b' <<<"$dis")
# a call's second byte holds its src_reg: 0 is a helper (its id after `call`), 1 is a call of a
# subprogram of this object (BPF_PSEUDO_CALL: apply_op, proc_first_hit_cas, whose code is in
# this disassembly and audited with the rest, among them the global functions of the queue
# and its drains; the immediate is an offset or -1 before relocation), 2 would be a kfunc
helper_lines=$(grep -E '\s85 00 00 00 [0-9a-f ]{11}\s+call [0-9]+$' <<<"$dis")
helpers=$(grep -oE 'call [0-9]+$' <<<"$helper_lines" | awk '{ print $2 }' | sort -n | uniq | tr '\n' ' ')
check_eq "every call is a helper call or one of this object's subprograms (no kfuncs)" \
	"$(($(grep -c . <<<"$helper_lines") + $(grep -cE '\s85 10 00 00 [0-9a-f ]{11}\s+call -?[0-9]+$' <<<"$dis")))" "$calls"
# 1-3 map lookup/update/delete (our maps), 5 ktime_get_ns, 8 get_smp_processor_id (the
# CPU's event ring), 14 get_current_pid_tgid,
# 112/113 probe_read_user/kernel, 131-133 ringbuf reserve/submit/discard,
# 35/158 get_current_task(_btf), 130 ringbuf_output (a record copied into the ring),
# 134 ringbuf_query (how full the ring is), 174 get_attach_cookie (USDT specs), 181 loop,
# 12 tail_call (before 5.17 a hit's wait and the queue's drain go on in lock_wait_more and
# map_combine, our own programs, the only ones in our only program array), 87/88
# map_push_elem/map_pop_elem (before 5.17 the queue behind the lock is a queue map of ours)
allowed=" 1 2 3 5 8 12 14 35 87 88 112 113 130 131 132 133 134 158 174 181 "
bad=""
for h in $helpers; do
	[[ $allowed == *" $h "* ]] || bad="$bad $h"
done
check_eq "helpers used ($helpers) are all read-only or map helpers" "$bad" ""
check "no bpf_probe_write_user (helper 36)" test "$(grep -cE '\bcall 36$' <<<"$helper_lines")" = 0
check "no bpf_override_return, bpf_send_signal(_thread) (58, 109, 117)" \
	test "$(grep -cE '\bcall (58|109|117)$' <<<"$helper_lines")" = 0
check "the loader's skeleton embeds this object (made from it, not older)" \
	test ! "$BUILD/bpf/inflight.skel.h" -ot "$obj" -a \
	"$(grep -c 'inflight_bpf__elf_bytes' "$BUILD/bpf/inflight.skel.h")" -gt 0

# --- recordings: no symlink followed, never group/world writable ------------------------------
copy_bins inflight probegen
printf 'stage 1 0\nalloc 16 1 4096 1\nfree 16 1 4096\n' >"$TMP/r.txt"
rec() { "$TMP/inflight" record -q "$@" -- "$TMP/probegen" script "$TMP/r.txt" >/dev/null 2>"$TMP/rec.err"; }
echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/link"
rec -o "$TMP/link"
check_eq "-o SYMLINK: refused (exit 9)" "$?" 9
check_eq "-o SYMLINK: its target untouched" "$(cat "$TMP/victim")" precious
rec --force -o "$TMP/link"
check_eq "-o SYMLINK --force: the target still untouched" "$(cat "$TMP/victim")" precious
check "-o SYMLINK --force: the link itself replaced by a regular file" \
	test ! -L "$TMP/link" -a -f "$TMP/link"
ln -s "$TMP/created-through-link" "$TMP/dangling"
rec -o "$TMP/dangling"
check_eq "-o DANGLING-SYMLINK: refused (exit 9)" "$?" 9
check "-o DANGLING-SYMLINK: nothing created at its target" test ! -e "$TMP/created-through-link"
rec -o "$TMP/victim"
check_eq "-o EXISTING without --force: refused (exit 9)" "$?" 9
check_eq "-o EXISTING: untouched" "$(cat "$TMP/victim")" precious
(umask 000 && "$TMP/inflight" record -o "$TMP/new.rec" -- "$TMP/probegen" script "$TMP/r.txt" \
	>/dev/null 2>"$TMP/new.err")
check_eq "umask 000: the recording is created" "$?" 0
check_eq "umask 000: mode 640 (no group or world write)" "$(stat -c %a "$TMP/new.rec")" 640
check "the recording reads back" "$TMP/inflight" report "$TMP/new.rec" -o "$TMP/new.txt"
n=$(grep -o 'recorded [0-9]* event records' "$TMP/new.err" | awk '{ print $2 }')
check_match "... with the records the recorder wrote ($n)" "$(cat "$TMP/new.txt")" \
	"pid [0-9]+ \(probegen\): [0-9]+ probe events? \($n records\), 1 owner$"
chmod 666 "$TMP/new.rec"
(umask 000 && rec --force -o "$TMP/new.rec")
check_eq "--force over a 666 file: a fresh file, mode 640" "$(stat -c %a "$TMP/new.rec")" 640

# --- the sanitized loader, for real (the suite builds it: make SAN=1 all) ----------------------
san=$ROOT/build/san/inflight
if [ ! -x "$san" ]; then
	not_ok "build/san/inflight exists" "run make SAN=1 all (make test does)"
else
	cp "$san" "$TMP/san-inflight"
	export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	cp "$EXPORTER_STATE" "$TMP/state.txt"
	printf 'stage 1 0\nalloc 16 1 4096 1\nalloc 17 2 8192 1\nstage 1 1\nfree 16 1 4096\nstage 1 4\n' >"$TMP/run.txt"
	out=$("$TMP/san-inflight" -- "$TMP/probegen" script "$TMP/run.txt" 2>"$TMP/san1.err")
	check_eq "ASan/UBSan loader: trace exits 0" "$?" 0
	check_match "ASan/UBSan loader: exact counts" "$out" "events: buf_alloc 2, buf_free 1, stage 3$"
	"$TMP/san-inflight" --json -i 10ms -o "$TMP/san2.out" -- "$TMP/probegen" storm 20000 \
		2>"$TMP/san2.err"
	check_eq "ASan/UBSan loader: timeline and JSON summary of a storm" "$?" 0
	"$TMP/san-inflight" record -q -o "$TMP/san.rec" -- "$TMP/probegen" script "$TMP/run.txt" 2>"$TMP/san3.err"
	check_eq "ASan/UBSan loader: record" "$?" 0
	failed=""
	for f in text csv json chrome folded svg; do
		"$TMP/san-inflight" report --format "$f" -o "$TMP/san.$f" "$TMP/san.rec" 2>>"$TMP/san4.err" ||
			failed="$failed $f"
		[ -s "$TMP/san.$f" ] || failed="$failed $f(empty)"
	done
	check_eq "ASan/UBSan loader: report in every format" "$failed" ""
	"$TMP/san-inflight" list "$TMP/probegen" >/dev/null 2>"$TMP/san5.err"
	check_eq "ASan/UBSan loader: list" "$?" 0
	netns_up || not_ok "a private network namespace"
	"${IN_NS[@]}" "$TMP/san-inflight" serve -- "$TMP/probegen" script "$TMP/state.txt" \
		>"$TMP/san6.out" 2>"$TMP/san6.err" &
	sv=$!
	bg_track "$sv"
	wait_until 20 file_has "$TMP/san6.out" '^gated'
	pg=$(pgrep -P "$sv" | head -n 1)
	body=$(in_ns curl -s -H 'Accept: application/openmetrics-text' http://127.0.0.1:9464/metrics)
	check_eq "ASan/UBSan loader: serve answers a scrape exactly" \
		"$(metric "$body" "inflight_buffers{pid=\"$pg\",class=\"big\",stage=\"wait\"}")" 2
	in_ns curl -s -o /dev/null http://127.0.0.1:9464/nope
	kill -USR1 "$pg"
	wait "$sv"
	check_eq "ASan/UBSan loader: serve ends cleanly with its command" "$?" 0
	check_eq "no sanitizer report anywhere" \
		"$(cat "$TMP"/san*.err | grep -cE 'AddressSanitizer|LeakSanitizer|runtime error')" 0
fi
finish
