#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fetches one Debian source package (its .dsc and the files it names) into DIR, once, and
# prints the .dsc's path. A source already in DIR is reused, so a rebuild needs no network.
#
# The source comes from Debian's mirror through a private apt configuration under
# DIR/apt-SUITE (its own source list with one deb-src line, its own lists, cache and status
# file): the system's apt sources are never changed. apt checks the files against the signed
# Sources index; the caller unpacks them with dpkg-source, which applies Debian's patches.
#
# Usage: scripts/debian-source.sh SUITE PACKAGE UPSTREAM DIR
#   UPSTREAM  the upstream release wanted (e.g. 1.5.0): the newest Debian revision of it is
#             taken; "-" takes the suite's newest version
# Environment: DEBIAN_MIRROR (default: the first non-security URI of
# /etc/apt/sources.list.d/debian.sources, then /etc/apt/sources.list). LIBBPF_MIRROR is the
# older name of the same setting.
set -euo pipefail

SUITE=${1:?usage: debian-source.sh SUITE PACKAGE UPSTREAM DIR}
PKG=${2:?usage: debian-source.sh SUITE PACKAGE UPSTREAM DIR}
UPSTREAM=${3:?usage: debian-source.sh SUITE PACKAGE UPSTREAM DIR}
DIR=${4:?usage: debian-source.sh SUITE PACKAGE UPSTREAM DIR}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
APT=$DIR/apt-$SUITE
say() { echo "debian-source: $*" >&2; }
die() { say "$*"; exit 1; }

# The mirror the system already uses (deb822 first, then the one-line format).
mirror() {
	local f=/etc/apt/sources.list.d/debian.sources uri
	uri=${DEBIAN_MIRROR:-${LIBBPF_MIRROR:-}}
	if [ -z "$uri" ] && [ -r "$f" ]; then
		uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$f")
	fi
	if [ -z "${uri:-}" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++)
			if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
	fi
	[ -n "${uri:-}" ] || die "no Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; set DEBIAN_MIRROR=URL"
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

# the .dsc of the wanted version already in DIR, if any (the newest Debian revision)
cached() {
	local pat=${PKG}_
	[ "$UPSTREAM" = - ] && pat+="*" || pat+="$UPSTREAM-*"
	ls "$DIR"/$pat.dsc 2>/dev/null | sort -V | tail -n 1 || true
}

dsc=$(cached)
if [ -z "$dsc" ]; then
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mkdir -p "$APT/sources.list.d" "$APT/preferences.d" "$APT/state" \
		"$APT/lists/partial" "$APT/cache/archives/partial"
	: >"$APT/state/status"
	: >"$APT/preferences"
	echo "deb-src [signed-by=$keyring] $(mirror) $SUITE main" >"$APT/sources.list"
	say "fetching the $PKG source package from $SUITE"
	apt_private apt-get -qq update || die "apt-get update of the private $SUITE source list failed"
	versions=$(apt_private apt-cache showsrc "$PKG" | awk '/^Version:/ { print $2 }' | sort -V)
	if [ "$UPSTREAM" = - ]; then
		ver=$(echo "$versions" | tail -n 1)
	else
		ver=$(echo "$versions" | grep -E "^([0-9]+:)?${UPSTREAM//./\\.}-" | tail -n 1 || true)
	fi
	[ -n "$ver" ] || die "$SUITE has no $PKG $UPSTREAM source package (it has: $(echo $versions))"
	(cd "$DIR" && apt_private apt-get -qq source --download-only "$PKG=$ver" >/dev/null) ||
		die "apt-get source $PKG=$ver failed"
	dsc=$(cached)
	[ -n "$dsc" ] || die "no ${PKG}_*.dsc in $DIR after the download of $PKG=$ver"
fi
echo "$dsc"
