//! The per-output-interface Interest pacer of CCC ("each output interface
//! eventually paces Interests", ICC 2020 §IV-A; docs/algorithms.md §3.2):
//! every flow leaving by the interface has its own queue released at the
//! flow's outgoing pace on that interface, `p_o,k` of Algorithm 2, so a
//! next hop never receives more than the constraint it sent (eq. 10),
//! whatever the downstream offers. Round-robin next-hop choice alone only
//! splits the offer in proportion to the paces; without the pacer, pace
//! above `Σ p_i,k_max` was still forwarded.

use alloc::collections::{BTreeMap, VecDeque};

use crate::time::{Duration, Timestamp};

/// Bounds of one interface's pacer.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct PacerConfig {
    /// Interests a flow may hold in the pacer; more are refused (the
    /// forwarder Nacks them). An offer above the constraint otherwise
    /// waits without bound.
    pub max_queue: usize,
    /// Interests a flow may send back to back after being idle (the token
    /// bucket's depth): 1 is strict pacing.
    pub burst: u32,
    /// The depth is at least this long at the flow's pace. Eq. 9 lets a
    /// flow arrive at exactly its next hop's constraint, and a strict pacer
    /// at that rate is a queue at load 1 that the arrivals' jitter walks up
    /// (tuned: 20 ms, the sojourn tuned CCC counts as congestion, so what
    /// the bucket lets through is not congestion downstream).
    pub burst_time: Duration,
}

impl Default for PacerConfig {
    fn default() -> Self {
        PacerConfig {
            max_queue: 64,
            burst: 2,
            burst_time: Duration::ZERO,
        }
    }
}

/// What [`InterestPacer::dequeue`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Paced<T> {
    /// Send this now.
    Item(T),
    /// Interests wait; the first may leave at this time.
    NotBefore(Timestamp),
    /// Nothing queued.
    Empty,
}

#[derive(Debug, Clone)]
struct FlowQueue<T> {
    items: VecDeque<T>,
    pace_ips: f64,
    /// Earliest time of the next release (virtual clock of the bucket).
    next: Timestamp,
    /// Last enqueue: an entry idle for long is pruned (never per packet,
    /// so a steady flow allocates nothing).
    last: Timestamp,
}

/// One output interface's pacer: a queue per flow, each released at its
/// own pace.
#[derive(Debug, Clone)]
pub struct InterestPacer<K, T> {
    cfg: PacerConfig,
    flows: BTreeMap<K, FlowQueue<T>>,
    queued: usize,
}

/// Gap between two Interests at `pace_ips` (a pace of 0 holds the flow
/// one second at a time until a pace arrives).
fn gap(pace_ips: f64) -> Duration {
    if pace_ips.is_finite() && pace_ips > 0.0 {
        Duration::from_secs_f64((1.0 / pace_ips).min(1.0))
    } else {
        Duration::from_secs(1)
    }
}

impl<K: Ord + Copy, T> InterestPacer<K, T> {
    /// An empty pacer.
    pub fn new(cfg: PacerConfig) -> Self {
        InterestPacer {
            cfg,
            flows: BTreeMap::new(),
            queued: 0,
        }
    }

    /// Queues an Interest of `flow`, to be released at `pace_ips` (which
    /// also becomes the pace of the Interests it queues behind). Returns
    /// the item when the flow's queue is full.
    pub fn enqueue(&mut self, now: Timestamp, flow: K, pace_ips: f64, item: T) -> Result<(), T> {
        let burst_time = self.cfg.burst_time;
        let burst = self.cfg.burst.max(1);
        let q = self.flows.entry(flow).or_insert_with(|| FlowQueue {
            items: VecDeque::new(),
            pace_ips,
            // A new flow's bucket starts full.
            next: Timestamp::ZERO,
            last: now,
        });
        if q.items.len() >= self.cfg.max_queue.max(1) {
            return Err(item);
        }
        q.pace_ips = pace_ips;
        q.last = now;
        if q.items.is_empty() {
            // An idle flow's bucket refills up to its depth.
            let g = gap(pace_ips);
            let depth = (u64::from(burst) - 1)
                .saturating_mul(g.as_nanos() as u64)
                .max(burst_time.as_nanos() as u64);
            let earliest = Timestamp::from_nanos(now.as_nanos().saturating_sub(depth));
            q.next = q.next.max(earliest);
        }
        q.items.push_back(item);
        self.queued += 1;
        Ok(())
    }

    /// The Interest whose release time came first, if it has come.
    pub fn dequeue(&mut self, now: Timestamp) -> Paced<T> {
        let Some((&flow, q)) = self
            .flows
            .iter()
            .filter(|(_, q)| !q.items.is_empty())
            .min_by_key(|(_, q)| q.next)
        else {
            return Paced::Empty;
        };
        if q.next > now {
            return Paced::NotBefore(q.next);
        }
        let Some(q) = self.flows.get_mut(&flow) else {
            return Paced::Empty;
        };
        let Some(item) = q.items.pop_front() else {
            return Paced::Empty;
        };
        self.queued -= 1;
        q.next += gap(q.pace_ips);
        Paced::Item(item)
    }

    /// Drops the state of flows with nothing queued and no Interest for
    /// longer than `idle` (called now and then, not per packet).
    pub fn prune(&mut self, now: Timestamp, idle: Duration) {
        self.flows
            .retain(|_, q| !q.items.is_empty() || now.saturating_since(q.last) <= idle);
    }

    /// Interests held.
    pub fn len(&self) -> usize {
        self.queued
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.queued == 0
    }

    /// Interests `flow` holds.
    pub fn flow_len(&self, flow: K) -> usize {
        self.flows.get(&flow).map_or(0, |q| q.items.len())
    }

    /// How long an Interest of `flow` queued at `now` at `pace_ips` would
    /// wait before its release (zero with tokens in the bucket). Lets a
    /// forwarder pick, among a flow's next hops, the one whose pacer has
    /// room, rather than queue behind one while another could send.
    pub fn wait(&self, now: Timestamp, flow: K, pace_ips: f64) -> Duration {
        let Some(q) = self.flows.get(&flow) else {
            return Duration::ZERO;
        };
        // The queued ones leave at next, next + gap, …; a new one after
        // them (an idle bucket's refill only moves `next` earlier).
        let n = u32::try_from(q.items.len()).unwrap_or(u32::MAX);
        (q.next + gap(pace_ips) * n).saturating_since(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Timestamp {
        Timestamp::from_millis(x)
    }

    fn drain_times(
        p: &mut InterestPacer<u64, u32>,
        from: Timestamp,
        until: Timestamp,
    ) -> alloc::vec::Vec<(u64, u32)> {
        let mut out = alloc::vec::Vec::new();
        let mut now = from;
        while now <= until {
            match p.dequeue(now) {
                Paced::Item(i) => out.push((now.as_nanos() / 1_000_000, i)),
                Paced::NotBefore(t) => now = t,
                Paced::Empty => break,
            }
        }
        out
    }

    /// A flow paced at 100 Interests/s leaves one every 10 ms whatever
    /// arrived at once (after its burst of 2): eq. 10 on the wire.
    #[test]
    fn a_flow_leaves_at_its_pace() {
        let mut p: InterestPacer<u64, u32> = InterestPacer::new(PacerConfig::default());
        for i in 0..6 {
            p.enqueue(ms(100), 7, 100.0, i).unwrap();
        }
        let t = drain_times(&mut p, ms(100), ms(1000));
        let times: alloc::vec::Vec<u64> = t.iter().map(|x| x.0).collect();
        assert_eq!(times, [100, 100, 110, 120, 130, 140]);
        assert!(p.is_empty());
    }

    /// Two flows on one interface keep their own paces: 200 and 50
    /// Interests/s over 100 ms give 20 and 5 releases (+ burst).
    #[test]
    fn flows_keep_their_own_paces() {
        let mut p: InterestPacer<u64, u32> = InterestPacer::new(PacerConfig {
            max_queue: 1000,
            burst: 1,
            ..PacerConfig::default()
        });
        for i in 0..100 {
            p.enqueue(ms(0), 1, 200.0, i).unwrap();
            p.enqueue(ms(0), 2, 50.0, 1000 + i).unwrap();
        }
        let out = drain_times(&mut p, ms(0), ms(99));
        let a = out.iter().filter(|x| x.1 < 1000 && x.0 < 100).count();
        let b = out.iter().filter(|x| x.1 >= 1000 && x.0 < 100).count();
        assert_eq!((a, b), (20, 5));
    }

    /// The queue of a flow is bounded; an Interest over the bound comes
    /// back to the caller, another flow is unaffected.
    #[test]
    fn a_full_flow_queue_refuses() {
        let mut p: InterestPacer<u64, u32> = InterestPacer::new(PacerConfig {
            max_queue: 3,
            burst: 1,
            ..PacerConfig::default()
        });
        for i in 0..3 {
            p.enqueue(ms(0), 1, 10.0, i).unwrap();
        }
        assert_eq!(p.enqueue(ms(0), 1, 10.0, 9), Err(9));
        assert!(p.enqueue(ms(0), 2, 10.0, 10).is_ok());
        assert_eq!(p.len(), 4);
        assert_eq!(p.flow_len(1), 3);
    }

    /// A depth in time: at 1000 Interests/s, 20 ms of them pass back to
    /// back after an idle period, then the pace holds.
    #[test]
    fn the_depth_covers_burst_time_at_the_pace() {
        let mut p: InterestPacer<u64, u32> = InterestPacer::new(PacerConfig {
            max_queue: 100,
            burst: 2,
            burst_time: Duration::from_millis(20),
        });
        for i in 0..30 {
            p.enqueue(ms(1000), 1, 1000.0, i).unwrap();
        }
        let at_once = core::iter::from_fn(|| match p.dequeue(ms(1000)) {
            Paced::Item(i) => Some(i),
            _ => None,
        })
        .count();
        assert_eq!(
            at_once, 21,
            "20 ms of bucket plus the Interest at its own time"
        );
        assert_eq!(p.dequeue(ms(1000)), Paced::NotBefore(ms(1001)));
    }

    /// An idle flow does not bank more than its burst.
    #[test]
    fn idle_time_is_not_banked() {
        let mut p: InterestPacer<u64, u32> = InterestPacer::new(PacerConfig {
            max_queue: 100,
            burst: 2,
            ..PacerConfig::default()
        });
        p.enqueue(ms(0), 1, 100.0, 0).unwrap();
        assert_eq!(p.dequeue(ms(0)), Paced::Item(0));
        for i in 1..5 {
            p.enqueue(ms(1000), 1, 100.0, i).unwrap();
        }
        assert_eq!(p.dequeue(ms(1000)), Paced::Item(1));
        assert_eq!(p.dequeue(ms(1000)), Paced::Item(2));
        assert_eq!(p.dequeue(ms(1000)), Paced::NotBefore(ms(1010)));
        p.prune(ms(5000), Duration::from_secs(1));
        assert_eq!(p.flow_len(1), 2, "a flow with Interests waiting stays");
        let mut q: InterestPacer<u64, u32> = InterestPacer::new(PacerConfig::default());
        q.enqueue(ms(5000), 2, 100.0, 9).unwrap();
        assert_eq!(q.dequeue(ms(5000)), Paced::Item(9));
        q.prune(ms(5500), Duration::from_secs(1));
        assert!(q.flows.contains_key(&2), "idle for less than a second");
        q.prune(ms(6001), Duration::from_secs(1));
        assert!(!q.flows.contains_key(&2), "idle for longer");
    }

    /// The wait grows with the flow's backlog at its pace; an unknown
    /// flow or a full bucket waits nothing.
    #[test]
    fn wait_counts_the_backlog_at_the_pace() {
        let mut p: InterestPacer<u8, u32> = InterestPacer::new(PacerConfig::default());
        assert_eq!(p.wait(ms(1000), 1, 10.0), Duration::ZERO);
        // Burst 2 at 10/s: they leave at 1000, 1000, 1100, 1200; a fifth
        // would leave at 1300.
        for i in 0..4 {
            p.enqueue(ms(1000), 1, 10.0, i).unwrap();
        }
        assert_eq!(p.wait(ms(1000), 1, 10.0), Duration::from_millis(300));
        assert_eq!(p.dequeue(ms(1000)), Paced::Item(0));
        assert_eq!(p.dequeue(ms(1000)), Paced::Item(1));
        assert_eq!(p.wait(ms(1000), 1, 10.0), Duration::from_millis(300));
        assert_eq!(p.wait(ms(1050), 1, 10.0), Duration::from_millis(250));
        assert_eq!(p.wait(ms(1000), 2, 10.0), Duration::ZERO, "another flow");
    }
}
