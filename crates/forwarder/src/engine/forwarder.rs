//! The forwarder: tables, faces and the quinn-proto style driving API.
//!
//! # Call order
//!
//! The owner (daemon shell or test harness) feeds inputs and drains outputs:
//!
//! 1. `handle_packet(now, face, bytes)` for every received frame, and
//!    `handle_timeout(now)` once `now >= poll_timeout()`;
//! 2. then `poll_transmit(now)` until it returns `None`, putting each
//!    [`Transmit`] on its face's transport;
//! 3. then `poll_event()` until `None` (management Interests);
//! 4. finally re-arm one timer at `poll_timeout()`.
//!
//! Nothing inside reads a clock, touches a socket or uses a global RNG; given
//! the same seed and inputs the engine produces the same outputs.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{CcFields, Name, Reassembler};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::api::{EngineConfig, EngineError, EngineEvent, Transmit};
use super::cc_hooks::{CcHooks, NoCc};
use super::counters::{DropReason, ForwarderCounters};
use super::cs::ContentStore;
use super::dead_nonce::DeadNonceList;
use super::face::{FaceId, FaceInfo, FaceParams, LinkEmulation, QueueStats};
use super::fib::{Fib, FibError};
use super::hash::SeededState;
use super::multicast_hook::{MulticastHook, NoMulticast};
use super::name_table::{PrefixTable, TableInsertError};
use super::observe::CcStamps;
use super::pit::Pit;
use super::queue::EgressQueues;
use super::strategy::{
    builtin_factory, Action, FaceLookup, Strategy, StrategyBuilder, StrategyFactory, StrategyName,
};

/// A frame delayed by link emulation, released at `at` (FIFO per time).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Delayed {
    pub(super) at: Timestamp,
    pub(super) seq: u64,
    pub(super) face: FaceId,
    pub(super) bytes: Bytes,
}

/// Engine-side state of one face.
pub(super) struct Face {
    pub(super) info: FaceInfo,
    pub(super) queues: EgressQueues,
    /// Encoded frames (fragments of one packet) waiting for release.
    pub(super) ready: VecDeque<Bytes>,
    /// Pacing: earliest time the next frame may leave.
    pub(super) next_tx_at: Timestamp,
    pub(super) in_active: bool,
    /// The transport under the face takes nothing now (a stream's writer
    /// is full): frames wait in the engine's queues, where its bounds and
    /// markers see them, until [`Forwarder::face_writable`].
    pub(super) blocked: bool,
    pub(super) reassembler: Option<Reassembler>,
    pub(super) reassembly_deadline: Option<Timestamp>,
    pub(super) lp_seq: u64,
}

impl Face {
    /// Publishes the queue occupancy the egress queues just reported, with
    /// the Interests the congestion-control hook holds (the one place that
    /// keeps `cc_held_interests` in step with `hook_queued`).
    pub(super) fn publish_queue(&mut self, stats: QueueStats) {
        self.info.queue = QueueStats {
            cc_held_interests: self.queues.hook_queued,
            ..stats
        };
    }

    /// Sets the face's reassembly deadline and its membership in the
    /// engine's `reassembling` set (the one place that keeps the two in
    /// step; the timers visit only the faces in the set).
    pub(super) fn set_reassembly_deadline(
        &mut self,
        deadline: Option<Timestamp>,
        reassembling: &mut BTreeSet<FaceId>,
    ) {
        self.reassembly_deadline = deadline;
        if deadline.is_some() {
            reassembling.insert(self.info.id);
        } else {
            reassembling.remove(&self.info.id);
        }
    }
}

/// The face table, ordered by id (datasets list faces in id order).
#[derive(Default)]
pub(super) struct FaceTable(pub(super) BTreeMap<FaceId, Face>);

impl FaceLookup for FaceTable {
    fn face_info(&self, id: FaceId) -> Option<&FaceInfo> {
        self.0.get(&id).map(|f| &f.info)
    }
}

/// The sans-IO NDN forwarding engine.
///
/// `C` is the congestion-control extension (per-face Interest admission and
/// queueing, Data/Nack observation, the state strategies share with it) and
/// `M` the multicast-group extension; the engine knows only their traits.
/// Strategies are typed by `C`, so a scheme's strategy reaches the scheme's
/// state directly, typed. The defaults do nothing.
pub struct Forwarder<C: CcHooks = NoCc, M: MulticastHook = NoMulticast> {
    pub(super) cfg: EngineConfig,
    pub(super) rng: SmallRng,
    pub(super) faces: FaceTable,
    pub(super) next_face_id: u64,
    /// Faces with queued output, served round robin.
    pub(super) active: VecDeque<FaceId>,
    /// Faces holding partial packets (a reassembly deadline): with
    /// `active`, the only faces `poll_timeout` and `handle_timeout` visit,
    /// so their cost per turn follows the faces at work, not the faces
    /// that exist.
    pub(super) reassembling: BTreeSet<FaceId>,
    /// When the faces' congestion-control status is next copied in.
    pub(super) next_cc_refresh: Timestamp,
    pub(super) fib: Fib,
    pub(super) pit: Pit,
    pub(super) cs: ContentStore,
    pub(super) dnl: DeadNonceList,
    pub(super) strategies: Vec<Option<Box<dyn Strategy<C>>>>,
    pub(super) strategy_table: PrefixTable<usize>,
    pub(super) factories: Vec<StrategyBuilder<C>>,
    pub(super) cc: C,
    /// Multicast tree node (SRMCC groups); [`NoMulticast`] when off.
    pub(super) groups: M,
    /// Frames held by link emulation (bounded by `queue.max_packets` × 4).
    pub(super) delay_line: BinaryHeap<Reverse<Delayed>>,
    pub(super) delay_seq: u64,
    /// CC fields of the last Interest the hook refused (for the Nack).
    pub(super) last_reject_cc: Option<CcFields>,
    /// Interests the CC hook evicted, to Nack once the current action ends.
    pub(super) evicted: Vec<(FaceId, super::queue::OutPacket, CcFields)>,
    pub(super) events: VecDeque<EngineEvent>,
    pub(super) counters: ForwarderCounters,
    /// Octets held by all reassemblers (`budgets.rs`).
    pub(super) reassembly_bytes: usize,
    /// Octets in all egress queues (`egress.rs`).
    pub(super) queued_bytes: usize,
    pub(super) budget_grace: super::budgets::BudgetGrace,
    pub(super) scratch_actions: Vec<Action>,
    pub(super) scratch_ids: Vec<u32>,
    pub(super) scratch_sent: Vec<(FaceId, Option<Bytes>)>,
    /// Chunk the LP frames of egress packets are encoded into (`egress.rs`).
    pub(super) egress_arena: bytes::BytesMut,
}

impl<C: CcHooks, M: MulticastHook> core::fmt::Debug for Forwarder<C, M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Forwarder")
            .field("faces", &self.faces.0.len())
            .field("fib", &self.fib.len())
            .field("pit", &self.pit.len())
            .field("cs", &self.cs.len())
            .finish()
    }
}

impl Forwarder {
    /// An engine without congestion control or multicast groups. `rng_seed`
    /// seeds nonces, strategy randomness and table hashing; pass a random
    /// value in production, a constant in tests.
    pub fn new(cfg: EngineConfig, rng_seed: u64) -> Self {
        Forwarder::with_extensions(cfg, rng_seed, NoCc, NoMulticast)
    }
}

impl<C: CcHooks, M: MulticastHook> Forwarder<C, M> {
    /// An engine with the given extensions. `/` gets
    /// `cfg.default_strategy` (best-route if it does not instantiate); an
    /// owner that installs scheme strategies sets its own afterwards.
    pub fn with_extensions(cfg: EngineConfig, rng_seed: u64, cc: C, groups: M) -> Self {
        let hasher = SeededState::new(rng_seed);
        let mut fwd = Forwarder {
            rng: SmallRng::seed_from_u64(rng_seed),
            faces: FaceTable::default(),
            next_face_id: FaceId::FIRST_ORDINARY,
            active: VecDeque::new(),
            reassembling: BTreeSet::new(),
            next_cc_refresh: Timestamp::ZERO,
            fib: Fib::new(cfg.fib_max_entries, cfg.fib_max_nexthops, hasher),
            pit: Pit::new(cfg.pit_max_entries, hasher),
            cs: ContentStore::new(cfg.cs_max_packets, cfg.cs_max_bytes, hasher),
            dnl: DeadNonceList::new(cfg.dead_nonce_max, cfg.dead_nonce_lifetime, hasher),
            strategies: Vec::new(),
            strategy_table: PrefixTable::new(cfg.strategy_max_entries.max(1), hasher),
            factories: vec![Box::new(builtin_factory::<C>)],
            cc,
            groups,
            delay_line: BinaryHeap::new(),
            delay_seq: 0,
            last_reject_cc: None,
            evicted: Vec::new(),
            events: VecDeque::new(),
            counters: ForwarderCounters::default(),
            reassembly_bytes: 0,
            queued_bytes: 0,
            budget_grace: Default::default(),
            scratch_actions: Vec::new(),
            scratch_ids: Vec::new(),
            scratch_sent: Vec::new(),
            egress_arena: bytes::BytesMut::new(),
            cfg,
        };
        let default = StrategyName::parse(&fwd.cfg.default_strategy)
            .filter(|n| fwd.instantiate(n).is_some())
            .unwrap_or_else(StrategyName::best_route);
        if fwd.set_strategy(&Name::root(), &default).is_err() {
            // The built-in best-route always instantiates; keep going with an
            // empty table rather than panic (every Interest then gets NoRoute).
            tracing::debug!("default strategy could not be installed");
        }
        fwd.refresh_gauges();
        fwd
    }

    /// The configuration the engine was built with.
    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    // ----- faces -----

    /// Adds a face and returns its id (ids are never reused).
    pub fn add_face(&mut self, now: Timestamp, params: FaceParams) -> FaceId {
        let id = FaceId(self.next_face_id);
        self.next_face_id += 1;
        let reassembler = params.mtu.map(|_| self.new_reassembler());
        let flow_hasher = self
            .cc
            .data_flow_queues(&params)
            .then(|| SeededState::new(self.rng_u64()));
        let face = Face {
            info: FaceInfo {
                id,
                params,
                counters: Default::default(),
                queue: QueueStats::default(),
                sojourn: Default::default(),
                cc: Default::default(),
                cc_stamps: CcStamps::new(now),
                emulated_drops: 0,
            },
            queues: EgressQueues::new(self.cfg.queue, flow_hasher),
            ready: VecDeque::new(),
            next_tx_at: now,
            in_active: false,
            blocked: false,
            reassembler,
            reassembly_deadline: None,
            lp_seq: self.rng_u64(),
        };
        self.cc.face_added(now, id, &face.info.params);
        self.faces.0.insert(id, face);
        id
    }

    /// Removes a face: its queues are dropped and its FIB next hops removed.
    /// PIT records naming it lapse at their expiry.
    pub fn remove_face(&mut self, now: Timestamp, face: FaceId) {
        if let Some(mut f) = self.faces.0.remove(&face) {
            self.reassembling.remove(&face);
            let held = f.reassembler.as_ref().map_or(0, Reassembler::bytes);
            self.reassembly_bytes = self.reassembly_bytes.saturating_sub(held);
            let queued = super::egress::queued_bytes_of(&f.info.queue);
            self.queued_bytes = self.queued_bytes.saturating_sub(queued);
            let n = f.queues.clear() + f.ready.len() + self.cc.face_removed(face);
            for _ in 0..n {
                self.counters.drops.add(DropReason::FaceGone);
            }
        }
        self.fib.remove_face(face);
        self.groups_face_removed(now, face);
        self.refresh_gauges();
    }

    /// A face's properties, counters and queue occupancy.
    pub fn face(&self, face: FaceId) -> Option<&FaceInfo> {
        self.faces.0.get(&face).map(|f| &f.info)
    }

    /// All faces in id order.
    pub fn faces(&self) -> impl Iterator<Item = (FaceId, &FaceInfo)> {
        self.faces.0.iter().map(|(id, f)| (*id, &f.info))
    }

    /// Changes a face's pacing capacity (None = unpaced).
    pub fn set_face_capacity_bps(
        &mut self,
        face: FaceId,
        bps: Option<u64>,
    ) -> Result<(), EngineError> {
        let f = self
            .faces
            .0
            .get_mut(&face)
            .ok_or(EngineError::UnknownFace(face))?;
        f.info.params.capacity_bps = bps;
        self.cc.capacity_changed(face, &f.info.params);
        Ok(())
    }

    /// Sets or clears a face's link emulation (delay and loss after pacing).
    pub fn set_face_emulation(
        &mut self,
        face: FaceId,
        emulation: Option<LinkEmulation>,
    ) -> Result<(), EngineError> {
        let f = self
            .faces
            .0
            .get_mut(&face)
            .ok_or(EngineError::UnknownFace(face))?;
        f.info.params.emulation = emulation.filter(|e| !e.is_noop());
        Ok(())
    }

    /// The congestion-control extension (status readers, strategies' owners).
    pub fn cc_hooks(&self) -> &C {
        &self.cc
    }

    /// The congestion-control extension, mutable.
    pub fn cc_hooks_mut(&mut self) -> &mut C {
        &mut self.cc
    }

    // ----- FIB -----

    /// Adds (or re-costs) a next hop for `prefix`.
    pub fn fib_add_nexthop(
        &mut self,
        prefix: &Name,
        face: FaceId,
        cost: u64,
    ) -> Result<(), EngineError> {
        if !self.faces.0.contains_key(&face) {
            return Err(EngineError::UnknownFace(face));
        }
        let r = self
            .fib
            .add_nexthop(prefix.value(), face, cost)
            .map_err(|e| match e {
                FibError::Full => EngineError::FibFull,
                FibError::TooManyNextHops => EngineError::TooManyNextHops,
                FibError::BadPrefix => EngineError::BadPrefix,
            });
        self.refresh_gauges();
        r
    }

    /// Removes a next hop; the entry disappears with its last next hop.
    pub fn fib_remove_nexthop(&mut self, prefix: &Name, face: FaceId) {
        self.fib.remove_nexthop(prefix.value(), face);
        self.refresh_gauges();
    }

    /// FIB entries as (prefix, [(face, cost)]), cheapest next hop first.
    pub fn fib_entries(&self) -> impl Iterator<Item = (Name, Vec<(FaceId, u64)>)> + '_ {
        self.fib.iter().filter_map(|(k, e)| {
            let name = Name::from_value(k.clone()).ok()?;
            Some((
                name,
                e.nexthops().iter().map(|n| (n.face, n.cost)).collect(),
            ))
        })
    }

    // ----- strategies -----

    /// Registers an extra strategy factory (consulted before the built-ins).
    pub fn register_strategy_factory(&mut self, f: StrategyFactory<C>) {
        self.factories.insert(0, Box::new(f));
    }

    /// Registers a strategy factory that captures state (e.g. parameters).
    pub fn register_strategy_builder(&mut self, f: StrategyBuilder<C>) {
        self.factories.insert(0, f);
    }

    fn instantiate(&self, name: &StrategyName) -> Option<Box<dyn Strategy<C>>> {
        self.factories.iter().find_map(|f| f(name))
    }

    /// Chooses the strategy for `prefix` (a versionless name picks the
    /// latest version).
    pub fn set_strategy(
        &mut self,
        prefix: &Name,
        strategy: &StrategyName,
    ) -> Result<(), EngineError> {
        let inst = self
            .instantiate(strategy)
            .ok_or_else(|| EngineError::UnknownStrategy(strategy.to_string()))?;
        let key = prefix.value().clone();
        if let Some(&slot) = self.strategy_table.get(&key) {
            self.strategies[slot] = Some(inst);
            return Ok(());
        }
        let slot = match self.strategies.iter().position(Option::is_none) {
            Some(s) => s,
            None => {
                self.strategies.push(None);
                self.strategies.len() - 1
            }
        };
        match self.strategy_table.get_or_insert_with(&key, || slot) {
            Ok(_) => {
                self.strategies[slot] = Some(inst);
                self.refresh_gauges();
                Ok(())
            }
            Err(TableInsertError::Full) => Err(EngineError::StrategyTableFull),
            Err(TableInsertError::BadPrefix) => Err(EngineError::BadPrefix),
        }
    }

    /// Removes the strategy choice for `prefix` (not allowed for `/`).
    pub fn unset_strategy(&mut self, prefix: &Name) {
        if prefix.is_empty() {
            return;
        }
        if let Some(slot) = self.strategy_table.remove(prefix.value()) {
            if let Some(s) = self.strategies.get_mut(slot) {
                *s = None;
            }
        }
        self.refresh_gauges();
    }

    /// Strategy choices as (prefix, strategy name with version).
    pub fn strategy_choices(&self) -> impl Iterator<Item = (Name, StrategyName)> + '_ {
        self.strategy_table.iter().filter_map(|(k, slot)| {
            let s = self.strategies.get(*slot)?.as_ref()?;
            Some((Name::from_value(k.clone()).ok()?, s.name().clone()))
        })
    }

    /// The strategy in effect for a name (longest-prefix match).
    pub fn effective_strategy(&self, name: &Name) -> Option<StrategyName> {
        let ends = super::name_table::ComponentEnds::parse(name.value())?;
        let (_, slot) = self.strategy_table.lpm(&ends, name.value())?;
        Some(self.strategies.get(*slot)?.as_ref()?.name().clone())
    }

    // ----- outputs and status -----

    /// Forwarder-wide counters (NFD `status/general` numbers plus drops).
    pub fn counters(&self) -> &ForwarderCounters {
        &self.counters
    }

    /// Next engine event (management Interests).
    #[must_use]
    pub fn poll_event(&mut self) -> Option<EngineEvent> {
        self.events.pop_front()
    }

    pub(super) fn refresh_gauges(&mut self) {
        let c = &mut self.counters;
        c.n_fib_entries = self.fib.len() as u64;
        c.n_pit_entries = self.pit.len() as u64;
        c.n_cs_entries = self.cs.len() as u64;
        c.n_name_tree_entries =
            (self.fib.len() + self.pit.len() + self.strategy_table.len()) as u64;
    }

    pub(super) fn rng_u64(&mut self) -> u64 {
        rand::Rng::random(&mut self.rng)
    }

    /// Counts a drop, globally and on the face.
    pub(super) fn drop_packet(&mut self, face: FaceId, reason: DropReason) {
        self.counters.drops.add(reason);
        if let Some(f) = self.faces.0.get_mut(&face) {
            f.info.counters.drops.add(reason);
        }
    }

    /// Number of bytes in the Content Store (for status output).
    pub fn cs_bytes(&self) -> usize {
        self.cs.bytes()
    }

    /// Checks table bounds and internal consistency; used by tests and the
    /// property test. Returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.pit.len() > self.cfg.pit_max_entries {
            return Err(format!(
                "PIT {} > {}",
                self.pit.len(),
                self.cfg.pit_max_entries
            ));
        }
        if self.pit.ids().count() != self.pit.len() {
            return Err("PIT live count mismatch".into());
        }
        for id in self.pit.ids() {
            let Some(e) = self.pit.get(id) else { continue };
            if e.in_records.len() > self.cfg.pit_max_in_records
                || e.out_records.len() > self.cfg.pit_max_out_records
            {
                return Err("PIT records over bound".into());
            }
        }
        self.check_budgets()?;
        if self.cs.len() > self.cfg.cs_max_packets || self.cs.bytes() > self.cfg.cs_max_bytes {
            return Err("CS over bound".into());
        }
        self.fib.check_index()?;
        if self.dnl.len() > self.cfg.dead_nonce_max {
            return Err("DNL over bound".into());
        }
        if self.events.len() > self.cfg.max_pending_events {
            return Err("event queue over bound".into());
        }
        for f in self.faces.0.values() {
            let q = f.info.queue;
            if q.interest_packets > self.cfg.queue.max_packets
                || q.data_packets > self.cfg.queue.max_packets
                || q.interest_bytes > self.cfg.queue.max_bytes
                || q.data_bytes > self.cfg.queue.max_bytes
            {
                return Err(format!("face {} queue over bound", f.info.id));
            }
            // `poll_timeout` and `handle_timeout` visit only these faces.
            let queued = !f.ready.is_empty() || !f.queues.is_empty();
            if queued && !(f.in_active && self.active.contains(&f.info.id)) {
                return Err(format!("face {} has output but is not active", f.info.id));
            }
            if f.reassembly_deadline.is_some() != self.reassembling.contains(&f.info.id) {
                return Err(format!("face {} reassembly set out of step", f.info.id));
            }
        }
        Ok(())
    }
}

/// Makes a [`Transmit`].
pub(super) fn transmit(face: FaceId, bytes: Bytes) -> Transmit {
    Transmit { face, bytes }
}
