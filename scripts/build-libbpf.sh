#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the pinned libbpf (upstream 1.5.0, Debian trixie's `libbpf` source package) as a
# static library with its headers, once, into OUT (default build/libbpf):
#   OUT/lib/libbpf.a, OUT/include/bpf/*.h (usdt.bpf.h too), OUT/include/linux/bpf*.h (its uapi)
# bpf/libbpf.mk runs it; the stamp OUT/.stamp-VERSION says it is done.
#
# The source comes from Debian's mirror through a private apt configuration under OUT/apt
# (its own source list with one deb-src line, its own lists, cache and status file): the
# system's apt sources are never changed. apt checks the files against the signed Sources
# index; dpkg-source unpacks them and applies Debian's patches. A fetched source is reused,
# so a rebuild needs no network.
#
# Usage: scripts/build-libbpf.sh VERSION [OUT] (bpf/libbpf.mk passes its LIBBPF_VERSION).
# Environment: LIBBPF_SUITE (trixie), LIBBPF_MIRROR (default: the first non-security URI of
# /etc/apt/sources.list.d/debian.sources), V=1.
set -euo pipefail
cd "$(dirname "$0")/.."

UPSTREAM=${1:?usage: build-libbpf.sh VERSION [OUT]} # the headers must say it (checked below)
[[ $UPSTREAM =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "build-libbpf: bad version '$UPSTREAM' (want X.Y.Z)" >&2; exit 2; }
OUT=${2:-build/libbpf}
SUITE=${LIBBPF_SUITE:-trixie}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
APT=$OUT/apt
SRC=$OUT/src
say() { echo "build-libbpf: $*" >&2; }
die() { say "$*"; exit 1; }

# The mirror the system already uses (deb822 first, then the one-line format).
mirror() {
	local f=/etc/apt/sources.list.d/debian.sources uri
	if [ -n "${LIBBPF_MIRROR:-}" ]; then
		echo "$LIBBPF_MIRROR"
		return
	fi
	if [ -r "$f" ]; then
		uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$f")
	fi
	if [ -z "${uri:-}" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++)
			if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
	fi
	[ -n "${uri:-}" ] || die "no Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; set LIBBPF_MIRROR=URL"
	echo "$uri"
}

apt_private() { # COMMAND ARGS...: apt-get or apt-cache with the private configuration
	local cmd=$1
	shift
	"$cmd" -o Dir::Etc::SourceList="$APT/sources.list" \
		-o Dir::Etc::SourceParts="$APT/sources.list.d" \
		-o Dir::Etc::Preferences="$APT/preferences" \
		-o Dir::Etc::PreferencesParts="$APT/preferences.d" \
		-o Dir::State="$APT/state" -o Dir::State::Lists="$APT/lists" \
		-o Dir::State::status="$APT/state/status" -o Dir::Cache="$APT/cache" \
		-o APT::Sandbox::User=root -o Acquire::Languages=none "$@"
}

fetch() {
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg ver
	mkdir -p "$APT/sources.list.d" "$APT/preferences.d" "$APT/state" \
		"$APT/lists/partial" "$APT/cache/archives/partial" "$SRC"
	: >"$APT/state/status"
	: >"$APT/preferences"
	echo "deb-src [signed-by=$keyring] $(mirror) $SUITE main" >"$APT/sources.list"
	say "fetching the libbpf source package from $SUITE"
	apt_private apt-get -qq update || die "apt-get update of the private $SUITE source list failed"
	# the newest Debian revision of the pinned upstream release
	ver=$(apt_private apt-cache showsrc libbpf | awk '/^Version:/ { print $2 }' |
		grep -E "^([0-9]+:)?${UPSTREAM//./\\.}-" | sort -V | tail -n 1)
	[ -n "$ver" ] || die "$SUITE has no libbpf $UPSTREAM source package (it has: $(apt_private apt-cache showsrc libbpf | awk '/^Version:/ { printf "%s ", $2 }'))"
	(cd "$SRC" && apt_private apt-get -qq source --download-only "libbpf=$ver" >/dev/null) ||
		die "apt-get source libbpf=$ver failed"
}

dsc=$(ls "$SRC"/libbpf_"$UPSTREAM"-*.dsc 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$dsc" ]; then
	fetch
	dsc=$(ls "$SRC"/libbpf_"$UPSTREAM"-*.dsc 2>/dev/null | sort -V | tail -n 1 || true)
	[ -n "$dsc" ] || die "no libbpf_$UPSTREAM-*.dsc after the download"
fi
command -v dpkg-source >/dev/null || die "dpkg-source not found: install dpkg-dev (scripts/install-deps.sh build)"
rm -rf "$SRC/tree" "$OUT/obj" "$OUT/lib" "$OUT/include" "$OUT"/.stamp-*
dpkg-source --no-check -x "$dsc" "$SRC/tree" >/dev/null || die "dpkg-source -x $dsc failed"

say "building libbpf.a from $(basename "$dsc" .dsc)"
# BUILD_STATIC_ONLY: no libbpf.so, so the link cannot pick a shared one by accident; a make
# of its own (not a job of the make that runs this script)
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s -C "$SRC/tree/src" -j"$(nproc)" BUILD_STATIC_ONLY=1 V="${V:-0}" \
	OBJDIR="$OUT/obj" DESTDIR= PREFIX="$OUT" LIBDIR="$OUT/lib" INCLUDEDIR="$OUT/include" \
	UAPIDIR="$OUT/include" install install_uapi_headers >/dev/null ||
	die "make of libbpf failed (V=1 shows the commands)"
[ -f "$OUT/lib/libbpf.a" ] && [ -f "$OUT/include/bpf/usdt.bpf.h" ] ||
	die "the libbpf install lacks lib/libbpf.a or include/bpf/usdt.bpf.h"

# The headers say the pinned version, and so does the archive (linked and run).
cat >"$OUT/obj/version_check.c" <<EOF
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
_Static_assert(LIBBPF_MAJOR_VERSION == ${UPSTREAM%%.*} && LIBBPF_MINOR_VERSION == $(echo "$UPSTREAM" | cut -d. -f2),
	       "libbpf headers are not version $UPSTREAM");
int main(void)
{
	/* the feature inflight needs 1.5 for: uprobe_multi links (libbpf >= 1.3) */
	void *multi = (void *)bpf_program__attach_uprobe_multi;

	printf("%s\n", libbpf_version_string());
	return multi && strcmp(libbpf_version_string(), "v${UPSTREAM%.*}") == 0 ? 0 : 1;
}
EOF
${CC:-gcc} -Wall -Werror -I"$OUT/include" "$OUT/obj/version_check.c" -o "$OUT/obj/version_check" \
	-Wl,-Bstatic -L"$OUT/lib" -lbpf -lelf -lz -lzstd -Wl,-Bdynamic ||
	die "the built libbpf fails the version check (headers or archive not $UPSTREAM)"
got=$("$OUT/obj/version_check") || die "the built libbpf says $got, not v${UPSTREAM%.*}"
echo "$(basename "$dsc" .dsc) $got" >"$OUT/.stamp-$UPSTREAM"
say "libbpf $got ready in $OUT"
