//! CCC: Cooperative Congestion Control (Thibaud et al., ICC 2020, §IV;
//! docs/algorithms.md §3).
//!
//! Each node keeps, per flow, the pace *objective* received from downstream
//! (Interests carry it) and the pace *constraints* received from each
//! upstream next hop (Data carry them), and answers with its own objectives
//! upstream and its own constraint downstream. Paces are in Interests/s.
//!
//! * [`CccFlow::on_objective`]: Algorithm 1, equal split `p_o,k_obj =
//!   p_i_obj / n` (eq. 11), so `Σ p_o,k_obj = p_i_obj` (eq. 8).
//! * [`CccFlow::set_incoming_pace`], [`CccFlow::on_constraint`]:
//!   Algorithm 2, load balancing of the incoming pace up to each next hop's
//!   constraint (eq. 10), with overflow redistribution when a constraint
//!   drops; the outgoing constraint is kept `≤ Σ p_i,k_max` (eq. 9).
//! * [`CccSupervisor::supervise`]: Algorithm 3 every supervision period on a
//!   downstream output interface: congested iff a packet was dropped in the
//!   period (Algorithm 4); then every active flow's constraint becomes
//!   `0.9 · p_i` (Algorithm 5); otherwise the spare bandwidth `C − Σ p_o_max
//!   · data_size` (eq. 12) is shared equally among active flows (Algorithm 6).
//! * [`CccConsumer`]: announces its objective, obeys the constraint.
//!
//! Readings (docs/algorithms.md §3.4-3.5): Algorithm 5 follows the text (90% of
//! the incoming pace) rather than the pseudo-code (90% of the constraint),
//! but never raises a constraint (a pace measured above it is noise);
//! Algorithm 2 fills next hops in decreasing order of spare constraint;
//! Algorithm 6 caps each flow at its objective unless every active flow is
//! satisfied, always at `Σ p_i,k_max`, and recycles capped flows' shares
//! among the others (water-filling); data sizes are EWMAs (gain 1/8,
//! 8400 bytes before the first Data); τ = 100 ms; a flow is active when it
//! saw an Interest or Data in the last τ. [`Augmentation::MaxMinShare`] is
//! an optional reading of Algorithm 6 that restores per-link max-min
//! fairness, which the literal one does not (see [`Augmentation`]).
//!
//! Start-up and starvation guards [D] (measured on real links: without them
//! three flows starting together on a 20 Mbit/s dumbbell each got the whole
//! link, ~4000 Data were dropped and two flows starved at a zero
//! constraint): a flow's first constraint at a supervised interface is an
//! equal share of it ([`CccSupervisor::admit`]); Algorithm 5 never cuts
//! below half a flow's max-min share; the consumer keeps a small window in
//! flight until its first Data and never paces below 1 Interest/s; next
//! hops are chosen by smooth weighted round robin
//! ([`CccFlow::next_hop_smooth`]) rather than at random.

use crate::mircc::path::weighted_choice;
use crate::rcp::{sanitize, DataSizeEstimate};
use crate::time::{Duration, Timestamp};
use alloc::vec::Vec;
use core::borrow::BorrowMut;
use core::fmt;
use rand_core::RngCore;

/// Tolerance under which a pace counts as zero.
const EPS: f64 = 1e-9;

/// Parameters of CCC.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct CccConfig {
    /// Supervision period τ of an output interface.
    pub supervision_period: Duration,
    /// Factor applied to the incoming pace on congestion (Algorithm 5).
    pub reduction_factor: f64,
    /// Data size assumed before the flow's first Data (bytes).
    pub initial_data_size_bytes: f64,
    /// EWMA gain of the flow's Data size.
    pub data_size_gain: f64,
    /// Most next hops per flow.
    pub max_next_hops: usize,
    /// How Algorithm 6 augments constraints when the link is not congested.
    pub augmentation: Augmentation,
    /// Algorithm 5 never cuts a flow below this fraction of its max-min
    /// fair share of the interface (0.5). A cut measured on a flow that was
    /// waiting for retransmissions (pace near 0) would otherwise starve it:
    /// a flow told "0" sends nothing, stays inactive and is never raised.
    pub reduction_floor_share: f64,
    /// Share η of an interface's capacity its supervisor hands out. The
    /// paper shares C (1.0); with η = 1 the constraints can add up to
    /// exactly C, and a queue a burst built never drains (icnfwd: 0.95).
    pub utilisation: f64,
    /// Algorithm 4's congestion test besides drops: a standing queue, every
    /// Data of the supervision period waited longer than this in the
    /// interface's queue (at least one Data serialisation,
    /// [`crate::codel::link_target`]). Zero is the paper's reading, drops
    /// only: with a deep buffer the queue then has to fill before anything
    /// is cut, and the drops stall consumers for an RTO.
    pub congestion_sojourn: Duration,
    /// A flow's first constraint at a supervised interface is an equal
    /// share of it ([`CccSupervisor::admit`]) [D]; `false` is the paper's
    /// silence read as docs/algorithms.md §3.4 does: the flow passes on
    /// `Σ p_i,k_max`, what its next hops allow, until the first supervision.
    pub admit_equal_share: bool,
    /// Each output interface paces every flow's Interests (§IV-A,
    /// [`pacer`]); `false` only splits them by round robin (icnfwd before
    /// the pacer existed, kept to measure what the pacer changes).
    pub pace_interests: bool,
    /// The rate an interface paces a flow at ([`InterestPace`]).
    pub interest_pace: InterestPace,
    /// Bounds of the per-interface pacer.
    pub pacer: pacer::PacerConfig,
    /// With pacing on, an Interest goes to the next hop whose pacer would
    /// release it first, the round-robin pick on ties (tuned [D]); `false`
    /// is Algorithm 2's split in proportion to the paces alone, which
    /// queues an Interest behind one face's pace while another face's
    /// constraint has room (docs/deviations.md, C8).
    pub next_hop_by_room: bool,
}

/// The rate at which an output interface releases a flow's Interests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum InterestPace {
    /// The paper: `p_o,k`, Algorithm 2's share of the incoming pace
    /// measured over the last period (the constraint before any
    /// measurement).
    #[default]
    OutgoingPace,
    /// Eq. 10's bound itself, `p_i,k_max`: the pacer only enforces the
    /// constraint, and a flow's growth is not held to last period's pace
    /// (tuned [D]: paced at `p_o,k`, the dumbbell's consumers saw 104 ms
    /// of queueing instead of 8 and 113 Nacks instead of 0, since the pace
    /// measured over one period lags the offer; docs/deviations.md).
    Constraint,
}

/// Readings of Algorithm 6 (pace augmentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Augmentation {
    /// The paper's text: the spare bandwidth `C − Σ p_o_max·size` (eq. 12)
    /// is shared equally (water-filling under the caps). Once the
    /// constraints add up to C and nothing drops, nothing moves, so the
    /// split keeps whatever ratio the last Algorithm 5 cut left
    /// (`tests/ccc_closed_loop.rs`: from 11/89 to 69/31 on a shared link,
    /// depending on the random next-hop picks).
    #[default]
    SpareShare,
    /// Raises every active flow below its max-min fair share of C (under
    /// the same caps) to that share first, then shares what is still
    /// spare as above. A congested period cuts a flow above its share to
    /// at most that share (Algorithm 5 alone cuts every flow by the same
    /// factor and keeps their ratios), so the split goes to per-link
    /// max-min fairness, the property the paper reports (§V).
    MaxMinShare,
}

impl Default for CccConfig {
    fn default() -> Self {
        CccConfig {
            supervision_period: Duration::from_millis(100),
            reduction_factor: 0.9,
            initial_data_size_bytes: 8400.0,
            data_size_gain: 0.125,
            max_next_hops: 16,
            augmentation: Augmentation::SpareShare,
            reduction_floor_share: 0.5,
            utilisation: 1.0,
            congestion_sojourn: Duration::ZERO,
            admit_equal_share: true,
            pace_interests: true,
            interest_pace: InterestPace::OutgoingPace,
            pacer: pacer::PacerConfig::default(),
            next_hop_by_room: false,
        }
    }
}

impl CccConfig {
    /// Algorithms 3-6 as printed (docs/algorithms.md §3): the spare share
    /// of Algorithm 6, drops as the only congestion signal, the whole
    /// capacity C shared, no floor on Algorithm 5's cut and no admission
    /// share (a new flow passes on `Σ p_i,k_max`).
    pub fn paper() -> Self {
        CccConfig {
            augmentation: Augmentation::SpareShare,
            reduction_floor_share: 0.0,
            utilisation: 1.0,
            congestion_sojourn: Duration::ZERO,
            admit_equal_share: false,
            ..CccConfig::default()
        }
    }

    /// icnfwd's forwarder defaults (docs/deviations.md, CCC rows): max-min
    /// share augmentation, a 20 ms sojourn counted as congestion, η = 0.95,
    /// the equal-share admission, the half-share floor on reductions and
    /// Interests paced at the constraint rather than at last period's pace.
    pub fn tuned() -> Self {
        CccConfig {
            interest_pace: InterestPace::Constraint,
            pacer: pacer::PacerConfig {
                burst_time: Duration::from_millis(20),
                ..pacer::PacerConfig::default()
            },
            augmentation: Augmentation::MaxMinShare,
            reduction_floor_share: 0.5,
            utilisation: 0.95,
            congestion_sojourn: Duration::from_millis(20),
            admit_equal_share: true,
            next_hop_by_room: true,
            ..CccConfig::default()
        }
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::tuned(),
        }
    }
}

/// Errors of the CCC tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CccError {
    /// The flow already has `max_next_hops` next hops.
    TooManyNextHops,
}

impl fmt::Display for CccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CCC flow has too many next hops")
    }
}

impl core::error::Error for CccError {}

/// One upstream next hop of a flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NextHop {
    /// Face id of the next hop.
    pub face: u64,
    /// Objective sent on this face, `p_o,k_obj`.
    pub objective_ips: f64,
    /// Outgoing pace on this face, `p_o,k`.
    pub pace_ips: f64,
    /// Constraint received from this face, `p_i,k_max`.
    pub constraint_ips: f64,
}

/// CCC state of one flow (content prefix × downstream face) at one node.
#[derive(Debug, Clone)]
pub struct CccFlow {
    cfg: CccConfig,
    objective_ips: f64,
    incoming_pace_ips: f64,
    constraint_out_ips: f64,
    supervised: bool,
    hops: Vec<NextHop>,
    data_size: DataSizeEstimate,
    last_active: Option<Timestamp>,
    period_start: Option<Timestamp>,
    interests_in_period: u64,
    /// Smooth weighted round-robin credit per next hop (same order).
    wrr_credit: Vec<f64>,
}

impl CccFlow {
    /// A flow with no next hop yet.
    pub fn new(cfg: CccConfig) -> Self {
        CccFlow {
            data_size: DataSizeEstimate::new(cfg.initial_data_size_bytes, cfg.data_size_gain),
            cfg,
            objective_ips: 0.0,
            incoming_pace_ips: 0.0,
            constraint_out_ips: 0.0,
            supervised: false,
            hops: Vec::new(),
            last_active: None,
            period_start: None,
            interests_in_period: 0,
            wrr_credit: Vec::new(),
        }
    }

    /// Adds (or updates) next hop `face` with the constraint known for it
    /// (e.g. its link capacity over the Data size, before any Data).
    pub fn add_next_hop(&mut self, face: u64, constraint_ips: f64) -> Result<(), CccError> {
        let c = sanitize(constraint_ips);
        if let Some(h) = self.hops.iter_mut().find(|h| h.face == face) {
            h.constraint_ips = c;
        } else {
            if self.hops.len() >= self.cfg.max_next_hops {
                return Err(CccError::TooManyNextHops);
            }
            self.hops.push(NextHop {
                face,
                objective_ips: 0.0,
                pace_ips: 0.0,
                constraint_ips: c,
            });
        }
        if !self.supervised {
            // Before any supervision the node passes on what upstream allows.
            self.constraint_out_ips = self.aggregate_constraint_ips();
        }
        self.split_objective();
        self.rebalance();
        Ok(())
    }

    /// Removes next hop `face`; its pace moves to the others.
    pub fn remove_next_hop(&mut self, face: u64) {
        self.hops.retain(|h| h.face != face);
        self.wrr_credit.clear();
        self.split_objective();
        self.rebalance();
    }

    /// Algorithm 1: a new objective from downstream, split equally.
    pub fn on_objective(&mut self, now: Timestamp, objective_ips: f64) {
        self.touch(now);
        self.objective_ips = sanitize(objective_ips);
        self.split_objective();
    }

    fn split_objective(&mut self) {
        let n = self.hops.len();
        if n == 0 {
            return;
        }
        let share = self.objective_ips / n as f64;
        for h in &mut self.hops {
            h.objective_ips = share;
        }
        // Put the rounding residue on the first hop so eq. 8 is exact.
        let sum: f64 = self.hops.iter().map(|h| h.objective_ips).sum();
        self.hops[0].objective_ips += self.objective_ips - sum;
    }

    /// An Interest of the flow arrived (counts towards the measured pace).
    pub fn on_interest(&mut self, now: Timestamp) {
        self.touch(now);
        self.interests_in_period = self.interests_in_period.saturating_add(1);
        if self.period_start.is_none() {
            self.period_start = Some(now);
        }
    }

    /// A Data of the flow came back (updates the Data-size EWMA).
    pub fn on_data(&mut self, now: Timestamp, data_size_bytes: u32) {
        self.touch(now);
        self.data_size.sample(data_size_bytes);
    }

    fn touch(&mut self, now: Timestamp) {
        self.last_active = Some(self.last_active.map_or(now, |t| t.max(now)));
    }

    /// Ends the pace measurement period: `p_i` = Interests counted since the
    /// last call over the elapsed time; then Algorithm 2.
    pub fn measure_incoming_pace(&mut self, now: Timestamp) {
        let start = self.period_start.unwrap_or(now);
        let secs = (now - start).as_secs_f64();
        if secs > 0.0 {
            self.set_incoming_pace(self.interests_in_period as f64 / secs);
        } else if self.interests_in_period == 0 {
            self.set_incoming_pace(0.0);
        }
        self.interests_in_period = 0;
        self.period_start = Some(now);
    }

    /// Algorithm 2 for a new incoming pace `p_i`: redistributes it from
    /// scratch over the next hops, up to their constraints.
    pub fn set_incoming_pace(&mut self, pace_ips: f64) {
        self.incoming_pace_ips = sanitize(pace_ips);
        self.rebalance();
    }

    fn rebalance(&mut self) {
        for h in &mut self.hops {
            h.pace_ips = 0.0;
        }
        self.distribute(self.incoming_pace_ips);
    }

    /// Algorithm 2 core: places `pace` on hops with spare constraint, most
    /// spare first; if some is left, eq. 9 is re-established.
    fn distribute(&mut self, mut pace: f64) {
        while pace > EPS {
            let best = self
                .hops
                .iter_mut()
                .filter(|h| h.constraint_ips - h.pace_ips > EPS)
                .max_by(|a, b| {
                    (a.constraint_ips - a.pace_ips).total_cmp(&(b.constraint_ips - b.pace_ips))
                });
            let Some(h) = best else { break };
            let add = (h.constraint_ips - h.pace_ips).min(pace);
            h.pace_ips += add;
            pace -= add;
        }
        self.enforce_eq9();
    }

    /// A constraint arrived in Data from next hop `face`. A tighter one
    /// lowers that hop's pace (eq. 10) and spreads the overflow (Algorithm
    /// 2); a looser one lets queued-up incoming pace be placed.
    pub fn on_constraint(&mut self, now: Timestamp, face: u64, constraint_ips: f64) {
        self.touch(now);
        let c = sanitize(constraint_ips);
        let Some(h) = self.hops.iter_mut().find(|h| h.face == face) else {
            return;
        };
        h.constraint_ips = c;
        let overflow = (h.pace_ips - c).max(0.0);
        h.pace_ips = h.pace_ips.min(c);
        let placed: f64 = self.hops.iter().map(|h| h.pace_ips).sum();
        let unplaced = (self.incoming_pace_ips - placed).max(0.0);
        if !self.supervised {
            self.constraint_out_ips = self.aggregate_constraint_ips();
        }
        self.distribute(overflow.max(unplaced));
    }

    /// `Σ_k p_i,k_max`.
    pub fn aggregate_constraint_ips(&self) -> f64 {
        self.hops.iter().map(|h| h.constraint_ips).sum()
    }

    fn enforce_eq9(&mut self) {
        let agg = self.aggregate_constraint_ips();
        if self.constraint_out_ips > agg {
            self.constraint_out_ips = agg;
        }
    }

    /// True once a supervisor set the outgoing constraint (before that the
    /// flow passes on what its next hops allow).
    pub fn is_supervised(&self) -> bool {
        self.supervised
    }

    /// Sets the outgoing constraint (supervision), clamped by eq. 9.
    fn set_constraint_out(&mut self, ips: f64) {
        self.supervised = true;
        self.constraint_out_ips = sanitize(ips);
        self.enforce_eq9();
    }

    /// Picks the next hop for an Interest, with probability proportional to
    /// the outgoing paces (the objective split before any pace is known).
    pub fn choose_next_hop(&self, rng: &mut impl RngCore) -> Option<u64> {
        let paces: Vec<f64> = self.hops.iter().map(|h| h.pace_ips).collect();
        let weights = if paces.iter().sum::<f64>() > EPS {
            paces
        } else {
            self.hops.iter().map(|h| h.objective_ips).collect()
        };
        weighted_choice(&weights, rng).map(|i| self.hops[i].face)
    }

    /// Picks the next hop for an Interest in proportion to the outgoing
    /// paces (the objective split before any pace is known), by smooth
    /// weighted round robin: every face receives its share evenly spread in
    /// time, so no face sees a random burst above its constraint (a burst
    /// queues Data upstream and reads as congestion there).
    pub fn next_hop_smooth(&mut self) -> Option<u64> {
        // Weights are the paces, or the objectives before any pace is
        // measured; read in place (no buffer per Interest).
        let by_pace = self.hops.iter().map(|h| h.pace_ips).sum::<f64>() > EPS;
        let weight = |h: &NextHop| if by_pace { h.pace_ips } else { h.objective_ips };
        let total: f64 = self.hops.iter().map(weight).sum();
        if self.hops.is_empty() {
            return None;
        }
        if total <= EPS {
            return Some(self.hops[0].face);
        }
        self.wrr_credit.resize(self.hops.len(), 0.0);
        let mut best = 0;
        for (i, h) in self.hops.iter().enumerate() {
            self.wrr_credit[i] += weight(h) / total;
            if self.wrr_credit[i] > self.wrr_credit[best] {
                best = i;
            }
        }
        self.wrr_credit[best] -= 1.0;
        Some(self.hops[best].face)
    }

    /// The pace at which the output interface towards next hop `face`
    /// releases this flow's Interests (`None`: not a next hop).
    pub fn hop_pace_ips(&self, face: u64) -> Option<f64> {
        let h = self.hops.iter().find(|h| h.face == face)?;
        Some(match self.cfg.interest_pace {
            InterestPace::OutgoingPace if h.pace_ips > EPS => h.pace_ips,
            _ => h.constraint_ips,
        })
    }

    /// `p_i_obj`.
    pub fn objective_ips(&self) -> f64 {
        self.objective_ips
    }
    /// `p_i`.
    pub fn incoming_pace_ips(&self) -> f64 {
        self.incoming_pace_ips
    }
    /// `p_o_max`, piggybacked on the flow's Data sent downstream.
    pub fn constraint_out_ips(&self) -> f64 {
        self.constraint_out_ips
    }
    /// Next hops with their objectives, paces and constraints.
    pub fn next_hops(&self) -> &[NextHop] {
        &self.hops
    }
    /// Data-size estimate (bytes).
    pub fn data_size_bytes(&self) -> f64 {
        self.data_size.bytes()
    }
    /// True if the flow saw an Interest or Data within `window` before `now`.
    pub fn is_active(&self, now: Timestamp, window: Duration) -> bool {
        self.last_active.is_some_and(|t| now - t <= window)
    }
    /// This flow's term of eq. 12: `p_o_max · data_size` in bit/s.
    pub fn bandwidth_bps(&self) -> f64 {
        self.constraint_out_ips * self.data_size.bytes() * 8.0
    }
}

/// What a supervision round decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Supervision {
    /// Drops were seen: this many active flows had their constraint cut.
    Congested {
        /// Flows reduced.
        flows: usize,
    },
    /// No drop: `available_bps` (eq. 12) was shared among `flows` flows.
    Augmented {
        /// Spare bandwidth before distribution (may be ≤ 0: nothing given).
        available_bps: f64,
        /// Active flows.
        flows: usize,
    },
}

/// Queue supervision of one downstream output interface (Algorithms 3-6).
#[derive(Debug, Clone)]
pub struct CccSupervisor {
    cfg: CccConfig,
    capacity_bps: f64,
    drops: u64,
    /// Whether every Data dequeued this period waited past the sojourn
    /// threshold (`None`: none dequeued yet).
    standing_queue: Option<bool>,
    last_run: Option<Timestamp>,
}

impl CccSupervisor {
    /// Supervises an interface of `capacity_bps`, sharing η of it
    /// ([`CccConfig::utilisation`], whole bit/s).
    pub fn new(cfg: CccConfig, capacity_bps: f64) -> Self {
        CccSupervisor {
            cfg,
            capacity_bps: sanitize(libm::floor(sanitize(capacity_bps) * cfg.utilisation)),
            drops: 0,
            standing_queue: None,
            last_run: None,
        }
    }

    /// The emission queue dropped a packet (Algorithm 4 input).
    pub fn on_drop(&mut self) {
        self.drops = self.drops.saturating_add(1);
    }

    /// A Data of `data_bytes` left the interface's queue after `sojourn`
    /// on a link of `link_capacity_bps`. The period counts as congested,
    /// like a drop, when every Data dequeued in it waited longer than
    /// [`CccConfig::congestion_sojourn`] and at least one Data
    /// serialisation: a standing queue, CoDel's test. One Data over the
    /// threshold is not enough: the Data of flows paced at their shares
    /// meet in bursts that drain within the period (ten flows of 1200-byte
    /// Data on 2 Mbit/s queue 4-10 Data for a moment), and counted as
    /// congestion they held every flow at half its share, 48 % of the link
    /// (envelope sweep). Nor is one serialisation time: on a link where one
    /// Data takes longer than the threshold (8 KB at 2 Mbit/s: 32 ms) the
    /// Data waiting behind the one in service is no congestion.
    /// Returns whether this Data waited past the threshold.
    pub fn on_data_dequeued(
        &mut self,
        sojourn: Duration,
        data_bytes: usize,
        link_capacity_bps: Option<u64>,
    ) -> bool {
        let t = self.cfg.congestion_sojourn;
        if t == Duration::ZERO {
            return false;
        }
        let over = sojourn > crate::codel::link_target(t, data_bytes, link_capacity_bps);
        self.standing_queue = Some(self.standing_queue.unwrap_or(true) && over);
        over
    }

    /// A flow starts leaving by this interface, next to `flows_before`
    /// others: its first constraint is an equal share of the capacity (under
    /// eq. 9), not the whole link its next hops would allow. Handing every
    /// newcomer the whole link is what overruns the queue at start-up:
    /// Algorithm 5 then needs ~10 congested periods (0.9 per period) to
    /// bring N × C back under C. [D]: the paper does not say what a flow
    /// gets before its first supervision.
    pub fn admit(&self, flow: &mut CccFlow, flows_before: usize) {
        if !self.cfg.admit_equal_share {
            return;
        }
        let bits = flow.data_size.bytes() * 8.0;
        let share_ips = self.capacity_bps / (flows_before + 1) as f64 / bits;
        let agg = flow.aggregate_constraint_ips();
        flow.set_constraint_out(share_ips.min(agg));
    }

    /// The capacity this supervisor shares, bit/s.
    pub fn capacity_bps(&self) -> f64 {
        self.capacity_bps
    }

    /// When the next supervision is due.
    pub fn poll_timeout(&self) -> Timestamp {
        self.last_run
            .map_or(Timestamp::ZERO, |t| t + self.cfg.supervision_period)
    }

    /// Algorithm 3 over the flows whose Data leave by this interface.
    pub fn supervise<F: BorrowMut<CccFlow>>(
        &mut self,
        now: Timestamp,
        flows: &mut [F],
    ) -> Supervision {
        self.last_run = Some(now);
        let window = self.cfg.supervision_period;
        for f in flows.iter_mut() {
            f.borrow_mut().measure_incoming_pace(now);
        }
        // Algorithm 4, plus the standing-queue test [D].
        let congested = self.drops > 0 || self.standing_queue == Some(true);
        self.drops = 0;
        self.standing_queue = None;
        let mut active: Vec<&mut CccFlow> = flows
            .iter_mut()
            .map(|f| f.borrow_mut())
            .filter(|f| f.is_active(now, activity_window(f, window)))
            .collect();
        if congested {
            // Algorithm 5, floored at a fraction of the max-min share.
            let max_min = self.cfg.augmentation == Augmentation::MaxMinShare;
            let floors = max_min_shares_ips(&active, self.capacity_bps);
            for (f, share) in active.iter_mut().zip(floors) {
                let floor = self.cfg.reduction_floor_share * share;
                // With max-min augmentation, a flow above its max-min share
                // is cut at least to that share [D]: cutting every flow by
                // the same factor keeps
                // their ratios, so a flow that took the link before the
                // others arrived kept most of it through every congested
                // period (ten flows of 8 KB Data on 10 Mbit/s: the first
                // at 4.4 Mbit/s, the others 0.5, Jain 0.67, envelope sweep).
                let reduced = self.cfg.reduction_factor * f.incoming_pace_ips;
                let reduced = if max_min && f.incoming_pace_ips > share {
                    reduced.min(share)
                } else {
                    reduced
                };
                // A reduction never raises: a noisy pace measurement above
                // the constraint must not loosen it.
                let target = reduced.max(floor).min(f.constraint_out_ips);
                f.set_constraint_out(target);
            }
            return Supervision::Congested {
                flows: active.len(),
            };
        }
        // Eq. 12 and Algorithm 6.
        let n = active.len();
        let all_satisfied = active
            .iter()
            .all(|f| f.constraint_out_ips >= f.objective_ips);
        let caps: Vec<f64> = active
            .iter()
            .map(|f| {
                let agg = f.aggregate_constraint_ips();
                if all_satisfied {
                    agg
                } else {
                    agg.min(f.objective_ips)
                }
            })
            .collect();
        if self.cfg.augmentation == Augmentation::MaxMinShare && n > 0 {
            raise_to_max_min_share(&mut active, &caps, self.capacity_bps);
        }
        let used: f64 = active.iter().map(|f| f.bandwidth_bps()).sum();
        let available_bps = self.capacity_bps - used;
        if available_bps > 0.0 && n > 0 {
            water_fill(&mut active, &caps, available_bps);
        }
        Supervision::Augmented {
            available_bps,
            flows: n,
        }
    }
}

/// How long a flow may go without a packet and still count as active: the
/// supervision period, or two Interests at its constraint when that is
/// longer [D]. A flow paced at 5 Interests/s has no packet in most 100 ms
/// periods; counted inactive there, it was neither cut nor raised, and the
/// max-min share of the few flows that were active was C over their
/// number: ten flows of 4400-byte Data on 2 Mbit/s were raised to 9-11
/// Interests/s for a fair 5.6 and queued 42 Data (envelope sweep).
fn activity_window(f: &CccFlow, period: Duration) -> Duration {
    let pace = f.constraint_out_ips;
    if pace.is_finite() && pace > 0.0 {
        let two_gaps = Duration::from_secs_f64((2.0 / pace).min(60.0));
        period.max(two_gaps)
    } else {
        period
    }
}

/// Each flow's max-min fair share of `capacity_bps` (flows capped by
/// `caps`, in Interests/s), in Interests/s.
fn max_min_shares(flows: &[&mut CccFlow], caps: &[f64], capacity_bps: f64) -> Vec<f64> {
    let bits: Vec<f64> = flows.iter().map(|f| f.data_size.bytes() * 8.0).collect();
    let mut order: Vec<usize> = (0..flows.len()).collect();
    order.sort_by(|&a, &b| (caps[a] * bits[a]).total_cmp(&(caps[b] * bits[b])));
    let mut left_bps = capacity_bps;
    let mut shares = alloc::vec![0.0; flows.len()];
    for (k, &i) in order.iter().enumerate() {
        let share_bps = (left_bps / (order.len() - k) as f64).min(caps[i] * bits[i]);
        left_bps -= share_bps;
        shares[i] = share_bps / bits[i];
    }
    shares
}

/// Max-min shares under the caps Algorithm 5 can see: each flow's
/// objective and `Σ p_i,k_max` (eq. 9).
fn max_min_shares_ips(flows: &[&mut CccFlow], capacity_bps: f64) -> Vec<f64> {
    let caps: Vec<f64> = flows
        .iter()
        .map(|f| f.aggregate_constraint_ips().min(f.objective_ips))
        .collect();
    max_min_shares(flows, &caps, capacity_bps)
}

/// Raises each flow below its max-min fair share of `capacity_bps` (flows
/// capped by `caps`, in Interests/s) to that share.
fn raise_to_max_min_share(flows: &mut [&mut CccFlow], caps: &[f64], capacity_bps: f64) {
    let shares = max_min_shares(flows, caps, capacity_bps);
    for (f, share_ips) in flows.iter_mut().zip(shares) {
        if share_ips > f.constraint_out_ips {
            f.set_constraint_out(share_ips);
        }
    }
}

/// Gives each flow an equal share of `available_bps`, converting to a pace
/// by its Data size; shares that a flow's cap cannot absorb are recycled
/// among the flows still below their cap.
fn water_fill(flows: &mut [&mut CccFlow], caps: &[f64], mut available_bps: f64) {
    let mut open: Vec<usize> = (0..flows.len())
        .filter(|&i| caps[i] - flows[i].constraint_out_ips > EPS)
        .collect();
    while available_bps > EPS && !open.is_empty() {
        let share = available_bps / open.len() as f64;
        let mut still_open = Vec::with_capacity(open.len());
        for &i in &open {
            let f = &mut flows[i];
            let bits = f.data_size.bytes() * 8.0;
            let room_ips = caps[i] - f.constraint_out_ips;
            let add_ips = (share / bits).min(room_ips);
            let new = f.constraint_out_ips + add_ips;
            f.set_constraint_out(new);
            available_bps -= add_ips * bits;
            if caps[i] - f.constraint_out_ips > EPS {
                still_open.push(i);
            }
        }
        if still_open.len() == open.len() {
            break; // nobody capped: every share was absorbed
        }
        open = still_open;
    }
}

/// What a producer's network layer stamps as its constraint before it knows
/// more: its link capacity divided by the Data size.
pub fn producer_constraint_ips(capacity_bps: f64, data_size_bytes: f64) -> f64 {
    if data_size_bytes > 0.0 {
        sanitize(capacity_bps) / (8.0 * data_size_bytes)
    } else {
        0.0
    }
}

mod consumer;
pub mod pacer;

pub use consumer::{CccConsumer, CccConsumerConfig};

#[cfg(test)]
mod tests;
