# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the viewer tests (after tests/lib.sh): installs speedscope and playwright-core
# from the lock file into build/viewer (npm ci, once per lock file) and checks for Debian's
# Chromium. Sets V; on failure reports it and finishes the test.
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
