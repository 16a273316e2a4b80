//! `Node`: the forwarding engine and the management module driven as one
//! sans-IO object, so the daemon and the tests drive exactly the same thing.
//!
//! Call order (the same as the engine's, see `engine`):
//! 1. `handle_packet(now, face, bytes)` for every received unit, and
//!    `handle_timeout(now)` when `poll_timeout()` has passed;
//! 2. drain `poll_transmit(now)` and hand the bytes to the faces;
//! 3. drain `poll_event()`: `CreateFace` asks the shell to open a socket,
//!    add the face with `add_face` and report with `complete_create_face`;
//!    `DestroyFace` asks it to close one;
//! 4. re-arm the single timer from `poll_timeout()`.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::Name;

use crate::engine::{EngineEvent, FaceId, FaceParams, Transmit};
use crate::mgmt::{
    CcStamp, FaceCreateRequest, FaceState, FaceStatus, FibEntry, FwdOps, GeneralCounters, Manager,
    ManagerConfig, MgmtEvent, PacketCounters, RibError, Route, StrategyChoiceStatus,
};
use crate::router::{Router, RouterConfig};

/// Requests from the node to the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeEvent {
    /// faces/create: open the socket, `add_face`, then `complete_create_face`.
    CreateFace(FaceCreateRequest),
    /// faces/destroy removed this face; close its socket.
    DestroyFace { face: FaceId },
}

/// Engine + manager.
pub struct Node {
    fwd: Router,
    mgr: Manager,
}

impl Node {
    pub fn new(router: impl Into<RouterConfig>, manager: ManagerConfig, rng_seed: u64) -> Self {
        Node {
            fwd: crate::router::build(&router.into(), rng_seed),
            mgr: Manager::new(manager),
        }
    }

    pub fn forwarder(&self) -> &Router {
        &self.fwd
    }

    pub fn forwarder_mut(&mut self) -> &mut Router {
        &mut self.fwd
    }

    pub fn manager(&self) -> &Manager {
        &self.mgr
    }

    /// Applies a new `[mgmt]` policy (a reload; see [`Manager::set_scope_policy`]).
    pub fn set_mgmt_policy(&mut self, policy: crate::mgmt::scope::ScopePolicy) {
        self.mgr.set_scope_policy(policy);
    }

    pub fn add_face(&mut self, now: Timestamp, params: FaceParams) -> FaceId {
        self.fwd.add_face(now, params)
    }

    /// The shell lost a face (connection closed, idle timeout): drop it and its routes.
    pub fn remove_face(&mut self, now: Timestamp, face: FaceId) {
        self.fwd.remove_face(now, face);
        let mut ops = EngineOps(&mut self.fwd);
        self.mgr.face_removed(&mut ops, face.0);
    }

    pub fn handle_packet(&mut self, now: Timestamp, face: FaceId, bytes: Bytes) {
        self.fwd.handle_packet(now, face, bytes);
        self.drain_engine_events(now);
    }

    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.fwd.handle_timeout(now);
        let mut ops = EngineOps(&mut self.fwd);
        self.mgr.handle_timeout(now, &mut ops);
        self.drain_engine_events(now);
    }

    #[must_use]
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        self.fwd.poll_transmit(now)
    }

    /// See [`Forwarder::face_blocked`].
    pub fn face_blocked(&mut self, face: FaceId, frame: Bytes) {
        self.fwd.face_blocked(face, frame);
    }

    /// See [`Forwarder::face_writable`].
    pub fn face_writable(&mut self, face: FaceId) {
        self.fwd.face_writable(face);
    }

    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match (self.fwd.poll_timeout(), self.mgr.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    #[must_use]
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.mgr.poll_event().map(|e| match e {
            MgmtEvent::CreateFace(r) => NodeEvent::CreateFace(r),
            MgmtEvent::DestroyFace { face } => NodeEvent::DestroyFace { face: FaceId(face) },
        })
    }

    /// Reports the outcome of a `NodeEvent::CreateFace`; sends the reply.
    pub fn complete_create_face(
        &mut self,
        now: Timestamp,
        token: u64,
        result: Result<FaceId, String>,
    ) {
        let mut ops = EngineOps(&mut self.fwd);
        self.mgr
            .complete_create_face(now, &mut ops, token, result.map(|f| f.0));
    }

    /// Adds a route as a RIB entry (static routes from the configuration).
    pub fn add_route(&mut self, prefix: Name, route: Route) -> Result<(), RibError> {
        let mut ops = EngineOps(&mut self.fwd);
        self.mgr.add_route(&mut ops, prefix, route)
    }

    /// Removes every route of `origin` (configuration reload).
    pub fn remove_routes_of_origin(&mut self, origin: u64) {
        let mut ops = EngineOps(&mut self.fwd);
        self.mgr.remove_routes_of_origin(&mut ops, origin);
    }

    /// Sets a strategy by name; returns the instance name, `None` if unknown.
    pub fn set_strategy(&mut self, prefix: &Name, strategy: &Name) -> Option<Name> {
        EngineOps(&mut self.fwd).set_strategy(prefix, strategy)
    }

    pub fn unset_strategy(&mut self, prefix: &Name) {
        EngineOps(&mut self.fwd).unset_strategy(prefix);
    }

    fn drain_engine_events(&mut self, now: Timestamp) {
        while let Some(ev) = self.fwd.poll_event() {
            match ev {
                EngineEvent::ManagementInterest { face, interest, .. } => {
                    let mut ops = EngineOps(&mut self.fwd);
                    self.mgr.handle_interest(now, &mut ops, face.0, &interest);
                }
                #[allow(unreachable_patterns)]
                other => tracing::trace!(event = ?other, "engine event"),
            }
        }
    }
}

/// The manager's view of the engine.
struct EngineOps<'a>(&'a mut Router);

impl FwdOps for EngineOps<'_> {
    fn face_exists(&self, face: u64) -> bool {
        self.0.faces().any(|(id, _)| id.0 == face)
    }

    fn face_is_local(&self, face: u64) -> bool {
        self.0
            .faces()
            .any(|(id, f)| id.0 == face && f.params.is_local())
    }

    fn face_uris(&self, face: u64) -> Option<(String, String)> {
        self.0
            .faces()
            .find(|(id, _)| id.0 == face)
            .map(|(_, f)| (f.params.remote_uri.clone(), f.params.local_uri.clone()))
    }

    fn face_statuses(&self) -> Vec<FaceStatus> {
        self.0
            .faces()
            .map(|(id, f)| {
                let c = &f.counters;
                FaceStatus {
                    face_id: id.0,
                    uri: f.params.remote_uri.clone(),
                    local_uri: f.params.local_uri.clone(),
                    expiration_period_ms: None,
                    face_scope: f.params.scope.as_u64(),
                    face_persistency: f.params.persistency.as_u64(),
                    link_type: f.params.link_type.as_u64(),
                    base_congestion_marking_interval_ns: None,
                    default_congestion_threshold_bytes: None,
                    mtu: f.params.mtu.map(|m| m as u64),
                    counters: PacketCounters {
                        n_in_interests: c.n_in_interests,
                        n_in_data: c.n_in_data,
                        n_in_nacks: c.n_in_nacks,
                        n_out_interests: c.n_out_interests,
                        n_out_data: c.n_out_data,
                        n_out_nacks: c.n_out_nacks,
                    },
                    n_in_bytes: c.n_in_bytes,
                    n_out_bytes: c.n_out_bytes,
                    flags: f.params.flags(),
                }
            })
            .collect()
    }

    fn mcast_state(&self) -> crate::mgmt::McastState {
        crate::groups::SrmccGroups::of(self.0)
            .map(crate::groups::SrmccGroups::status)
            .unwrap_or_default()
    }

    fn limits_state(&self) -> crate::mgmt::LimitsState {
        let c = self.0.counters();
        let cfg = self.0.config();
        crate::mgmt::LimitsState {
            budgets: vec![
                (
                    "pit-entries".into(),
                    c.n_pit_entries,
                    cfg.pit_max_entries as u64,
                ),
                (
                    "pit-bytes".into(),
                    self.0.pit_bytes() as u64,
                    cfg.pit_max_bytes as u64,
                ),
                (
                    "cs-bytes".into(),
                    self.0.cs_bytes() as u64,
                    cfg.cs_max_bytes as u64,
                ),
                (
                    "queue-bytes".into(),
                    self.0.queued_bytes() as u64,
                    cfg.queue_max_bytes as u64,
                ),
                (
                    "reassembly-bytes".into(),
                    self.0.reassembly_bytes() as u64,
                    cfg.reassembly_max_bytes as u64,
                ),
            ],
            drops: c
                .drops
                .nonzero()
                .map(|(r, n)| (r.as_str().to_owned(), n))
                .collect(),
        }
    }

    fn cs_info(&self) -> crate::mgmt::CsInfo {
        use crate::mgmt::cs_info::{ENABLE_ADMIT, ENABLE_SERVE};
        let s = self.0.cs_stats();
        crate::mgmt::CsInfo {
            capacity: s.max_entries,
            // A store bounded to no entry admits nothing; lookups still run.
            flags: ENABLE_SERVE | if s.max_entries > 0 { ENABLE_ADMIT } else { 0 },
            n_entries: s.entries,
            n_hits: s.hits,
            n_misses: s.misses,
            capacity_bytes: Some(s.max_bytes),
            n_bytes: Some(s.bytes),
        }
    }

    fn face_states(&self) -> Vec<FaceState> {
        let schemes = self.0.cc_hooks();
        self.0
            .faces()
            .map(|(id, f)| {
                // Sojourn figures once a packet has left the face.
                let sojourn = (f.sojourn.count() > 0).then_some(&f.sojourn);
                FaceState {
                    face_id: id.0,
                    capacity_bps: f.params.capacity_bps,
                    queue_interests: (f.queue.interest_packets + f.queue.cc_held_interests) as u64,
                    queue_interest_bytes: f.queue.interest_bytes as u64,
                    queue_data: f.queue.data_packets as u64,
                    queue_data_bytes: f.queue.data_bytes as u64,
                    queue_frames: f.queue.ready_frames as u64,
                    n_out_frames: f.counters.n_out_frames,
                    n_out_marked: f.counters.n_out_marked,
                    drops: f
                        .counters
                        .drops
                        .nonzero()
                        .map(|(r, c)| (r.as_str().to_owned(), c))
                        .chain(
                            (f.emulated_drops > 0)
                                .then(|| ("emulated-loss".to_owned(), f.emulated_drops)),
                        )
                        .collect(),
                    primary_rate_bps: f.cc.primary_rate_bps,
                    secondary_rate_bps: f.cc.secondary_rate_bps,
                    target_rate_bps: f.cc.target_rate_bps,
                    sojourn_last_ns: sojourn.map(|s| s.last_ns),
                    sojourn_p95_ns: sojourn.map(|s| s.quantile_ns(0.95)),
                    sojourn_max_ns: sojourn.map(|s| s.max_ns),
                    cc_flows: f.cc.flows,
                    penalised_flows: f.cc.penalised_flows,
                    aqm_marks: f.cc.aqm_marks,
                    aqm_episodes: f.cc.aqm_episodes,
                    aqm_marking: f.cc.aqm_marking,
                    cc_evicted_interests: f.cc.evicted_interests,
                    stamps: stamps(f.cc_stamps.last_window()),
                    class_capacities: schemes
                        .class_capacities_bps(id)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(c, bps)| (u64::from(c.code()), bps))
                        .collect(),
                    uiw: crate::cc::uiw_summary(schemes, id).map(|u| {
                        let milli = |x: f64| (x * 1000.0).round().max(0.0) as u64;
                        crate::mgmt::face_state::UiwState {
                            entries: u.entries,
                            uin: u.uin,
                            min_milli: milli(u.uiw_min),
                            mean_milli: milli(u.uiw_mean),
                            max_milli: milli(u.uiw_max),
                        }
                    }),
                }
            })
            .collect()
    }

    fn fib_entries(&self) -> Vec<FibEntry> {
        self.0
            .fib_entries()
            .map(|(name, hops)| FibEntry {
                name,
                next_hops: hops.into_iter().map(|(f, c)| (f.0, c)).collect(),
            })
            .collect()
    }

    fn strategy_choices(&self) -> Vec<StrategyChoiceStatus> {
        self.0
            .strategy_choices()
            .map(|(name, s)| StrategyChoiceStatus {
                name,
                strategy: s.0,
            })
            .collect()
    }

    fn general_counters(&self) -> GeneralCounters {
        let c = self.0.counters();
        GeneralCounters {
            n_name_tree_entries: c.n_name_tree_entries,
            n_fib_entries: c.n_fib_entries,
            n_pit_entries: c.n_pit_entries,
            n_measurements_entries: c.n_measurements_entries,
            n_cs_entries: c.n_cs_entries,
            packets: PacketCounters {
                n_in_interests: c.n_in_interests,
                n_in_data: c.n_in_data,
                n_in_nacks: c.n_in_nacks,
                n_out_interests: c.n_out_interests,
                n_out_data: c.n_out_data,
                n_out_nacks: c.n_out_nacks,
            },
            n_satisfied_interests: c.n_satisfied_interests,
            n_unsatisfied_interests: c.n_unsatisfied_interests,
        }
    }

    fn fib_add_nexthop(&mut self, prefix: &Name, face: u64, cost: u64) -> bool {
        self.0.fib_add_nexthop(prefix, FaceId(face), cost).is_ok()
    }

    fn fib_remove_nexthop(&mut self, prefix: &Name, face: u64) {
        self.0.fib_remove_nexthop(prefix, FaceId(face));
    }

    fn set_strategy(&mut self, prefix: &Name, strategy: &Name) -> Option<Name> {
        self.0
            .set_strategy(prefix, &crate::engine::StrategyName(strategy.clone()))
            .ok()?;
        self.0
            .strategy_choices()
            .find(|(p, _)| p == prefix)
            .map(|(_, s)| s.0)
    }

    fn unset_strategy(&mut self, prefix: &Name) {
        self.0.unset_strategy(prefix);
    }

    fn remove_face(&mut self, now: Timestamp, face: u64) {
        self.0.remove_face(now, FaceId(face));
    }

    fn send_reply(&mut self, now: Timestamp, face: u64, data: Bytes) {
        self.0.send_local_data(now, FaceId(face), data);
    }
}

/// The dataset's stamps of one window, in a fixed field order.
fn stamps(w: &crate::engine::StampWindow) -> Vec<CcStamp> {
    [
        ("pace-constraint", w.pace_constraint),
        ("pace-objective", w.pace_objective),
        ("target-rate", w.target_rate),
        ("downstream-rate", w.downstream_rate),
    ]
    .into_iter()
    .filter_map(|(field, r)| {
        r.map(|r| CcStamp {
            field: field.to_owned(),
            min: r.min,
            max: r.max,
        })
    })
    .collect()
}
