//! PECN rate computation of one face, every period T (QSCCP §IV-D).
//!
//! ```text
//! (1)  B' = η·B − B_I
//! (4)  total_DS = Σ_{c∈DS} min(δ_c·B', y_c)            [R] (code: Σ y_c)
//! (6)  B_c = δ_c·B' (DS)                                 (code: δ_c·η·B)
//!      B_c for DT: origin_c = ω_c/Σω·(B' − total_DS), then the unused
//!      share of idle/active classes goes to saturated classes (else to
//!      active ones) by ω (docs/algorithms.md §1.4 P3, both variants)
//! (2)(3) base^p = B_c · w^p·φ^p / Σ_{p'} w^{p'}·φ^{p'}
//! (5)  greedy: g^p ≥ λ; high-demand: y^p ≥ γ·base^p; else low-demand
//!                                                        (code: y > base − 500 kb/s)
//! (7)  unused_c = max(0, B_c − Σ_{H∪G} base − Σ_L y)
//! (8)  R^p = base^p + unused_c·w^p/Σ_H w   for p ∈ H with φ^p = 1, else base^p
//!                                                        (code: φ = 1 and y/base > 0.8;
//!                                                         then ×σ(queue occupancy))
//! (9)  g^p += 1 (≤ λ) if y^p > κ·R^p else g^p −= 1 (≥ 0); φ^p = φ_pen when
//!      g^p = λ; φ^p = 1 again when g^p = 0 (`restore_phi`, [R])
//! ```
//! Delay-sensitive flows' R is lowered by `ds_rate_headroom` (default 5%)
//! so that their class queue, served by a token bucket at δ_c·η·B, runs
//! below load 1 and stays empty on real links ([D], see the field), and
//! in the paper variant multiplied by the authors' σ of their class's
//! queue occupancy at the period end ([D]; queued Interests over `vq` per
//! backlogged flow, so a one-flow class sees its flow's own queue):
//! headroom alone drains a DS queue that a burst filled at 5% of the class
//! rate (20 EF Interests for 8 KB Data behind a 1 Mbit/s bucket drain in
//! 26 s), while σ (normalised: 1 empty, 0.93 at a quarter, 0.56 at half,
//! 0.12 full) drains ten queued EF Interests in about 1.5 s (computed) and
//! leaves an empty queue's rate as it was. Being per class, it is frozen
//! with the other class aggregates and needs no eager per-flow work.
//! Delay-tolerant flows that are not penalised get R × normalised σ of
//! their own queue occupancy at the period end (`dt_queue_factor`, [D],
//! the authors' P8 for DT flows): without it the DT rates sum to what the
//! final bucket serves and a queue that jitter built never drains. The
//! occupancy is stored in the flow at the period end, so a late settlement
//! still scales by it.
//! Rates are expected Data rates (bit/s): offered Interests count their Dsz.
//! A flow that offered nothing in a period and has an empty queue is
//! forgotten, as in the authors' code.
//!
//! Cost: the period end makes one pass over the live flows (expiry and the
//! eq. 5/7 sums, which need every flow's demand) and freezes the per-class
//! aggregates of eq. 8 in a `Frozen`. Eqs. 8-9 of each flow, which need
//! only those aggregates and the flow's own line, run when the flow is next
//! touched (`settle`, in `settle.rs`: its next Interest or dequeue, a weight change, or at
//! the latest the next period end; a query computes the pending result
//! without storing it); the result is the same as computing them at the
//! period end, because nothing a flow's update reads changes before it
//! runs. The one exception is φ, which feeds the next period's
//! Σ w·φ: the flows whose φ may change this period (g one step from λ or
//! from 0) are settled at the period end, as are all flows in the authors'
//! variant (its per-flow σ needs the queue length at the period end).

use super::class::ServiceClass;
use super::config::QsccpConfig;
use super::flows::{quantum, Flow};
use super::scheduler::CdsScheduler;
use super::settle::{is_high_demand, period_rate, settle, settle_now, stored_rate};
use crate::time::{Duration, Timestamp};

/// Which rules fill the missing eqs. 4–9 (docs/algorithms.md §1.9 item 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PecnVariant {
    /// docs/algorithms.md §1.5, the recommended reading.
    #[default]
    PaperReconstruction,
    /// docs/algorithms.md §1.4 P1–P8, the authors' `queues.cpp`.
    AuthorsCode,
}

/// The authors' fixed high-demand margin, bit/s.
const CODE_DEMAND_MARGIN_BPS: f64 = 500_000.0;

/// σ(x) = (1/3)·(π/2 − atan(8x − 4)) + 0.034 (authors' code, P8).
pub fn queue_factor(occupancy: f64) -> f64 {
    (core::f64::consts::FRAC_PI_2 - libm::atan(8.0 * occupancy - 4.0)) / 3.0 + 0.034
}

/// σ normalised to 1 for an empty queue, for the paper variant (DS
/// classes by class occupancy, DT flows by their own): an empty queue
/// keeps exactly the rate eq. 8 gives.
pub fn normalised_queue_factor(occupancy: f64) -> f64 {
    queue_factor(occupancy) / queue_factor(0.0)
}

/// Steps of the stored queue occupancy ([`Flow::vq_fill`]).
pub(super) const FILL_STEPS: usize = 255;

/// A flow's queue occupancy at a period end, in 255ths of `vq`.
#[inline]
fn vq_fill(len: u32, vq: f64) -> u8 {
    let x = (f64::from(len) / vq).clamp(0.0, 1.0);
    round_steps(x * FILL_STEPS as f64)
}

/// `libm::round(y) as u8` for `y` in [0, 255] or NaN (→ 0), without the
/// call: `y` minus its integer part is exact, so comparing it with ½
/// rounds half away from zero exactly as `round` does. Once per flow and
/// period (the `round` call was ~15 % of the period pass).
#[inline]
fn round_steps(y: f64) -> u8 {
    let whole = y as u8;
    whole + u8::from(y - f64::from(whole) >= 0.5)
}

/// σ's virtual queue of one flow, Interests: the configured capacity, or
/// one period of the flow's Data at its last rate when that is fewer
/// (`data_per_bps` = Data per period per bit/s; at least one Interest).
/// A queue the flow's rate needs more than a period to drain is full
/// whatever its count: ten flows of 8000-byte Data on 2 Mbit/s send
/// 3 Data/s each, where 20 queued Interests are 6.5 s of queue; counted
/// against 20, four queued per flow (1.3 s, p95) gave σ 0.95 and the queue
/// drained at 5 % of the rate, in tens of seconds (envelope sweep). Fast
/// flows keep the configured capacity, as before.
#[inline]
fn flow_vq(f: &Flow, vq: f64, data_per_bps: f64) -> f64 {
    if !f.has_rate || !data_per_bps.is_finite() {
        return vq;
    }
    (f.rate_bps * data_per_bps).clamp(1.0, vq)
}

/// `x` as f64 (one signed convert: counters stay far below 2^63).
#[inline]
pub(super) fn bits_f64(x: u64) -> f64 {
    x.min(i64::MAX as u64) as i64 as f64
}

#[derive(Clone, Copy, Default)]
struct ClassSums {
    consumed: f64,
    high_weight: f64,
}

/// The next PECN period: T, stretched so that `flows` flows at their fair
/// share of η·C each bring `min_data_per_flow` Data of the mean size
/// offered (`offered_bits` over `interests`), at most 20 T.
fn stretched_period(
    cfg: &QsccpConfig,
    flows: usize,
    offered_bits: u64,
    interests: u64,
) -> Duration {
    let link = cfg.eta * cfg.capacity_bps as f64;
    if cfg.min_data_per_flow == 0 || interests == 0 || link <= 0.0 {
        return cfg.period;
    }
    let mean_bits = offered_bits as f64 / interests as f64;
    let need_s = f64::from(cfg.min_data_per_flow) * flows as f64 * mean_bits / link;
    let max = cfg.period.saturating_mul(20);
    if !need_s.is_finite() || need_s >= max.as_secs_f64() {
        return max;
    }
    Duration::from_nanos((need_s * 1e9) as u64).max(cfg.period)
}

impl<T> CdsScheduler<T> {
    /// Runs the PECN computation if a period has elapsed since the last one
    /// (`period_due_ns` is a lower bound of that instant: one compare per call).
    #[inline]
    pub(super) fn maybe_update(&mut self, now: Timestamp) {
        if now.as_nanos() >= self.period_due_ns {
            if now.saturating_since(self.last_period) >= self.period_len {
                self.update_rates(now);
            }
            self.set_period_due();
        }
    }

    /// Settles the last period's update of flow `id` if still pending.
    #[inline(always)]
    pub(super) fn settle_flow(&mut self, id: u32) {
        if let Some(f) = self.flows.get_mut(id as usize) {
            if f.epoch != self.epoch {
                settle(&self.frozen, f);
            }
        }
    }

    /// The suggested target rate R of flow (class, prefix) at this face:
    /// TargetRate := min(TargetRate, R) on Data arriving here (eq. 11's u_k),
    /// DownstreamRate := min(DownstreamRate, R) on Interests sent here.
    ///
    /// A flow that arrived in the current period has no R yet; it is told
    /// its weight's share of its class's capacity of the last period (times
    /// the DS headroom and σ) among the class's active flows ([D]). Answering
    /// nothing let its first Data through with a faster hop's rate: on the
    /// testbed an EF consumer adopted 9.4 Mbit/s (its 100 Mbit/s access
    /// link's EF share) against a 1 Mbit/s cap, filled its queue, was
    /// Nacked 10 times and judged greedy. `None` before any period closed.
    pub fn flow_rate_bps(&self, class: ServiceClass, prefix: u64) -> Option<f64> {
        let Some(id) = self.find(class, prefix) else {
            // Not tracked here: it never offered, or it was forgotten as
            // idle (a period with nothing offered and nothing queued) while
            // Data of its earlier Interests were still upstream. Answering
            // nothing lets those Data through with the upstream hop's rate
            // (the forwarder test
            // `a_forgotten_flows_data_carry_this_faces_share_not_the_upstream_rate`:
            // 100 Mbit/s through a 2 Mbit/s face). It is told what it would
            // be told if it offered now: one more flow of weight 1 in its
            // class.
            return self.newcomer_rate_bps(class, 1.0, false);
        };
        let f = &self.flows[id as usize];
        if f.epoch != self.epoch {
            // Pending: what `settle` will store.
            return Some(stored_rate(period_rate(&self.frozen, f).rate));
        }
        if f.has_rate {
            return Some(f.rate_bps);
        }
        // Its eq. 8 share of that capacity among the class's flows active
        // now (it is one of them once it offered): telling every newcomer
        // the whole class capacity let ten flows joining within a second
        // each start at the link rate, and 180 Interests (5.9 s) stood in
        // the scheduler on 2 Mbit/s (envelope sweep). A lone flow still
        // hears the whole capacity.
        self.newcomer_rate_bps(class, f.weight * f.phi(self.frozen.phi_pen), true)
    }

    /// The rate a flow of weight·φ `w` without an R of its own is told
    /// (tuned, `rate_new_flows`): its share of the class capacity among the
    /// class's active flows, `counted` saying whether it is one of them
    /// already. `None` in the paper's profile and before any period closed.
    fn newcomer_rate_bps(&self, class: ServiceClass, w: f64, counted: bool) -> Option<f64> {
        if !self.frozen.rate_new_flows {
            return None;
        }
        let c = class.index();
        let active = self.classes[c].active_wphi;
        let share = if w > 0.0 {
            if counted {
                w / active.max(w)
            } else {
                w / (active.max(0.0) + w)
            }
        } else {
            1.0
        };
        let cap = stored_rate(self.class_capacity_bps[c] * self.frozen.class_factor[c] * share);
        (cap > 0.0).then_some(cap)
    }

    /// Discount factor φ of a flow (1 = not penalised).
    pub fn flow_phi(&self, class: ServiceClass, prefix: u64) -> Option<f64> {
        let id = self.find(class, prefix)?;
        // A pending update never changes φ (`settle_now`).
        Some(self.flows[id as usize].phi(self.frozen.phi_pen))
    }

    /// Upstream propagation of a penalty, as the authors' code does (P7,
    /// docs/algorithms.md §1.4; not in the paper): an Interest of the flow
    /// arrived with ServiceClass + 8, i.e. a router downstream judged it
    /// greedy, so it gets φ_pen here too, with a full greedy count (a
    /// restore, when `restore_phi` allows one, needs λ behaved periods
    /// here as after a local judgement). Returns whether the flow was not
    /// penalised before; false for an unknown flow.
    pub fn penalise_flow(&mut self, class: ServiceClass, prefix: u64) -> bool {
        let Some(id) = self.find(class, prefix) else {
            return false;
        };
        self.settle_flow(id);
        let (pen, lambda) = (self.frozen.phi_pen, self.frozen.lambda);
        let base = self.cfg.quantum_bits;
        let f = &mut self.flows[id as usize];
        f.greedy = lambda;
        if f.penalised {
            return false;
        }
        f.penalised = true;
        f.quantum_bits = quantum(base, f.weight, pen);
        if f.offered_bits != 0 || f.len != 0 {
            // An active flow's w·φ is in its class's sum (eqs. 2-3).
            self.classes[class.index()].active_wphi += f.weight * (pen - 1.0);
        }
        self.stats.propagated_penalties += 1;
        true
    }

    /// Capacity B_c given to `class` by the last period, bit/s.
    pub fn class_capacity_bps(&self, class: ServiceClass) -> f64 {
        self.class_capacity_bps[class.index()]
    }

    /// Computes every flow's R now (settled lazily, see the module doc) and
    /// starts a new measurement period.
    #[inline(never)]
    pub fn update_rates(&mut self, now: Timestamp) {
        let dt = now.saturating_since(self.last_period).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        let cfg = self.cfg;
        let code = cfg.variant == PecnVariant::AuthorsCode;
        let cap = self.class_capacities(dt);
        self.class_capacity_bps = cap;

        // Σ w·φ per class over the flows that stay (an offer this period or
        // a queue) is kept up to date by the packet path.
        let mut sums = [ClassSums::default(); 8];
        // Per-flow work below multiplies only: a division per flow was most
        // of the period's cost with 10^5 flows.
        let inv_dt = 1.0 / dt;
        let per_weight: [f64; 8] = core::array::from_fn(|c| {
            let cls = &self.classes[c];
            if cls.active_flows > 0 && cls.active_wphi > 0.0 {
                cap[c] / cls.active_wphi
            } else {
                0.0
            }
        });
        let lambda = cfg.lambda.max(1);
        let pen = self.frozen.phi_pen;
        let period_bits: u64 = self.classes.iter().map(|c| c.offered_bits).sum();
        let one_data_bps = if self.period_interests > 0 {
            period_bits as f64 / self.period_interests as f64 * inv_dt
        } else {
            0.0
        };
        // Data a flow sends in one period per bit/s of its rate.
        let data_per_bps = if one_data_bps > 0.0 {
            1.0 / one_data_bps
        } else {
            f64::INFINITY
        };
        // The next period's sums restart exact from the flows still queued.
        let mut next_wphi = [0.0f64; 8];
        let mut next_flows = [0u32; 8];
        self.boundary.clear();
        // One pass: expiry, demand classification and consumed bandwidth
        // (eqs. 5, 7). Dead slots cost a tag byte, not a flow line.
        let mut live = self.index.live_slots();
        while let Some(id) = live.next(&self.index) {
            let Some(f) = self.flows.get_mut(id) else {
                continue;
            };
            if f.epoch != self.epoch {
                // Untouched since the last period end: settle that period
                // first (its aggregates are still frozen); nothing offered since.
                settle(&self.frozen, f);
            }
            if f.offered_bits == 0 && f.len == 0 {
                self.remove_flow(id as u32);
                continue;
            }
            // The occupancy this period's update scales by (σ, DT flows).
            f.vq_fill = vq_fill(f.len, flow_vq(f, self.frozen.vq, data_per_bps));
            let c = f.class.index();
            let phi = f.phi(pen);
            let base = per_weight[c] * (f.weight * phi);
            let y = bits_f64(f.offered_bits) * inv_dt;
            let greedy = !code && f.greedy >= lambda;
            let high = if code {
                y > base - CODE_DEMAND_MARGIN_BPS
            } else {
                is_high_demand(cfg.gamma, y, one_data_bps, f, base)
            };
            let s = &mut sums[c];
            if greedy || high {
                s.consumed += base;
            } else {
                s.consumed += y;
            }
            if high && !greedy && phi >= 1.0 {
                s.high_weight += f.weight;
            }
            if f.len > 0 {
                next_flows[c] += 1;
            }
            if settle_now(&self.frozen, f) {
                self.boundary.push(id as u32);
            } else if f.len > 0 {
                next_wphi[c] += f.weight * phi;
            }
        }
        let unused_per_weight: [f64; 8] = core::array::from_fn(|c| {
            let s = sums[c];
            if s.high_weight > 0.0 {
                (cap[c] - s.consumed).max(0.0) / s.high_weight
            } else {
                0.0
            }
        });
        self.frozen.per_weight = per_weight;
        self.frozen.unused_per_weight = unused_per_weight;
        self.frozen.inv_dt = inv_dt;
        self.frozen.one_data_bps = one_data_bps;
        if !code {
            for c in ServiceClass::ALL.iter().filter(|c| c.is_delay_sensitive()) {
                let c = c.index();
                let backlogged = f64::from(next_flows[c].max(1));
                let occupancy = f64::from(self.classes[c].queued) / (self.frozen.vq * backlogged);
                self.frozen.class_factor[c] =
                    self.frozen.ds_headroom * normalised_queue_factor(occupancy);
            }
        }
        // Flows whose φ may change are settled now: the next period's Σ w·φ
        // needs their new φ.
        for i in 0..self.boundary.len() {
            let Some(f) = self.flows.get_mut(self.boundary[i] as usize) else {
                continue;
            };
            let was_penalised = f.penalised;
            settle(&self.frozen, f);
            if f.penalised && !was_penalised {
                self.stats.penalties += 1;
            }
            if f.len > 0 {
                next_wphi[f.class.index()] += f.weight * f.phi(pen);
            }
        }
        self.period_len = stretched_period(
            &cfg,
            self.flow_count(),
            period_bits,
            core::mem::take(&mut self.period_interests),
        );
        for (c, cls) in self.classes.iter_mut().enumerate() {
            cls.offered_bits = 0;
            cls.active_wphi = next_wphi[c];
            cls.active_flows = next_flows[c];
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.interest_in_bits = 0;
        self.last_period = now;
    }

    /// B_c of every class for a period of `dt` seconds (eqs. 1, 4, 6, P3).
    fn class_capacities(&self, dt: f64) -> [f64; 8] {
        let cfg = &self.cfg;
        let code = cfg.variant == PecnVariant::AuthorsCode;
        let link = cfg.eta * cfg.capacity_bps as f64;
        let b_prime = (link - self.interest_in_bits as f64 / dt).max(0.0);
        let y_class: [f64; 8] = core::array::from_fn(|c| self.classes[c].offered_bits as f64 / dt);

        // DS capacities and their total (eqs. 2, 4).
        let mut cap = [0.0f64; 8];
        let mut total_ds = 0.0;
        for c in 0..3 {
            let d = cfg.delta[c].max(0.0);
            cap[c] = if code { d * link } else { d * b_prime };
            total_ds += if code {
                y_class[c]
            } else {
                y_class[c].min(d * b_prime)
            };
        }
        // DT capacities with saturated/active/idle redistribution (eq. 6, P3).
        let b_dt = (b_prime - total_ds).max(0.0);
        let omega = cfg.omega.map(|w| w.max(0.0));
        let omega_sum: f64 = omega.iter().sum();
        let mut used = 0.0;
        let (mut sat_w, mut act_w) = (0.0, 0.0);
        let mut state = [0u8; 5]; // 0 idle, 1 active, 2 saturated
        for k in 0..5 {
            let origin = if omega_sum > 0.0 {
                omega[k] / omega_sum * b_dt
            } else {
                0.0
            };
            cap[k + 3] = origin;
            let y = y_class[k + 3];
            let spare = if origin > 0.0 {
                (origin - y).max(0.0) / origin
            } else {
                1.0
            };
            if spare < 0.2 {
                state[k] = 2;
                sat_w += omega[k];
                used += origin;
            } else {
                if spare < 0.95 {
                    state[k] = 1;
                    act_w += omega[k];
                }
                used += y;
            }
        }
        let left = (b_dt - used).max(0.0);
        let (target, w_sum) = if sat_w > 0.0 { (2, sat_w) } else { (1, act_w) };
        if w_sum > 0.0 {
            for k in 0..5 {
                if state[k] == target {
                    cap[k + 3] += omega[k] * left / w_sum;
                }
            }
        }
        if !code {
            // [D] No DT class is given more than B_DT. P3 counts an active
            // class's offered rate as used and then hands it back its own
            // unused share with `left`, so a lone active class was given
            // B_DT + (origin − y), up to 1.063·B_DT for BE: a rate the face
            // cannot serve, which reached the consumer as TargetRate
            // 10.07 Mbit/s on a 10 Mbit/s link (tests/metrics_cc.rs, CI).
            // Saturated classes (Scenario 1) never exceed it; the authors'
            // variant keeps their code as it is.
            for c in cap.iter_mut().skip(3) {
                *c = c.min(b_dt);
            }
        }
        cap
    }
}

#[cfg(test)]
#[path = "pecn_tests.rs"]
mod tests;

#[cfg(test)]
mod period_tests {
    use super::*;

    #[test]
    fn round_steps_matches_libm_round() {
        let mut y = 0.0f64;
        let step = 255.0 / 100_003.0;
        while y <= 255.0 {
            for v in [y, libm::nextafter(y, 0.0), libm::nextafter(y, 256.0)] {
                if v <= 255.0 {
                    assert_eq!(round_steps(v), libm::round(v) as u8, "{v}");
                }
            }
            y += step;
        }
        for k in 0..255u32 {
            // Exact halves and their neighbours.
            let h = f64::from(k) + 0.5;
            for v in [h, libm::nextafter(h, 0.0), libm::nextafter(h, 256.0)] {
                assert_eq!(round_steps(v), libm::round(v) as u8, "{v}");
            }
        }
        assert_eq!(round_steps(f64::NAN), libm::round(f64::NAN) as u8);
    }

    #[test]
    fn the_period_stretches_to_a_few_data_per_flow() {
        let cfg = QsccpConfig {
            capacity_bps: 2_000_000,
            eta: 1.0,
            ..QsccpConfig::default()
        };
        // Ten flows of 64 000-bit Data on 2 Mbit/s: 4 × 10 × 64 000 / 2e6.
        let p = stretched_period(&cfg, 10, 640_000, 10);
        assert_eq!(p, Duration::from_millis(1280));
        // One flow: 128 ms.
        assert_eq!(
            stretched_period(&cfg, 1, 64_000, 1),
            Duration::from_millis(128)
        );
        // Small Data: T itself.
        assert_eq!(stretched_period(&cfg, 3, 9_600, 1), cfg.period);
        // Never beyond 20 T; nothing offered keeps T.
        assert_eq!(stretched_period(&cfg, 1000, 64_000, 1), cfg.period * 20);
        assert_eq!(stretched_period(&cfg, 10, 0, 0), cfg.period);
        let fixed = QsccpConfig {
            min_data_per_flow: 0,
            ..cfg
        };
        assert_eq!(stretched_period(&fixed, 10, 640_000, 10), cfg.period);
    }
}
