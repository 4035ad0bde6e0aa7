# SPDX-License-Identifier: BSD-2-Clause
# The images of tests/t_attach_images.sh: one process mapping several images (the application
# app.c and the libraries of gpu_lib.h), each with its own contract and the same ids. One
# directory per row, build/tests/images/ROW/, holding `app` and the row's libraries, so that
# rows never share a file:
#   c-linked  app + libgpu.so (DT_NEEDED, rpath $ORIGIN)
#   c-dlopen  app (no library linked) + libgpu.so given with --lib
#   cxx       app + libgpu_cxx.so (gpu_lib.c compiled as C++)
#   rust      app + libgpu_rs.so (a cdylib, probes/rust, Debian's cargo 1.63)
#   two-libs  app + libgpu.so + libaux.so (--lib2): the same ids, names that collide
#   plain     app + libgpu.so + libplain.so (--lib2): no names note, constant ids
#   provider  app + libgpu.so whose probes and note are provider myapp's (the app's: prover)
# Not under SAN=1: these binaries are the subjects of the test, not code under test.
ifneq ($(SAN),1)
IMG_DIR := $(TESTS_DIR)/images
IMG_SRC := tests/images
IMG_DEPS := $(IMG_SRC)/gpu_lib.h probes/inflight_probes.h
IMG_BASE := -g -O2 $(WARN) -D_GNU_SOURCE -Iprobes -I$(IMG_SRC)
IMG_CFLAGS := -std=gnu11 $(IMG_BASE)
IMG_LIBFLAGS := -fPIC -shared -fvisibility=hidden
IMG_ROWS := c-linked c-dlopen cxx rust two-libs plain provider

# ---- the libraries: $(1) row, $(2) file, $(3) compiler and flags, $(4) source ----
define IMG_LIB_RULE
$(IMG_DIR)/$(1)/$(2): $(4) $(IMG_DEPS) | $(DEPS_STAMP)
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$(3) $(IMG_LIBFLAGS) $(4) -Wl,-soname,$(2) -o $$@
endef
IMG_GPU_C := $(CC) $(IMG_CFLAGS)
IMG_GPU_CXX := g++ -x c++ -std=c++17 $(IMG_BASE)
$(foreach r,c-linked c-dlopen two-libs plain,$(eval \
	$(call IMG_LIB_RULE,$(r),libgpu.so,$(IMG_GPU_C),$(IMG_SRC)/gpu_lib.c)))
$(eval $(call IMG_LIB_RULE,cxx,libgpu_cxx.so,$(IMG_GPU_CXX),$(IMG_SRC)/gpu_lib.c))
$(eval $(call IMG_LIB_RULE,two-libs,libaux.so,$(IMG_GPU_C) -DGPU_AUX,$(IMG_SRC)/gpu_lib.c))
$(eval $(call IMG_LIB_RULE,plain,libplain.so,$(IMG_GPU_C),$(IMG_SRC)/plain_lib.c))
$(eval $(call IMG_LIB_RULE,provider,libgpu.so,$(IMG_GPU_C) -DINFLIGHT_PROVIDER=myapp,\
	$(IMG_SRC)/gpu_lib.c))

# the Rust cdylib, by Debian's rustc/cargo 1.63 (GNU ld): offline and --locked (Cargo.lock
# is committed), cargo's home under build/
IMG_CARGO := /usr/bin/cargo
IMG_RUSTC := /usr/bin/rustc
IMG_RUST_SRCS := probes/rust/Cargo.toml probes/rust/src/lib.rs $(IMG_SRC)/rust/Cargo.toml \
	$(IMG_SRC)/rust/Cargo.lock $(IMG_SRC)/rust/src/lib.rs
$(IMG_DIR)/rust/libgpu_rs.so: $(IMG_RUST_SRCS) | $(DEPS_STAMP)
	$(call msg,CARGO,$@)
	$(Q)mkdir -p $(@D) $(IMG_DIR)/cargo-home
	$(Q)CARGO_HOME=$(abspath $(IMG_DIR)/cargo-home) RUSTUP_TOOLCHAIN=stable \
		RUSTC=$(IMG_RUSTC) $(IMG_CARGO) build -q --offline --locked --release \
		--manifest-path $(IMG_SRC)/rust/Cargo.toml --target-dir $(abspath $(IMG_DIR))/cargo
	$(Q)cp $(IMG_DIR)/cargo/release/libgpu_rs.so $@
	$(Q)$(IMG_RUSTC) --version >$(@D)/rustc-version

# ---- the application: linked against the row's lib1, or (c-dlopen) against none ----
IMG_LIB1_c-linked := gpu
IMG_LIB1_cxx := gpu_cxx
IMG_LIB1_rust := gpu_rs
IMG_LIB1_two-libs := gpu
IMG_LIB1_plain := gpu
IMG_LIB1_provider := gpu
define IMG_APP_RULE
$(IMG_DIR)/$(1)/app: $(IMG_SRC)/app.c $(IMG_DEPS) $(IMG_DIR)/$(1)/lib$(IMG_LIB1_$(1)).so
	$$(call msg,CC,$$@)
	$$(Q)$(CC) $(IMG_CFLAGS) $(IMG_SRC)/app.c -L$$(@D) -l$(IMG_LIB1_$(1)) \
		-Wl,-rpath,'$$$$ORIGIN' -ldl -o $$@
endef
$(foreach r,c-linked cxx rust two-libs plain provider,$(eval $(call IMG_APP_RULE,$(r))))

$(IMG_DIR)/c-dlopen/app: $(IMG_SRC)/app.c $(IMG_DEPS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(IMG_CFLAGS) -DAPP_NO_BUILTIN $(IMG_SRC)/app.c -ldl -o $@

IMG_BINS := $(IMG_ROWS:%=$(IMG_DIR)/%/app) $(IMG_DIR)/c-linked/libgpu.so \
	$(IMG_DIR)/c-dlopen/libgpu.so $(IMG_DIR)/cxx/libgpu_cxx.so $(IMG_DIR)/rust/libgpu_rs.so \
	$(IMG_DIR)/two-libs/libgpu.so $(IMG_DIR)/two-libs/libaux.so \
	$(IMG_DIR)/plain/libgpu.so $(IMG_DIR)/plain/libplain.so $(IMG_DIR)/provider/libgpu.so
TEST_BINS += $(IMG_BINS)
endif
