//! Eqs. 8-9 of one flow (QSCCP §IV-D): the per-class aggregates a period
//! end freezes ([`Frozen`]) and what they make of one flow's line when it
//! is next touched ([`settle`]): its R, its greed count g and its φ. The
//! period pass that freezes the aggregates is in [`super::pecn`].

use super::config::QsccpConfig;
use super::flows::{quantum, Flow};
use super::pecn::{bits_f64, normalised_queue_factor, queue_factor, PecnVariant, FILL_STEPS};

/// Per-class aggregates of the last closed period and the constants of
/// eqs. 8-9: with a flow's own line they give its R, g and φ for that
/// period, in a few multiplies.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frozen {
    /// B_c / Σ w·φ, so base^p = per_weight·w^p·φ^p (eqs. 2, 3).
    pub(super) per_weight: [f64; 8],
    /// unused_c / Σ_H w (eq. 8), so a flow's share is one multiply.
    pub(super) unused_per_weight: [f64; 8],
    /// 1 − `ds_rate_headroom` for DS classes (times σ of the class queue
    /// in the paper variant, refreshed every period), 1 for DT.
    pub(super) class_factor: [f64; 8],
    /// 1 − `ds_rate_headroom` (clamped), the DS part of `class_factor`.
    pub(super) ds_headroom: f64,
    /// 1 / period length, s⁻¹.
    pub(super) inv_dt: f64,
    /// One Data of the period (its mean offered size) as a rate over the
    /// period, bit/s: the granularity a flow's offer is measured in.
    pub(super) one_data_bps: f64,
    /// φ of a penalised flow.
    pub(super) phi_pen: f64,
    /// `phi_pen < 1`: a penalised flow is discounted (φ < 1).
    pub(super) pen_discounts: bool,
    pub(super) gamma: f64,
    pub(super) kappa: f64,
    pub(super) lambda: u8,
    pub(super) code: bool,
    /// φ goes back to 1 when g reaches 0 (paper variant with `restore_phi`).
    pub(super) restore: bool,
    /// Rate a flow before its first period ([`QsccpConfig::rate_new_flows`]).
    pub(super) rate_new_flows: bool,
    pub(super) quantum_bits: u32,
    /// Per-flow virtual queue capacity (σ's denominator).
    pub(super) vq: f64,
    /// Normalised σ of each stored occupancy, for DT flows in the paper
    /// variant (all 1 when `dt_queue_factor` is off): no `atan` on the
    /// packet path.
    pub(super) dt_sigma: [f64; FILL_STEPS + 1],
}

impl Frozen {
    /// No period closed yet: the constants only.
    pub(super) fn new(cfg: &QsccpConfig) -> Self {
        let code = cfg.variant == PecnVariant::AuthorsCode;
        let ds_headroom = 1.0 - cfg.ds_rate_headroom.clamp(0.0, 0.5);
        Frozen {
            per_weight: [0.0; 8],
            unused_per_weight: [0.0; 8],
            class_factor: core::array::from_fn(|c| {
                if c < 3 {
                    ds_headroom
                } else {
                    1.0 - cfg.dt_rate_headroom.clamp(0.0, 0.5)
                }
            }),
            ds_headroom,
            inv_dt: 0.0,
            one_data_bps: 0.0,
            phi_pen: cfg.phi_penalty.clamp(1e-3, 1.0),
            pen_discounts: cfg.phi_penalty.clamp(1e-3, 1.0) < 1.0,
            gamma: cfg.gamma,
            kappa: cfg.kappa,
            lambda: cfg.lambda.max(1),
            code,
            restore: cfg.restore_phi && !code,
            rate_new_flows: cfg.rate_new_flows,
            quantum_bits: cfg.quantum_bits,
            vq: f64::from(cfg.flow_queue_capacity.max(1)),
            dt_sigma: core::array::from_fn(|i| {
                if cfg.dt_queue_factor && !code {
                    normalised_queue_factor(i as f64 / FILL_STEPS as f64)
                } else {
                    1.0
                }
            }),
        }
    }
}

/// What eqs. 8-9 make of `f` for its period `f.epoch`: R before clamping
/// (eq. 8 times the σ drain factor and the DS headroom), the entitled rate
/// greed is judged against (eq. 8 alone), and the offered rate y.
pub(super) struct PeriodRate {
    pub(super) rate: f64,
    pub(super) entitled: f64,
    pub(super) offered: f64,
}

#[inline(always)]
pub(super) fn period_rate(frz: &Frozen, f: &Flow) -> PeriodRate {
    let c = f.class.index();
    let phi = f.phi(frz.phi_pen);
    let base = frz.per_weight[c] * (f.weight * phi);
    let y = bits_f64(f.offered_bits) * frz.inv_dt;
    if frz.code {
        let (rate, entitled) = code_rate(frz, f, base, y);
        return PeriodRate {
            rate,
            entitled,
            offered: y,
        };
    }
    let mut r = base;
    let mut sigma = 1.0;
    if phi >= 1.0 {
        if f.greedy < frz.lambda && is_high_demand(frz.gamma, y, frz.one_data_bps, f, base) {
            r += frz.unused_per_weight[c] * f.weight;
        }
        if c >= 3 {
            sigma = frz.dt_sigma[usize::from(f.vq_fill)];
        }
    }
    PeriodRate {
        rate: r * sigma * frz.class_factor[c],
        entitled: r,
        offered: y,
    }
}

/// What a flow's offer y is compared with to judge it high-demand: its
/// eq. 8 base, or the R it was told last period when that was lower. A
/// flow that sends what it was told is held by the network, not by its
/// own demand; judged against the base, a flow whose R σ had cut (its own
/// queue) counted as low-demand, its share went to the others, which
/// overshot and were cut in turn: QSCCP at 1200-byte Data on 50 Mbit/s
/// swung between 0.3 and 4 k Interests/s per flow, 82.8 % utilisation, in
/// the envelope sweep.
#[inline(always)]
fn demand_reference(f: &Flow, base: f64) -> f64 {
    if f.has_rate && f.rate_bps < base {
        f.rate_bps
    } else {
        base
    }
}

/// Eq. 5's high-demand test, y ≥ γ·reference, or within one Data of the
/// reference where γ's margin is less than one Data: a period holds a few Data per flow (at least
/// `min_data_per_flow`), so a flow that sent what it was told offers
/// γ·reference ± one Data, and one Data short made it low-demand, its
/// share went to the others as unused and they overshot (ten QSCCP flows
/// of 8000-byte Data on 2 Mbit/s: consumers at 2.7-3.9 Data/s for a fair
/// 3.1, a queue that grew for the whole run, p95 1.7 s, Jain 0.70, in the
/// envelope sweep).
#[inline(always)]
pub(super) fn is_high_demand(gamma: f64, y: f64, one_data_bps: f64, f: &Flow, base: f64) -> bool {
    let reference = demand_reference(f, base);
    y >= (gamma * reference).min(reference - one_data_bps)
}

/// [`period_rate`] in the authors' variant (P6 share rule, P8's σ), off
/// the inlined path: (R, the P6 rate greed is judged against).
#[cold]
#[inline(never)]
fn code_rate(frz: &Frozen, f: &Flow, base: f64, y: f64) -> (f64, f64) {
    let c = f.class.index();
    let phi = f.phi(frz.phi_pen);
    let mut r = base;
    if phi >= 1.0 && base > 0.0 && y / base > 0.8 {
        r += frz.unused_per_weight[c] * f.weight;
    }
    // P7 judges greed before P8 scales by σ.
    let entitled = r;
    if phi >= 1.0 {
        r *= queue_factor(f64::from(f.len) / frz.vq);
    }
    (r * frz.class_factor[c], entitled)
}

/// The R a flow stores: finite and non-negative.
pub(super) fn stored_rate(r: f64) -> f64 {
    if r.is_finite() {
        r.max(0.0)
    } else {
        0.0
    }
}

/// Applies eqs. 8-9 of period `f.epoch` to `f` with that period's
/// aggregates, and opens its next period.
#[inline]
pub(super) fn settle(frz: &Frozen, f: &mut Flow) {
    let was_penalised = f.penalised;
    let PeriodRate {
        rate: r,
        entitled,
        offered: y,
    } = period_rate(frz, f);
    // Greed is offering more than the flow's share (eq. 8), not more than
    // the σ-lowered rate that asks a backlogged flow to drain: a consumer
    // that follows TargetRate lags that cut by a feedback delay and its
    // smoothing, and judging it against the cut penalised well-behaved
    // flows after a burst (φ = 0.5 also drops σ, so their queue stood).
    if entitled > 0.0 {
        // κ's margin, or one Data where that is more: an offer is counted
        // in whole Data (as for the high-demand test).
        if y > (frz.kappa * entitled).max(entitled + frz.one_data_bps) {
            f.greedy = f.greedy.saturating_add(1).min(frz.lambda);
            if f.greedy >= frz.lambda {
                f.penalised = true;
            }
        } else {
            f.greedy = f.greedy.saturating_sub(1);
            if f.greedy == 0 && frz.restore {
                f.penalised = false;
            }
        }
    }
    f.rate_bps = stored_rate(r);
    f.has_rate = true;
    f.offered_bits = 0;
    f.epoch = f.epoch.wrapping_add(1);
    if f.penalised != was_penalised {
        // w changes recompute it in `set_flow_weight`.
        f.quantum_bits = quantum(frz.quantum_bits, f.weight, f.phi(frz.phi_pen));
    }
}

/// Whether [`settle`] may change φ of `f` (so the period end must run it):
/// a penalty needs g to reach λ, a restore needs g to reach 0; the
/// authors' σ needs the queue length at the period end.
#[inline]
pub(super) fn settle_now(frz: &Frozen, f: &Flow) -> bool {
    let penalty = !f.penalised && f.greedy.saturating_add(1) >= frz.lambda;
    let restore = f.penalised && frz.restore && f.greedy <= 1;
    frz.code || penalty || restore
}
