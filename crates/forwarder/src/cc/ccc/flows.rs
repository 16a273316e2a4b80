//! CCC flows of one node (Thibaud et al., ICC 2020, §IV), built from
//! cc-core's [`CccFlow`] and [`CccSupervisor`] unchanged.
//!
//! A flow is (content prefix, downstream face): the Interests of one content
//! object arriving on one face. Per flow the node keeps the objective the
//! downstream announced (Interests' `pace_objective`), splits it over the
//! next hops (Algorithm 1) and rewrites it on each forwarded Interest; it
//! keeps the constraint each next hop returned (Data's `pace_constraint`),
//! balances the measured incoming pace over the next hops (Algorithm 2) and
//! rewrites the constraint on the Data sent downstream (eq. 9). Every face
//! with a configured capacity gets a supervisor of its Data queue
//! (Algorithms 3-6, a drop in the period means congestion); flows leaving by
//! a face without capacity (applications) only have their pace measured.

use std::collections::{BTreeMap, HashMap};

use cc_core::ccc::{producer_constraint_ips, CccConfig, CccFlow, CccSupervisor, NextHop};
use cc_core::{Duration, Timestamp};

use crate::engine::FaceId;

/// Most CCC flows one node tracks (inactive ones are evicted first).
pub(crate) const MAX_FLOWS: usize = 4096;

/// Constraint of a next hop whose capacity is unknown (an application
/// face): large enough never to bind, finite so eq. 9 stays meaningful.
const UNKNOWN_CONSTRAINT_IPS: f64 = 1e9;

/// Flows idle for this many supervision periods are forgotten.
const IDLE_PERIODS: u32 = 50;

/// Pace on the wire: icn-tlv's one rule (milli-Interests/s, rounded).
pub(crate) use icn_tlv::cc::{ips_from_wire as wire_to_ips, ips_to_wire};

/// CCC state of one node.
pub(crate) struct CccFlows {
    cfg: CccConfig,
    flows: HashMap<(u64, FaceId), Entry>,
    /// Supervisors of the faces with a capacity (Data leave by them).
    supervisors: BTreeMap<FaceId, CccSupervisor>,
    /// Capacities of the supervised faces, bit/s.
    capacities: BTreeMap<FaceId, u64>,
    /// Next pace measurement of flows whose downstream face is unsupervised.
    next_measure: Option<Timestamp>,
}

/// A flow and the next hops that stamped a constraint at least once (the
/// others keep the link-capacity estimate; a Data from an upstream cache
/// carries no constraint and must not reset a stamped one).
struct Entry {
    flow: CccFlow,
    stamped: Vec<u64>,
}

/// A flow with its key, as a supervisor takes it.
struct Keyed<'a>((u64, FaceId), &'a mut CccFlow);

impl core::borrow::Borrow<CccFlow> for Keyed<'_> {
    fn borrow(&self) -> &CccFlow {
        self.1
    }
}

impl core::borrow::BorrowMut<CccFlow> for Keyed<'_> {
    fn borrow_mut(&mut self) -> &mut CccFlow {
        self.1
    }
}

/// A candidate next hop: face and its capacity, if known.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) face: FaceId,
    pub(crate) capacity_bps: Option<u64>,
}

impl CccFlows {
    pub(crate) fn new(cfg: CccConfig) -> Self {
        CccFlows {
            cfg,
            flows: HashMap::new(),
            supervisors: BTreeMap::new(),
            capacities: BTreeMap::new(),
            next_measure: None,
        }
    }

    /// Supervises `face`'s Data queue from now on (idempotent), sharing
    /// η of the link's `capacity_bps` among its flows.
    pub(crate) fn supervise_face(&mut self, face: FaceId, capacity_bps: u64) {
        let cfg = self.cfg;
        let sup = self
            .supervisors
            .entry(face)
            .or_insert_with(|| CccSupervisor::new(cfg, capacity_bps as f64));
        self.capacities.insert(face, sup.capacity_bps() as u64);
    }

    pub(crate) fn is_supervised(&self, face: FaceId) -> bool {
        self.supervisors.contains_key(&face)
    }

    /// A face went away: its supervisor and the flows through it go too.
    pub(crate) fn face_removed(&mut self, face: FaceId) {
        self.supervisors.remove(&face);
        self.capacities.remove(&face);
        self.flows.retain(|(_, d), _| *d != face);
        for e in self.flows.values_mut() {
            e.flow.remove_next_hop(face.0);
            e.stamped.retain(|f| *f != face.0);
        }
    }

    /// A new link capacity for `face`'s supervisor.
    pub(crate) fn capacity_changed(&mut self, face: FaceId, capacity_bps: Option<u64>) {
        match capacity_bps.filter(|c| *c > 0) {
            Some(c) if self.supervisors.contains_key(&face) => {
                let sup = CccSupervisor::new(self.cfg, c as f64);
                self.capacities.insert(face, sup.capacity_bps() as u64);
                self.supervisors.insert(face, sup);
            }
            None => {
                self.supervisors.remove(&face);
                self.capacities.remove(&face);
            }
            _ => {}
        }
    }

    /// A Data/Nack was dropped on `face` (Algorithm 4's signal).
    pub(crate) fn on_drop(&mut self, face: FaceId) {
        if let Some(s) = self.supervisors.get_mut(&face) {
            s.on_drop();
        }
    }

    /// A Data/Nack of `bytes` left `face` after `sojourn` (the
    /// supervisor's queue-delay signal, [`CccSupervisor::on_data_dequeued`]).
    pub(crate) fn on_data_dequeued(
        &mut self,
        face: FaceId,
        sojourn: cc_core::Duration,
        bytes: usize,
        link_capacity_bps: Option<u64>,
    ) {
        if let Some(s) = self.supervisors.get_mut(&face) {
            s.on_data_dequeued(sojourn, bytes, link_capacity_bps);
        }
    }

    fn flow_mut(&mut self, now: Timestamp, key: (u64, FaceId)) -> Option<&mut CccFlow> {
        if !self.flows.contains_key(&key) && self.flows.len() >= MAX_FLOWS {
            let idle = self.idle_window();
            self.flows.retain(|_, e| e.flow.is_active(now, idle));
            if self.flows.len() >= MAX_FLOWS {
                return None;
            }
        }
        let cfg = self.cfg;
        Some(
            &mut self
                .flows
                .entry(key)
                .or_insert_with(|| Entry {
                    flow: CccFlow::new(cfg),
                    stamped: Vec::new(),
                })
                .flow,
        )
    }

    fn idle_window(&self) -> Duration {
        self.cfg.supervision_period * IDLE_PERIODS
    }

    /// An Interest of flow (`prefix`, `downstream`) with the objective it
    /// carried (None: a consumer of another scheme, which asks for whatever
    /// the next hops allow). Returns the next hop chosen (Algorithm 2's
    /// paces by smooth weighted round robin, the objective split before any
    /// pace is known) and the
    /// objective to write on the forwarded Interest (Algorithm 1).
    pub(crate) fn on_interest(
        &mut self,
        now: Timestamp,
        prefix: u64,
        downstream: FaceId,
        objective_ips: Option<f64>,
        cands: &[Candidate],
    ) -> Option<(FaceId, f64)> {
        let down_bps = self.capacities.get(&downstream).copied();
        let key = (prefix, downstream);
        let is_new = !self.flows.contains_key(&key);
        let others = if is_new {
            self.flow_count(downstream)
        } else {
            0
        };
        let flow = self.flow_mut(now, key)?;
        sync_next_hops(flow, cands, down_bps);
        let objective = objective_ips.unwrap_or_else(|| flow.aggregate_constraint_ips());
        if objective != flow.objective_ips() {
            flow.on_objective(now, objective);
        }
        if is_new {
            if let (Some(sup), Some(e)) =
                (self.supervisors.get(&downstream), self.flows.get_mut(&key))
            {
                sup.admit(&mut e.flow, others);
            }
        }
        let flow = &mut self.flows.get_mut(&key)?.flow;
        flow.on_interest(now);
        let face = flow.next_hop_smooth()?;
        let hop = flow.next_hops().iter().find(|h| h.face == face)?;
        Some((FaceId(face), hop.objective_ips))
    }

    /// A Data of `prefix` arrived from `upstream` with the constraint it
    /// carried; returns the constraint to write on the Data sent to
    /// `downstream` (eq. 9), None if the flow is not tracked.
    ///
    /// An upstream that stamps no constraint (a producer application, a
    /// forwarder of another scheme) keeps the link-capacity estimate, kept
    /// in step with the measured Data size (`upstream_bps`: the upstream
    /// link's capacity, else the downstream one's).
    #[allow(clippy::too_many_arguments)] // one Data's facts, all needed
    pub(crate) fn on_data(
        &mut self,
        now: Timestamp,
        prefix: u64,
        upstream: FaceId,
        constraint_ips: Option<f64>,
        data_bytes: usize,
        downstream: FaceId,
        upstream_bps: Option<u64>,
    ) -> Option<f64> {
        let down_bps = self.capacities.get(&downstream).copied();
        let Entry { flow, stamped } = self.flows.get_mut(&(prefix, downstream))?;
        flow.on_data(now, u32::try_from(data_bytes).unwrap_or(u32::MAX));
        match constraint_ips {
            Some(c) => {
                if !stamped.contains(&upstream.0) {
                    stamped.push(upstream.0);
                }
                flow.on_constraint(now, upstream.0, c);
            }
            None if stamped.contains(&upstream.0) => {}
            None => {
                if let Some(b) = upstream_bps.or(down_bps).filter(|b| *b > 0) {
                    let c = producer_constraint_ips(b as f64, flow.data_size_bytes());
                    let known = flow.next_hops().iter().find(|h| h.face == upstream.0);
                    if known.is_some_and(|h| (h.constraint_ips - c).abs() > 1e-6 * c) {
                        flow.on_constraint(now, upstream.0, c);
                    }
                }
            }
        }
        Some(flow.constraint_out_ips())
    }

    pub(crate) fn poll_timeout(&self) -> Option<Timestamp> {
        let sup = self
            .supervisors
            .values()
            .map(CccSupervisor::poll_timeout)
            .min();
        let measure = match self.next_measure {
            _ if self.flows.is_empty() => None,
            None => Some(Timestamp::ZERO),
            t => t,
        };
        match (sup, measure) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every supervision due at `now` (Algorithm 3 on the flows leaving
    /// by each supervised face) and measures the other flows' paces.
    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        let idle = self.idle_window();
        let flows = &mut self.flows;
        for (face, sup) in &mut self.supervisors {
            if sup.poll_timeout() > now {
                continue;
            }
            let mut mine: Vec<Keyed<'_>> = flows
                .iter_mut()
                .filter(|((_, d), _)| d == face)
                .map(|(k, e)| Keyed(*k, &mut e.flow))
                .collect();
            // The map's order differs from process to process; shares
            // computed in key order keep a run reproducible from its seed
            // (float sums and ties depend on the order).
            mine.sort_unstable_by_key(|k| k.0);
            sup.supervise(now, &mut mine);
        }
        if self.next_measure.is_none_or(|t| t <= now) {
            let sups = &self.supervisors;
            for ((_, d), e) in flows.iter_mut() {
                let f = &mut e.flow;
                if !sups.contains_key(d) {
                    f.measure_incoming_pace(now);
                }
            }
            flows.retain(|_, e| e.flow.is_active(now, idle));
            self.next_measure = Some(now + self.cfg.supervision_period);
        }
    }

    /// Eq. 12's used bandwidth on `face`: Σ p_o_max · Data size of the
    /// flows leaving by it (bit/s), None if it has no flow.
    pub(crate) fn used_bps(&self, face: FaceId) -> Option<u64> {
        let mut any = false;
        let sum: f64 = self
            .flows
            .iter()
            .filter(|((_, d), _)| *d == face)
            .inspect(|_| any = true)
            .map(|(_, e)| e.flow.bandwidth_bps())
            .sum();
        any.then(|| sum.clamp(0.0, u64::MAX as f64) as u64)
    }

    /// Flows whose Data leave by `face`.
    pub(crate) fn flow_count(&self, face: FaceId) -> usize {
        self.flows.keys().filter(|(_, d)| *d == face).count()
    }

    /// The pace at which `face` releases the Interests of (`prefix`,
    /// `downstream`), None when the flow or that next hop is unknown.
    pub(crate) fn hop_pace_ips(
        &self,
        prefix: u64,
        downstream: FaceId,
        face: FaceId,
    ) -> Option<f64> {
        self.flows
            .get(&(prefix, downstream))?
            .flow
            .hop_pace_ips(face.0)
    }

    /// The next hops of flow (`prefix`, `downstream`), none if untracked.
    pub(crate) fn next_hops(&self, prefix: u64, downstream: FaceId) -> &[NextHop] {
        self.flows
            .get(&(prefix, downstream))
            .map_or(&[], |e| e.flow.next_hops())
    }

    /// The cc-core parameters of the node's flows.
    pub(crate) fn config(&self) -> &CccConfig {
        &self.cfg
    }

    /// The flow of (`prefix`, `downstream`), for tests and status.
    #[cfg(test)]
    pub(crate) fn flow(&self, prefix: u64, downstream: FaceId) -> Option<&CccFlow> {
        self.flows.get(&(prefix, downstream)).map(|e| &e.flow)
    }
}

/// Makes the flow's next hops the candidates: new faces start at their
/// link's constraint (capacity over the Data size; for a next hop without
/// capacity, e.g. the producer application, the downstream link's: what
/// the producer's network layer would stamp), gone faces are removed.
fn sync_next_hops(flow: &mut CccFlow, cands: &[Candidate], downstream_bps: Option<u64>) {
    let same = flow.next_hops().len() == cands.len()
        && cands
            .iter()
            .all(|c| flow.next_hops().iter().any(|h| h.face == c.face.0));
    if same {
        return;
    }
    let gone: Vec<u64> = flow
        .next_hops()
        .iter()
        .map(|h| h.face)
        .filter(|f| !cands.iter().any(|c| c.face.0 == *f))
        .collect();
    for f in gone {
        flow.remove_next_hop(f);
    }
    for c in cands {
        if flow.next_hops().iter().any(|h| h.face == c.face.0) {
            continue;
        }
        let init = c
            .capacity_bps
            .or(downstream_bps)
            .filter(|b| *b > 0)
            .map_or(UNKNOWN_CONSTRAINT_IPS, |b| {
                producer_constraint_ips(b as f64, flow.data_size_bytes())
            });
        // Only fails past `max_next_hops`; the extra candidates are skipped.
        let _ = flow.add_next_hop(c.face.0, init);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands() -> [Candidate; 2] {
        [
            Candidate {
                face: FaceId(2),
                capacity_bps: Some(6_000_000),
            },
            Candidate {
                face: FaceId(3),
                capacity_bps: Some(10_000_000),
            },
        ]
    }

    #[test]
    fn objective_is_split_equally_and_constraints_aggregate() {
        let mut n = CccFlows::new(CccConfig::default());
        let now = Timestamp::ZERO;
        let (_, hop_obj) = n
            .on_interest(now, 7, FaceId(1), Some(300.0), &cands())
            .unwrap();
        assert!((hop_obj - 150.0).abs() < 1e-6, "Algorithm 1: {hop_obj}");
        n.on_data(now, 7, FaceId(2), Some(40.0), 8400, FaceId(1), None)
            .unwrap();
        let out = n
            .on_data(now, 7, FaceId(3), Some(60.0), 8400, FaceId(1), None)
            .unwrap();
        assert!((out - 100.0).abs() < 1e-6, "eq. 9: {out}");
    }

    #[test]
    fn a_drop_cuts_the_constraint_of_the_supervised_face() {
        let cfg = CccConfig::default();
        let mut n = CccFlows::new(cfg);
        n.supervise_face(FaceId(1), 100_000_000);
        let only = [Candidate {
            face: FaceId(5),
            capacity_bps: None,
        }];
        let mut now = Timestamp::ZERO;
        n.handle_timeout(now);
        for _ in 0..100 {
            now += Duration::from_millis(1);
            n.on_interest(now, 9, FaceId(1), Some(1000.0), &only);
            n.on_data(now, 9, FaceId(5), None, 8400, FaceId(1), None);
        }
        n.on_drop(FaceId(1));
        now = n.poll_timeout().unwrap();
        n.handle_timeout(now);
        let c = n.flow(9, FaceId(1)).unwrap().constraint_out_ips();
        // 100 Interests in 100 ms = 1000/s, cut to 900/s (Algorithm 5).
        assert!((c - 900.0).abs() < 20.0, "constraint {c}");
        assert!(n.used_bps(FaceId(1)).unwrap() > 0);
    }

    #[test]
    fn new_flows_on_a_supervised_face_start_at_an_equal_share() {
        let mut n = CccFlows::new(CccConfig::default());
        // 16.8 Mbit/s of 8400-byte Data: 250 Interests/s.
        n.supervise_face(FaceId(1), 16_800_000);
        let only = [Candidate {
            face: FaceId(5),
            capacity_bps: None,
        }];
        let now = Timestamp::ZERO;
        n.on_interest(now, 1, FaceId(1), Some(1e6), &only);
        n.on_interest(now, 2, FaceId(1), Some(1e6), &only);
        let first = n.flow(1, FaceId(1)).unwrap().constraint_out_ips();
        let second = n.flow(2, FaceId(1)).unwrap().constraint_out_ips();
        assert!((first - 250.0).abs() < 1e-6, "{first}");
        assert!((second - 125.0).abs() < 1e-6, "{second}");
        // An unsupervised downstream passes on what upstream allows.
        n.on_interest(now, 3, FaceId(9), Some(1e6), &only);
        let c = n.flow(3, FaceId(9)).unwrap().constraint_out_ips();
        assert!((c - UNKNOWN_CONSTRAINT_IPS).abs() < 1e-6, "{c}");
    }

    #[test]
    fn tables_are_bounded_and_idle_flows_expire() {
        let mut n = CccFlows::new(CccConfig::default());
        for p in 0..(MAX_FLOWS as u64 + 10) {
            n.on_interest(Timestamp::ZERO, p, FaceId(1), Some(1.0), &cands());
        }
        assert!(n.flows.len() <= MAX_FLOWS);
        n.handle_timeout(Timestamp::from_millis(60_000));
        assert!(n.flows.is_empty());
    }

    proptest::proptest! {
        /// Whatever Interests, Data, constraints, drops and timers arrive,
        /// a flow never promises downstream more than its next hops allow
        /// (eq. 9), the objectives it sends up add up to the one it got
        /// (eq. 8), and the table stays bounded.
        #[test]
        fn eq8_eq9_and_bounds_hold(
            events in proptest::collection::vec(
                (0u8..4, 0u64..6, 1u64..4, 0u32..3_000, 1u64..200),
                1..300,
            )
        ) {
            let mut n = CccFlows::new(CccConfig::default());
            n.supervise_face(FaceId(1), 20_000_000);
            let mut now = Timestamp::ZERO;
            for (kind, prefix, down, value, dt_ms) in events {
                now += Duration::from_millis(dt_ms);
                let down = FaceId(down);
                match kind {
                    0 => {
                        n.on_interest(now, prefix, down, Some(f64::from(value)), &cands());
                    }
                    1 => {
                        let up = FaceId(2 + prefix % 2);
                        n.on_data(now, prefix, up, Some(f64::from(value)), 4000, down, None);
                    }
                    2 => n.on_drop(down),
                    _ => n.handle_timeout(now),
                }
            }
            proptest::prop_assert!(n.flows.len() <= MAX_FLOWS);
            for e in n.flows.values() {
                let f = &e.flow;
                proptest::prop_assert!(
                    f.constraint_out_ips() <= f.aggregate_constraint_ips() + 1e-6
                );
                let split: f64 = f.next_hops().iter().map(|h| h.objective_ips).sum();
                proptest::prop_assert!((split - f.objective_ips()).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn wire_conversion_saturates() {
        assert_eq!(ips_to_wire(1.5), 1500);
        assert_eq!(ips_to_wire(f64::NAN), 0);
        assert_eq!(ips_to_wire(-3.0), 0);
        assert!((wire_to_ips(2500) - 2.5).abs() < 1e-12);
    }
}
