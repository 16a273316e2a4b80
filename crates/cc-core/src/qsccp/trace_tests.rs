//! Decision trace of the CDS scheduler under seeded random workloads.
//!
//! Every observable decision (each dequeue's item, class, prefix, size,
//! sojourn and rate bits, each wait instant, each rejection and its reason,
//! rates, φ, class capacities and counters) is folded into one 64-bit
//! fingerprint per workload. The expected values were recorded with the
//! per-packet path of commit 06fb7f0 (before issue 21's second scheduler
//! round), so a change of the per-packet code that alters any decision, or
//! any PECN rate bit, fails here. A deliberate change of behaviour must
//! re-record them and say why in its commit.

use super::*;
use crate::qsccp::PecnVariant;
use crate::time::Duration;

/// [`crate::splitmix`]: a fixed generator, so the workloads never change
/// with a dependency's version.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        crate::splitmix::next(&mut self.0)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// FNV-style fold of the trace.
struct Trace(u64);

impl Trace {
    fn add(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn add_rate(&mut self, r: Option<f64>) {
        self.add(r.map_or(u64::MAX - 1, f64::to_bits));
    }
}

/// Runs `ops` random operations on a scheduler of `cfg` over `flows`
/// prefixes and returns the fingerprint of everything it decided.
fn fingerprint(cfg: QsccpConfig, seed: u64, flows: u64, ops: usize, mean_gap_ns: u64) -> u64 {
    let mut rng = Mix(seed);
    let mut s: CdsScheduler<u64> = CdsScheduler::new(cfg, Timestamp::ZERO, seed);
    let mut t = Trace(0xcbf2_9ce4_8422_2325);
    let mut now = Timestamp::ZERO;
    for n in 0..ops as u64 {
        now += Duration::from_nanos(rng.below(2 * mean_gap_ns + 1));
        let prefix = rng.below(flows);
        // A flow keeps its class, as in the forwarder.
        let class = ServiceClass::ALL[(prefix.wrapping_mul(0x9e37) >> 3) as usize % 8];
        match rng.below(16) {
            0..=6 => {
                let size = match rng.below(4) {
                    0 => None,
                    1 => Some(rng.below(400_000) as u32),
                    _ => Some(8_000 + rng.below(60_000) as u32),
                };
                match s.enqueue(now, class, prefix, size, n) {
                    Ok(()) => t.add(1),
                    Err(r) => {
                        t.add(2 + r.reason as u64);
                        t.add(r.item);
                    }
                }
            }
            7..=12 => match s.dequeue(now) {
                Dequeue::Item(x) => {
                    t.add(10);
                    t.add(x.item);
                    t.add(x.class.code().into());
                    t.add(x.prefix);
                    t.add(x.size_bits.into());
                    t.add(x.sojourn.as_nanos() as u64);
                    t.add_rate(x.target_rate_bps);
                    // The flag agrees with a lookup after the dequeue.
                    let phi = s.flow_phi(x.class, x.prefix);
                    assert_eq!(x.discounted, phi.is_some_and(|p| p < 1.0));
                }
                Dequeue::NotBefore(w) => {
                    t.add(11);
                    t.add(w.as_nanos());
                    // Often the caller waits until then.
                    if rng.below(2) == 0 {
                        now = now.max(w);
                    }
                }
                Dequeue::Empty => t.add(12),
            },
            13 => {
                // An untracked flow is told a newcomer's share since the
                // recording (`flow_rate_bps`); it folds the recorded None,
                // so every tracked flow's rate is still pinned bit for bit.
                let phi = s.flow_phi(class, prefix);
                t.add_rate(phi.and(s.flow_rate_bps(class, prefix)));
                t.add_rate(phi);
                t.add(s.flow_queue_len(class, prefix).map_or(99, u64::from));
            }
            14 => match rng.below(8) {
                0 => t.add(u64::from(s.penalise_flow(class, prefix))),
                1 | 2 => {
                    let w = 0.5 + rng.below(8) as f64 * 0.5;
                    t.add(u64::from(s.set_flow_weight(class, prefix, w)));
                }
                _ => s.on_interest_received(now, 40 + rng.below(200) as usize),
            },
            _ => {
                // A pause that may cross periods and expire flows.
                now += Duration::from_nanos(rng.below(40 * mean_gap_ns));
            }
        }
        if n % 997 == 0 {
            for c in ServiceClass::ALL {
                t.add(s.class_capacity_bps(c).to_bits());
                t.add(s.queued(c).into());
            }
            t.add(s.flow_count() as u64);
            t.add(s.len() as u64);
        }
    }
    let st = s.stats();
    for x in [
        st.enqueued,
        st.dequeued,
        st.flow_queue_full,
        st.class_full,
        st.flow_table_full,
        st.penalties,
        st.propagated_penalties,
    ]
    .into_iter()
    .chain(st.sent_bits)
    {
        t.add(x);
    }
    t.0
}

/// The workloads: each configuration the forwarder or the paper uses, at
/// a few flow counts, rate-limited (slow links, long periods, DS buckets
/// binding) and not (a fast link), with the flow table filling up.
fn workloads() -> [(QsccpConfig, u64, u64, usize, u64); 6] {
    let slow = QsccpConfig {
        capacity_bps: 20_000_000,
        ..QsccpConfig::default()
    };
    [
        (slow, 1, 40, 60_000, 400),
        (
            QsccpConfig {
                max_flows: 300,
                ..slow
            },
            2,
            1_000,
            60_000,
            300,
        ),
        (
            QsccpConfig {
                capacity_bps: 2_000_000,
                ..QsccpConfig::paper()
            },
            3,
            12,
            40_000,
            2_000,
        ),
        (
            QsccpConfig {
                variant: PecnVariant::AuthorsCode,
                ..slow
            },
            4,
            60,
            40_000,
            400,
        ),
        (
            QsccpConfig {
                capacity_bps: 10_000_000_000,
                ..QsccpConfig::default()
            },
            5,
            5_000,
            80_000,
            1_000,
        ),
        (
            QsccpConfig {
                capacity_bps: 5_000_000,
                restore_phi: false,
                lambda: 2,
                flow_queue_capacity: 4,
                dt_class_capacity: 30,
                ..QsccpConfig::default()
            },
            6,
            25,
            40_000,
            700,
        ),
    ]
}

/// Recorded with the per-packet path of commit 06fb7f0; the third
/// (`QsccpConfig::paper()` on 2 Mbit/s) re-recorded when the paper
/// variant's DT class capacities were capped at B_DT (pecn.rs
/// `class_capacities`; the other five never gave a class more).
const EXPECTED: [u64; 6] = [
    0xe956_3f32_e505_35b4,
    0xd4e3_6489_3128_f67c,
    0x9d66_54ec_3df8_84a0,
    0x94c3_751d_4664_648c,
    0x3535_aaf6_d5ff_9f29,
    0x487e_b6fe_b1b8_9344,
];

#[test]
fn decisions_match_the_recorded_trace() {
    let got: alloc::vec::Vec<u64> = workloads()
        .into_iter()
        .map(|(cfg, seed, flows, ops, gap)| fingerprint(cfg, seed, flows, ops, gap))
        .collect();
    assert_eq!(got, EXPECTED, "{got:#x?}");
}
