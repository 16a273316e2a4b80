//! QSCCP multipath feedback at a node: DRT/TRT tables, DownstreamRate
//! (eq. 10), TargetRate at branch nodes (eq. 11) and adaptive forwarding
//! (eq. 12 plus 1 % uniform probing), docs/algorithms.md §1.6.
//!
//! ```text
//! Interest from downstream face i:  DRT[i] = DownstreamRate (absent = MAX)
//! (12) f_j = u_j / Σ_{k∈O} u_k          choose j by f, or uniformly with p = 1 %
//! (10) DownstreamRate := min(R_j, f_j · Σ_{k∈I} d_k)
//! Data from upstream face k:  u_k = TRT[k] = min(TargetRate (absent = MAX), R_k)
//! (11) TargetRate towards downstream i := d_i / Σ_{k∈I} d_k · Σ_{k∈O} u_k
//! ```
//! R_j is the face's PECN rate ([`super::CdsScheduler::flow_rate_bps`]).
//! Every 100 ms, DRT entries not refreshed are erased and TRT entries not
//! refreshed fall back to the default rate, which keeps idle faces probed
//! (authors' `RateStore::periodicCleaning`).

use super::class::ServiceClass;
use crate::pcon::unit_f64;
use crate::time::{Duration, Timestamp};
use crate::wincm::forwarding::MixState;
use alloc::vec::Vec;
use hashbrown::HashMap;
use rand_core::RngCore;

/// The MAX_RATE a consumer writes in DownstreamRate, and the value of an
/// absent TargetRate (finite so that shares of it stay well defined).
pub const MAX_RATE_BPS: f64 = u64::MAX as f64;

/// Parameters of the DRT/TRT tables.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct MultipathConfig {
    /// u of a face without a TRT entry (ns-3 code: 2 Mb/s).
    pub default_upstream_bps: f64,
    /// Share of Interests sent to a uniformly random candidate.
    pub probe_probability: f64,
    /// Period of the table sweep.
    pub sweep_period: Duration,
    /// Flows tracked.
    pub max_flows: usize,
    /// Faces tracked per flow and table.
    pub max_faces: usize,
}

impl Default for MultipathConfig {
    fn default() -> Self {
        MultipathConfig {
            default_upstream_bps: 2_000_000.0,
            probe_probability: 0.01,
            sweep_period: Duration::from_millis(100),
            max_flows: 65_536,
            max_faces: 16,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct FaceRate {
    face: u64,
    rate_bps: f64,
    refreshed: Timestamp,
}

#[derive(Debug, Clone, Default)]
struct FlowPaths {
    drt: Vec<FaceRate>,
    trt: Vec<FaceRate>,
    last_used: Timestamp,
}

fn upsert(list: &mut Vec<FaceRate>, max: usize, face: u64, rate_bps: f64, now: Timestamp) {
    if let Some(e) = list.iter_mut().find(|e| e.face == face) {
        e.rate_bps = rate_bps;
        e.refreshed = now;
    } else if list.len() < max {
        list.push(FaceRate {
            face,
            rate_bps,
            refreshed: now,
        });
    }
}

fn sanitize(rate: Option<f64>) -> f64 {
    match rate {
        Some(r) if r.is_finite() => r.clamp(0.0, MAX_RATE_BPS),
        Some(r) if r == f64::INFINITY => MAX_RATE_BPS,
        Some(_) => 0.0,
        None => MAX_RATE_BPS,
    }
}

/// DRT and TRT of every flow through a node.
#[derive(Debug, Clone)]
pub struct MultipathTable {
    cfg: MultipathConfig,
    flows: HashMap<(u8, u64), FlowPaths, MixState>,
    last_sweep: Timestamp,
    full: u64,
}

impl MultipathTable {
    /// Creates empty tables; `hash_seed` keys the flow hash.
    pub fn new(cfg: MultipathConfig, hash_seed: u64) -> Self {
        MultipathTable {
            cfg,
            flows: HashMap::with_hasher(MixState(hash_seed)),
            last_sweep: Timestamp::ZERO,
            full: 0,
        }
    }

    /// Flows tracked.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Whether no flow is tracked.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flows not tracked because the table was full.
    pub fn full_count(&self) -> u64 {
        self.full
    }

    /// Records an Interest of (class, prefix) arriving from `in_face` with
    /// its DownstreamRate (None = absent = MAX).
    pub fn on_interest(
        &mut self,
        now: Timestamp,
        class: ServiceClass,
        prefix: u64,
        in_face: u64,
        downstream_rate_bps: Option<f64>,
    ) {
        self.maybe_sweep(now);
        let max_faces = self.cfg.max_faces;
        if let Some(f) = self.flow_mut(class, prefix, now) {
            upsert(
                &mut f.drt,
                max_faces,
                in_face,
                sanitize(downstream_rate_bps),
                now,
            );
        }
    }

    /// u_j of `face` for the flow (default if unknown).
    pub fn upstream_rate(&self, class: ServiceClass, prefix: u64, face: u64) -> f64 {
        self.flows
            .get(&(class.code(), prefix))
            .and_then(|f| f.trt.iter().find(|e| e.face == face))
            .map_or(self.cfg.default_upstream_bps, |e| e.rate_bps)
    }

    /// Forwarding probability f_j of eq. 12 among `candidates`.
    pub fn forwarding_probability(
        &self,
        class: ServiceClass,
        prefix: u64,
        face: u64,
        candidates: &[u64],
    ) -> f64 {
        let total: f64 = candidates
            .iter()
            .map(|&k| self.upstream_rate(class, prefix, k))
            .sum();
        if !candidates.contains(&face) {
            return 0.0;
        }
        if total > 0.0 {
            self.upstream_rate(class, prefix, face) / total
        } else {
            1.0 / candidates.len() as f64
        }
    }

    /// Chooses the next hop by eq. 12, or uniformly with the probing
    /// probability; `None` if there is no candidate.
    pub fn choose_next_hop(
        &self,
        class: ServiceClass,
        prefix: u64,
        candidates: &[u64],
        rng: &mut impl RngCore,
    ) -> Option<u64> {
        let last = *candidates.last()?;
        let n = candidates.len();
        if unit_f64(rng) < self.cfg.probe_probability {
            let i = ((unit_f64(rng) * n as f64) as usize).min(n - 1);
            return Some(candidates[i]);
        }
        let total: f64 = candidates
            .iter()
            .map(|&k| self.upstream_rate(class, prefix, k))
            .sum();
        if total <= 0.0 {
            let i = ((unit_f64(rng) * n as f64) as usize).min(n - 1);
            return Some(candidates[i]);
        }
        let r = unit_f64(rng) * total;
        let mut acc = 0.0;
        for &k in candidates {
            acc += self.upstream_rate(class, prefix, k);
            if r < acc {
                return Some(k);
            }
        }
        Some(last)
    }

    /// DownstreamRate to write on an Interest sent to `out_face` (eq. 10).
    /// `local_rate_bps` is R of the flow at `out_face` (None = no limit yet).
    pub fn downstream_rate(
        &self,
        class: ServiceClass,
        prefix: u64,
        out_face: u64,
        candidates: &[u64],
        local_rate_bps: Option<f64>,
    ) -> f64 {
        let sum_d: f64 = self
            .flows
            .get(&(class.code(), prefix))
            .map_or(MAX_RATE_BPS, |f| {
                f.drt.iter().map(|e| e.rate_bps).sum::<f64>()
            })
            .min(MAX_RATE_BPS);
        let share = self.forwarding_probability(class, prefix, out_face, candidates) * sum_d;
        share.min(sanitize(local_rate_bps))
    }

    /// Records a Data from upstream `in_face` carrying `target_rate_bps`
    /// (None = absent = MAX), with R of the flow at that face; returns u_k.
    pub fn on_data(
        &mut self,
        now: Timestamp,
        class: ServiceClass,
        prefix: u64,
        in_face: u64,
        target_rate_bps: Option<f64>,
        local_rate_bps: Option<f64>,
    ) -> f64 {
        self.maybe_sweep(now);
        let u = sanitize(target_rate_bps).min(sanitize(local_rate_bps));
        let max_faces = self.cfg.max_faces;
        if let Some(f) = self.flow_mut(class, prefix, now) {
            upsert(&mut f.trt, max_faces, in_face, u, now);
        }
        u
    }

    /// TargetRate to write on the Data sent to downstream `out_face` (eq. 11).
    pub fn target_rate(&self, class: ServiceClass, prefix: u64, out_face: u64) -> Option<f64> {
        let f = self.flows.get(&(class.code(), prefix))?;
        let sum_u: f64 = f
            .trt
            .iter()
            .map(|e| e.rate_bps)
            .sum::<f64>()
            .min(MAX_RATE_BPS);
        if f.trt.is_empty() {
            return None;
        }
        let sum_d: f64 = f.drt.iter().map(|e| e.rate_bps).sum();
        let d_i = f
            .drt
            .iter()
            .find(|e| e.face == out_face)
            .map(|e| e.rate_bps);
        Some(match d_i {
            Some(d) if f.drt.len() > 1 && sum_d > 0.0 => d / sum_d * sum_u,
            _ => sum_u,
        })
    }

    /// Runs the periodic sweep if due.
    pub fn maybe_sweep(&mut self, now: Timestamp) {
        if now.saturating_since(self.last_sweep) < self.cfg.sweep_period {
            return;
        }
        let period = self.cfg.sweep_period;
        let default_u = self.cfg.default_upstream_bps;
        self.flows.retain(|_, f| {
            f.drt.retain(|e| now.saturating_since(e.refreshed) < period);
            for e in &mut f.trt {
                if now.saturating_since(e.refreshed) >= period {
                    e.rate_bps = default_u;
                }
            }
            now.saturating_since(f.last_used) < period * 10
        });
        self.last_sweep = now;
    }

    fn flow_mut(
        &mut self,
        class: ServiceClass,
        prefix: u64,
        now: Timestamp,
    ) -> Option<&mut FlowPaths> {
        let key = (class.code(), prefix);
        if !self.flows.contains_key(&key) {
            if self.flows.len() >= self.cfg.max_flows {
                self.full += 1;
                return None;
            }
            self.flows.insert(key, FlowPaths::default());
        }
        let f = self.flows.get_mut(&key)?;
        f.last_used = now;
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    const C: ServiceClass = ServiceClass::Af2;

    #[test]
    fn paper_figure_six_branch_node() {
        // Branch node with downstream faces 1 (d = 3 M) and 2 (d = 12 M) and
        // upstream faces 10, 11 whose Data carry 5 M and 10 M.
        let mut m = MultipathTable::new(MultipathConfig::default(), 0);
        let t = Timestamp::from_millis(1);
        m.on_interest(t, C, 7, 1, Some(3e6));
        m.on_interest(t, C, 7, 2, Some(12e6));
        assert_eq!(m.on_data(t, C, 7, 10, Some(5e6), None), 5e6);
        assert_eq!(m.on_data(t, C, 7, 11, Some(12e6), Some(10e6)), 10e6);
        // (11): face 1 gets 3/15 of 15 M, face 2 gets 12/15.
        assert!((m.target_rate(C, 7, 1).unwrap() - 3e6).abs() < 1e-6);
        assert!((m.target_rate(C, 7, 2).unwrap() - 12e6).abs() < 1e-6);
        // (12): f = 5/15 and 10/15; (10): min(R_j, f_j · 15 M).
        assert!((m.forwarding_probability(C, 7, 11, &[10, 11]) - 2.0 / 3.0).abs() < 1e-12);
        assert!((m.downstream_rate(C, 7, 10, &[10, 11], Some(4e6)) - 4e6).abs() < 1e-6);
        assert!((m.downstream_rate(C, 7, 11, &[10, 11], None) - 10e6).abs() < 1e-6);
    }

    #[test]
    fn choice_follows_eq12_with_one_percent_probing() {
        let mut m = MultipathTable::new(MultipathConfig::default(), 0);
        let t = Timestamp::from_millis(1);
        m.on_data(t, C, 1, 10, Some(9e6), None);
        m.on_data(t, C, 1, 11, Some(1e6), None);
        let mut rng = StdRng::seed_from_u64(9);
        let n = 100_000;
        let to_10 = (0..n)
            .filter(|_| m.choose_next_hop(C, 1, &[10, 11], &mut rng) == Some(10))
            .count();
        // Expected 0.99·0.9 + 0.01·0.5 = 0.896.
        let p = to_10 as f64 / n as f64;
        assert!((p - 0.896).abs() < 0.005, "{p}");
    }

    #[test]
    fn sweep_erases_stale_drt_and_resets_trt() {
        let mut m = MultipathTable::new(MultipathConfig::default(), 0);
        m.on_interest(Timestamp::from_millis(1), C, 1, 3, Some(1e6));
        m.on_data(Timestamp::from_millis(1), C, 1, 10, Some(7e6), None);
        m.maybe_sweep(Timestamp::from_millis(150));
        assert_eq!(m.upstream_rate(C, 1, 10), 2e6);
        // DRT empty: one-face rule gives Σu.
        assert_eq!(m.target_rate(C, 1, 3), Some(2e6));
        m.maybe_sweep(Timestamp::from_secs_f64(5.0));
        assert!(m.is_empty());
    }

    proptest! {
        #[test]
        fn rates_finite_and_non_negative(ops in proptest::collection::vec((0u8..4, 0u64..4, proptest::option::of(-1e9f64..1e12)), 1..200), seed: u64) {
            let mut m = MultipathTable::new(MultipathConfig { max_flows: 3, ..MultipathConfig::default() }, seed);
            let mut rng = StdRng::seed_from_u64(seed);
            let mut now = Timestamp::ZERO;
            let cands = [10u64, 11, 12];
            for (op, x, rate) in ops {
                now += Duration::from_millis(13);
                match op {
                    0 => m.on_interest(now, C, x, x, rate),
                    1 => { let u = m.on_data(now, C, x, 10 + x % 3, rate, Some(5e6)); prop_assert!(u.is_finite() && u >= 0.0); }
                    2 => { let d = m.downstream_rate(C, x, 11, &cands, rate); prop_assert!(d.is_finite() && d >= 0.0); }
                    _ => { prop_assert!(m.choose_next_hop(C, x, &cands, &mut rng).is_some()); }
                }
                if let Some(tr) = m.target_rate(C, x, x) { prop_assert!(tr.is_finite() && tr >= 0.0); }
                prop_assert!(m.len() <= 3);
            }
        }
    }
}
