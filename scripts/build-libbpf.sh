#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the pinned libbpf (upstream 1.5.0, Debian trixie's `libbpf` source package) as a
# static library with its headers, once, into OUT (default build/libbpf):
#   OUT/lib/libbpf.a, OUT/include/bpf/*.h (usdt.bpf.h too), OUT/include/linux/bpf*.h (its uapi)
# bpf/libbpf.mk runs it; the stamp OUT/.stamp-VERSION says it is done.
#
# The source comes from Debian's mirror through scripts/debian-source.sh (a private apt
# configuration under OUT/src: the system's apt sources are never changed); a fetched source is
# reused, so a rebuild needs no network.
#
# Usage: scripts/build-libbpf.sh VERSION [OUT] (bpf/libbpf.mk passes its LIBBPF_VERSION).
# Environment: LIBBPF_SUITE (trixie), DEBIAN_MIRROR (scripts/debian-source.sh), V=1, CC (gcc),
# LIBBPF_EXTRA_CFLAGS (e.g. -I for the headers of another libc's libelf and zlib) and
# LIBBPF_CHECK_LDFLAGS (the version check's libraries; default the static libbpf, libelf,
# zlib and zstd with the dynamic libc).
set -euo pipefail
cd "$(dirname "$0")/.."

UPSTREAM=${1:?usage: build-libbpf.sh VERSION [OUT]} # the headers must say it (checked below)
[[ $UPSTREAM =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "build-libbpf: bad version '$UPSTREAM' (want X.Y.Z)" >&2; exit 2; }
OUT=${2:-build/libbpf}
SUITE=${LIBBPF_SUITE:-trixie}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SRC=$OUT/src
say() { echo "build-libbpf: $*" >&2; }
die() { say "$*"; exit 1; }

dsc=$(scripts/debian-source.sh "$SUITE" libbpf "$UPSTREAM" "$SRC") || die "no libbpf $UPSTREAM source"
command -v dpkg-source >/dev/null || die "dpkg-source not found: install dpkg-dev (scripts/install-deps.sh build)"
rm -rf "$SRC/tree" "$OUT/obj" "$OUT/lib" "$OUT/include" "$OUT"/.stamp-*
dpkg-source --no-check -x "$dsc" "$SRC/tree" >/dev/null || die "dpkg-source -x $dsc failed"

say "building libbpf.a from $(basename "$dsc" .dsc)"
# BUILD_STATIC_ONLY: no libbpf.so, so the link cannot pick a shared one by accident; a make
# of its own (not a job of the make that runs this script)
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s -C "$SRC/tree/src" -j"$(nproc)" BUILD_STATIC_ONLY=1 V="${V:-0}" CC="${CC:-gcc}" \
	EXTRA_CFLAGS="${LIBBPF_EXTRA_CFLAGS:-}" \
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
	${LIBBPF_EXTRA_CFLAGS:-} -L"$OUT/lib" ${LIBBPF_CHECK_LDFLAGS:--Wl,-Bstatic -lbpf -lelf -lz -lzstd -Wl,-Bdynamic} ||
	die "the built libbpf fails the version check (headers or archive not $UPSTREAM)"
got=$("$OUT/obj/version_check") || die "the built libbpf says $got, not v${UPSTREAM%.*}"
echo "$(basename "$dsc" .dsc) $got" >"$OUT/.stamp-$UPSTREAM"
say "libbpf $got ready in $OUT"
