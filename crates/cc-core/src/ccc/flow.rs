//! One flow's CCC state at one node: its objective from downstream, its
//! next hops' constraints and paces (Algorithms 1 and 2), its demand.

use super::{CccConfig, CccError, InterestPace};
use crate::mircc::path::weighted_choice;
use crate::rcp::{sanitize, DataSizeEstimate};
use crate::time::{Duration, Timestamp};
use alloc::vec::Vec;
use rand_core::RngCore;

/// Tolerance under which a pace counts as zero.
pub(crate) const EPS: f64 = 1e-9;

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
    pub(super) cfg: CccConfig,
    pub(super) objective_ips: f64,
    pub(super) incoming_pace_ips: f64,
    pub(super) constraint_out_ips: f64,
    pub(super) supervised: bool,
    pub(super) hops: Vec<NextHop>,
    pub(super) data_size: DataSizeEstimate,
    pub(super) last_active: Option<Timestamp>,
    pub(super) period_start: Option<Timestamp>,
    pub(super) interests_in_period: u64,
    /// Demand measurement ([`CccFlow::measure_demand`]): Interests since
    /// `demand_start`, and the last completed window's pace.
    pub(super) demand_count: u64,
    pub(super) demand_start: Option<Timestamp>,
    pub(super) demand_ips: Option<f64>,
    /// Demand windows still void after a raise of the constraint: the flow
    /// answers a raise an RTT later, and a window that straddles it reads
    /// a flow catching up as one held back elsewhere.
    pub(super) demand_void: u8,
    /// Held back elsewhere (the supervisor's max-min by demand).
    pub(super) held_back: bool,
    /// Smooth weighted round-robin credit per next hop (same order).
    pub(super) wrr_credit: Vec<f64>,
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

    pub(super) fn split_objective(&mut self) {
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

    pub(super) fn touch(&mut self, now: Timestamp) {
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

    pub(super) fn rebalance(&mut self) {
        for h in &mut self.hops {
            h.pace_ips = 0.0;
        }
        self.distribute(self.incoming_pace_ips);
    }

    /// Algorithm 2 core: places `pace` on hops with spare constraint, most
    /// spare first; if some is left, eq. 9 is re-established.
    pub(super) fn distribute(&mut self, mut pace: f64) {
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

    pub(super) fn enforce_eq9(&mut self) {
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
    pub(super) fn set_constraint_out(&mut self, ips: f64) {
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
        // Nor does a flow held back elsewhere press on a constraint here:
        // its room follows its demand (1.25 × each window's count), and a
        // room raised by a window one Interest fuller, read as a raise to
        // answer, voided its demand; the next window then read it as no
        // longer held back and max-min handed it an equal share, cut from
        // the flow limited here (parking-lot-3, 1200 B on 50 Mbit/s,
        // consumers' gaps stretched at random by ±10 %: last link 78-89 %).
        let sent = self.incoming_pace_ips.max(self.demand_ips.unwrap_or(0.0));
        let pressing = !self.held_back && sent >= super::supervisor::HELD_BACK_BELOW * before;
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
