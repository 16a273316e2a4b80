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
    /// With [`Augmentation::MaxMinShare`], a flow whose Interests arrive
    /// well below its constraint here (held back by a tighter hop or by
    /// its consumer) counts in the max-min shares with its measured demand
    /// (its constraint keeps growth room above it) rather than its whole
    /// cap, so the share it leaves
    /// unused goes to the flows limited here (tuned [D]; docs/deviations.md
    /// C9). Off, a flow bottlenecked elsewhere holds an equal share it
    /// never uses: a parking lot's last link ran at 63 %.
    pub max_min_demand: bool,
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
    /// max-min fairness, the property the paper reports (§V). With
    /// [`CccConfig::max_min_demand`], a flow held back elsewhere counts at
    /// its measured demand, as max-min fairness over several links asks.
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
            max_min_demand: false,
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
            max_min_demand: true,
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
    /// Demand measurement ([`CccFlow::measure_demand`]): Interests since
    /// `demand_start`, and the last completed window's pace.
    demand_count: u64,
    demand_start: Option<Timestamp>,
    demand_ips: Option<f64>,
    /// Demand windows still void after a raise of the constraint: the flow
    /// answers a raise an RTT later, and a window that straddles it reads
    /// a flow catching up as one held back elsewhere.
    demand_void: u8,
    /// Held back elsewhere (the supervisor's max-min by demand).
    held_back: bool,
    /// Smooth weighted round-robin credit per next hop (same order).
    wrr_credit: Vec<f64>,
}

/// Interests a demand window holds: a paced flow of a few Interests per
/// second brings zero or one per supervision period, too few to tell a
/// flow held back elsewhere from one paced here; eight paced Interests
/// measure its pace within about one in eight.
pub(crate) const DEMAND_WINDOW_INTERESTS: f64 = 8.0;
/// Longest demand window: a flow slower than eight Interests in it is
/// measured over it.
pub(crate) const DEMAND_WINDOW_MAX: Duration = Duration::from_secs(5);
/// Demand windows left void after a raise: the current one and the next,
/// so that a flow has at least one period plus its RTT to follow.
const DEMAND_VOID_WINDOWS: u8 = 2;
/// A constraint change within this fraction is no raise (re-computed
/// shares move by rounding and by the Data-size estimate).
const DEMAND_RAISE_TOLERANCE: f64 = 0.02;

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
            demand_count: 0,
            demand_start: None,
            demand_ips: None,
            // A new flow ramps up to its first constraint: not held back.
            demand_void: DEMAND_VOID_WINDOWS,
            held_back: false,
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
        self.demand_count = self.demand_count.saturating_add(1);
        self.demand_start.get_or_insert(now);
    }

    /// Closes the demand window once it spans `period` and holds
    /// [`DEMAND_WINDOW_INTERESTS`] Interests (or [`DEMAND_WINDOW_MAX`]
    /// passed): the demand is then the Interests counted over it. A flow's
    /// demand is what it sends, which a tighter hop elsewhere or its
    /// consumer may hold below the constraint here. Counted over a fixed
    /// time instead, a flow of 10 Interests/s read 0, 10, 20 or 30 per
    /// 100 ms period.
    pub fn measure_demand(&mut self, now: Timestamp, period: Duration) {
        let Some(start) = self.demand_start else {
            return;
        };
        let elapsed = now.saturating_since(start);
        let enough = self.demand_count as f64 >= DEMAND_WINDOW_INTERESTS && elapsed >= period;
        if (enough || elapsed >= DEMAND_WINDOW_MAX) && elapsed > Duration::ZERO {
            self.demand_ips = if self.demand_void > 0 {
                self.demand_void -= 1;
                None
            } else {
                Some(self.demand_count as f64 / elapsed.as_secs_f64())
            };
            self.demand_count = 0;
            self.demand_start = Some(now);
        }
    }

    /// The last measured demand, Interests/s (`None` before a window closed).
    pub fn demand_ips(&self) -> Option<f64> {
        self.demand_ips
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
        let before = self.constraint_out_ips;
        self.constraint_out_ips = sanitize(ips);
        self.enforce_eq9();
        // Only a flow that pressed against the old constraint answers a
        // raise; one held back elsewhere sends as before (cut and raised
        // again by each congested period of this face, its demand was
        // voided every time and it was never read as held back).
        // (One period's count of a slow flow reads 0 or twice its pace: the
        // demand window's pace counts too.)
        let sent = self.incoming_pace_ips.max(self.demand_ips.unwrap_or(0.0));
        let pressing = sent >= supervisor::HELD_BACK_BELOW * before;
        if pressing && self.constraint_out_ips > before * (1.0 + DEMAND_RAISE_TOLERANCE) {
            self.demand_void = DEMAND_VOID_WINDOWS;
            self.demand_ips = None;
        }
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
mod supervisor;

pub use consumer::{CccConsumer, CccConsumerConfig};
pub use supervisor::{CccSupervisor, Supervision};

#[cfg(test)]
mod tests;
