# SPDX-License-Identifier: BSD-2-Clause
# inflight: one entry point. Targets: all (default), probes, vmlinux, bpf, prover, inflight,
# static, deb, tests, test, demo, bench, fuzz, clean. Output goes to build/ only. V=1 shows commands.
.DELETE_ON_ERROR:
.SUFFIXES:

BUILD := build
V ?= 0
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)"
endif

CC := gcc
CLANG := clang
BPFTOOL := bpftool
NVCC := $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN := -Wall -Wextra -Werror
CFLAGS := -O2 -g -std=gnu11 $(WARN) -D_GNU_SOURCE
LDFLAGS :=
# SAN=1 builds user-space code with ASan and UBSan (the suite runs a sanitized build too)
ifeq ($(SAN),1)
BUILD := build/san
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

# Missing Debian packages are installed first (idempotent; a no-op when all are present).
DEPS_STAMP := build/.deps-$(or $(DEPS),build)
build/.deps-%: scripts/install-deps.sh
	$(Q)mkdir -p build
	$(Q)scripts/install-deps.sh $*
	$(Q)touch $@

.PHONY: all probes vmlinux bpf prover inflight tests test demo bench fuzz clean deps deb
all: prover inflight

include probes/build.mk
include prover/build.mk
include bpf/build.mk
include bpf/static.mk
include tests/build.mk
include bench/build.mk

# The Debian package build/inflight_VERSION_amd64.deb: the static binary, its man page, bash
# completion, the exporter's systemd unit, the Prometheus rules and the Grafana dashboard
# (scripts/build-deb.sh; docs/install.md)
deb: static
	$(call msg,DEB,build/inflight_$(shell scripts/deb-version.sh)_amd64.deb)
	$(Q)scripts/build-deb.sh build >/dev/null

demo: all
	$(Q)scripts/demo.sh

# The suite: the normal build, the static one and an ASan/UBSan build of all user-space code,
# then every test.
test: build/.deps-test
	$(Q)$(MAKE) --no-print-directory DEPS=test all tests static
	$(Q)$(MAKE) --no-print-directory DEPS=test SAN=1 all tests
	$(Q)tests/run.sh

bench: build/.deps-bench
	$(Q)$(MAKE) --no-print-directory DEPS=bench all tests
	$(Q)scripts/bench.sh

clean:
	$(Q)rm -rf build
