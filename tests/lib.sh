# SPDX-License-Identifier: BSD-2-Clause
# Shell helpers for tests: the same TAP lines as tests/check.h. Source it; call `finish` last:
# it prints the plan ("1..N"), and tests/run.sh fails a file whose plan is missing (it died
# early) or does not match the results it printed. A skip is reported as a skip, never a pass.
_n=0
_failed=0
ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $1${2:+ ($2)}"; }
# skip DESCRIPTION REASON: a check that cannot run here (tests/run.sh counts it as skipped)
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP ${2:-}"; }
# skip_all REASON: the whole file cannot run here. Under CI=true nothing may be skipped: a
# requirement CI does not meet is a failure there.
skip_all() {
	if [ "${CI:-}" = true ]; then
		not_ok "runs under CI=true" "$1"
		finish
	fi
	echo "1..0 # SKIP $1"
	exit 0
}
needs_root() { [ "$(id -u)" = 0 ] || skip_all "needs root (CAP_BPF, CAP_PERFMON)"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds
check() { _d=$1; shift; if "$@"; then ok "$_d"; else not_ok "$_d" "command failed: $*"; fi; }
# check_eq DESCRIPTION ACTUAL EXPECTED
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
# check_match DESCRIPTION TEXT EXTENDED-REGEX
# a miss says what it got (its first 300 bytes): a flaky one is diagnosed from the log
check_match() {
	if printf '%s\n' "$2" | grep -Eq -- "$3"; then
		ok "$1"
	else
		not_ok "$1" "no match for /$3/ in '$(printf '%s' "$2" | head -c 300 | tr '\n' ' ')'"
	fi
}
# wait_detached [INFLIGHT]: until the detaching children of INFLIGHT (default the build's) are
# gone, up to 120 s. inflight leaves the kernel's uprobe teardown to such a child
# (attach/detach.h): until it is done, a new process of a binary traced binary-wide still sees
# the probes on. Found by their executable: a child of a run under timeout(1) is an orphan.
wait_detached() {
	local bin busy p
	bin=$(readlink -f "${1:-$BUILD/inflight}")
	for _ in $(seq 1200); do
		busy=
		for p in $(pgrep -x inflight-detach); do
			[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bin" ] && busy=1
		done
		[ -z "$busy" ] && return 0
		sleep 0.1
	done
	return 1
}
finish() { echo "1..$_n"; [ "$_failed" -eq 0 ]; exit $?; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TMP=$(mktemp -d /tmp/inflight-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
