# SPDX-License-Identifier: BSD-2-Clause
# Shell helpers for tests: same TAP-style lines as tests/check.h. Source it; call `finish` last.
_n=0
_failed=0
ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $1${2:+ ($2)}"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds
check() { _d=$1; shift; if "$@"; then ok "$_d"; else not_ok "$_d" "command failed: $*"; fi; }
# check_eq DESCRIPTION ACTUAL EXPECTED
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
# check_match DESCRIPTION TEXT EXTENDED-REGEX
check_match() { if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1" "no match for /$3/"; fi; }
finish() { [ "$_failed" -eq 0 ]; exit $?; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TMP=$(mktemp -d /tmp/inflight-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
