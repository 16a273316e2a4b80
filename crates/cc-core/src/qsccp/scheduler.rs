//! CDS: the three-level scheduler of one outgoing face (QSCCP §IV-C).
//!
//! Cost per packet is O(1) in the number of flows, and so is the number of
//! cache lines it touches (layout in [`super::flows`]):
//! * flows live in an open-addressed table keyed by a seeded hash of
//!   (class, prefix) and bounded by `max_flows` (a flow's id is its slot,
//!   see `flow_table.rs`); queued Interests live in one packet slab
//!   shared by all flows, each flow's queue a linked list of slab indices;
//! * each class keeps the backlogged flows on an active ring of flow ids
//!   served by deficit round robin: a flow at the head gets `quantum·w·φ`
//!   (precomputed when w or φ change) once per turn and sends while its
//!   deficit covers the head packet (amortised O(1); strictly so when the
//!   quantum is at least the largest packet). The DRR decision is taken
//!   when a class gets a new head, so choosing among classes reads only
//!   the class records; serving a flow of a long ring prefetches the lines
//!   of the flows a few turns ahead and of their head packets;
//! * the five delay-tolerant classes are chosen by self-clocked WFQ over
//!   their head packets (a fixed 5 comparisons) on an integer virtual time
//!   (2^20 units per bit for the largest ω, wrapping comparisons), the three
//!   delay-sensitive ones by strict priority with a token bucket each (a
//!   blocked one is skipped by one compare until a lower bound of its
//!   refill instant); a bitmap of backlogged classes drives both scans;
//! * a final token bucket at η·C paces the face.
//!
//! No floating point and no division runs per packet (the exact refill
//! wait is divided out only when nothing at all can be sent).

use super::class::ServiceClass;
pub use super::config::{CdsStats, Dequeue, QsccpConfig, RejectReason, Rejected, Scheduled};
use super::drr::Peek;
use super::flows;
use super::flows::{quantum, Arena, Flow, FlowHasher, TagIndex};
use super::ring::Ring;
use super::settle::{settle, Frozen};
use super::vtime::{vt_max, vt_steps};
use crate::time::Timestamp;
use crate::token_bucket::TokenBucket;
use alloc::vec::Vec;

/// "No class to serve" in the dequeue's pick (a class index is below 8).
const NO_CLASS: usize = 8;

/// One service class: its DRR active list and its SCFQ tags.
#[derive(Debug, Clone, Default)]
pub(super) struct Class {
    /// Backlogged flows in DRR order. A ring of ids rather than a list
    /// threaded through the flows, so the flows a few turns ahead can be
    /// prefetched without chasing pointers through cold lines.
    pub(super) active: Ring,
    /// The DRR decision for the class's next packet (flow id, size), made
    /// as soon as the class gets a new head (first enqueue, or a pop that
    /// leaves it backlogged) and valid until the class is served: choosing
    /// among the classes then touches no flow and branches on no cache.
    pub(super) peeked: Peek,
    pub(super) queued: u32,
    /// SCFQ finish tag of the head packet (`start + size·step`), set with
    /// `peeked`, so the WFQ pick only compares (DT classes only).
    pub(super) tag: u64,
    /// SCFQ start tag of the head packet and finish tag of the last one.
    pub(super) start: u64,
    finish: u64,
    /// Virtual-time epoch `finish` belongs to: a finish tag from before the
    /// last reset reads as 0, so a reset is two stores, not a loop.
    vt_epoch: u64,
    pub(super) offered_bits: u64,
    /// Σ w·φ and count of the class's flows active this PECN period (an
    /// offer this period or a queue): kept as flows join and leave, so the
    /// period needs no pass of its own to sum the weights (`pecn.rs`).
    pub(super) active_wphi: f64,
    pub(super) active_flows: u32,
}

/// The CDS scheduler and PECN state of one outgoing face, generic over the
/// queued item (an Interest, or anything the caller wants back).
#[derive(Debug, Clone)]
pub struct CdsScheduler<T> {
    pub(super) cfg: QsccpConfig,
    pub(super) classes: [Class; 8],
    /// The flow table: slot `i` holds a flow iff `index` says it is live
    /// (`flows[i].live` agrees).
    pub(super) flows: Vec<Flow>,
    pub(super) hasher: FlowHasher,
    pub(super) index: TagIndex,
    pub(super) arena: Arena<T>,
    /// Bit c set iff class c has queued Interests: the per-packet scans
    /// visit backlogged classes only.
    pub(super) backlog: u8,
    ds_buckets: [TokenBucket; 3],
    /// Per DS class, a time (ns) before which its bucket cannot pay for its
    /// current head (0 = not known): a blocked class costs one compare until
    /// then. Safe, since only serving the class takes its tokens; cleared
    /// whenever its head changes.
    pub(super) ds_ready_ns: [u64; 3],
    /// The smallest of `ds_ready_ns`: while `now` is before it, every DS
    /// class is blocked and the strict-priority level costs one compare.
    pub(super) ds_next_ns: u64,
    final_bucket: TokenBucket,
    /// `max_data_size_bits`, at least 1 (the clamp of every Interest's size).
    max_size_bits: u32,
    /// Queue cap per class (`dt_class_capacity` for DT, none for DS), so
    /// the check is one compare whatever the class.
    class_cap: [u32; 8],
    vtime: u64,
    /// Bumped by every virtual-time reset (see `Class::vt_epoch`).
    vt_epoch: u64,
    /// Virtual units per bit of each class (0 for DS, which has no tags).
    pub(super) vt_step: [u64; 8],
    pub(super) interest_in_bits: u64,
    /// Interests offered this period (all classes), for the mean Data size
    /// that stretches the period (`QsccpConfig::min_data_per_flow`).
    pub(super) period_interests: u64,
    /// Length of the current PECN period (T or stretched).
    pub(super) period_len: crate::time::Duration,
    pub(super) last_period: Timestamp,
    /// A time (ns) no later than `last_period + period`, so the per-packet
    /// period check is one integer compare.
    pub(super) period_due_ns: u64,
    pub(super) class_capacity_bps: [f64; 8],
    /// Current PECN period (wrapping); a flow whose `epoch` is the one
    /// before has that period's update pending (`pecn.rs`).
    pub(super) epoch: u8,
    /// Aggregates of the last closed period, for pending updates.
    pub(super) frozen: Frozen,
    /// Flows the period end settles at once (reused buffer).
    pub(super) boundary: Vec<u32>,
    pub(super) stats: CdsStats,
}

impl<T> CdsScheduler<T> {
    /// Creates the scheduler of a face; `hash_seed` keys the flow hash.
    pub fn new(cfg: QsccpConfig, now: Timestamp, hash_seed: u64) -> Self {
        let link = cfg.eta * cfg.capacity_bps as f64;
        let max_size = u64::from(cfg.max_data_size_bits.max(1));
        let ds_bucket = |d: f64| {
            TokenBucket::with_bits((d * link) as u64, cfg.ds_burst_bits.max(max_size), now)
        };
        let mut s = CdsScheduler {
            cfg,
            classes: Default::default(),
            flows: Vec::new(),
            hasher: FlowHasher::new(hash_seed),
            index: TagIndex::default(),
            arena: Arena::default(),
            backlog: 0,
            ds_buckets: [
                ds_bucket(cfg.delta[0]),
                ds_bucket(cfg.delta[1]),
                ds_bucket(cfg.delta[2]),
            ],
            ds_ready_ns: [0; 3],
            ds_next_ns: 0,
            final_bucket: TokenBucket::with_bits(
                link as u64,
                cfg.final_burst_bits.max(max_size),
                now,
            ),
            max_size_bits: cfg.max_data_size_bits.max(1),
            class_cap: core::array::from_fn(|c| {
                if c < 3 {
                    u32::MAX
                } else {
                    cfg.dt_class_capacity
                }
            }),
            vtime: 0,
            vt_epoch: 0,
            vt_step: {
                let dt = vt_steps(cfg.omega);
                core::array::from_fn(|c| if c < 3 { 0 } else { dt[c - 3] })
            },
            interest_in_bits: 0,
            period_interests: 0,
            period_len: cfg.period,
            last_period: now,
            period_due_ns: 0,
            class_capacity_bps: [0.0; 8],
            epoch: 0,
            frozen: Frozen::new(&cfg),
            boundary: Vec::new(),
            stats: CdsStats::default(),
        };
        s.set_period_due();
        s
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
        self.backlog == 0
    }

    /// Packet slots allocated so far (the high-water mark of [`len`](Self::len)).
    pub fn packet_capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Interests queued by flow (class, prefix); `None` if it is not tracked.
    pub fn flow_queue_len(&self, class: ServiceClass, prefix: u64) -> Option<u32> {
        self.find(class, prefix)
            .map(|id| self.flows[id as usize].len)
    }

    /// Sets the WDRR weight w of a flow (default 1); false if unknown.
    pub fn set_flow_weight(&mut self, class: ServiceClass, prefix: u64, weight: f64) -> bool {
        match self.find(class, prefix) {
            Some(id) if weight.is_finite() && weight > 0.0 => {
                // The pending update uses the weight of its period.
                self.settle_flow(id);
                let f = &mut self.flows[id as usize];
                let phi = f.phi(self.frozen.phi_pen);
                if f.offered_bits != 0 || f.len != 0 {
                    self.classes[class.index()].active_wphi += (weight - f.weight) * phi;
                }
                f.weight = weight;
                f.quantum_bits = quantum(self.cfg.quantum_bits, weight, phi);
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

    /// Recomputes [`period_due_ns`](Self::period_due_ns) from `last_period`.
    pub(super) fn set_period_due(&mut self) {
        let period_ns = u64::try_from(self.period_len.as_nanos()).unwrap_or(u64::MAX);
        self.period_due_ns = self.last_period.as_nanos().saturating_add(period_ns);
    }

    /// Queues an Interest of flow (class, prefix) whose Data is expected to
    /// be `data_size_bits` long (Dsz; `None` = the configured default).
    #[inline(always)]
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
            .clamp(1, self.max_size_bits);
        let c = class.index();
        self.classes[c].offered_bits += u64::from(size);
        self.period_interests += 1;
        let Some(id) = self.flow_id(class, prefix) else {
            self.stats.flow_table_full += 1;
            return Err(Rejected {
                item,
                reason: RejectReason::FlowTableFull,
            });
        };
        let Some(flow) = self.flows.get_mut(id as usize) else {
            return Err(Rejected {
                item,
                reason: RejectReason::FlowTableFull,
            });
        };
        if flow.epoch != self.epoch {
            settle(&self.frozen, flow);
        }
        if flow.offered_bits == 0 && flow.len == 0 {
            // First offer of an idle flow this period: it joins the sums.
            let cls = &mut self.classes[c];
            cls.active_wphi += flow.weight * flow.phi(self.frozen.phi_pen);
            cls.active_flows += 1;
        }
        flow.offered_bits += u64::from(size);
        if flow.len >= self.cfg.flow_queue_capacity {
            self.stats.flow_queue_full += 1;
            return Err(Rejected {
                item,
                reason: RejectReason::FlowQueueFull,
            });
        }
        if self.classes[c].queued >= self.class_cap[c] {
            self.stats.class_full += 1;
            return Err(Rejected {
                item,
                reason: RejectReason::ClassFull,
            });
        }
        let was_empty = flow.len == 0;
        flows::push(&mut self.arena, flow, item, size, now);
        let cls = &mut self.classes[c];
        if was_empty {
            cls.active.push_back(id);
        }
        let first = cls.queued == 0;
        if first {
            let finish = if cls.vt_epoch == self.vt_epoch {
                cls.finish
            } else {
                0
            };
            cls.start = vt_max(finish, self.vtime);
            cls.vt_epoch = self.vt_epoch;
            self.backlog |= 1 << c;
        }
        cls.queued += 1;
        self.stats.enqueued += 1;
        if first {
            self.drr_turn(c);
        }
        Ok(())
    }

    /// Takes the next Interest to send, if the rate limiters allow.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Timestamp) -> Dequeue<T> {
        self.maybe_update(now);
        if self.backlog == 0 {
            return Dequeue::Empty;
        }
        let now_ns = now.as_nanos();
        // The class to serve (`NO_CLASS`: none), its peeked head in `classes`.
        let mut pick = NO_CLASS;
        let mut ds = self.backlog & 0b111;
        if ds != 0 && now_ns >= self.ds_next_ns {
            ds &= self.ds_unblocked(now_ns);
        } else {
            ds = 0;
        }
        while ds != 0 {
            let c = ds.trailing_zeros() as usize;
            ds &= ds - 1;
            let Some((_, size)) = self.drr_peek(c) else {
                continue;
            };
            let bucket = &mut self.ds_buckets[c];
            if bucket.has_packet_bits(now, size) {
                pick = c;
                break;
            }
            self.ds_ready_ns[c] = bucket.ready_lower_bound_ns(now, u64::from(size));
            let r = &self.ds_ready_ns;
            self.ds_next_ns = r[0].min(r[1]).min(r[2]);
        }
        if pick == NO_CLASS && self.backlog >> 3 != 0 {
            pick = self.wfq_pick();
        }
        let c = pick & 7;
        let head = self.classes[c].peeked.get();
        let (Some((id, size)), false) = (head, pick == NO_CLASS) else {
            return self.ds_wait(now);
        };
        if !self.final_bucket.try_consume_packet_bits(now, size) {
            return self.final_wait(now, size);
        }
        if c < 3 {
            // Found to hold `size` at `now` just above.
            self.ds_buckets[c].take_present_bits(size);
        } else {
            let cls = &mut self.classes[c];
            let tag = cls.tag;
            cls.finish = tag;
            cls.start = tag;
            self.vtime = tag;
        }
        let Some(out) = self.drr_pop(now, c, id, size) else {
            // Unreachable (peek returned a backlogged flow); report a retry.
            return Dequeue::NotBefore(now);
        };
        if c < 3 {
            self.ds_rearm(now, c);
        }
        self.stats.dequeued += 1;
        self.stats.sent_bits[c] += u64::from(size);
        // Idempotent once DT is empty (DS service leaves the tags at 0).
        if self.backlog >> 3 == 0 {
            self.reset_virtual_time();
        }
        Dequeue::Item(out)
    }

    /// Bits 0-2: the DS classes whose bucket may pay for their head at
    /// `now_ns` (their cached lower bound has passed).
    #[inline]
    fn ds_unblocked(&self, now_ns: u64) -> u8 {
        let r = &self.ds_ready_ns;
        u8::from(now_ns >= r[0]) | u8::from(now_ns >= r[1]) << 1 | u8::from(now_ns >= r[2]) << 2
    }

    /// Caches the lower bound of the instant DS class `c`'s bucket pays for
    /// its new head, right after serving it (its bucket was refilled at
    /// `now`): otherwise the next dequeue would find the class unblocked,
    /// refill and test its bucket only to learn the same bound. Same
    /// decisions, since a lower bound only skips tests that would fail.
    #[inline]
    fn ds_rearm(&mut self, now: Timestamp, c: usize) {
        let Some((_, size)) = self.classes[c].peeked.get() else {
            return;
        };
        self.ds_ready_ns[c] = self.ds_buckets[c].ready_lower_bound_ns(now, u64::from(size));
        let r = &self.ds_ready_ns;
        self.ds_next_ns = r[0].min(r[1]).min(r[2]);
    }

    /// Only rate-limited DS classes are backlogged: wake at the earliest
    /// instant one of their buckets pays for its head, `Empty` if none ever can.
    #[cold]
    fn ds_wait(&mut self, now: Timestamp) -> Dequeue<T> {
        let mut wait: Option<Timestamp> = None;
        for c in 0..3 {
            if self.backlog & (1 << c) == 0 {
                continue;
            }
            let Some((_, size)) = self.drr_peek(c) else {
                continue;
            };
            if let Some(d) = self.ds_buckets[c].time_until_bits(now, u64::from(size)) {
                wait = Some(wait.map_or(now + d, |w| w.min(now + d)));
            }
        }
        wait.map_or(Dequeue::Empty, Dequeue::NotBefore)
    }

    #[cold]
    fn final_wait(&mut self, now: Timestamp, size: u32) -> Dequeue<T> {
        match self.final_bucket.time_until_bits(now, u64::from(size)) {
            Some(d) => Dequeue::NotBefore(now + d),
            None => Dequeue::NotBefore(now + self.cfg.period),
        }
    }

    /// Self-clocked WFQ over the backlogged delay-tolerant classes: the
    /// smallest finish tag of their head packets, lowest class on ties.
    /// Every backlogged class's tag is at or after `vtime` (the winner's
    /// tag; the losers' tags were larger and do not change until served;
    /// a class joining starts at or after `vtime`), so the wrapping order
    /// is the plain order of `tag - vtime`, and the minimum is found
    /// without a data-dependent branch.
    #[inline]
    fn wfq_pick(&self) -> usize {
        let dt = self.backlog >> 3;
        if dt.is_power_of_two() {
            // One backlogged class: nothing to compare.
            return dt.trailing_zeros() as usize + 3;
        }
        let mut best_c = NO_CLASS;
        let mut best_key = u64::MAX;
        for c in 3..8 {
            let key = if self.backlog & (1 << c) != 0 {
                self.classes[c].tag.wrapping_sub(self.vtime)
            } else {
                u64::MAX
            };
            let better = key < best_key;
            best_key = if better { key } else { best_key };
            best_c = if better { c } else { best_c };
        }
        best_c
    }

    /// Restarts virtual time at 0 (DT is empty): every finish tag now
    /// reads as 0, and every class starts afresh when it next joins.
    #[inline]
    fn reset_virtual_time(&mut self) {
        self.vtime = 0;
        self.vt_epoch = self.vt_epoch.wrapping_add(1);
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "trace_tests.rs"]
mod trace_tests;
