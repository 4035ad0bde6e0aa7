#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs every test: C test programs in build/tests/ (and their sanitized builds in
# build/san/tests/) and shell tests tests/t_*.sh. Each prints TAP-style "ok"/"not ok" lines;
# a test that dies without saying so counts as one failure. Ends with "N passed, N failed".
# Usage: tests/run.sh [NAME-FILTER]
set -u
cd "$(dirname "$0")/.."
filter=${1:-}
passed=0
failed=0
log=build/test-logs
mkdir -p "$log"

run_one() {
	local name=$1
	shift
	[ -n "$filter" ] && [[ $name != *$filter* ]] && return
	local out="$log/${name//\//_}.log" start=$SECONDS rc
	timeout -k 10 "${TEST_TIMEOUT:-600}" "$@" >"$out" 2>&1
	rc=$?
	local p f
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited $rc without reporting a failure" >>"$out"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	printf '%-40s %4d passed %3d failed  %3ds\n' "$name" "$p" "$f" $((SECONDS - start))
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

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
