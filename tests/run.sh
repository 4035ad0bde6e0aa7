#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs every test: C test programs in build/tests/ (and their sanitized builds in
# build/san/tests/) and shell tests tests/t_*.sh. Each prints TAP lines: "ok N - what",
# "not ok N - what", "ok N - what # SKIP why", and its plan "1..N" (or "1..0 # SKIP why" when
# nothing of it can run here). A file fails when it exits non-zero, prints no plan (it died
# before the end) or prints a number of results other than its plan. Skips are counted and
# shown as skipped, never as passed. Ends with "N passed, N failed, N skipped".
# Usage: tests/run.sh [NAME-FILTER]
set -u
cd "$(dirname "$0")/.."
filter=${1:-}
passed=0
failed=0
skipped=0
log=build/test-logs
mkdir -p "$log"

run_one() {
	local name=$1
	shift
	[ -n "$filter" ] && [[ $name != *$filter* ]] && return
	local out="$log/${name//\//_}.log" start=$SECONDS rc
	timeout -k 10 "${TEST_TIMEOUT:-600}" "$@" >"$out" 2>&1
	rc=$?
	local p f s n plan
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$out")
	p=$(($(grep -c '^ok ' "$out") - s))
	f=$(grep -c '^not ok ' "$out")
	n=$((p + f + s))
	plan=$(grep -E '^1\.\.[0-9]+' "$out" | tail -n 1)
	if [[ $plan == "1..0 # SKIP"* ]] && [ "$n" -eq 0 ]; then
		s=1
		printf '%-40s skipped: %s\n' "$name" "${plan#1..0 # SKIP }"
		skipped=$((skipped + s))
		return
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=$((f + 1))
		echo "not ok - $name exited $rc without reporting a failure" >>"$out"
	elif [ -z "$plan" ]; then
		f=$((f + 1))
		echo "not ok - $name printed no plan: it ended before its last check" >>"$out"
	elif [ "${plan#1..}" != "$n" ]; then
		f=$((f + 1))
		echo "not ok - $name planned ${plan#1..} checks and reported $n" >>"$out"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	printf '%-40s %4d passed %3d failed %3d skipped  %3ds\n' "$name" "$p" "$f" "$s" \
		$((SECONDS - start))
	if [ "$f" -ne 0 ]; then
		grep '^not ok' "$out" | sed 's/^/    /'
		tail -n 20 "$out" | sed 's/^/    | /'
	fi
}

for t in build/tests/test_*; do
	[ -x "$t" ] && run_one "${t#build/tests/}" "$t"
done
for t in build/san/tests/test_*; do
	[ -x "$t" ] && run_one "san/${t#build/san/tests/}" "$t"
done
for t in tests/t_*.sh; do
	[ -f "$t" ] && run_one "${t#tests/}" bash "$t"
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
