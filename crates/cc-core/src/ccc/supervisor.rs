//! Queue supervision of a downstream output interface: Algorithms 3-6
//! (congestion test, reduction, augmentation) over the flows whose Data
//! leave by it.

use super::{Augmentation, CccConfig, CccFlow, EPS};
use crate::rcp::sanitize;
use crate::time::{Duration, Timestamp};
use alloc::vec::Vec;
use core::borrow::BorrowMut;

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
    /// Lists a supervision fills, kept between periods: the supervisor
    /// runs per face and period, and the engine's allocation test counts
    /// what it allocates.
    scratch: Scratch,
    /// The chance queue of the flows active at the last supervision, in
    /// Data, at least one ([`crate::chance_queue`]): set once per period,
    /// read by every dequeued Data.
    chance_queue_data: f64,
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
            scratch: Scratch::default(),
            chance_queue_data: 1.0,
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
    /// Data waiting behind the one in service is no congestion. Nor is the
    /// queue the flows paced at their shares build by chance
    /// ([`crate::chance_queue`]): where a period holds only a few Data
    /// it outlasts the period (ten flows of 8 KB Data on 2 Mbit/s, 3 Data
    /// per period: the test fired every 0.3-2 s and each time cut every
    /// flow to a third, 80 % utilisation), and no cut removes it.
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
        let one_data =
            crate::codel::packet_time(data_bytes, link_capacity_bps).unwrap_or(Duration::ZERO);
        let over = sojourn > t.max(one_data.mul_f64(self.chance_queue_data));
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
        let by_demand =
            self.cfg.augmentation == Augmentation::MaxMinShare && self.cfg.max_min_demand;
        for f in flows.iter_mut() {
            let f = f.borrow_mut();
            f.measure_incoming_pace(now);
            f.measure_demand(now, window);
            if by_demand {
                update_held_back(f);
            }
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
        self.chance_queue_data =
            crate::chance_queue::paced_chance_queue_data(active.len() as f64, self.cfg.utilisation)
                .max(1.0);
        let mut scratch = core::mem::take(&mut self.scratch);
        let outcome = self.supervise_active(&mut active, congested, by_demand, &mut scratch);
        self.scratch = scratch;
        outcome
    }

    /// Algorithm 5 on a congested period, else eq. 12 and Algorithm 6.
    fn supervise_active(
        &self,
        active: &mut [&mut CccFlow],
        congested: bool,
        by_demand: bool,
        scratch: &mut Scratch,
    ) -> Supervision {
        if congested {
            // Algorithm 5, floored at a fraction of the max-min share.
            let max_min = self.cfg.augmentation == Augmentation::MaxMinShare;
            max_min_shares_ips(active, self.capacity_bps, by_demand, scratch);
            for (f, &share) in active.iter_mut().zip(&scratch.shares) {
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
        let mut caps = core::mem::take(&mut scratch.caps);
        caps.clear();
        caps.extend(active.iter().map(|f| {
            let agg = f.aggregate_constraint_ips();
            if all_satisfied {
                agg
            } else {
                agg.min(f.objective_ips)
            }
        }));
        if self.cfg.augmentation == Augmentation::MaxMinShare && n > 0 {
            let mut share_caps = core::mem::take(&mut scratch.share_caps);
            share_caps.clear();
            share_caps.extend(
                active
                    .iter()
                    .zip(&caps)
                    .map(|(f, &c)| share_cap(f, c, by_demand)),
            );
            if by_demand {
                // A flow held back elsewhere keeps room to grow above its
                // demand, no more: what it does not use goes to the flows
                // limited here, and a constraint it never used cannot
                // overrun the link when the hop holding it back lets go.
                for (f, cap) in active.iter_mut().zip(caps.iter_mut()) {
                    if let Some(d) = held_back_demand(f) {
                        let room = (d * DEMAND_GROWTH).max(MIN_ROOM_IPS).min(*cap);
                        if room < f.constraint_out_ips {
                            f.set_constraint_out(room);
                        }
                        *cap = room;
                    }
                }
                // What a held-back flow left and then took back, or a flow
                // that ramped up, can leave the constraints booking more
                // than the link; drops or a standing queue would show it
                // only after the queue built (a long-RTT flow ramping on a
                // dumbbell: 20 Data over 5 s). Trim the flows limited here
                // to their shares at once.
            }
            // The shares depend on the caps and Data sizes only: one
            // computation serves the trim and the raise.
            max_min_shares(
                active,
                &share_caps,
                self.capacity_bps,
                &mut scratch.order,
                &mut scratch.shares,
            );
            let shares = &scratch.shares;
            if by_demand {
                let booked: f64 = active.iter().map(|f| f.bandwidth_bps()).sum();
                if booked > self.capacity_bps {
                    for (f, &share) in active.iter_mut().zip(shares) {
                        if !f.held_back && f.constraint_out_ips > share {
                            f.set_constraint_out(share);
                        }
                    }
                }
            }
            raise_to_shares(active, shares);
            scratch.share_caps = share_caps;
        }
        let used: f64 = active.iter().map(|f| f.bandwidth_bps()).sum();
        let available_bps = self.capacity_bps - used;
        if available_bps > 0.0 && n > 0 {
            water_fill(active, &caps, available_bps, &mut scratch.order);
        }
        scratch.caps = caps;
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
pub(super) fn activity_window(f: &CccFlow, period: Duration) -> Duration {
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
fn max_min_shares(
    flows: &[&mut CccFlow],
    caps: &[f64],
    capacity_bps: f64,
    order: &mut Vec<usize>,
    shares: &mut Vec<f64>,
) {
    let bits = |i: usize| flows[i].data_size.bytes() * 8.0;
    order.clear();
    order.extend(0..flows.len());
    order.sort_by(|&a, &b| (caps[a] * bits(a)).total_cmp(&(caps[b] * bits(b))));
    let mut left_bps = capacity_bps;
    shares.clear();
    shares.resize(flows.len(), 0.0);
    for (k, &i) in order.iter().enumerate() {
        let share_bps = (left_bps / (order.len() - k) as f64).min(caps[i] * bits(i));
        left_bps -= share_bps;
        shares[i] = share_bps / bits(i);
    }
}

/// Max-min shares under the caps Algorithm 5 can see: each flow's
/// objective and `Σ p_i,k_max` (eq. 9), and with `by_demand` its demand
/// ([`share_cap`]).
/// Into `scratch.shares`.
fn max_min_shares_ips(
    flows: &[&mut CccFlow],
    capacity_bps: f64,
    by_demand: bool,
    scratch: &mut Scratch,
) {
    scratch.caps.clear();
    scratch.caps.extend(flows.iter().map(|f| {
        share_cap(
            f,
            f.aggregate_constraint_ips().min(f.objective_ips),
            by_demand,
        )
    }));
    max_min_shares(
        flows,
        &scratch.caps,
        capacity_bps,
        &mut scratch.order,
        &mut scratch.shares,
    );
}

/// The lists one supervision fills ([`CccSupervisor::scratch`]).
#[derive(Debug, Clone, Default)]
struct Scratch {
    caps: Vec<f64>,
    share_caps: Vec<f64>,
    shares: Vec<f64>,
    order: Vec<usize>,
}

/// A flow sending below this fraction of its constraint here, over its
/// demand window and over the last period, is held back elsewhere
/// ([`CccConfig::max_min_demand`]). Parking lots put a flow held back by
/// a tighter link at a third to a half of its equal share on the others;
/// a flow paced here sends at its constraint within the demand window's
/// one-in-eight. At 0.8 the flows of a dumbbell that max-min had just
/// raised above what the link carries read as held back, and their
/// unused share went to the others: 5 of 108 envelope points queued past
/// their bounds.
pub(super) const HELD_BACK_BELOW: f64 = 0.6;
/// A held-back flow counts as limited here again once its demand reaches
/// this fraction of its (lowered) constraint: its hop let it go. The
/// constraint is [`DEMAND_GROWTH`] × the last demand, and a demand window
/// counts its Interests to within one: one Interest more than last time
/// reads `(1 + 1/8) / 1.25 = 0.9` of the constraint with nothing let go.
/// The threshold sits halfway to two Interests more (1.0). At 0.9 a flow
/// held at 40-45 Interests/s crossed it every ~1.4 s, went back to an
/// equal share for 0.5 s and took a third of the last link's spare from
/// the flow limited there (parking-lot-3 at 10 Mbit/s: 76-82 %).
const HELD_BACK_UNTIL: f64 = (1.0 + 1.5 / super::DEMAND_WINDOW_INTERESTS) / DEMAND_GROWTH;
/// Room a flow held back elsewhere keeps above its demand: the growth per
/// supervision when the hop holding it back lets go. With η = 0.95 the
/// room of one flow at a fifth of the link fits in the 5 % the supervisor
/// keeps.
const DEMAND_GROWTH: f64 = 1.25;

/// The least room a held-back flow keeps: the slowest pace a demand
/// window can tell from silence.
const MIN_ROOM_IPS: f64 = super::DEMAND_WINDOW_INTERESTS / super::DEMAND_WINDOW_MAX.as_secs_f64();

/// Enters or leaves the held-back state. Lowered to its demand plus room,
/// a held-back flow sends at 1 / [`DEMAND_GROWTH`] of its constraint, so it
/// leaves only when its demand reaches [`HELD_BACK_UNTIL`] of it. Leaving
/// needs the demand window: one period's count of a slow flow (3 ± 1
/// Interests at 30/s) crossed the threshold by chance and sent a held-back
/// flow back to its equal share every few periods (parking-lot-3 at 2
/// Mbit/s: the last link at 65-68 %).
fn update_held_back(f: &mut CccFlow) {
    let c = f.constraint_out_ips;
    let pace = f.incoming_pace_ips;
    f.held_back = match f.demand_ips {
        None => false,
        Some(d) if f.held_back => d < HELD_BACK_UNTIL * c,
        Some(d) => d < HELD_BACK_BELOW * c && pace < HELD_BACK_BELOW * c,
    };
}

/// The demand of a flow held back elsewhere.
fn held_back_demand(f: &CccFlow) -> Option<f64> {
    f.demand_ips.filter(|_| f.held_back)
}

/// The cap a flow has in the max-min shares: `cap`, or with `by_demand`
/// and a flow held back elsewhere, its demand: the flows limited here
/// share what it leaves.
fn share_cap(f: &CccFlow, cap: f64, by_demand: bool) -> f64 {
    match held_back_demand(f) {
        Some(d) if by_demand => cap.min(d),
        _ => cap,
    }
}

/// Raises each flow below its share (Interests/s, [`max_min_shares`]) to it.
fn raise_to_shares(flows: &mut [&mut CccFlow], shares: &[f64]) {
    for (f, &share_ips) in flows.iter_mut().zip(shares) {
        if share_ips > f.constraint_out_ips {
            f.set_constraint_out(share_ips);
        }
    }
}

/// Gives each flow an equal share of `available_bps`, converting to a pace
/// by its Data size; shares that a flow's cap cannot absorb are recycled
/// among the flows still below their cap.
fn water_fill(
    flows: &mut [&mut CccFlow],
    caps: &[f64],
    mut available_bps: f64,
    open: &mut Vec<usize>,
) {
    open.clear();
    open.extend((0..flows.len()).filter(|&i| caps[i] - flows[i].constraint_out_ips > EPS));
    while available_bps > EPS && !open.is_empty() {
        let share = available_bps / open.len() as f64;
        let before = open.len();
        // In place: the supervisor runs per face and period, and the
        // engine's allocation test counts what it allocates.
        open.retain(|&i| {
            let f = &mut flows[i];
            let bits = f.data_size.bytes() * 8.0;
            let room_ips = caps[i] - f.constraint_out_ips;
            let add_ips = (share / bits).min(room_ips);
            let new = f.constraint_out_ips + add_ips;
            f.set_constraint_out(new);
            available_bps -= add_ips * bits;
            caps[i] - f.constraint_out_ips > EPS
        });
        if open.len() == before {
            break; // nobody capped: every share was absorbed
        }
    }
}
