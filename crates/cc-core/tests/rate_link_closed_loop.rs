//! Closed loop of the rate link icnfwd deploys (`RateLink`): rate
//! consumers send Interests through one link's shaper, the Data come back
//! over the link's capacity (a FIFO serialising them) one base RTT later,
//! stamped with the link's rate, and the consumers follow it. Packet-level
//! and event-driven in virtual time; the figures are measured over the last
//! half of the run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use cc_core::mircc::{ShaperVerdict, TrafficClass};
use cc_core::rate_link::{RateLink, RateLinkConfig};
use cc_core::rcp::{RateConsumer, RateConsumerConfig};
use cc_core::{ConsumerLaw, DataFeedback, Duration, LawKind, NackFeedback, SendLimit, Timestamp};

const INTEREST_BYTES: u32 = 60;

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Flow `i` may send its next Interest.
    Send(usize),
    /// The shaper may release an Interest.
    Release,
    /// A Data of flow `i`, sent at `sent_ns`, reaches the link's queue.
    DataAtLink(usize, u64),
    /// The Data at the head of the link finished serialising.
    DataOut,
    /// The link's rate update is due.
    Update,
}

struct Outcome {
    utilisation: f64,
    jain: f64,
    p95_queue_ms: f64,
    nacks: u64,
}

fn run(kind: LawKind, flows: usize, capacity_bps: f64, data_bytes: u32, rtt_ms: u64) -> Outcome {
    let cfg = RateLinkConfig::default();
    let mut link: RateLink<(usize, u64)> = RateLink::new(kind, &cfg, capacity_bps);
    let mut consumers: Vec<RateConsumer> = (0..flows)
        .map(|_| {
            RateConsumer::new(RateConsumerConfig {
                initial_data_size_bytes: f64::from(data_bytes),
                ..RateConsumerConfig::default()
            })
        })
        .collect();
    let end = Timestamp::from_secs_f64(30.0);
    let half = Timestamp::from_secs_f64(15.0);
    let one_way = Duration::from_millis(rtt_ms / 2);
    let serialise = Duration::from_secs_f64(f64::from(data_bytes) * 8.0 / capacity_bps);
    let mut q: BinaryHeap<Reverse<(Timestamp, Ev)>> = BinaryHeap::new();
    for i in 0..flows {
        q.push(Reverse((Timestamp::from_millis(i as u64), Ev::Send(i))));
    }
    q.push(Reverse((Timestamp::ZERO, Ev::Update)));
    let mut fifo: std::collections::VecDeque<(usize, u64, Timestamp)> = Default::default();
    let mut busy = false;
    let mut delivered = vec![0u64; flows];
    let mut queue_delays_ms: Vec<f64> = Vec::new();
    let mut nacks = 0;
    let mut release_armed = None;
    while let Some(Reverse((now, ev))) = q.pop() {
        if now > end {
            break;
        }
        match ev {
            Ev::Send(i) => {
                let SendLimit::Rate {
                    interests_per_sec, ..
                } = consumers[i].limit()
                else {
                    panic!("rate consumers give rates");
                };
                consumers[i].on_interest_sent(now, false);
                match link.on_interest(
                    now,
                    (i, now.as_nanos()),
                    TrafficClass::Primary,
                    INTEREST_BYTES,
                ) {
                    ShaperVerdict::Rejected(_) => {
                        nacks += 1;
                        let r = link.rates();
                        consumers[i].on_nack(
                            now,
                            &NackFeedback {
                                congestion: true,
                                primary_rate_bps: Some(r.primary_bps),
                                secondary_rate_bps: r.secondary_bps,
                                path_id: None,
                            },
                        );
                    }
                    _ => {
                        if release_armed.is_none() {
                            release_armed = Some(now);
                            q.push(Reverse((now, Ev::Release)));
                        }
                    }
                }
                let gap = Duration::from_secs_f64(1.0 / interests_per_sec.max(1e-3));
                q.push(Reverse((now + gap, Ev::Send(i))));
            }
            Ev::Release => {
                release_armed = None;
                while let Some(((i, sent), _)) = link.dequeue(now) {
                    // Upstream and back: the Data reaches the link's
                    // downstream queue one base RTT after the Interest left.
                    q.push(Reverse((now + one_way + one_way, Ev::DataAtLink(i, sent))));
                }
                if let Some(t) = link.next_release_time() {
                    release_armed = Some(t);
                    q.push(Reverse((t.max(now), Ev::Release)));
                }
            }
            Ev::DataAtLink(i, sent) => {
                fifo.push_back((i, sent, now));
                if !busy {
                    busy = true;
                    q.push(Reverse((now + serialise, Ev::DataOut)));
                }
            }
            Ev::DataOut => {
                let Some((i, sent, queued_at)) = fifo.pop_front() else {
                    busy = false;
                    continue;
                };
                let rtt = now.saturating_since(Timestamp::from_nanos(sent));
                link.on_data(now, data_bytes, Some(rtt));
                let stamped = link.stamp(None, None);
                consumers[i].on_data(
                    now,
                    &DataFeedback {
                        rtt: Some(rtt),
                        data_size_bytes: data_bytes,
                        primary_rate_bps: Some(stamped.primary_bps),
                        ..DataFeedback::default()
                    },
                );
                if now >= half {
                    delivered[i] += u64::from(data_bytes);
                    let waited = now.saturating_since(queued_at).saturating_sub(serialise);
                    queue_delays_ms.push(waited.as_secs_f64() * 1e3);
                }
                if fifo.is_empty() {
                    busy = false;
                } else {
                    q.push(Reverse((now + serialise, Ev::DataOut)));
                }
            }
            Ev::Update => {
                link.handle_timeout(now);
                q.push(Reverse((
                    link.poll_timeout().max(now + Duration::from_nanos(1)),
                    Ev::Update,
                )));
            }
        }
    }
    let secs = end.saturating_since(half).as_secs_f64();
    let rates: Vec<f64> = delivered.iter().map(|b| *b as f64 * 8.0 / secs).collect();
    let sum: f64 = rates.iter().sum();
    let sq: f64 = rates.iter().map(|r| r * r).sum();
    queue_delays_ms.sort_by(|a, b| a.total_cmp(b));
    let p95 = queue_delays_ms
        .get(queue_delays_ms.len() * 95 / 100)
        .copied()
        .unwrap_or(0.0);
    Outcome {
        utilisation: sum / capacity_bps,
        jain: sum * sum / (rates.len() as f64 * sq),
        p95_queue_ms: p95,
        nacks,
    }
}

/// Every combination the forwarder meets on a dumbbell: both laws, small and
/// large Data, short and long RTT, one and several flows. The bounds are the
/// operating-envelope issue's for rate-based schemes: ≥ 90 % utilisation
/// (η = 95 %), Jain ≥ 0.95, p95 queueing ≤ max(10 ms, two Data times).
#[test]
fn the_deployed_rate_link_fills_the_link_fairly_with_a_short_queue() {
    for kind in [LawKind::Rcp, LawKind::Mircc] {
        for (flows, cap, size, rtt) in [
            (1, 10e6, 1200, 20),
            (3, 10e6, 8000, 20),
            (3, 2e6, 1200, 100),
            (10, 50e6, 4400, 50),
        ] {
            let o = run(kind, flows, cap, size, rtt);
            let two_data_ms = 2.0 * f64::from(size) * 8.0 / cap * 1e3;
            let label = format!(
                "{kind:?} {flows} flows {cap} bit/s {size} B {rtt} ms: util {:.3} jain {:.3} p95 {:.1} ms nacks {}",
                o.utilisation, o.jain, o.p95_queue_ms, o.nacks
            );
            eprintln!("{label}");
            assert!(o.utilisation >= 0.90, "{label}");
            assert!(o.utilisation <= 1.0 + 1e-9, "{label}");
            assert!(o.jain >= 0.95, "{label}");
            assert!(o.p95_queue_ms <= two_data_ms.max(10.0), "{label}");
        }
    }
}
