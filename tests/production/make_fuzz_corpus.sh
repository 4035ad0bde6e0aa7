#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Regenerates the committed seed corpora of tests/fuzz/ (names notes and ELF files, CLI
# numbers). Run from the repository root when a grammar changes; commit the result.
set -euo pipefail
cd "$(dirname "$0")/../.."
names=tests/fuzz/corpus_names
numbers=tests/fuzz/corpus_numbers
rm -rf "$names" "$numbers"
mkdir -p "$names" "$numbers"

# note descriptors as the loader reads them (NUL-terminated, padded)
note() { printf '%b\0\0\0' "$2" >"$names/$1"; }
note minimal 'inflight-contract 1\n'
note probegen 'inflight-contract 1\nprovider prover\nclass 0 small\nclass 1 big\nclass 2 huge\nstage 0 born entry\nstage 1 work plain\nstage 4 end terminal\n'
note future 'inflight-contract 2\nprovider p\ncolour 3 blue\nclass 15 last\nstage 15 fin terminal\n'
note crlf 'inflight-contract 1\r\nclass 1 a\r\n\tstage  2   b   plain\r\n'
note dup_class 'inflight-contract 1\nclass 1 a\nclass 2 a\n'
note bad_id 'inflight-contract 1\nclass 16 x\nstage 01 y entry\n'
note no_header 'class 0 a\n'
printf 'inflight-contract 1\nclass 3 unterminated' >"$names/no_nul"

# ELF files: a relocatable object and a small static executable carrying both notes
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/n.c" <<'C'
#include <sys/sdt.h>
#include "inflight_note.h"
#define C(X) X(0, alpha) X(7, beta)
#define S(X) X(0, start, entry) X(3, middle, plain) X(9, finish, terminal)
INFLIGHT_NAMES_NOTE(names, "prover", C, S);
void _start(void)
{
	long b = 1, o = 2;
	STAP_PROBE4(prover, buf_alloc, b, 3, 4096, o);
	STAP_PROBE3(prover, buf_free, b, 3, 4096);
	STAP_PROBE2(prover, stage, o, 3);
	for (;;)
		__asm__ volatile("" ::: "memory");
}
C
gcc -Os -g0 -fno-asynchronous-unwind-tables -Iprobes -c "$tmp/n.c" -o "$names/elf_object.o"
gcc -Os -g0 -static -nostdlib -fno-asynchronous-unwind-tables -Wl,--build-id=none -Wl,-n -Iprobes \
	"$tmp/n.c" -o "$tmp/exe"
strip "$tmp/exe" -o "$names/elf_exec"
# the same without section headers (e_shoff, e_shnum, e_shstrndx zeroed): notes from PT_NOTE
cp "$names/elf_exec" "$names/elf_exec_noshdr"
printf '\0\0\0\0\0\0\0\0' | dd of="$names/elf_exec_noshdr" bs=1 seek=40 conv=notrunc status=none
printf '\0\0\0\0' | dd of="$names/elf_exec_noshdr" bs=1 seek=60 conv=notrunc status=none

num() { printf '%s' "$2" >"$numbers/$1"; }
num zero 0
num pid 4242
num u64_max 18446744073709551615
num u64_over 18446744073709551616
num leading_zeros 000123
num minus -5
num hex 0x10
num seconds 2s
num millis 250ms
num micros 500us
num minutes 1.5m
num hours 1h
num nine_decimals 0.123456789s
num ten_decimals 0.1234567891s
num bare_fraction 1.5
num listen_v4 127.0.0.1:9464
num listen_any :9464
num listen_v6 '[::1]:9464'
num listen_v6_any '[::]:0'
num listen_bad 'localhost:80'
num accept 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
echo "corpora: $(ls "$names" | wc -l) names, $(ls "$numbers" | wc -l) numbers"
