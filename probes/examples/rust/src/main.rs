// SPDX-License-Identifier: BSD-2-Clause
//! The Rust example program: the pipeline of probes/examples/pipeline.h with the same ids,
//! sizes, options, output and answers as the C example (probes/examples/example.c), its
//! probes from the dependency-free `inflight-probes` crate (probes/rust).
//!
//!   inflight-example [--items N] [--threads T] [--workers W] [--hold-before] [--hold-round R]
//!
//! Per process: a 64 KiB `table` (owner 0) first and freed last; items 1..N, T at a time in
//! lockstep: A read + input 4 KiB; B compute + scratch 16 KiB + result 1 KiB; C free scratch,
//! free input, write; D free result, done. A hold prints "holding" and waits for a line on
//! stdin. --workers W forks W workers that run the items; the parent holds the table.
//! Exit: 0, 2 usage, 3 failed.
use std::io::{BufRead, Write};
use std::sync::{Barrier, Mutex};

mod probes {
    inflight_probes::contract! {
        provider prover;
        classes { input = 0, scratch = 1, result = 2, table = 3 }
        stages { read = 0 entry, compute = 1 plain, write = 2 plain, done = 3 terminal }
    }
}
use probes::{class, stage_id};

const INPUT_BYTES: usize = 4096;
const SCRATCH_BYTES: usize = 16384;
const RESULT_BYTES: usize = 1024;
const TABLE_BYTES: usize = 65536;

extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn _exit(code: i32) -> !;
}

struct Opts {
    items: u64,
    threads: usize,
    workers: u32,
    hold_before: bool,
    hold_round: Option<u64>,
}

// Every buffer is born in buffer_new and dies in buffer_drop, and every stage change goes
// through enter: one probe site each, however many callers (each site is one uprobe: a
// tracer's attach and detach cost grows with their number).
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

fn hold() {
    println!("holding");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok();
}

fn table_alloc() -> Vec<u8> {
    let mut t = buffer_new(class::table, TABLE_BYTES, 0);
    t.fill(0x5a);
    t
}

fn table_free(t: Vec<u8>) {
    buffer_drop(t, class::table);
}

fn fnv1a(p: &[u8]) -> u64 {
    p.iter()
        .fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

#[derive(Default)]
struct Item {
    id: u64,
    input: Vec<u8>,
    scratch: Vec<u8>,
    result: Vec<u8>,
}

impl Item {
    fn phase_a(&mut self) {
        enter(self.id, stage_id::read);
        let id = self.id;
        self.input = buffer_new(class::input, INPUT_BYTES, id);
        for (i, b) in self.input.iter_mut().enumerate() {
            *b = id.wrapping_mul(131).wrapping_add(i as u64 * 7) as u8;
        }
    }

    fn phase_b(&mut self) {
        enter(self.id, stage_id::compute);
        self.scratch = buffer_new(class::scratch, SCRATCH_BYTES, self.id);
        self.result = buffer_new(class::result, RESULT_BYTES, self.id);
        for (j, b) in self.scratch.iter_mut().enumerate() {
            *b = self.input[j % INPUT_BYTES] ^ (j >> 12) as u8;
        }
        for (k, r) in self.result.iter_mut().enumerate() {
            *r = self.scratch[16 * k..16 * k + 16].iter().fold(0u8, |s, &b| s.wrapping_add(b));
        }
    }

    fn phase_c(&mut self) {
        buffer_drop(std::mem::take(&mut self.scratch), class::scratch);
        buffer_drop(std::mem::take(&mut self.input), class::input);
        enter(self.id, stage_id::write);
    }

    fn phase_d(&mut self) -> u64 {
        let result = std::mem::take(&mut self.result);
        let sum = fnv1a(&result);
        buffer_drop(result, class::result);
        enter(self.id, stage_id::done);
        sum
    }
}

/// One thread's share: round k takes items k*T+1 .. k*T+T, all threads in lockstep.
fn worker(o: &Opts, slot: usize, barrier: &Barrier) -> u64 {
    let t = o.threads as u64;
    let rounds = (o.items + t - 1) / t;
    let mut sum = 0u64;
    for k in 0..rounds {
        let mut it = Item { id: k * t + slot as u64 + 1, ..Default::default() };
        let mine = it.id <= o.items;
        if mine {
            it.phase_a();
        }
        barrier.wait();
        if mine {
            it.phase_b();
        }
        barrier.wait();
        if o.hold_round == Some(k) {
            if slot == 0 {
                hold();
            }
            barrier.wait();
        }
        if mine {
            it.phase_c();
        }
        barrier.wait();
        if mine {
            sum = sum.wrapping_add(it.phase_d());
        }
        barrier.wait();
    }
    sum
}

fn items(o: &Opts) -> u64 {
    let barrier = Barrier::new(o.threads);
    let total = Mutex::new(0u64);
    std::thread::scope(|s| {
        for slot in 1..o.threads {
            let (barrier, total) = (&barrier, &total);
            s.spawn(move || {
                let sum = worker(o, slot, barrier);
                let mut t = total.lock().unwrap();
                *t = t.wrapping_add(sum);
            });
        }
        let sum = worker(o, 0, &barrier);
        let mut t = total.lock().unwrap();
        *t = t.wrapping_add(sum);
    });
    let sum = *total.lock().unwrap();
    sum
}

/// Prefork: W workers run the items; the parent holds only the table.
fn run_workers(o: &Opts) -> i32 {
    let table = table_alloc();
    let mut failed = false;
    std::io::stdout().flush().ok();
    for _ in 0..o.workers {
        // SAFETY: no other thread runs yet; the child only runs the items and _exits
        let pid = unsafe { fork() };
        if pid == 0 {
            items(o);
            std::io::stdout().flush().ok();
            unsafe { _exit(0) };
        }
        failed |= pid < 0;
    }
    loop {
        let mut st = 0i32;
        if unsafe { waitpid(-1, &mut st, 0) } <= 0 {
            break;
        }
        failed |= st != 0; // exited with status 0: the whole wait status is 0
    }
    table_free(table);
    if failed {
        3
    } else {
        0
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("inflight-example: {}", msg);
    std::process::exit(2);
}

fn number(s: Option<String>, min: u64, max: u64) -> u64 {
    let s = s.unwrap_or_else(|| usage("missing value"));
    match s.parse::<u64>() {
        Ok(v) if v >= min && v <= max => v,
        _ => usage(&format!("bad number '{}' ({}..{})", s, min, max)),
    }
}

fn parse() -> Opts {
    let mut o = Opts { items: 8, threads: 1, workers: 0, hold_before: false, hold_round: None };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--hold-before" => o.hold_before = true,
            "--items" => o.items = number(args.next(), 0, 1_000_000),
            "--threads" => o.threads = number(args.next(), 1, 64) as usize,
            "--workers" => o.workers = number(args.next(), 0, 64) as u32,
            "--hold-round" => o.hold_round = Some(number(args.next(), 0, 1_000_000)),
            _ => usage(&format!("unknown option: {}", a)),
        }
    }
    if o.workers > 0 && o.hold_round.is_some() {
        usage("--hold-round holds the items, which workers run");
    }
    o
}

fn main() {
    let o = parse();
    if o.hold_before {
        hold();
    }
    if o.workers > 0 {
        std::process::exit(run_workers(&o));
    }
    let table = table_alloc();
    let sum = items(&o);
    table_free(table);
    println!("done items={} checksum=0x{:016x}", o.items, sum);
}
