// SPDX-License-Identifier: BSD-2-Clause
//! The inflight probe contract for Rust, with no dependencies: one macro, [`contract!`], that
//! a program invokes once and that defines its three semaphore-guarded USDT probes
//! (`buf_alloc`, `buf_free`, `stage`), their semaphores and the class/stage names note.
//! It needs `core::arch::asm!`/`global_asm!` (Rust 1.59) and nothing else: it builds with
//! Debian's rustc 1.63 (GNU ld) and with current stable (LLD by default), in debug and release,
//! with or without `--gc-sections`. Recipe and layout: probes/rust/README.md.
//!
//! ```ignore
//! mod probes {
//!     inflight_probes::contract! {
//!         provider prover;
//!         classes { input = 0, scratch = 1, table = 3 }
//!         stages { read = 0 entry, compute = 1 plain, done = 3 terminal }
//!     }
//! }
//! // anywhere: while nobody listens, a test of a 2-byte semaphore and a branch not taken
//! probes::buf_alloc(buf.as_ptr() as u64, probes::class::input, 4096, item);
//! probes::stage(item, probes::stage_id::compute);
//! if probes::buf_alloc_enabled() { /* costly arguments */ }
//! ```
//!
//! What the macro emits:
//! - per probe site (each inlined copy of `buf_alloc`, `buf_free`, `stage`): a 1-byte `nop`;
//!   a version-3 stapsdt note in `.note.stapsdt` (site, `_.stapsdt.base`, semaphore;
//!   provider, name, argument string such as `8@%rdi 4@%esi`); a PC-relative reference to
//!   the site in `.inflight.keep`, flagged SHF_GNU_RETAIN, so that `--gc-sections` can never
//!   remove code whose note stays behind (linkers keep non-allocated notes but never follow
//!   their relocations: the cause of notes pointing at 0x1b in gc'd Rust builds);
//! - once: the semaphores `PROVIDER_PROBE_semaphore` (hidden, 2 bytes each) alone in one
//!   page of `.probes` (aligned to and padded to 4096), never in a file page that LLD or
//!   mold also map in their RELRO segment; `_.stapsdt.base`; the `.note.inflight` names note.
#![no_std]

/// Defines the contract's probes for one program (invoke it once, in one module).
///
/// `provider NAME;` is optional (default `prover`). Class and stage ids must be < 16 (checked
/// at compile time); stage flags are `entry`, `plain` or `terminal`. Defines in the invoking
/// module: `buf_alloc(buf, cls, bytes, owner)`, `buf_free(buf, cls, bytes)`,
/// `stage(owner, stage)`, `buf_alloc_enabled()`, `buf_free_enabled()`, `stage_enabled()`,
/// and the id constants `class::NAME` and `stage_id::NAME` (`u32`).
#[macro_export]
macro_rules! contract {
    (classes $($rest:tt)*) => {
        $crate::contract! { provider prover; classes $($rest)* }
    };
    (provider $p:ident;
     classes { $($cname:ident = $cid:literal),* $(,)? }
     stages { $($sname:ident = $sid:literal $sflag:ident),* $(,)? }) => {
        /// The program's buffer class ids (the names note names them).
        #[allow(non_upper_case_globals, dead_code)]
        pub mod class {
            $(pub const $cname: u32 = $cid;)*
        }
        /// The program's stage ids.
        #[allow(non_upper_case_globals, dead_code)]
        pub mod stage_id {
            $(pub const $sname: u32 = $sid;)*
        }
        $(const _: () = assert!($cid < 16, "class ids must be < 16");)*
        $(const _: () = assert!($sid < 16, "stage ids must be < 16");)*
        $($crate::__stage_flag!($sflag);)*

        ::core::arch::global_asm!(
            // the semaphores: one page of their own, file-backed (PROGBITS)
            ".pushsection .probes,\"aw\",@progbits",
            ".balign 4096",
            $crate::__sema_def!($p, buf_alloc),
            $crate::__sema_def!($p, buf_free),
            $crate::__sema_def!($p, stage),
            ".balign 4096",
            ".popsection",
            $crate::__stapsdt_base!(),
            ".pushsection .inflight.keep,\"aR\",@progbits",
            ".balign 4",
            concat!(".4byte ", stringify!($p), "_buf_alloc_semaphore - ."),
            concat!(".4byte ", stringify!($p), "_buf_free_semaphore - ."),
            concat!(".4byte ", stringify!($p), "_stage_semaphore - ."),
            ".4byte _.stapsdt.base - .",
            ".popsection",
            // the names note: owner "inflight", type "INF1", NUL-terminated text
            ".pushsection .note.inflight,\"a\",@note",
            ".balign 4",
            ".4byte 9, 2f - 1f, 0x31464e49",
            ".asciz \"inflight\"",
            ".balign 4",
            "1: .ascii \"inflight-contract 1\\n\"",
            concat!(".ascii \"provider ", stringify!($p), "\\n\""),
            $(concat!(".ascii \"class ", stringify!($cid), " ", stringify!($cname), "\\n\""),)*
            $(concat!(".ascii \"stage ", stringify!($sid), " ", stringify!($sname), " ",
                      stringify!($sflag), "\\n\""),)*
            ".byte 0",
            "2: .balign 4",
            ".popsection",
        );

        $crate::__probe!($p, buf_alloc, buf_alloc_enabled,
                         "8@{0} 4@{1:e} 8@{2} 8@{3}",
                         (buf: u64, cls: u32, bytes: u64, owner: u64));
        $crate::__probe!($p, buf_free, buf_free_enabled, "8@{0} 4@{1:e} 8@{2}",
                         (buf: u64, cls: u32, bytes: u64));
        $crate::__probe!($p, stage, stage_enabled, "8@{0} 4@{1:e}",
                         (owner: u64, stage: u32));
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __stage_flag {
    (entry) => {};
    (plain) => {};
    (terminal) => {};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __sema_def {
    ($p:ident, $probe:ident) => {
        concat!(
            ".globl ", stringify!($p), "_", stringify!($probe), "_semaphore\n",
            ".hidden ", stringify!($p), "_", stringify!($probe), "_semaphore\n",
            ".type ", stringify!($p), "_", stringify!($probe), "_semaphore, @object\n",
            ".size ", stringify!($p), "_", stringify!($probe), "_semaphore, 2\n",
            stringify!($p), "_", stringify!($probe), "_semaphore: .2byte 0"
        )
    };
}

/// `_.stapsdt.base`, shared with C's <sys/sdt.h> copy through the same COMDAT group.
#[doc(hidden)]
#[macro_export]
macro_rules! __stapsdt_base {
    () => {
        concat!(
            ".ifndef _.stapsdt.base\n",
            ".pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n",
            ".weak _.stapsdt.base\n",
            ".hidden _.stapsdt.base\n",
            "_.stapsdt.base: .space 1\n",
            ".size _.stapsdt.base, 1\n",
            ".popsection\n",
            ".endif"
        )
    };
}

/// One probe: its is-enabled test and the guarded site. Arguments go in registers
/// (`in(reg)`): every USDT consumer reads those; `{1:e}` names a u32's 32-bit register.
#[doc(hidden)]
#[macro_export]
macro_rules! __probe {
    ($p:ident, $probe:ident, $enabled:ident, $args:literal,
     ($a0:ident: $t0:ty, $a1:ident: $t1:ty $(, $an:ident: $tn:ty)*)) => {
        /// True while a tracer is attached to this probe (the kernel raises its semaphore).
        #[inline(always)]
        #[allow(dead_code)]
        pub fn $enabled() -> bool {
            extern "C" {
                #[link_name = concat!(stringify!($p), "_", stringify!($probe), "_semaphore")]
                static SEMAPHORE: u16;
            }
            // volatile: the kernel writes it behind the compiler's back
            unsafe { ::core::ptr::read_volatile(::core::ptr::addr_of!(SEMAPHORE)) != 0 }
        }

        /// The probe, behind its semaphore.
        #[inline(always)]
        #[allow(dead_code)]
        pub fn $probe($a0: $t0, $a1: $t1 $(, $an: $tn)*) {
            if $enabled() {
                unsafe {
                    ::core::arch::asm!(
                        "990: nop",
                        ".pushsection .note.stapsdt,\"?\",@note",
                        ".balign 4",
                        ".4byte 992f - 991f, 994f - 993f, 3",
                        "991: .asciz \"stapsdt\"",
                        "992: .balign 4",
                        "993: .8byte 990b",
                        ".8byte _.stapsdt.base",
                        concat!(".8byte ", stringify!($p), "_", stringify!($probe), "_semaphore"),
                        concat!(".asciz \"", stringify!($p), "\""),
                        concat!(".asciz \"", stringify!($probe), "\""),
                        concat!(".asciz \"", $args, "\""),
                        "994: .balign 4",
                        ".popsection",
                        ".pushsection .inflight.keep,\"aR?\",@progbits",
                        ".balign 4",
                        ".4byte 990b - .",
                        ".popsection",
                        in(reg) $a0, in(reg) $a1 $(, in(reg) $an)*,
                        options(att_syntax, nomem, nostack, preserves_flags)
                    );
                }
            }
        }
    };
}
