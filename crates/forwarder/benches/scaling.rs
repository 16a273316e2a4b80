//! Engine cost per exchange along the work axes of issue 21: FIB size, PIT
//! occupancy, CS size, name length and face count, one axis at a time
//! from a small base (10 FIB prefixes, empty PIT, 1 024-entry CS at its cap,
//! 4-component names, one consumer and one producer face).
//!
//! An exchange is one Interest in on a consumer face, forwarded to the
//! producer face, and its Data back (PIT insert and satisfy, FIB LPM, CS
//! insert with LRU eviction at the cap, both egress encodings). Names are
//! unique for ever (a counter in the setup closure, which criterion does not
//! time), so the CS never answers and the PIT never aggregates.
//!
//! `cargo bench -p icn-forwarder --bench scaling -- --quick [AXIS]`, e.g.
//! `scaling/fib`. Table fills for the 1 M points take seconds each. On a
//! loaded machine, `ICN_SCALING_ROUNDS=7 cargo bench -p icn-forwarder
//! --bench scaling` runs the points interleaved instead (see [`interleaved`];
//! `ICN_SCALING_AXES=cs,pit` limits it to some axes).

use std::time::{Duration as StdDuration, Instant};

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use criterion::{criterion_group, BatchSize, BenchmarkId, Criterion, Throughput};
use icn_forwarder::engine::{EngineConfig, FaceId, FaceParams, Forwarder};
use icn_tlv::{Component, Data, Interest, Name};

/// One point of the space: every axis at once.
#[derive(Debug, Clone, Copy)]
struct Point {
    fib_prefixes: usize,
    pit_pending: usize,
    cs_entries: usize,
    name_components: usize,
    consumer_faces: usize,
}

const BASE: Point = Point {
    fib_prefixes: 10,
    pit_pending: 0,
    cs_entries: 1024,
    name_components: 4,
    consumer_faces: 1,
};

/// Content bytes of each Data (small, so the 1 M-entry CS fits in memory).
const CONTENT_BYTES: usize = 100;

fn t0() -> Timestamp {
    Timestamp::from_secs_f64(1.0)
}

fn prefix(i: usize) -> Name {
    Name::root()
        .append(Component::generic(Bytes::from_static(b"bench")))
        .append(Component::generic(Bytes::from(format!("p{i}"))))
}

/// Name `k` under FIB prefix `k % fib`, `len` components long in all.
fn name(p: &Point, tag: &'static [u8], k: u64) -> Name {
    let mut n = prefix(k as usize % p.fib_prefixes);
    for _ in 2..p.name_components.saturating_sub(1).max(2) {
        n = n.append(Component::generic(Bytes::from_static(tag)));
    }
    n.append(Component::segment(k))
}

fn interest(n: &Name, nonce: u32, lifetime: Duration) -> Bytes {
    let mut i = Interest::new(n.clone());
    i.nonce = Some(nonce);
    i.lifetime = Some(lifetime);
    i.encode()
}

fn data(n: &Name, content: &Bytes) -> Bytes {
    let mut d = Data::new(n.clone(), content.clone());
    d.meta.freshness_period = Some(Duration::from_secs(3600));
    d.encode_signed_digest_sha256()
}

struct Rig {
    fwd: Forwarder,
    producer: FaceId,
    gen: Gen,
}

/// Makes the wires of each next unique exchange (untimed).
struct Gen {
    p: Point,
    consumers: Vec<FaceId>,
    content: Bytes,
    next: u64,
}

impl Gen {
    /// The wires of the next unique exchange and its consumer face.
    fn wires(&mut self) -> (Bytes, Bytes, FaceId) {
        let k = self.next;
        self.next += 1;
        let n = name(&self.p, b"obj", k);
        let face = self.consumers[k as usize % self.consumers.len()];
        (
            interest(&n, 0x8000_0000 | k as u32, Duration::from_secs(4)),
            data(&n, &self.content),
            face,
        )
    }
}

impl Rig {
    fn new(p: Point) -> Rig {
        let cfg = EngineConfig {
            pit_max_entries: p.pit_pending + 65_536,
            fib_max_entries: p.fib_prefixes + 16,
            cs_max_packets: p.cs_entries,
            max_interest_lifetime: Duration::from_secs(7200),
            ..EngineConfig::default()
        };
        let mut fwd = Forwarder::new(cfg, 1);
        let consumers = (0..p.consumer_faces)
            .map(|i| fwd.add_face(t0(), FaceParams::local(format!("unix:///bench/c{i}"))))
            .collect();
        let producer = fwd.add_face(t0(), FaceParams::non_local("udp4://192.0.2.1:6363"));
        for i in 0..p.fib_prefixes {
            fwd.fib_add_nexthop(&prefix(i), producer, 10)
                .expect("FIB sized for the point");
        }
        let mut rig = Rig {
            fwd,
            producer,
            gen: Gen {
                p,
                consumers,
                content: Bytes::from(vec![0xab; CONTENT_BYTES]),
                next: 0,
            },
        };
        rig.fill(p);
        rig
    }

    /// Pending PIT entries that never get Data, then the CS to its cap.
    fn fill(&mut self, p: Point) {
        let c0 = self.gen.consumers[0];
        for k in 0..p.pit_pending as u64 {
            // Segments far above the exchanges' own, so no name is shared.
            let n = name(&p, b"pending", k | 1 << 40);
            let i = interest(&n, k as u32, Duration::from_secs(3600));
            self.fwd.handle_packet(t0(), c0, i);
            while self.fwd.poll_transmit(t0()).is_some() {}
        }
        assert_eq!(
            self.fwd.counters().n_pit_entries as usize,
            p.pit_pending,
            "PIT filled"
        );
        // The CS cap plus a margin, so it evicts from the first timed exchange.
        for _ in 0..p.cs_entries + 64 {
            let (i, d, face) = self.gen.wires();
            self.exchange(i, d, face);
        }
        assert_eq!(self.fwd.counters().n_cs_entries as usize, p.cs_entries);
    }

    fn exchange(&mut self, i: Bytes, d: Bytes, face: FaceId) {
        exchange(&mut self.fwd, self.producer, i, d, face);
    }
}

/// One Interest in on `face`, out to `producer`; its Data back to `face`.
fn exchange(fwd: &mut Forwarder, producer: FaceId, i: Bytes, d: Bytes, face: FaceId) {
    fwd.handle_packet(t0(), face, i);
    let up = fwd.poll_transmit(t0()).expect("Interest forwarded");
    debug_assert_eq!(up.face, producer);
    fwd.handle_packet(t0(), producer, d);
    let down = fwd.poll_transmit(t0()).expect("Data returned");
    debug_assert_eq!(down.face, face);
}

fn axis(c: &mut Criterion, name_: &str, points: &[(usize, Point)]) {
    let mut g = c.benchmark_group(format!("scaling/{name_}"));
    g.throughput(Throughput::Elements(1));
    g.sample_size(30);
    g.warm_up_time(StdDuration::from_secs(1));
    g.measurement_time(StdDuration::from_secs(3));
    for &(x, p) in points {
        let Rig {
            mut fwd,
            producer,
            mut gen,
        } = Rig::new(p);
        g.bench_with_input(BenchmarkId::from_parameter(x), &p, |b, _| {
            b.iter_batched(
                || gen.wires(),
                |(i, d, face)| exchange(&mut fwd, producer, i, d, face),
                BatchSize::SmallInput,
            )
        });
        // Pending entries stay, nothing else does.
        assert_eq!(fwd.counters().n_pit_entries as usize, p.pit_pending);
    }
    g.finish();
}

/// Every axis: its name and its points (value on the axis, the point).
fn axes() -> Vec<(&'static str, Vec<(usize, Point)>)> {
    let along = |vals: &[usize], set: fn(&mut Point, usize)| -> Vec<(usize, Point)> {
        vals.iter()
            .map(|&v| {
                let mut p = BASE;
                set(&mut p, v);
                (v, p)
            })
            .collect()
    };
    vec![
        (
            "fib",
            along(&[10, 10_000, 1_000_000], |p, v| p.fib_prefixes = v),
        ),
        (
            "pit",
            along(&[0, 2_000, 20_000, 200_000], |p, v| p.pit_pending = v),
        ),
        (
            "cs",
            along(&[0, 1_000, 100_000, 1_000_000], |p, v| p.cs_entries = v),
        ),
        ("name", along(&[3, 8, 20], |p, v| p.name_components = v)),
        (
            "faces",
            along(&[1, 100, 10_000], |p, v| p.consumer_faces = v),
        ),
    ]
}

fn bench_scaling(c: &mut Criterion) {
    for (name_, points) in axes() {
        axis(c, name_, &points);
    }
}

/// The interleaved mode (`ICN_SCALING_ROUNDS=R`, `ICN_SCALING_EXCHANGES=N`):
/// all points of an axis built at once, then R rounds that each time N
/// exchanges at every point in turn (wires made beforehand, untimed), and
/// the min / median / max of the rounds' wall ns per exchange and the min /
/// median of the thread's CPU ns. On a shared machine the minima and the
/// CPU time are the figures least disturbed by other processes, and
/// interleaving spreads their load over every point alike.
fn interleaved(rounds: usize, n: u64) {
    println!(
        "axis\tvalue\twall_min\twall_median\twall_max\tcpu_min\tcpu_median\t(ns/exchange; {rounds} rounds of {n})"
    );
    // `ICN_SCALING_AXES=cs,pit` keeps only the named axes.
    let only = std::env::var("ICN_SCALING_AXES").ok();
    for (name_, points) in axes() {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|a| name_.ends_with(a)))
        {
            continue;
        }
        let mut rigs: Vec<(usize, Rig)> = points.iter().map(|&(x, p)| (x, Rig::new(p))).collect();
        let mut ns: Vec<Vec<f64>> = vec![Vec::new(); rigs.len()];
        let mut cpu_ns = ns.clone();
        for _ in 0..rounds {
            for (j, (_, rig)) in rigs.iter_mut().enumerate() {
                let wires: Vec<_> = (0..n).map(|_| rig.gen.wires()).collect();
                let (t, cpu) = (Instant::now(), thread_cpu_ns());
                for (i, d, face) in wires {
                    rig.exchange(i, d, face);
                }
                let (wall, cpu) = (t.elapsed().as_nanos() as f64, thread_cpu_ns() - cpu);
                ns[j].push(wall / n as f64);
                cpu_ns[j].push(cpu as f64 / n as f64);
            }
        }
        for (((x, _), v), c) in rigs.iter().zip(ns.iter_mut()).zip(cpu_ns.iter_mut()) {
            v.sort_by(f64::total_cmp);
            c.sort_by(f64::total_cmp);
            println!(
                "{name_}\t{x}\t{:.0}\t{:.0}\t{:.0}\t{:.0}\t{:.0}",
                v[0],
                v[v.len() / 2],
                v[v.len() - 1],
                c[0],
                c[c.len() / 2]
            );
        }
    }
}

/// CPU time of this thread, ns: on a shared machine it leaves out the time
/// other processes held the core (not their cache pollution).
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

fn main() {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(rounds) = env("ICN_SCALING_ROUNDS") {
        interleaved(
            rounds.max(1) as usize,
            env("ICN_SCALING_EXCHANGES").unwrap_or(20_000).max(1),
        );
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

criterion_group!(benches, bench_scaling);
