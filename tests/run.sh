#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs every test: C test programs in build/tests/ (and their sanitized builds in
# build/san/tests/) and shell tests tests/t_*.sh (a few of them again against the sanitized
# build). Each prints TAP lines: "ok N - what",
# "not ok N - what", "ok N - what # SKIP why", and its plan "1..N" (or "1..0 # SKIP why" when
# nothing of it can run here). A file fails when it exits non-zero, prints no plan (it died
# before the end) or prints a number of results other than its plan. Skips are counted and
# shown as skipped, never as passed. The C tests are the ones the build lists in
# build/tests/suite.list (and build/san/tests/suite.list); a listed test that is missing, or
# a missing list, is a failure. Ends with "N passed, N failed, N skipped".
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
	local limit=${TEST_TIMEOUT:-600}
	# the kernel matrix boots eleven emulated guests, two at a time: it has a budget of its own
	[ "$name" = t_kernels.sh ] && limit=${TEST_TIMEOUT_KERNELS:-1500}
	timeout -k 10 "$limit" "$@" >"$out" 2>&1
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

# A check that the suite itself is whole: counted as one failure, with its reason.
suite_broken() {
	printf '%-40s %4d passed %3d failed %3d skipped\n    not ok - %s\n' "$1" 0 1 0 "$2"
	failed=$((failed + 1))
}

# The C tests of one build, as its suite.list names them (tests/build.mk): a test that is
# listed and missing fails, a stale binary that the build no longer makes is not run.
run_built() {
	local dir=$1 prefix=$2 list=$1/suite.list name
	if [ ! -s "$list" ]; then
		[ -n "$filter" ] && return
		suite_broken "${prefix}suite.list" "$list is missing or empty: run make tests${prefix:+ SAN=1}"
		return
	fi
	while read -r name; do
		[ -n "$filter" ] && [[ ${prefix}$name != *$filter* ]] && continue
		if [ -x "$dir/$name" ]; then
			run_one "${prefix}$name" "$dir/$name"
		else
			suite_broken "${prefix}$name" "$list names $name, but $dir/$name was not built"
		fi
	done <"$list"
}

run_built build/tests ""
run_built build/san/tests san/
shell_tests=(tests/t_*.sh)
[ -f "${shell_tests[0]}" ] || suite_broken "tests/t_*.sh" "no shell test found in tests/"
for t in "${shell_tests[@]}"; do
	[ -f "$t" ] && run_one "${t#tests/}" bash "$t"
done
# shell tests that drive the loader through its options, errors, names and recordings, again
# against the sanitized build (ASan and UBSan, every error fatal: make SAN=1), wherever that
# was built: a sanitizer's report ends the loader, and the test's checks fail
san_shell_tests=(t_attach_args.sh t_attach_stale.sh t_prod_errors.sh t_record_probegen.sh
	t_tracer_names.sh t_tracer_options.sh)
if [ -f build/san/tests/suite.list ]; then
	for t in "${san_shell_tests[@]}"; do
		if [ -x build/san/inflight ] && [ -f "tests/$t" ]; then
			run_one "san/$t" env BUILD="$PWD/build/san" bash "tests/$t"
		else
			suite_broken "san/$t" "build/san/inflight or tests/$t is missing"
		fi
	done
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
