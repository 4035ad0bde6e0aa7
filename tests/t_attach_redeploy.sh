#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# -b PATH across redeploys (attach/redeploy.c), in trace, record and serve: a process of the
# old build, started before and held across the redeploy, and one of the new build (another
# compile of the example: other offsets), put in place with `mv new PATH`, must both be
# counted exactly (tests/programs/expect.sh), the change said on stderr; a replacement that
# carries no contract, and a rewrite of the file in place, must be said too. Needs root.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/programs/expect.sh"
INFLIGHT=$BUILD/inflight
P=$BUILD/tests/programs
needs_root
command -v jq >/dev/null || skip_all "needs jq"
command -v curl >/dev/null || skip_all "needs curl"
for f in "$P/c-bfd-O2/example" "$P/c-bfd-O0/example"; do
	[ -x "$f" ] || { not_ok "built: $f" "run make tests"; finish; }
done

wait_line() { # FILE REGEX: up to 30 s
	for _ in $(seq 3000); do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done
	return 1
}

# One redeploy under MODE (trace|record|serve): the old build's process holds its round 2
# across it; the new build's runs after. Leaves the tool's stderr in $TMP/MODE.err.
redeploy() {
	local mode=$1 app=$TMP/$1/app ipid opid fd port=$((20000 + RANDOM % 20000))
	mkdir -p "$TMP/$mode"
	cp "$P/c-bfd-O2/example" "$app"
	case $mode in
	trace) "$INFLIGHT" --json -b "$app" >"$TMP/$mode.out" 2>"$TMP/$mode.err" & ;;
	record) "$INFLIGHT" record -o "$TMP/$mode.infl" -b "$app" >"$TMP/$mode.out" \
		2>"$TMP/$mode.err" & ;;
	serve) "$INFLIGHT" serve --listen "127.0.0.1:$port" -b "$app" >"$TMP/$mode.out" \
		2>"$TMP/$mode.err" & ;;
	esac
	ipid=$!
	wait_line "$TMP/$mode.err" '^inflight: (tracing|recording|serving)'
	mkfifo "$TMP/$mode/in"
	"$app" --items 6 --hold-round 2 <"$TMP/$mode/in" >"$TMP/$mode/old" 2>&1 &
	opid=$!
	exec {fd}>"$TMP/$mode/in"
	wait_line "$TMP/$mode/old" '^holding$'
	cp "$P/c-bfd-O0/example" "$app.new"
	mv "$app.new" "$app"
	wait_line "$TMP/$mode.err" 'was replaced'
	"$app" --items 8 >"$TMP/$mode/new" 2>&1
	echo >&"$fd"
	exec {fd}>&-
	wait "$opid"
	check_eq "$mode: both builds ran to their end" \
		"$(tail -1 "$TMP/$mode/old") / $(cat "$TMP/$mode/new")" \
		"$(expect_output 6) / $(expect_output 8)"
	[ "$mode" = serve ] && curl -s "http://127.0.0.1:$port/metrics" >"$TMP/$mode.prom"
	kill -INT "$ipid"
	wait "$ipid"
	check_eq "$mode: exit 0 after Ctrl-C" "$?" 0
	check_match "$mode: the redeploy is said, once" \
		"$(grep -c 'was replaced' "$TMP/$mode.err") $(grep 'was replaced' "$TMP/$mode.err")" \
		"^1 inflight: $app was replaced \(inode [0-9]+\): attached to the new binary \(3 sites\); processes of the old one stay traced$"
	wait_detached
}

redeploy trace
check_eq "trace: the old build's process and the new one's, each counted exactly" \
	"$(grep '"type":"summary"' "$TMP/trace.out" | project)" \
	"$(jq -cS -n --argjson a "$(expect_procs full 6 1 0 0)" --argjson b "$(expect_procs full 8 1 0 0)" \
		'$a + $b | sort_by(tojson)')"

redeploy record
check_eq "record: two processes in the recording, exact, replayed without a mismatch" \
	"$("$INFLIGHT" report "$TMP/record.infl" --format json |
		jq -c '[.processes[] | {exact, m: .check.mismatches}]')" \
	'[{"exact":true,"m":0},{"exact":true,"m":0}]'

redeploy serve
check_eq "serve: both processes' events exported" \
	"$(grep -E '^inflight_events_total\{' "$TMP/serve.prom" | sed -E 's/pid="[0-9]+",//' |
		sort | uniq -c | awk '{print $1, $2, $3}' | tr '\n' ' ')" \
	"1 inflight_events_total{probe=\"buf_alloc\"} 19 1 inflight_events_total{probe=\"buf_alloc\"} 25 1 inflight_events_total{probe=\"buf_free\"} 19 1 inflight_events_total{probe=\"buf_free\"} 25 1 inflight_events_total{probe=\"stage\"} 24 1 inflight_events_total{probe=\"stage\"} 32 "

# a replacement without the contract, and a rewrite in place: said, the tool runs on
app=$TMP/other/app
mkdir -p "$TMP/other"
cp "$P/c-bfd-O2/example" "$app"
"$INFLIGHT" -b "$app" >"$TMP/other.out" 2>"$TMP/other.err" &
ipid=$!
wait_line "$TMP/other.err" '^inflight: tracing'
cp /bin/true "$app.new"
mv "$app.new" "$app"
wait_line "$TMP/other.err" 'replaced by a binary'
cp "$P/c-bfd-O2/example" "$TMP/other/orig"
cat "$TMP/other/orig" >"$app" # the /bin/true copy's inode rewritten: not ours, said nothing
mv "$TMP/other/orig" "$app"   # the contract back, a new inode: attached
wait_line "$TMP/other.err" 'attached to the new binary'
cat "$P/c-bfd-O0/example" >"$app" # the attached inode rewritten in place
wait_line "$TMP/other.err" 'rewritten in place'
kill -INT "$ipid"
wait "$ipid"
check_eq "a replacement without the contract is said, and tracing goes on (exit 0)" \
	"$? $(grep -c "^inflight: warning: $app was replaced by a binary inflight cannot trace: has no prover:buf_alloc/buf_free/stage USDT probes; processes started from it are not traced$" "$TMP/other.err")" \
	"0 1"
check_eq "... the contract back (a new file) is attached again" \
	"$(grep -c "^inflight: $app was replaced (inode [0-9]*): attached to the new binary (3 sites)" "$TMP/other.err")" 1
check_eq "... a rewrite of the attached file in place is said" \
	"$(grep -c "^inflight: warning: $app was rewritten in place (same inode): its probes may have moved; restart inflight to trace the new build$" "$TMP/other.err")" 1
wait_detached
finish
