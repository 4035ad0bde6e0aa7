#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A real viewer opens inflight's Chrome trace: speedscope (the npm package's own page) in
# headless Chromium through playwright-core. The packages are installed from the lock file
# tests/viewer/package-lock.json into build/viewer (npm ci). The trace of the scripted
# recording (tests/record/scenario.h) must load without error as one profile per stage
# lane, each weighing the time that stage had owners in it: known answers.
source "$(dirname "$0")/lib.sh"
V=$ROOT/build/viewer
if ! command -v npm >/dev/null || [ ! -x /usr/bin/chromium ]; then
	not_ok "npm and /usr/bin/chromium are installed" "scripts/install-deps.sh test"
	finish
fi
mkdir -p "$V"
if ! cmp -s "$ROOT/tests/viewer/package-lock.json" "$V/package-lock.json" ||
	[ ! -d "$V/node_modules/speedscope" ]; then
	cp "$ROOT/tests/viewer/package.json" "$ROOT/tests/viewer/package-lock.json" "$V/"
	npm ci --prefix "$V" --no-audit --no-fund >"$TMP/npm.log" 2>&1 ||
		{ not_ok "npm ci of the viewer packages" "$(tail -n 5 "$TMP/npm.log")"; finish; }
fi
ok "speedscope and playwright-core installed from the lock file"
"$BUILD/tests/rec_synth" "$TMP/s.rec"
"$BUILD/inflight" report "$TMP/s.rec" --format chrome -o "$TMP/scenario.trace.json" 2>/dev/null
out=$(TMPDIR=$TMP timeout 120 node "$ROOT/tests/viewer/speedscope_load.mjs" "$V/node_modules" \
	"$TMP/scenario.trace.json" 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
field() { printf '%s' "$out" | python3 -c "import json,sys; d=json.loads(sys.stdin.read().splitlines()[-1]); print($1)"; }
check_eq "speedscope loaded the trace without an error" "$(field 'd["error"]')" None
check_eq "speedscope names the page after the file" "$(field 'd["title"]')" \
	"scenario.trace.json - speedscope"
check_eq "speedscope shows one profile per stage lane" "$(field 'len(d["profiles"])')" 7
check_match "... named by process and lane" "$(field '"|".join(d["profiles"])')" \
	'prover \(pid 4242\), stage chan_send \(tid 103\)'
# the time each stage held at least one owner: parse 10-420 ms, wait_permit 20-30 and
# 50-60, synth 30-150, chan_send 100-320 (tests/record/scenario.h)
for w in "stage parse (tid 100)	410.00ms" "stage wait_permit (tid 101)	20.00ms" \
	"stage synth (tid 102)	120.00ms" "stage chan_send (tid 103)	220.00ms"; do
	check_match "speedscope weighs ${w%%	*}: ${w##*	}" "$(field 'd["body"]')" "${w//(/\\(}"
done
# folded stacks: speedscope reads them too
"$BUILD/inflight" report "$TMP/s.rec" --format folded -o "$TMP/scenario.folded" 2>/dev/null
out=$(TMPDIR=$TMP timeout 120 node "$ROOT/tests/viewer/speedscope_load.mjs" "$V/node_modules" \
	"$TMP/scenario.folded" 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
check_eq "speedscope loads the folded stacks too" "$(field 'd["error"]') $(field 'd["title"]')" \
	"None scenario.folded - speedscope"
finish
