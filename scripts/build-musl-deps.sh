#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds what the static build/static/inflight links, for musl (Debian's musl-tools, musl-gcc),
# as static archives with their headers, once, into OUT (default build/musl):
#   OUT/usr/lib/{libz,libzstd,libelf,libmicrohttpd,libargp}.a and OUT/usr/include
#   OUT/libbpf/{lib/libbpf.a,include}     the pinned libbpf, by scripts/build-libbpf.sh
#   OUT/kernel-include                    the kernel's uapi headers (linux/, asm/, asm-generic/)
# Debian's own .a archives are built for glibc (they call its internal symbols), so each is
# built again from its Debian source package, fetched by scripts/debian-source.sh (a private
# apt configuration, the system's sources untouched) and unpacked with Debian's patches:
# zlib, libzstd, elfutils (libelf only), libmicrohttpd (HTTP only: no TLS, no auth, no
# upgrade; `serve` needs none of them) from bookworm, libbpf from trixie. musl has no argp:
# it comes from gnulib's argp module (Debian's gnulib package), put in a library of its own.
# Each part has a stamp OUT/.stamp-PART and is built once; OUT/.stamp says all are there.
#
# Usage: scripts/build-musl-deps.sh LIBBPF-VERSION [OUT]. Environment: MUSL_SUITE (bookworm),
# DEBIAN_MIRROR (scripts/debian-source.sh), V=1 shows the builds' output.
set -euo pipefail
cd "$(dirname "$0")/.."
LIBBPF_VERSION=${1:?usage: build-musl-deps.sh LIBBPF-VERSION [OUT]}
OUT=${2:-build/musl}
SUITE=${MUSL_SUITE:-bookworm}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PREFIX=$OUT/usr
SRC=$OUT/src
TREE=$OUT/tree
KINC=$OUT/kernel-include
CC=musl-gcc
say() { echo "build-musl-deps: $*" >&2; }
die() { say "$*"; exit 1; }
quiet() { if [ "${V:-0}" = 1 ]; then "$@"; else "$@" >"$TREE/log" 2>&1 || { tail -n 30 "$TREE/log" >&2; return 1; }; fi; }
command -v $CC >/dev/null || die "musl-gcc not found: install musl-tools (scripts/install-deps.sh build)"
command -v dpkg-source >/dev/null || die "dpkg-source not found: install dpkg-dev"
unset MAKEFLAGS MFLAGS MAKELEVEL # our own makes, not jobs of the make that runs us
JOBS=$(nproc)
mkdir -p "$PREFIX/include" "$PREFIX/lib" "$SRC" "$TREE"
rm -f "$OUT/.stamp"

# unpack PACKAGE: the suite's newest source of PACKAGE in $TREE/PACKAGE (Debian's patches on)
unpack() {
	local dsc
	dsc=$(scripts/debian-source.sh "$SUITE" "$1" - "$SRC") || die "no $1 source package"
	rm -rf "${TREE:?}/$1"
	dpkg-source --no-check -x "$dsc" "$TREE/$1" >/dev/null || die "dpkg-source -x $dsc failed"
	basename "$dsc" .dsc >"$TREE/$1.version"
	say "building $(cat "$TREE/$1.version") for musl"
}
done_part() { cat "$TREE/$1.version" >"$OUT/.stamp-$1"; rm -rf "${TREE:?}/$1"; }

# musl-gcc sees musl's headers only; the kernel's uapi headers are libc-neutral, so libbpf and
# inflight get them through this directory
mkdir -p "$KINC"
arch_inc=/usr/include/$(gcc -dumpmachine)
for d in /usr/include/linux /usr/include/asm-generic "$arch_inc/asm"; do
	[ -d "$d" ] || die "$d missing: install linux-libc-dev"
	ln -sfn "$d" "$KINC/$(basename "$d")"
done

if [ ! -f "$OUT/.stamp-zlib" ]; then
	unpack zlib
	(cd "$TREE/zlib" && CC=$CC CFLAGS="-O2" quiet ./configure --static --prefix="$PREFIX" &&
		quiet make -j"$JOBS" libz.a && quiet make install) || die "zlib failed (V=1 shows why)"
	done_part zlib
fi

if [ ! -f "$OUT/.stamp-libzstd" ]; then
	unpack libzstd
	# the library alone (no programs), without the legacy formats nobody writes any more
	(cd "$TREE/libzstd" && quiet make -C lib -j"$JOBS" CC=$CC CFLAGS="-O2" ZSTD_LEGACY_SUPPORT=0 \
		libzstd.a && quiet make -C lib CC=$CC PREFIX="$PREFIX" ZSTD_LEGACY_SUPPORT=0 \
		install-static install-includes) || die "libzstd failed (V=1 shows why)"
	done_part libzstd
fi

if [ ! -f "$OUT/.stamp-argp" ]; then
	# gnulib-tool writes a stand-alone package of the module, configured and built for musl
	gnulib=/usr/share/gnulib/gnulib-tool
	[ -x "$gnulib" ] || die "$gnulib not found: install gnulib, autoconf, automake"
	rm -rf "$TREE/argp"
	dpkg-query -W -f='gnulib ${Version}\n' gnulib >"$TREE/argp.version"
	say "building argp from $(cat "$TREE/argp.version") for musl"
	quiet "$gnulib" --create-testdir --dir="$TREE/argp" --without-tests --lib=libargp argp ||
		die "gnulib-tool failed"
	(cd "$TREE/argp" && CC=$CC CFLAGS="-O2" quiet ./configure --disable-dependency-tracking &&
		quiet make -j"$JOBS") || die "argp failed (V=1 shows why)"
	cp "$TREE/argp/gllib/libargp.a" "$PREFIX/lib/"
	# gnulib's argp.h expects its config.h for a few attribute macros: they are given here,
	# so that the header stands alone (its inline helpers become static inline)
	{
		printf '/* gnulib argp for musl (scripts/build-musl-deps.sh) */\n'
		printf '#ifndef _GL_INLINE_HEADER_BEGIN\n'
		printf '#define _GL_ATTRIBUTE_FORMAT(spec) __attribute__((__format__ spec))\n'
		printf '#define _GL_ATTRIBUTE_SPEC_PRINTF_STANDARD __printf__\n'
		printf '#define _GL_ATTRIBUTE_SPEC_PRINTF_SYSTEM __printf__\n'
		printf '#define _GL_INLINE_HEADER_BEGIN\n#define _GL_INLINE_HEADER_END\n'
		printf '#define _GL_INLINE static inline\n#endif\n'
		cat "$TREE/argp/gllib/argp.h"
	} >"$PREFIX/include/argp.h"
	done_part argp
fi

if [ ! -f "$OUT/.stamp-elfutils" ]; then
	unpack elfutils
	# libelf alone: the tools' needs (argp, fts, obstack) are answered so that configure
	# goes on; nothing that uses them is built
	(cd "$TREE/elfutils" && CC=$CC CFLAGS="-O2" CPPFLAGS="-I$PREFIX/include" LDFLAGS="-L$PREFIX/lib" \
		ac_cv_search_argp_parse="none required" ac_cv_search_fts_close="none required" \
		ac_cv_search__obstack_free="none required" quiet ./configure --prefix="$PREFIX" \
		--disable-debuginfod --disable-libdebuginfod --without-lzma --without-bzlib \
		--with-zstd --with-zlib --disable-nls &&
		quiet make -C libelf -j"$JOBS" libelf.a) || die "elfutils failed (V=1 shows why)"
	cp "$TREE/elfutils/libelf/libelf.a" "$PREFIX/lib/"
	cp "$TREE/elfutils/libelf/libelf.h" "$TREE/elfutils/libelf/gelf.h" \
		"$TREE/elfutils/libelf/nlist.h" "$PREFIX/include/"
	done_part elfutils
fi

if [ ! -f "$OUT/.stamp-libmicrohttpd" ]; then
	unpack libmicrohttpd
	(cd "$TREE/libmicrohttpd" && CC=$CC CFLAGS="-O2" quiet ./configure --prefix="$PREFIX" \
		--disable-shared --enable-static --disable-doc --disable-examples --disable-curl \
		--disable-https --without-gnutls --disable-postprocessor --disable-dauth \
		--disable-bauth --disable-httpupgrade --disable-thread-names \
		--disable-dependency-tracking &&
		quiet make -C src/microhttpd -j"$JOBS" && quiet make -C src/microhttpd install &&
		quiet make -C src/include install) || die "libmicrohttpd failed (V=1 shows why)"
	done_part libmicrohttpd
fi

if [ ! -f "$OUT/libbpf/.stamp-$LIBBPF_VERSION" ]; then
	CC=$CC LIBBPF_EXTRA_CFLAGS="-I$PREFIX/include -isystem $KINC" \
		LIBBPF_CHECK_LDFLAGS="-static -L$PREFIX/lib -lbpf -lelf -lz -lzstd" \
		scripts/build-libbpf.sh "$LIBBPF_VERSION" "$OUT/libbpf" || die "libbpf for musl failed"
fi

cat "$OUT"/.stamp-zlib "$OUT"/.stamp-libzstd "$OUT"/.stamp-argp "$OUT"/.stamp-elfutils \
	"$OUT"/.stamp-libmicrohttpd "$OUT/libbpf/.stamp-$LIBBPF_VERSION" >"$OUT/.stamp"
say "ready in $OUT: $(tr '\n' ' ' <"$OUT/.stamp")"
