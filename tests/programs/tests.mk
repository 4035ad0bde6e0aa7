# SPDX-License-Identifier: BSD-2-Clause
# The program matrix of tests/t_programs.sh: the example programs of probes/examples built
# the ways their users build them, one directory per row, build/tests/programs/ROW/, holding
# `example` (and `libexample.so` where the probes live in a shared library). Each row has
# its own copy, so that rows traced at the same time with -b never see each other.
# Not under SAN=1: these binaries are the subjects of the test, not code under test.
ifneq ($(SAN),1)
PROG_DIR := $(TESTS_DIR)/programs
EX_DIR := probes/examples
EX_C_DEPS := $(EX_DIR)/example.c $(EX_DIR)/pipeline.c $(EX_DIR)/pipeline.h \
	probes/inflight_probes.h probes/inflight_note.h tests/programs/dead_site.c
EX_BASE := -g $(WARN) -D_GNU_SOURCE -Iprobes -I$(EX_DIR)
EX_CFLAGS := -std=gnu11 $(EX_BASE)
EX_CXXFLAGS := -x c++ -std=c++17 $(EX_BASE)
EX_GC := -ffunction-sections -fdata-sections -Wl,--gc-sections
EX_DEAD := tests/programs/dead_site.c
EX_SDT := -DEXAMPLE_SDT -I$(PROBES_DIR) $(PROBES_O)

# ---- one C build per row: ROW_CC (default gcc), ROW_FLAGS (compile and link) ----
PROG_C_ROWS := c-bfd-O2 c-bfd-O0 c-inline-sites c-bfd-nopie c-gold c-lld c-mold c-static c-lld-static \
	c-clang c-gc-bfd c-gc-gold c-gc-lld c-gc-mold c-threads c-workers sdt sdt-lld \
	sdt-lld-gc sdt-mold sdt-note-myapp nosema myapp
ROW_FLAGS_c-bfd-O2 := -O2
ROW_FLAGS_c-bfd-O0 := -O0
ROW_FLAGS_c-inline-sites := -O2 -DEXAMPLE_INLINE_SITES
ROW_FLAGS_c-bfd-nopie := -O2 -fno-pie -no-pie
ROW_FLAGS_c-gold := -O2 -fuse-ld=gold
ROW_FLAGS_c-lld := -O2 -fuse-ld=lld
ROW_FLAGS_c-mold := -O2 -fuse-ld=mold
ROW_FLAGS_c-static := -O2 -static -DEXAMPLE_NO_LIB
ROW_FLAGS_c-lld-static := -O2 -static -fuse-ld=lld -DEXAMPLE_NO_LIB
ROW_CC_c-clang := $(CLANG)
ROW_FLAGS_c-clang := -O2
ROW_FLAGS_c-gc-bfd := -O2 $(EX_GC) $(EX_DEAD)
ROW_FLAGS_c-gc-gold := -O2 -fuse-ld=gold $(EX_GC) $(EX_DEAD)
ROW_FLAGS_c-gc-lld := -O2 -fuse-ld=lld $(EX_GC) $(EX_DEAD)
ROW_FLAGS_c-gc-mold := -O2 -fuse-ld=mold $(EX_GC) $(EX_DEAD)
ROW_FLAGS_c-threads := -O2
ROW_FLAGS_c-workers := -O2
ROW_FLAGS_sdt := -O2 $(EX_SDT)
ROW_FLAGS_sdt-lld := -O2 -fuse-ld=lld $(EX_SDT)
ROW_FLAGS_sdt-mold := -O2 -fuse-ld=mold $(EX_SDT)
ROW_FLAGS_sdt-lld-gc := -O2 -fuse-ld=lld $(EX_GC) -DDEAD_SDT $(EX_DEAD) $(EX_SDT)
ROW_FLAGS_sdt-note-myapp := -O2 $(EX_SDT) '-DEXAMPLE_NOTE_PROVIDER="myapp"'
ROW_FLAGS_nosema := -O2 -DEXAMPLE_NOSEMA
ROW_FLAGS_myapp := -O2 -DINFLIGHT_PROVIDER=myapp

define PROG_C_RULE
$(PROG_DIR)/$(1)/example: $(EX_C_DEPS) $(if $(findstring sdt,$(1)),$(PROBES_H) $(PROBES_O)) \
		| $(DEPS_STAMP)
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$(or $(ROW_CC_$(1)),$(CC)) $(EX_CFLAGS) $(EX_DIR)/example.c $(EX_DIR)/pipeline.c \
		$(ROW_FLAGS_$(1)) -pthread -o $$@
endef
$(foreach r,$(PROG_C_ROWS),$(eval $(call PROG_C_RULE,$(r))))

# stripped: the O2 build with every symbol and debug section gone (notes stay: allocated)
$(PROG_DIR)/c-stripped/example: $(PROG_DIR)/c-bfd-O2/example
	$(call msg,STRIP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)strip --strip-all -o $@ $<

# C++: the pipeline compiled as C++ (its probes then sit in inline functions, templates'
# COMDAT groups included), the main program as C
define PROG_CXX_RULE
$(PROG_DIR)/$(1)/example: $(EX_C_DEPS) | $(DEPS_STAMP)
	$$(call msg,CXX,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$(2) $(EX_CXXFLAGS) -O2 -c $(EX_DIR)/pipeline.c -o $$(@D)/pipeline.o
	$$(Q)$(3) $(EX_CFLAGS) -O2 -c $(EX_DIR)/example.c -o $$(@D)/example.o
	$$(Q)$(2) $$(@D)/example.o $$(@D)/pipeline.o -pthread -o $$@
endef
$(eval $(call PROG_CXX_RULE,cxx-g++,g++,$(CC)))
$(eval $(call PROG_CXX_RULE,cxx-clang++,clang++,$(CLANG)))

# probes in a shared library: linked (DT_NEEDED, loaded by ld.so) or loaded with dlopen
define PROG_SO_RULE
$(PROG_DIR)/$(1)/libexample.so: $(EX_C_DEPS) | $(DEPS_STAMP)
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$(CC) $(EX_CFLAGS) -O2 -fPIC -shared $(EX_DIR)/pipeline.c -pthread -o $$@
endef
$(eval $(call PROG_SO_RULE,so-needed))
$(eval $(call PROG_SO_RULE,so-dlopen))

$(PROG_DIR)/so-needed/example: $(EX_C_DEPS) $(PROG_DIR)/so-needed/libexample.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(EX_CFLAGS) -O2 $(EX_DIR)/example.c -L$(@D) -lexample -Wl,-rpath,'$$ORIGIN' \
		-pthread -o $@

$(PROG_DIR)/so-dlopen/example: $(EX_C_DEPS) $(PROG_DIR)/so-dlopen/libexample.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(EX_CFLAGS) -O2 -DEXAMPLE_NO_BUILTIN $(EX_DIR)/example.c -pthread -o $@

# 32-bit (gcc-multilib): the dtrace path, its semaphore object built -m32. systemtap's
# sys/sdt.h is installed in the x86_64 include directory only; dtrace writes its temporary
# files into the current directory, so it runs in the row's own.
$(PROG_DIR)/sdt-m32/example: $(EX_C_DEPS) probes/prover.d $(PROBES_H) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(@D) && CC="$(CC)" CFLAGS="-m32 -idirafter /usr/include/x86_64-linux-gnu" \
		dtrace -C -G -s $(abspath probes/prover.d) -o prover_probes32.o
	$(Q)$(CC) -m32 -idirafter /usr/include/x86_64-linux-gnu $(EX_CFLAGS) -O2 -DEXAMPLE_SDT \
		-I$(PROBES_DIR) $(EX_DIR)/example.c $(EX_DIR)/pipeline.c \
		$(@D)/prover_probes32.o -pthread -o $@

# the evidence tool: where the kernel raises a semaphore, and whether the probe then fires
$(PROG_DIR)/sema_witness: tests/programs/sema_witness.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) -o $@

# ... and the state a tracer that ended while a process started leaves it in
$(PROG_DIR)/sema_stale: tests/programs/sema_stale.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LDFLAGS) -o $@

PROG_BINS := $(foreach r,$(PROG_C_ROWS) c-stripped cxx-g++ cxx-clang++ so-needed so-dlopen \
	sdt-m32,$(PROG_DIR)/$(r)/example) $(PROG_DIR)/sema_witness $(PROG_DIR)/sema_stale

# ---- Rust: Debian's rustc/cargo 1.63 (GNU ld) and rustup's stable (LLD by default) ----
# cargo builds offline and --locked (Cargo.lock is committed, version 3, which both read),
# with its home under build/; -C link-dead-code is how rustc links without --gc-sections.
RUST_SRCS := probes/rust/Cargo.toml probes/rust/src/lib.rs probes/examples/rust/Cargo.toml \
	probes/examples/rust/Cargo.lock probes/examples/rust/src/main.rs
RUST_MANIFEST := probes/examples/rust/Cargo.toml
RUST163_CARGO := /usr/bin/cargo
RUST163_RUSTC := /usr/bin/rustc
RUSTUP_BIN := $(HOME)/.cargo/bin
RUSTUP_CARGO := $(wildcard $(RUSTUP_BIN)/cargo)
RUST_VARIANTS := release debug release-nogc debug-nogc
# $(1): row prefix, $(2): cargo, $(3): rustc
define PROG_RUST_RULE
$(PROG_DIR)/$(1)-%/example: $(RUST_SRCS) | $(DEPS_STAMP)
	$$(call msg,CARGO,$$@)
	$$(Q)mkdir -p $$(@D) $(PROG_DIR)/cargo-home
	$$(Q)CARGO_HOME=$(abspath $(PROG_DIR)/cargo-home) RUSTUP_TOOLCHAIN=stable RUSTC=$(3) \
		RUSTFLAGS="$$(if $$(findstring nogc,$$*),-C link-dead-code)" \
		$(2) build -q --offline --locked --manifest-path $(RUST_MANIFEST) \
		$$(if $$(findstring debug,$$*),,--release) \
		--target-dir $(abspath $(PROG_DIR))/cargo/$(1)-$$*
	$$(Q)cp $(PROG_DIR)/cargo/$(1)-$$*/$$(if $$(findstring debug,$$*),debug,release)/inflight-example $$@
	$$(Q)RUSTUP_TOOLCHAIN=stable $(3) --version >$$(@D)/rustc-version
endef
$(eval $(call PROG_RUST_RULE,rust163,$(RUST163_CARGO),$(RUST163_RUSTC)))
PROG_BINS += $(RUST_VARIANTS:%=$(PROG_DIR)/rust163-%/example)

ifneq ($(RUSTUP_CARGO),)
$(eval $(call PROG_RUST_RULE,rust195,$(RUSTUP_CARGO),$(RUSTUP_BIN)/rustc))
# threads and forked workers: the release build, in rows of their own
$(PROG_DIR)/rust195-threads/example $(PROG_DIR)/rust195-workers/example: \
		$(PROG_DIR)/rust195-release/example
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@
	$(Q)cp $(<D)/rustc-version $(@D)/
# the unchanged example against tests/programs/naive_probes.rs: how crates without the
# fixes of probes/rust come out (rustc directly: the naive crate is not a cargo package)
$(PROG_DIR)/rust195-naive/example: tests/programs/naive_probes.rs \
		probes/examples/rust/src/main.rs | $(DEPS_STAMP)
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)MAKEFLAGS= RUSTUP_TOOLCHAIN=stable $(RUSTUP_BIN)/rustc --edition 2021 -O --crate-type rlib \
		--crate-name inflight_probes $< -o $(@D)/libinflight_probes.rlib
	$(Q)MAKEFLAGS= RUSTUP_TOOLCHAIN=stable $(RUSTUP_BIN)/rustc --edition 2021 -O --crate-name example \
		--extern inflight_probes=$(@D)/libinflight_probes.rlib \
		probes/examples/rust/src/main.rs -o $@
	$(Q)RUSTUP_TOOLCHAIN=stable $(RUSTUP_BIN)/rustc --version >$(@D)/rustc-version
PROG_BINS += $(RUST_VARIANTS:%=$(PROG_DIR)/rust195-%/example) \
	$(PROG_DIR)/rust195-threads/example $(PROG_DIR)/rust195-workers/example \
	$(PROG_DIR)/rust195-naive/example
endif

TEST_BINS += $(PROG_BINS)
endif
