//! Steady-state wall-clock driver of the scheduler bench loop (the "steady
//! state loop" of `crates/cc-core/README.md`): the same configuration and
//! per-iteration work as `benches/scheduler.rs` (one dequeue, the sojourn,
//! one enqueue of the same packet; 1 µs per iteration, 8000-bit packets on
//! a 10 Gb/s face), but timed over a long run of iterations at once, so
//! PECN period ends (one every 100 000 iterations) are averaged in rather
//! than landing in some criterion samples and not others.
//!
//! `cargo bench -p cc-core --bench scheduler_steady [-- ITERS ROUNDS [FLOWS [SIDE]]]`
//! (defaults: 3·10⁶ iterations = 30 periods, 3 rounds, flows 1, 100,
//! 10 000 and 100 000; SIDE 1 runs only the FIFO, 2 only the tree, so
//! valgrind counts one side at a time). Each round runs the FIFO then the
//! tree at every flow count, interleaved; it prints wall and thread-CPU ns per
//! iteration and the ratios (the CPU figures are the steadier ones on a
//! shared machine).
//! Under `valgrind --tool=callgrind` pass a small ITERS and one flow count.

use cc_core::qsccp::{CdsScheduler, Dequeue, QsccpConfig, ServiceClass};
use cc_core::{Duration, Timestamp};
use std::hint::black_box;
use std::time::Instant;

const SIZE_BITS: u32 = 8_000;

#[path = "common/fifo.rs"]
mod fifo;
use fifo::{Fifo, Queued};

fn class_of(flow: u64) -> ServiceClass {
    ServiceClass::ALL[((flow + 7) % 8) as usize]
}

/// CPU time of this thread, ns (leaves out the time other processes held
/// the core on a shared machine, not their cache pollution).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall and CPU ns per iteration since (`t`, `cpu`).
fn per_iter(t: Instant, cpu: u64, iters: u64) -> (f64, f64) {
    let wall = t.elapsed().as_nanos() as f64;
    let cpu = (thread_cpu_ns() - cpu) as f64;
    (wall / iters as f64, cpu / iters as f64)
}

/// Wall and CPU ns per iteration of the FIFO loop over `n` entries.
fn fifo(n: usize, iters: u64) -> (f64, f64) {
    let mut q = Fifo::prefilled(n, SIZE_BITS);
    let step = Duration::from_micros(1);
    let mut now = Timestamp::ZERO;
    let (t, cpu) = (Instant::now(), thread_cpu_ns());
    for _ in 0..iters {
        now += step;
        let Some(x) = q.pop() else {
            panic!("prefilled FIFO ran dry");
        };
        black_box(now.saturating_since(x.at));
        let r = q.push(Queued {
            item: black_box(x.item),
            size_bits: x.size_bits,
            at: now,
        });
        black_box(r.is_ok());
    }
    per_iter(t, cpu, iters)
}

/// Wall and CPU ns per iteration of the tree loop over `n` backlogged flows.
fn tree(n: usize, iters: u64) -> (f64, f64) {
    let cfg = QsccpConfig {
        capacity_bps: 10_000_000_000,
        max_flows: (n as u32).max(1) * 2,
        dt_class_capacity: (n as u32).max(1) * 2,
        ..QsccpConfig::default()
    };
    let mut s: CdsScheduler<u64> = CdsScheduler::new(cfg, Timestamp::ZERO, 0x5eed);
    for i in 0..n as u64 {
        if s.enqueue(Timestamp::ZERO, class_of(i), i, Some(SIZE_BITS), i)
            .is_err()
        {
            panic!("prefill must fit");
        }
    }
    let step = Duration::from_micros(1);
    let mut now = Timestamp::ZERO;
    let (t, cpu) = (Instant::now(), thread_cpu_ns());
    for _ in 0..iters {
        now += step;
        let Dequeue::Item(x) = s.dequeue(now) else {
            panic!("a backlogged tree under its rate must yield a packet");
        };
        black_box(x.sojourn);
        let r = s.enqueue(now, x.class, x.prefix, Some(x.size_bits), x.item);
        black_box(r.is_ok());
    }
    per_iter(t, cpu, iters)
}

fn main() {
    // `cargo bench` passes `--bench`; only bare numbers are ours.
    let nums: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let iters = nums.first().copied().unwrap_or(3_000_000);
    let rounds = nums.get(1).copied().unwrap_or(3);
    let counts: Vec<usize> = match nums.get(2) {
        Some(&n) => vec![n as usize],
        None => vec![1, 100, 10_000, 100_000],
    };
    let side = nums.get(3).copied().unwrap_or(0);
    println!("iterations {iters}, rounds {rounds}");
    println!("round\tflows\tfifo_ns\ttree_ns\tratio\tfifo_cpu_ns\ttree_cpu_ns\tcpu_ratio");
    for r in 0..rounds {
        for &n in &counts {
            let (f, fc) = if side == 2 {
                (1.0, 1.0)
            } else {
                fifo(n, iters)
            };
            let (t, tc) = if side == 1 {
                (1.0, 1.0)
            } else {
                tree(n, iters)
            };
            println!(
                "{r}\t{n}\t{f:.2}\t{t:.2}\t{:.1}\t{fc:.2}\t{tc:.2}\t{:.1}",
                t / f,
                tc / fc
            );
        }
    }
}
