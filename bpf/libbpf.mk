# SPDX-License-Identifier: BSD-2-Clause
# The pinned libbpf: upstream 1.5.0 from Debian trixie's `libbpf` source package, built once
# as a static library by scripts/build-libbpf.sh into build/libbpf/ (shared by the normal and
# the SAN=1 builds: libbpf itself is not sanitized, as Debian's libbpf.a was not).
# Why 1.5 and not Debian 12's 1.1.2: libbpf >= 1.3 attaches USDT probes with one uprobe_multi
# link per program on kernels that have it (6.6+), instead of one perf-event uprobe per probe
# site (docs/attach.md has the figures).
#
# For the build that uses it:
#   LIBBPF_STAMP    prerequisite of everything that includes a libbpf header or links it
#   LIBBPF_CFLAGS   -I for the user side and the BPF side (bpf/*.h, bpf/usdt.bpf.h), first
#                   on the line so that it wins over /usr/include/bpf (libbpf-dev 1.1.2)
#   LIBBPF_A        the archive; LIBBPF_LDLIBS links it and what it needs, all static
#   LIBBPF_INCLUDE  the include directory itself
# The build script checks LIBBPF_MAJOR_VERSION/MINOR and the archive's version before it
# writes the stamp; LIBBPF_VERSION_CHECK is the same check for one more compile line, e.g.
# in a rule that must fail when another libbpf's headers come first. Included once, by the
# first fragment that needs it (bpf/build.mk, bench/build.mk).
ifndef LIBBPF_STAMP
LIBBPF_VERSION := 1.5.0
LIBBPF_VERSION_WORDS := $(subst ., ,$(LIBBPF_VERSION))
LIBBPF_DIR := build/libbpf
LIBBPF_INCLUDE := $(LIBBPF_DIR)/include
LIBBPF_A := $(LIBBPF_DIR)/lib/libbpf.a
LIBBPF_STAMP := $(LIBBPF_DIR)/.stamp-$(LIBBPF_VERSION)
LIBBPF_CFLAGS := -I$(LIBBPF_INCLUDE)
LIBBPF_LDLIBS := $(LIBBPF_A) -Wl,-Bstatic -lelf -lz -lzstd -Wl,-Bdynamic
LIBBPF_VERSION_CHECK = printf '%s\n' '\#include <bpf/libbpf_version.h>' \
	'_Static_assert(LIBBPF_MAJOR_VERSION == $(word 1,$(LIBBPF_VERSION_WORDS)) && LIBBPF_MINOR_VERSION == $(word 2,$(LIBBPF_VERSION_WORDS)), "not libbpf $(LIBBPF_VERSION)");' | \
	$(CC) $(LIBBPF_CFLAGS) -fsyntax-only -x c -

.PHONY: libbpf
libbpf: $(LIBBPF_STAMP)

# the archive and the headers are products of the stamp's rule
$(LIBBPF_A): $(LIBBPF_STAMP)
$(LIBBPF_STAMP): scripts/build-libbpf.sh | $(DEPS_STAMP)
	$(call msg,LIBBPF,$(LIBBPF_DIR) ($(LIBBPF_VERSION)))
	$(Q)V=$(V) CC="$(CC)" scripts/build-libbpf.sh $(LIBBPF_VERSION) $(LIBBPF_DIR)
	$(Q)$(LIBBPF_VERSION_CHECK)
endif
