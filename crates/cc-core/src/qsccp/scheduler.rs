//! CDS: the three-level scheduler of one outgoing face (QSCCP §IV-C).
//!
//! Cost per packet is O(1) in the number of flows:
//! * flows live in a slab (`Vec` + free list) found through a hash map keyed
//!   by (class, prefix hash), both bounded by `max_flows`;
//! * each class keeps the backlogged flows on an active list served by
//!   deficit round robin: a flow at the head gets `quantum·w·φ` once per turn
//!   and sends while its deficit covers the head packet (amortised O(1);
//!   strictly so when the quantum is at least the largest packet);
//! * the five delay-tolerant classes are chosen by self-clocked WFQ over
//!   their head packets (a fixed 5 comparisons), the three delay-sensitive
//!   ones by strict priority with a token bucket each;
//! * a final token bucket at η·C paces the face.

use super::class::ServiceClass;
use super::pecn::PecnVariant;
use crate::time::{Duration, Timestamp};
use crate::token_bucket::TokenBucket;
use crate::wincm::forwarding::MixState;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use hashbrown::HashMap;

/// Parameters of one face's CDS + PECN (defaults: algorithms.md §1.8).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct QsccpConfig {
    /// Link capacity B (Data direction), bit/s.
    pub capacity_bps: u64,
    /// Target utilisation η.
    pub eta: f64,
    /// δ_c of CS7, CS6, EF: share of the link each may use.
    pub delta: [f64; 3],
    /// ω_c of AF4, AF3, AF2, AF1, BE.
    pub omega: [f64; 5],
    /// Depth of the DS token buckets, bits.
    pub ds_burst_bits: u64,
    /// Depth of the final token bucket, bits.
    pub final_burst_bits: u64,
    /// WDRR quantum per unit weight, bits.
    pub quantum_bits: u32,
    /// Interests queued per flow.
    pub flow_queue_capacity: u32,
    /// Interests queued per delay-tolerant class.
    pub dt_class_capacity: u32,
    /// Flows tracked per face.
    pub max_flows: u32,
    /// Expected Data size when an Interest carries none, bits.
    pub default_data_size_bits: u32,
    /// Largest expected Data size accepted (larger ones are clamped), bits.
    pub max_data_size_bits: u32,
    /// PECN period T.
    pub period: Duration,
    /// γ of the flow-state judgement.
    pub gamma: f64,
    /// λ, periods over κ before a flow is judged greedy.
    pub lambda: u8,
    /// κ, offered/target ratio counted as greedy.
    pub kappa: f64,
    /// φ of a penalised flow.
    pub phi_penalty: f64,
    /// Which eqs. 4–9 rules to use.
    pub variant: PecnVariant,
    /// Restore φ = 1 once the greedy counter is back to 0.
    pub restore_phi: bool,
}

impl Default for QsccpConfig {
    fn default() -> Self {
        QsccpConfig {
            capacity_bps: 10_000_000,
            eta: 0.99,
            delta: [0.2, 0.2, 0.3],
            omega: [5.0, 4.0, 3.0, 2.0, 1.0],
            ds_burst_bits: 160_000,
            final_burst_bits: 160_000,
            quantum_bits: 16_000,
            flow_queue_capacity: 20,
            dt_class_capacity: 200,
            max_flows: 65_536,
            default_data_size_bits: 9_000,
            max_data_size_bits: 160_000,
            period: Duration::from_millis(100),
            gamma: 0.95,
            lambda: 10,
            kappa: 1.2,
            phi_penalty: 0.5,
            variant: PecnVariant::PaperReconstruction,
            restore_phi: true,
        }
    }
}

/// Why an Interest was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// The flow's virtual queue is full.
    FlowQueueFull,
    /// The delay-tolerant class is at its cap.
    ClassFull,
    /// No room for a new flow.
    FlowTableFull,
}

/// An Interest handed back by [`CdsScheduler::enqueue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected<T> {
    /// The item itself.
    pub item: T,
    /// Why.
    pub reason: RejectReason,
}

/// An Interest leaving the scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled<T> {
    /// The item.
    pub item: T,
    /// Its class.
    pub class: ServiceClass,
    /// Its flow's prefix hash.
    pub prefix: u64,
    /// Expected Data size charged, bits.
    pub size_bits: u32,
    /// Time spent queued.
    pub sojourn: Duration,
    /// The flow's suggested target rate R here (eq. 10: DownstreamRate :=
    /// min(DownstreamRate, R)); `None` before the first PECN period.
    pub target_rate_bps: Option<f64>,
}

/// Result of [`CdsScheduler::dequeue`].
#[derive(Debug, Clone, PartialEq)]
pub enum Dequeue<T> {
    /// Send this now.
    Item(Scheduled<T>),
    /// Backlogged, but the rate limiters allow nothing before this time.
    NotBefore(Timestamp),
    /// Nothing queued.
    Empty,
}

/// Counters of one face.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CdsStats {
    /// Interests queued.
    pub enqueued: u64,
    /// Interests sent.
    pub dequeued: u64,
    /// Rejections: flow queue full.
    pub flow_queue_full: u64,
    /// Rejections: class full.
    pub class_full: u64,
    /// Rejections: flow table full.
    pub flow_table_full: u64,
    /// Expected Data bits sent, per class index.
    pub sent_bits: [u64; 8],
}

#[derive(Debug, Clone)]
pub(super) struct Queued<T> {
    item: T,
    size_bits: u32,
    at: Timestamp,
}

/// One flow: its queue, its DRR state and its PECN state.
#[derive(Debug, Clone)]
pub(super) struct Flow<T> {
    pub(super) live: bool,
    pub(super) class: ServiceClass,
    pub(super) prefix: u64,
    queue: VecDeque<Queued<T>>,
    deficit: u64,
    in_turn: bool,
    pub(super) weight: f64,
    pub(super) phi: f64,
    /// Expected Data bits offered in the current period (including refused).
    pub(super) offered_bits: u64,
    pub(super) greedy: u8,
    pub(super) rate_bps: Option<f64>,
}

impl<T> Flow<T> {
    fn quantum(&self, base: u32) -> u64 {
        (f64::from(base) * self.weight * self.phi).max(1.0) as u64
    }
    pub(super) fn queue_len(&self) -> usize {
        self.queue.len()
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct Class {
    active: VecDeque<u32>,
    /// Cached result of the last DRR peek (flow id, size), valid until the
    /// class is served: peeking all classes per packet then touches no flow.
    head: Option<(u32, u32)>,
    pub(super) queued: u32,
    /// SCFQ start tag of the head packet and finish tag of the last one.
    start: f64,
    finish: f64,
    pub(super) offered_bits: u64,
}

/// The CDS scheduler and PECN state of one outgoing face, generic over the
/// queued item (an Interest, or anything the caller wants back).
#[derive(Debug, Clone)]
pub struct CdsScheduler<T> {
    pub(super) cfg: QsccpConfig,
    pub(super) classes: [Class; 8],
    pub(super) flows: Vec<Flow<T>>,
    free: Vec<u32>,
    pub(super) index: HashMap<(u8, u64), u32, MixState>,
    ds_buckets: [TokenBucket; 3],
    final_bucket: TokenBucket,
    vtime: f64,
    pub(super) interest_in_bits: u64,
    pub(super) last_period: Timestamp,
    pub(super) class_capacity_bps: [f64; 8],
    stats: CdsStats,
}

impl<T> CdsScheduler<T> {
    /// Creates the scheduler of a face; `hash_seed` keys the flow hash.
    pub fn new(cfg: QsccpConfig, now: Timestamp, hash_seed: u64) -> Self {
        let link = cfg.eta * cfg.capacity_bps as f64;
        let max_size = u64::from(cfg.max_data_size_bits.max(1));
        let ds_bucket = |d: f64| {
            TokenBucket::with_bits((d * link) as u64, cfg.ds_burst_bits.max(max_size), now)
        };
        CdsScheduler {
            cfg,
            classes: Default::default(),
            flows: Vec::new(),
            free: Vec::new(),
            index: HashMap::with_hasher(MixState(hash_seed)),
            ds_buckets: [
                ds_bucket(cfg.delta[0]),
                ds_bucket(cfg.delta[1]),
                ds_bucket(cfg.delta[2]),
            ],
            final_bucket: TokenBucket::with_bits(
                link as u64,
                cfg.final_burst_bits.max(max_size),
                now,
            ),
            vtime: 0.0,
            interest_in_bits: 0,
            last_period: now,
            class_capacity_bps: [0.0; 8],
            stats: CdsStats::default(),
        }
    }

    /// Configuration in use.
    pub fn config(&self) -> &QsccpConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &CdsStats {
        &self.stats
    }

    /// Flows currently tracked.
    pub fn flow_count(&self) -> usize {
        self.index.len()
    }

    /// Interests queued in `class`.
    pub fn queued(&self, class: ServiceClass) -> u32 {
        self.classes[class.index()].queued
    }

    /// Interests queued in all classes.
    pub fn len(&self) -> usize {
        self.classes.iter().map(|c| c.queued as usize).sum()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets the WDRR weight w of a flow (default 1); false if unknown.
    pub fn set_flow_weight(&mut self, class: ServiceClass, prefix: u64, weight: f64) -> bool {
        match self.index.get(&(class.code(), prefix)) {
            Some(&id) if weight.is_finite() && weight > 0.0 => {
                self.flows[id as usize].weight = weight;
                true
            }
            _ => false,
        }
    }

    /// Records an Interest of `wire_bytes` *received* on this face (B_I of
    /// eq. 1: it occupies the link direction the returning Data use).
    pub fn on_interest_received(&mut self, now: Timestamp, wire_bytes: usize) {
        self.maybe_update(now);
        self.interest_in_bits = self.interest_in_bits.saturating_add(wire_bytes as u64 * 8);
    }

    /// Queues an Interest of flow (class, prefix) whose Data is expected to
    /// be `data_size_bits` long (Dsz; `None` = the configured default).
    pub fn enqueue(
        &mut self,
        now: Timestamp,
        class: ServiceClass,
        prefix: u64,
        data_size_bits: Option<u32>,
        item: T,
    ) -> Result<(), Rejected<T>> {
        self.maybe_update(now);
        let size = data_size_bits
            .unwrap_or(self.cfg.default_data_size_bits)
            .clamp(1, self.cfg.max_data_size_bits.max(1));
        let c = class.index();
        self.classes[c].offered_bits += u64::from(size);
        let id = match self.flow_id(class, prefix) {
            Some(id) => id,
            None => {
                self.stats.flow_table_full += 1;
                return Err(Rejected {
                    item,
                    reason: RejectReason::FlowTableFull,
                });
            }
        };
        let flow = &mut self.flows[id as usize];
        flow.offered_bits += u64::from(size);
        if flow.queue.len() >= self.cfg.flow_queue_capacity as usize {
            self.stats.flow_queue_full += 1;
            return Err(Rejected {
                item,
                reason: RejectReason::FlowQueueFull,
            });
        }
        if !class.is_delay_sensitive() && self.classes[c].queued >= self.cfg.dt_class_capacity {
            self.stats.class_full += 1;
            return Err(Rejected {
                item,
                reason: RejectReason::ClassFull,
            });
        }
        let was_empty = flow.queue.is_empty();
        flow.queue.push_back(Queued {
            item,
            size_bits: size,
            at: now,
        });
        let cls = &mut self.classes[c];
        if was_empty {
            cls.active.push_back(id);
        }
        if cls.queued == 0 {
            cls.start = cls.finish.max(self.vtime);
        }
        cls.queued += 1;
        self.stats.enqueued += 1;
        Ok(())
    }

    /// Takes the next Interest to send, if the rate limiters allow.
    pub fn dequeue(&mut self, now: Timestamp) -> Dequeue<T> {
        self.maybe_update(now);
        let mut ds_blocked: [Option<u32>; 3] = [None; 3];
        let mut pick: Option<(usize, u32, u32, Option<f64>)> = None;
        for (i, class) in ServiceClass::DELAY_SENSITIVE.into_iter().enumerate() {
            let c = class.index();
            if self.classes[c].queued == 0 {
                continue;
            }
            let Some((id, size)) = self.drr_peek(c) else {
                continue;
            };
            if self.ds_buckets[i].has_bits(now, u64::from(size)) {
                pick = Some((c, id, size, None));
                break;
            }
            ds_blocked[i] = Some(size);
        }
        if pick.is_none() {
            pick = self.wfq_pick();
        }
        let Some((c, id, size, tag)) = pick else {
            // Only rate-limited DS classes are backlogged: wake at the earliest refill.
            let mut wait: Option<Timestamp> = None;
            for (i, blocked) in ds_blocked.iter().enumerate() {
                if let Some(size) = *blocked {
                    if let Some(d) = self.ds_buckets[i].time_until_bits(now, u64::from(size)) {
                        wait = Some(wait.map_or(now + d, |w| w.min(now + d)));
                    }
                }
            }
            return wait.map_or(Dequeue::Empty, Dequeue::NotBefore);
        };
        if !self.final_bucket.try_consume_bits(now, u64::from(size)) {
            return match self.final_bucket.time_until_bits(now, u64::from(size)) {
                Some(d) => Dequeue::NotBefore(now + d),
                None => Dequeue::NotBefore(now + self.cfg.period),
            };
        }
        if c < 3 {
            self.ds_buckets[c].try_consume_bits(now, u64::from(size));
        }
        if let Some(tag) = tag {
            self.vtime = tag;
            let cls = &mut self.classes[c];
            cls.finish = tag;
            cls.start = tag;
        }
        let q = self.drr_pop(c, id);
        self.stats.dequeued += 1;
        self.stats.sent_bits[c] += u64::from(q.size_bits);
        if c >= 3 && (3..8).all(|k| self.classes[k].queued == 0) {
            self.reset_virtual_time();
        }
        let flow = &self.flows[id as usize];
        Dequeue::Item(Scheduled {
            item: q.item,
            class: flow.class,
            prefix: flow.prefix,
            size_bits: q.size_bits,
            sojourn: now.saturating_since(q.at),
            target_rate_bps: flow.rate_bps,
        })
    }

    /// Self-clocked WFQ over the backlogged delay-tolerant classes.
    fn wfq_pick(&mut self) -> Option<(usize, u32, u32, Option<f64>)> {
        let mut best: Option<(usize, u32, u32, f64)> = None;
        for c in 3..8 {
            if self.classes[c].queued == 0 {
                continue;
            }
            let Some((id, size)) = self.drr_peek(c) else {
                continue;
            };
            let omega = self.cfg.omega[c - 3].max(1e-9);
            let tag = self.classes[c].start + f64::from(size) / omega;
            if best.is_none_or(|b| tag < b.3) {
                best = Some((c, id, size, tag));
            }
        }
        best.map(|(c, id, size, tag)| (c, id, size, Some(tag)))
    }

    fn reset_virtual_time(&mut self) {
        self.vtime = 0.0;
        for cls in &mut self.classes[3..] {
            cls.start = 0.0;
            cls.finish = 0.0;
        }
    }

    /// The flow at the head of class `c` that has deficit for its head
    /// packet, giving quanta to flows in turn (DRR).
    fn drr_peek(&mut self, c: usize) -> Option<(u32, u32)> {
        if let Some(h) = self.classes[c].head {
            return Some(h);
        }
        let base = self.cfg.quantum_bits;
        loop {
            let id = *self.classes[c].active.front()?;
            let flow = &mut self.flows[id as usize];
            let Some(size) = flow.queue.front().map(|q| q.size_bits) else {
                // Cannot happen (active flows are backlogged); heal anyway.
                self.classes[c].active.pop_front();
                flow.in_turn = false;
                continue;
            };
            if !flow.in_turn {
                flow.deficit += flow.quantum(base);
                flow.in_turn = true;
            }
            if flow.deficit >= u64::from(size) {
                self.classes[c].head = Some((id, size));
                return Some((id, size));
            }
            flow.in_turn = false;
            self.classes[c].active.rotate_left(1);
        }
    }

    fn drr_pop(&mut self, c: usize, id: u32) -> Queued<T> {
        self.classes[c].head = None;
        let flow = &mut self.flows[id as usize];
        let q = flow
            .queue
            .pop_front()
            .expect("drr_peek returned a backlogged flow");
        flow.deficit = flow.deficit.saturating_sub(u64::from(q.size_bits));
        if flow.queue.is_empty() {
            flow.deficit = 0;
            flow.in_turn = false;
            self.classes[c].active.pop_front();
        }
        self.classes[c].queued -= 1;
        q
    }

    fn flow_id(&mut self, class: ServiceClass, prefix: u64) -> Option<u32> {
        let key = (class.code(), prefix);
        if let Some(&id) = self.index.get(&key) {
            return Some(id);
        }
        if self.index.len() >= self.cfg.max_flows as usize {
            return None;
        }
        let flow = Flow {
            live: true,
            class,
            prefix,
            queue: VecDeque::new(),
            deficit: 0,
            in_turn: false,
            weight: 1.0,
            phi: 1.0,
            offered_bits: 0,
            greedy: 0,
            rate_bps: None,
        };
        let id = match self.free.pop() {
            Some(id) => {
                let slot = &mut self.flows[id as usize];
                // Keep the old queue's allocation for reuse.
                let queue = core::mem::take(&mut slot.queue);
                *slot = Flow { queue, ..flow };
                id
            }
            None => {
                self.flows.push(flow);
                (self.flows.len() - 1) as u32
            }
        };
        self.index.insert(key, id);
        Some(id)
    }

    /// Forgets an idle flow (called by the PECN period).
    pub(super) fn remove_flow(&mut self, id: u32) {
        let flow = &mut self.flows[id as usize];
        if !flow.live || !flow.queue.is_empty() {
            return;
        }
        flow.live = false;
        self.index.remove(&(flow.class.code(), flow.prefix));
        self.free.push(id);
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
