# SPDX-License-Identifier: BSD-2-Clause
# The static binary, build/static/inflight: the same loader sources as build/inflight (the
# same BPF skeletons from build/bpf), compiled with musl-gcc and linked with -static against
# libbpf, libelf, zlib, zstd, libmicrohttpd and gnulib's argp, all built for musl from Debian
# source packages by scripts/build-musl-deps.sh into build/musl. It needs no file of the host
# but the kernel's: it runs on any x86-64 Linux userland (glibc of any age, musl, none).
#
# Why a second binary rather than a static build/inflight: the suite's ASan/UBSan build
# cannot be static or musl (the sanitizers' runtimes are glibc-dynamic), the test programs
# link the loader's objects with glibc-only libraries (json-c, cmocka), and the glibc build
# keeps libmicrohttpd's TLS-capable dynamic library. Both come from one source; the tests
# that matter for shipping (tests/t_static.sh, tests/t_deb.sh, the kernel matrix) run this one.
#
# What a static musl build cannot do: glibc's NSS modules. `--user NAME|UID` and the groups
# of sudo's user come from /etc/passwd and /etc/group (musl reads them itself, then asks nscd
# if one runs): users only LDAP or sssd know without nscd are not found. There is no dlopen,
# so libmicrohttpd is linked in (docs/install.md).
ifneq ($(SAN),1)
MUSL_CC := musl-gcc
MUSL_DIR := build/musl
MUSL_STAMP := $(MUSL_DIR)/.stamp
STATIC_DIR := build/static
STATIC_LOADER_DIR := $(STATIC_DIR)/loader
STATIC_CFLAGS := -O2 -g -std=gnu11 $(WARN) -D_GNU_SOURCE -DINFL_MHD_LINKED \
	-I$(MUSL_DIR)/libbpf/include -I$(MUSL_DIR)/usr/include -isystem $(MUSL_DIR)/kernel-include \
	-Ibpf -Ibpf/loader -Iprobes -MMD -MP
STATIC_LIBS := $(MUSL_DIR)/libbpf/lib/libbpf.a -L$(MUSL_DIR)/usr/lib -lmicrohttpd -lelf -lzstd \
	-lz -largp -lm -lpthread
STATIC_OBJS := $(patsubst $(LOADER_DIR)/%,$(STATIC_LOADER_DIR)/%,$(LOADER_OBJS))

.PHONY: static musl-deps
static: $(STATIC_DIR)/inflight $(STATIC_DIR)/probegen
musl-deps: $(MUSL_STAMP)

$(MUSL_STAMP): scripts/build-musl-deps.sh scripts/build-libbpf.sh scripts/debian-source.sh \
		| $(DEPS_STAMP)
	$(call msg,MUSL,$(MUSL_DIR) (zlib zstd libelf libmicrohttpd argp libbpf))
	$(Q)V=$(V) scripts/build-musl-deps.sh $(LIBBPF_VERSION) $(MUSL_DIR)

$(STATIC_LOADER_DIR)/attach/%.o: bpf/loader/attach/%.c $(BPF_SKELS) $(MUSL_STAMP)
	$(call msg,MUSL-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(STATIC_CFLAGS) -I$(BPF_DIR) -c $< -o $@

$(STATIC_LOADER_DIR)/%.o: bpf/loader/%.c $(MUSL_STAMP)
	$(call msg,MUSL-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(STATIC_CFLAGS) -c $< -o $@

# the link must give a program with no interpreter and no DT_NEEDED: checked here
$(STATIC_DIR)/inflight: $(STATIC_OBJS) $(MUSL_STAMP)
	$(call msg,LINK,$@ (static, musl))
	$(Q)$(MUSL_CC) -static $(STATIC_OBJS) $(STATIC_LIBS) -o $@
	$(Q)! readelf -ld $@ | grep -qE 'INTERP|\(NEEDED\)' || \
		{ echo "$@: not static (readelf -ld $@)" >&2; rm -f $@; exit 1; }

# probegen linked statically (glibc's libc.a: it needs no NSS), for the tests that trace
# inside a root holding none of this host's libraries (tests/t_static.sh)
$(STATIC_DIR)/probegen: tests/tracer/probegen.c tests/tracer/probegen_ids.h probes/inflight_note.h \
		$(PROBES_H) $(PROBES_O)
	$(call msg,CC,$@ (static))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -static $(CFLAGS) $(PROBES_CFLAGS) -Itests/tracer $< $(PROBES_O) -lpthread -o $@

-include $(STATIC_OBJS:.o=.d)
endif
