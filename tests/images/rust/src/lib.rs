// SPDX-License-Identifier: BSD-2-Clause
//! libgpu_rs.so: the library of tests/images/gpu_lib.h in Rust, a cdylib with the contract of
//! its own (probes/rust): classes weights 0, kbuf 1; stages upload 0 entry, kernel 1, fin 2,
//! the names and numbers of libgpu.so. gpu_begin: stage upload, alloc weights 307200, alloc
//! kbuf 71680 (owner = the item), fill them (gpu_fill), stage kernel; gpu_end: free kbuf, free
//! weights, stage fin, return the digest (gpu_digest). One probe site per probe (the
//! functions below); the semaphores are hidden, so the library's are its own.

mod probes {
    inflight_probes::contract! {
        provider prover;
        classes { weights = 0, kbuf = 1 }
        stages { upload = 0 entry, kernel = 1 plain, fin = 2 plain }
    }
}
use probes::{class, stage_id};

const WEIGHTS_BYTES: usize = 307200;
const KBUF_BYTES: usize = 71680;

#[inline(never)]
fn buffer_new(cls: u32, bytes: usize, owner: u64) -> Vec<u8> {
    let v = vec![0u8; bytes];
    probes::buf_alloc(v.as_ptr() as u64, cls, bytes as u64, owner);
    v
}

#[inline(never)]
fn buffer_drop(v: Vec<u8>, cls: u32) {
    probes::buf_free(v.as_ptr() as u64, cls, v.len() as u64);
    drop(v);
}

#[inline(never)]
fn enter(owner: u64, stage: u32) {
    probes::stage(owner, stage);
}

fn fnv1a(p: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in p {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    h
}

pub struct Job {
    item: u64,
    w: Vec<u8>,
    k: Vec<u8>,
}

/// # Safety
/// `input` points at `n` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn gpu_begin(item: u64, input: *const u8, n: usize) -> *mut Job {
    if input.is_null() || n == 0 {
        return std::ptr::null_mut();
    }
    let input = std::slice::from_raw_parts(input, n);
    enter(item, stage_id::upload);
    let mut w = buffer_new(class::weights, WEIGHTS_BYTES, item);
    let mut k = buffer_new(class::kbuf, KBUF_BYTES, item);
    for (i, b) in w.iter_mut().enumerate() {
        *b = (item as usize).wrapping_add(3 * i) as u8;
    }
    for (j, b) in k.iter_mut().enumerate() {
        *b = w[j] ^ input[j % n];
    }
    enter(item, stage_id::kernel);
    Box::into_raw(Box::new(Job { item, w, k }))
}

/// # Safety
/// `job` came from gpu_begin and is ended once.
#[no_mangle]
pub unsafe extern "C" fn gpu_end(job: *mut Job) -> u64 {
    let j = Box::from_raw(job);
    let d = fnv1a(&j.k) ^ (fnv1a(&j.w[WEIGHTS_BYTES - 64..]) << 1);
    let Job { item, w, k } = *j;
    buffer_drop(k, class::kbuf);
    buffer_drop(w, class::weights);
    enter(item, stage_id::fin);
    d
}
