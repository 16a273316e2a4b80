//! CCC closed loop on the topology of the CCC paper's Fig. 1 (Thibaud et
//! al., ICC 2020, §I and §V): consumer A can fetch through two paths, R1–R3
//! (shared with consumer B) and R1–R2 (A's alone); B has only R1–R3. Both
//! ask for more than the network offers. B starts after A.
//!
//! ```text
//!   A ──┐        ┌── R2 ──┐   R2→R1: 6 Mbit/s (A only)
//!       R1 ──────┤        Producer
//!   B ──┘        └── R3 ──┘   R3→R1: 10 Mbit/s (A and B)
//! ```
//!
//! The paper gives no capacities for Fig. 1; these are chosen so that the
//! two claims are visible: per-link max-min fairness ("both flows get half
//! the bandwidth of the congested link R1-R3", §V) and A using its other
//! path for the rest of its demand (§I).
//!
//! The model is a time-stepped one (1 ms) in the style of `icn_sim::fluid`:
//! zero propagation delay, producers answer at once, each Data-direction
//! link is a FIFO drained at its capacity with a 50-Data buffer (a full
//! buffer drops the Data and tells that link's supervisor, Algorithm 4).
//! Every node runs the cc-core laws unchanged: `CccFlow` per flow and node,
//! a `CccSupervisor` per downstream output interface (τ = 100 ms),
//! `CccConsumer` at A and B; Interests carry objectives, Data carry
//! constraints, R1 picks a next hop per Interest in proportion to paces.

use cc_core::ccc::{
    producer_constraint_ips, Augmentation, CccConfig, CccConsumer, CccConsumerConfig, CccFlow,
    CccSupervisor,
};
use cc_core::{ConsumerLaw, DataFeedback, Duration, SendLimit, Timestamp};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::VecDeque;

const DATA_BYTES: u32 = 8400;
const DATA_BITS: f64 = DATA_BYTES as f64 * 8.0;
const C13_BPS: f64 = 10e6;
const C12_BPS: f64 = 6e6;
const ACCESS_BPS: f64 = 100e6;
const BUFFER_DATA: usize = 50;
const TICK: Duration = Duration::from_millis(1);
const FACE_R2: u64 = 2;
const FACE_R3: u64 = 3;
const FACE_PRODUCER: u64 = 9;

/// Which consumer a Data belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    A,
    B,
}

/// A Data-direction link into R1: FIFO drained at capacity, bounded.
struct Link {
    capacity_bps: f64,
    queue: VecDeque<Who>,
    credit_bits: f64,
    supervisor: CccSupervisor,
}

impl Link {
    fn new(cfg: CccConfig, capacity_bps: f64) -> Self {
        Link {
            capacity_bps,
            queue: VecDeque::new(),
            credit_bits: 0.0,
            supervisor: CccSupervisor::new(cfg, capacity_bps),
        }
    }

    /// Queues a Data; a full buffer drops it (Algorithm 4's signal).
    fn offer(&mut self, who: Who) {
        if self.queue.len() >= BUFFER_DATA {
            self.supervisor.on_drop();
        } else {
            self.queue.push_back(who);
        }
    }

    /// Data that leave the link during one tick.
    fn drain(&mut self) -> Vec<Who> {
        self.credit_bits += self.capacity_bps * TICK.as_secs_f64();
        let mut out = Vec::new();
        while self.credit_bits >= DATA_BITS {
            let Some(w) = self.queue.pop_front() else {
                // An idle link does not bank credit.
                self.credit_bits = 0.0;
                break;
            };
            self.credit_bits -= DATA_BITS;
            out.push(w);
        }
        out
    }
}

/// One consumer and R1's state for its flow.
struct Consumer {
    law: CccConsumer,
    at_r1: CccFlow,
    access: CccSupervisor,
    credit: f64,
    start: Timestamp,
}

/// Delivered Data bits per consumer and per path, over a window.
#[derive(Default, Clone, Copy, Debug)]
struct Tally {
    a_via_r2: f64,
    a_via_r3: f64,
    b_via_r3: f64,
}

struct Net {
    a: Consumer,
    b: Consumer,
    a_at_r2: CccFlow,
    a_at_r3: CccFlow,
    b_at_r3: CccFlow,
    r2: Link,
    r3: Link,
    rng: StdRng,
}

fn flow_with(cfg: CccConfig, hops: &[(u64, f64)]) -> CccFlow {
    let mut f = CccFlow::new(cfg);
    for &(face, bps) in hops {
        f.add_next_hop(face, producer_constraint_ips(bps, f64::from(DATA_BYTES)))
            .unwrap();
    }
    f
}

fn consumer(cfg: CccConfig, start: Timestamp, hops: &[(u64, f64)]) -> Consumer {
    Consumer {
        law: CccConsumer::new(CccConsumerConfig {
            target_rate_bps: 20e6,
            initial_data_size_bytes: f64::from(DATA_BYTES),
            ..CccConsumerConfig::default()
        }),
        at_r1: flow_with(cfg, hops),
        access: CccSupervisor::new(cfg, ACCESS_BPS),
        credit: 0.0,
        start,
    }
}

impl Net {
    fn new(b_start: Timestamp, augmentation: Augmentation) -> Self {
        Self::seeded(b_start, augmentation, 11)
    }

    fn seeded(b_start: Timestamp, augmentation: Augmentation, seed: u64) -> Self {
        let cfg = CccConfig {
            augmentation,
            ..CccConfig::default()
        };
        let producer = [(FACE_PRODUCER, 1e9)];
        Net {
            a: consumer(
                cfg,
                Timestamp::ZERO,
                &[(FACE_R2, C12_BPS), (FACE_R3, C13_BPS)],
            ),
            b: consumer(cfg, b_start, &[(FACE_R3, C13_BPS)]),
            a_at_r2: flow_with(cfg, &producer),
            a_at_r3: flow_with(cfg, &producer),
            b_at_r3: flow_with(cfg, &producer),
            r2: Link::new(cfg, C12_BPS),
            r3: Link::new(cfg, C13_BPS),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Interests of one consumer for one tick, forwarded hop by hop; the
    /// producer answers each at once into the link it came through.
    fn send(&mut self, now: Timestamp, who: Who) {
        let c = match who {
            Who::A => &mut self.a,
            Who::B => &mut self.b,
        };
        if now < c.start {
            return;
        }
        let interests_per_sec = match c.law.limit() {
            SendLimit::Rate {
                interests_per_sec, ..
            } => interests_per_sec,
            // Before the first Data: a window per round trip, and a round
            // trip in this model (no propagation delay) is one tick.
            SendLimit::Window { interests } => interests / TICK.as_secs_f64(),
        };
        c.credit += interests_per_sec * TICK.as_secs_f64();
        while c.credit >= 1.0 {
            c.credit -= 1.0;
            c.law.on_interest_sent(now, false);
            c.at_r1.on_objective(now, c.law.objective_ips());
            c.at_r1.on_interest(now);
            let face = c.at_r1.choose_next_hop(&mut self.rng).unwrap();
            let hop_objective = c
                .at_r1
                .next_hops()
                .iter()
                .find(|h| h.face == face)
                .unwrap()
                .objective_ips;
            let (upstream, link) = match (who, face) {
                (Who::A, FACE_R2) => (&mut self.a_at_r2, &mut self.r2),
                (Who::A, _) => (&mut self.a_at_r3, &mut self.r3),
                (Who::B, _) => (&mut self.b_at_r3, &mut self.r3),
            };
            upstream.on_objective(now, hop_objective);
            upstream.on_interest(now);
            upstream.on_data(now, DATA_BYTES);
            link.offer(who);
        }
    }

    /// Data leaving one link reach R1 (constraint from the upstream node),
    /// then the consumer (constraint from R1).
    fn deliver(&mut self, now: Timestamp, via_r2: bool, tally: &mut Tally) {
        let out = if via_r2 {
            self.r2.drain()
        } else {
            self.r3.drain()
        };
        for who in out {
            let (upstream, c, face) = match (who, via_r2) {
                (Who::A, true) => (&self.a_at_r2, &mut self.a, FACE_R2),
                (Who::A, false) => (&self.a_at_r3, &mut self.a, FACE_R3),
                (Who::B, _) => (&self.b_at_r3, &mut self.b, FACE_R3),
            };
            c.at_r1
                .on_constraint(now, face, upstream.constraint_out_ips());
            c.at_r1.on_data(now, DATA_BYTES);
            let fb = DataFeedback {
                rtt: Some(TICK),
                data_size_bytes: DATA_BYTES,
                pace_constraint_ips: Some(c.at_r1.constraint_out_ips()),
                ..DataFeedback::default()
            };
            c.law.on_data(now, &fb);
            match (who, via_r2) {
                (Who::A, true) => tally.a_via_r2 += DATA_BITS,
                (Who::A, false) => tally.a_via_r3 += DATA_BITS,
                (Who::B, _) => tally.b_via_r3 += DATA_BITS,
            }
        }
    }

    /// Every supervisor whose period is due (Algorithm 3).
    fn supervise(&mut self, now: Timestamp) {
        if now >= self.r3.supervisor.poll_timeout() {
            let flows = &mut [&mut self.a_at_r3, &mut self.b_at_r3];
            self.r3.supervisor.supervise(now, flows);
        }
        if now >= self.r2.supervisor.poll_timeout() {
            self.r2.supervisor.supervise(now, &mut [&mut self.a_at_r2]);
        }
        for c in [&mut self.a, &mut self.b] {
            if now >= c.access.poll_timeout() {
                c.access.supervise(now, &mut [&mut c.at_r1]);
            }
        }
    }

    /// Runs from `from` to `to`; returns what was delivered meanwhile.
    fn run(&mut self, from: Timestamp, to: Timestamp) -> Tally {
        let mut tally = Tally::default();
        let mut now = from;
        while now < to {
            self.supervise(now);
            self.send(now, Who::A);
            self.send(now, Who::B);
            self.deliver(now, true, &mut tally);
            self.deliver(now, false, &mut tally);
            now += TICK;
        }
        tally
    }
}

fn bps(bits: f64, window: Duration) -> f64 {
    bits / window.as_secs_f64()
}

/// Rates delivered over [15 s, 25 s) with B starting at 5 s:
/// (A via R2, A via R3, B via R3), bit/s.
fn competition(augmentation: Augmentation, seed: u64) -> (f64, f64, f64) {
    let mut net = Net::seeded(secs(5), augmentation, seed);
    net.run(Timestamp::ZERO, secs(15));
    let w = Duration::from_secs(10);
    let t = net.run(secs(15), secs(25));
    (bps(t.a_via_r2, w), bps(t.a_via_r3, w), bps(t.b_via_r3, w))
}

#[test]
fn alone_a_uses_both_paths() {
    for aug in [Augmentation::SpareShare, Augmentation::MaxMinShare] {
        let mut net = Net::new(secs(1_000), aug);
        net.run(Timestamp::ZERO, secs(5));
        let w = Duration::from_secs(5);
        let t = net.run(secs(5), secs(10));
        let (r2, r3) = (bps(t.a_via_r2, w), bps(t.a_via_r3, w));
        assert!(r2 > 0.8 * C12_BPS, "{aug:?}: A via R2 {r2}");
        assert!(r3 > 0.8 * C13_BPS, "{aug:?}: A via R3 {r3}");
    }
}

#[test]
fn max_min_reading_splits_the_shared_link_and_a_keeps_its_other_path() {
    for seed in 0..5 {
        let (a2, a3, b3) = competition(Augmentation::MaxMinShare, seed);
        // Per-link max-min on R1–R3: both flows unsatisfied → half each.
        let half = C13_BPS / 2.0;
        assert!(
            (a3 - half).abs() < 0.1 * half,
            "seed {seed}: A via R3 {a3}, B {b3}"
        );
        assert!(
            (b3 - half).abs() < 0.1 * half,
            "seed {seed}: B via R3 {b3}, A {a3}"
        );
        // The shared link stays busy, and A still fills its own path.
        assert!(
            a3 + b3 > 0.9 * C13_BPS,
            "seed {seed}: R1–R3 carries {}",
            a3 + b3
        );
        assert!(a2 > 0.9 * C12_BPS, "seed {seed}: A via R2 {a2}");
        // Hence A ends with more than B: its share of R1–R3 plus R1–R2.
        assert!(a2 + a3 > b3 + 0.5 * C12_BPS);
    }
}

/// The literal Algorithm 6 keeps both paths and the shared link busy, but
/// once the constraints add up to C without a drop nothing moves them, so
/// the split is whatever the last cut left: from 11/89 to 69/31 over seeds
/// 0..12 (for the record: not a property anyone should rely on).
#[test]
fn literal_reading_uses_the_paths_but_not_a_fair_split() {
    let mut worst_gap: f64 = 0.0;
    for seed in 0..6 {
        let (a2, a3, b3) = competition(Augmentation::SpareShare, seed);
        assert!(
            a3 + b3 > 0.9 * C13_BPS,
            "seed {seed}: R1–R3 carries {}",
            a3 + b3
        );
        assert!(a2 > 0.9 * C12_BPS, "seed {seed}: A via R2 {a2}");
        worst_gap = worst_gap.max((a3 - b3).abs());
    }
    assert!(
        worst_gap > 0.3 * C13_BPS,
        "literal reading came out fair for every seed (gap {worst_gap})"
    );
}

fn secs(s: u64) -> Timestamp {
    Timestamp::from_millis(s * 1000)
}
