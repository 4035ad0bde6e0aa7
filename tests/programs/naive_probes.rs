// SPDX-License-Identifier: BSD-2-Clause
//! A deliberately naive implementation of the inflight contract for Rust, with the same
//! `contract!` macro as probes/rust (a drop-in: the test matrix builds the unchanged Rust
//! example against it), laid out the way crates without the two fixes of probes/rust do:
//! - the semaphores are plain `#[link_section = ".probes"]` statics, so LLD may place them
//!   in the file page it maps twice (end of RELRO, start of RW);
//! - no `.inflight.keep` reference: --gc-sections removes a function with a probe and keeps
//!   its note (a `#[no_mangle]` function nobody calls is there to be removed).
//! Not for use: it shows the tracer what real programs built this way look like.
#![no_std]

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

        $crate::__sema_def!($p, buf_alloc);
        $crate::__sema_def!($p, buf_free);
        $crate::__sema_def!($p, stage);
        /// never called: --gc-sections removes it, its note stays
        #[no_mangle]
        pub extern "C" fn inflight_naive_unused(owner: u64) {
            stage(owner, 0);
        }
        ::core::arch::global_asm!(
            $crate::__stapsdt_base!(),
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
        const _: () = {
            #[export_name = concat!(stringify!($p), "_", stringify!($probe), "_semaphore")]
            #[link_section = ".probes"]
            static mut SEMAPHORE: u16 = 0;
        };
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
                        in(reg) $a0, in(reg) $a1 $(, in(reg) $an)*,
                        options(att_syntax, nomem, nostack, preserves_flags)
                    );
                }
            }
        }
    };
}
