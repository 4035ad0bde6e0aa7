#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the Debian package OUT/inflight_VERSION_amd64.deb (`make deb` runs it after
# `make static`) with the standard tools: the repository's debian/ directory, debhelper 13,
# dpkg-buildpackage -b, in a staging tree OUT/deb/inflight-VERSION holding debian/ and dist/:
#   dist/inflight                     build/static/inflight (static, musl)
#   dist/inflight.1                   its man page, from its --help (scripts/gen-man.sh)
#   dist/completions/inflight         deploy/bash-completion/inflight
#   dist/etc/default/inflight-serve   deploy/systemd/inflight-serve.default
#   dist/share/inflight/              deploy/prometheus/*, deploy/grafana/*
#   dist/systemd/inflight-serve@.service      deploy/systemd/inflight-serve@.service
#   debian/changelog                  one entry: VERSION (scripts/deb-version.sh), the commit
#   dist/built-using                  the Debian source packages linked in (build/musl)
# Usage: scripts/build-deb.sh [OUT] (default build). Prints the .deb's path.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build}
bin=build/static/inflight
musl=build/musl
die() { echo "build-deb: $*" >&2; exit 1; }
[ -x "$bin" ] || die "$bin missing: make static"
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
	die "dpkg-buildpackage or dh missing: install dpkg-dev debhelper (scripts/install-deps.sh test)"
version=$(scripts/deb-version.sh)
stage=$OUT/deb/inflight-$version
rm -rf "$OUT/deb"
mkdir -p "$stage"/dist/{completions,systemd,etc/default,share/inflight/prometheus,share/inflight/grafana}
cp -r debian "$stage/"
install -m 755 "$bin" "$stage/dist/inflight"
# the page's date: the commit's, so that a rebuild of one commit gives the same page
scripts/gen-man.sh "$bin" "$(git log -1 --format=%cs)" >"$stage/dist/inflight.1"
install -m 644 deploy/bash-completion/inflight "$stage/dist/completions/inflight"
install -m 644 deploy/systemd/inflight-serve.default "$stage/dist/etc/default/inflight-serve"
install -m 644 deploy/prometheus/*.yml "$stage/dist/share/inflight/prometheus/"
install -m 644 deploy/grafana/*.json "$stage/dist/share/inflight/grafana/"
install -D -m 644 deploy/systemd/inflight-serve@.service "$stage/dist/systemd/inflight-serve@.service"

# Built-Using: "source (= version)" of each source package whose code is in the binary
srcver() { sed -n 's/^Version: //p' "$1" | head -n 1; }
bu="musl (= $(dpkg-query -W -f='${source:Version}' musl-dev)), gnulib (= $(dpkg-query -W -f='${source:Version}' gnulib))"
for part in zlib libzstd elfutils libmicrohttpd; do
	dsc=$musl/src/$(cat "$musl/.stamp-$part").dsc
	[ -f "$dsc" ] || die "$dsc missing: make static"
	bu="$bu, $part (= $(srcver "$dsc"))"
done
dsc=$(ls "$musl"/libbpf/src/libbpf_*.dsc | sort -V | tail -n 1)
bu="$bu, libbpf (= $(srcver "$dsc"))"
echo "$bu" >"$stage/dist/built-using"

commit=$(git rev-parse --short HEAD)
cat >"$stage/debian/changelog" <<EOF
inflight ($version) unstable; urgency=medium

  * Built from commit $commit ($(git describe --always --tags --dirty)).

 -- $(sed -n 's/^Maintainer: //p' debian/control)  $(date -R -d "@$(git log -1 --format=%ct)")
EOF

(cd "$stage" && dpkg-buildpackage -b -us -uc >../build.log 2>&1) ||
	{ tail -n 30 "$OUT/deb/build.log" >&2; die "dpkg-buildpackage failed (log: $OUT/deb/build.log)"; }
deb=inflight_${version}_amd64.deb
[ -f "$OUT/deb/$deb" ] || die "no $deb after dpkg-buildpackage"
rm -f "$OUT"/inflight_*_amd64.deb
cp "$OUT/deb/$deb" "$OUT/$deb"
echo "$OUT/$deb"
