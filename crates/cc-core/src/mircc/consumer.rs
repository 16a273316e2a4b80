//! The MIRCC consumer: dual-class best-subflow rates and Interest steering
//! (§4.2, §4.3; docs/algorithms.md §2.3 "Consumer").

use super::path::unit_f64;
use super::TrafficClass;
use crate::law::{ConsumerLaw, DataFeedback, NackFeedback, SendLimit};
use crate::rcp::{DataSizeEstimate, StampedRate};
use crate::time::{Duration, Timestamp};
use alloc::vec::Vec;
use rand_core::RngCore;

/// Parameters of the MIRCC consumer.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct MirccConsumerConfig {
    /// Share of Interests sent without a steering hint (§4.3.3: 3%).
    pub hintless_fraction: f64,
    /// Most paths remembered per flow (oldest forgotten first).
    pub max_paths: usize,
    /// A path not heard from for this long is forgotten.
    pub path_timeout: Duration,
    /// Primary rate before the first Data (bit/s).
    pub initial_rate_bps: f64,
    /// Data size before the first Data (bytes).
    pub initial_data_size_bytes: f64,
    /// EWMA gain of the Data-size estimate.
    pub data_size_gain: f64,
    /// Safety bound on Interests in flight.
    pub max_outstanding: u32,
}

impl Default for MirccConsumerConfig {
    fn default() -> Self {
        MirccConsumerConfig {
            hintless_fraction: 0.03,
            max_paths: 16,
            path_timeout: Duration::from_secs(2),
            initial_rate_bps: 80_000.0,
            initial_data_size_bytes: 1_100.0,
            data_size_gain: 0.125,
            max_outstanding: 10_000,
        }
    }
}

/// What the consumer knows about one path (subflow).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathRates {
    /// The pathId the Data carried.
    pub path_id: u64,
    /// Latest primary stamped rate Rp of the path (bit/s).
    pub primary_bps: f64,
    /// Latest secondary stamped rate Rs of the path (bit/s).
    pub secondary_bps: f64,
    /// A steering hint known to lead onto this path.
    pub hint: Option<u64>,
    /// Last Data or Nack from this path.
    pub last_seen: Timestamp,
}

/// How to send the next Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterestPlan {
    /// Class flag to put in the Interest.
    pub class: TrafficClass,
    /// Steering hint (`None`: hint-less, forwarders choose by bandwidth).
    pub steering_hint: Option<u64>,
    /// The path the hint is meant for, if any.
    pub path_id: Option<u64>,
}

/// MIRCC consumer of one flow.
///
/// Classes and paths are picked by smooth weighted round robin rather than
/// independent random draws: each path then receives its share as an even
/// stream. Random draws make every link's input binomial (at 8 KB Data on a
/// 10 Mbit/s path, ±2-3 Interests per 100 ms period), which the links
/// read as input-rate swings and shaper queues and answer with lower rates.
#[derive(Debug, Clone)]
pub struct MirccConsumer {
    cfg: MirccConsumerConfig,
    paths: Vec<PathRates>,
    data_size: DataSizeEstimate,
    /// Primary rate while no path is known: the configured guess until a
    /// Nack stamps one (see [`ConsumerLaw::on_nack`]).
    start_rate: StampedRate,
    /// Round-robin credit of the primary and secondary class.
    class_credit: [f64; 2],
    /// Round-robin credit per (path id, class).
    path_credit: Vec<(u64, [f64; 2])>,
}

/// One step of smooth weighted round robin over `weights` (non-finite or
/// negative weights count as zero) with `credit` per entry: every entry
/// earns its weight, the richest is picked and pays the total. `None` when
/// every weight is zero.
fn smooth_wrr(weights: &[f64], credit: &mut [f64]) -> Option<usize> {
    let clean = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let total: f64 = weights.iter().map(|&w| clean(w)).sum();
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, (&w, c)) in weights.iter().zip(credit.iter_mut()).enumerate() {
        let w = clean(w);
        if w <= 0.0 {
            // An entry without weight keeps no claim.
            *c = 0.0;
            continue;
        }
        // Bounded, so weights that changed (or entries that came and
        // went) cannot leave a backlog that starves the others.
        *c = (*c + w).clamp(-total, total);
        if best.is_none_or(|(_, bc)| *c > bc) {
            best = Some((i, *c));
        }
    }
    let (i, _) = best?;
    credit[i] -= total;
    Some(i)
}

fn valid(r: Option<f64>) -> Option<f64> {
    r.filter(|x| x.is_finite() && *x >= 0.0)
}

impl MirccConsumer {
    /// A consumer with no known path yet.
    pub fn new(cfg: MirccConsumerConfig) -> Self {
        MirccConsumer {
            paths: Vec::new(),
            data_size: DataSizeEstimate::new(cfg.initial_data_size_bytes, cfg.data_size_gain),
            start_rate: StampedRate::guess(cfg.initial_rate_bps),
            class_credit: [0.0; 2],
            path_credit: Vec::new(),
            cfg,
        }
    }

    /// A Data with the steering hint it reflected (if the codec carries it).
    /// Data without a pathId count as one anonymous path (id 0).
    pub fn on_path_data(&mut self, now: Timestamp, fb: &DataFeedback, reflected_hint: Option<u64>) {
        self.data_size.sample(fb.data_size_bytes);
        self.expire(now);
        let (Some(rp), rs) = (valid(fb.primary_rate_bps), valid(fb.secondary_rate_bps)) else {
            return;
        };
        let id = fb.path_id.unwrap_or(0);
        let p = self.path_mut(now, id);
        p.primary_bps = rp;
        p.secondary_bps = rs.unwrap_or(0.0);
        p.last_seen = now;
        if reflected_hint.is_some() {
            p.hint = reflected_hint;
        }
    }

    fn path_mut(&mut self, now: Timestamp, id: u64) -> &mut PathRates {
        if let Some(i) = self.paths.iter().position(|p| p.path_id == id) {
            return &mut self.paths[i];
        }
        if self.paths.len() >= self.cfg.max_paths.max(1) {
            if let Some(oldest) = (0..self.paths.len()).min_by_key(|&i| self.paths[i].last_seen) {
                self.paths.swap_remove(oldest);
            }
        }
        self.paths.push(PathRates {
            path_id: id,
            primary_bps: 0.0,
            secondary_bps: 0.0,
            hint: None,
            last_seen: now,
        });
        let last = self.paths.len() - 1;
        &mut self.paths[last]
    }

    fn expire(&mut self, now: Timestamp) {
        let timeout = self.cfg.path_timeout;
        self.paths.retain(|p| now - p.last_seen <= timeout);
    }

    /// The best-subflow rate: primary total (bit/s).
    pub fn primary_rate_bps(&self) -> f64 {
        if self.paths.is_empty() {
            return self.start_rate.bps();
        }
        self.paths.iter().map(|p| p.primary_bps).fold(0.0, f64::max)
    }

    /// The total per-subflow secondary rate (bit/s).
    pub fn secondary_rate_bps(&self) -> f64 {
        self.paths.iter().map(|p| p.secondary_bps).sum()
    }

    /// Primary share of each path: `Rp_best · Rp_k / Σ Rp`, never above
    /// `Rp_k` since `Rp_best ≤ Σ Rp`.
    pub fn primary_share_bps(&self, path: &PathRates) -> f64 {
        let sum: f64 = self.paths.iter().map(|p| p.primary_bps).sum();
        if sum <= 0.0 {
            return 0.0;
        }
        self.primary_rate_bps() * path.primary_bps / sum
    }

    /// Known paths.
    pub fn paths(&self) -> &[PathRates] {
        &self.paths
    }

    /// The Data-size estimate (bytes).
    pub fn data_size_bytes(&self) -> f64 {
        self.data_size.bytes()
    }

    /// Class and steering hint for the next Interest. Classes are served in
    /// proportion to the primary and secondary totals, and within a class
    /// paths in proportion to their share (smooth weighted round robin);
    /// 3% go hint-less (§4.3.3). A path whose hint is not known yet gets a
    /// fresh random hint, which the Data reflects back (random-value
    /// steering, §4.3.2).
    pub fn next_interest(&mut self, rng: &mut impl RngCore) -> InterestPlan {
        let p = self.primary_rate_bps();
        let s = self.secondary_rate_bps();
        let class = match smooth_wrr(&[p, s], &mut self.class_credit) {
            Some(1) => TrafficClass::Secondary,
            _ => TrafficClass::Primary,
        };
        if self.paths.is_empty() || unit_f64(rng) < self.cfg.hintless_fraction {
            return InterestPlan {
                class,
                steering_hint: None,
                path_id: None,
            };
        }
        let k = match class {
            TrafficClass::Primary => 0,
            TrafficClass::Secondary => 1,
        };
        let weights: Vec<f64> = match class {
            TrafficClass::Primary => self
                .paths
                .iter()
                .map(|q| self.primary_share_bps(q))
                .collect(),
            TrafficClass::Secondary => self.paths.iter().map(|q| q.secondary_bps).collect(),
        };
        // Credits follow the paths by id (paths come and go).
        let ids: Vec<u64> = self.paths.iter().map(|q| q.path_id).collect();
        self.path_credit.retain(|(id, _)| ids.contains(id));
        let mut credit: Vec<f64> = ids
            .iter()
            .map(|id| {
                self.path_credit
                    .iter()
                    .find(|(x, _)| x == id)
                    .map_or(0.0, |(_, c)| c[k])
            })
            .collect();
        let i = smooth_wrr(&weights, &mut credit)
            .unwrap_or_else(|| (rng.next_u64() % self.paths.len() as u64) as usize);
        for (id, c) in ids.iter().zip(&credit) {
            match self.path_credit.iter_mut().find(|(x, _)| x == id) {
                Some((_, e)) => e[k] = *c,
                None => {
                    let mut e = [0.0; 2];
                    e[k] = *c;
                    self.path_credit.push((*id, e));
                }
            }
        }
        let path = &self.paths[i];
        InterestPlan {
            class,
            steering_hint: Some(path.hint.unwrap_or_else(|| rng.next_u64())),
            path_id: Some(path.path_id),
        }
    }
}

impl ConsumerLaw for MirccConsumer {
    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        self.on_path_data(now, fb, None);
    }

    /// Rates in a Nack cover part of a path only: they may lower a path's
    /// rates, never raise them. Without a pathId every path is capped.
    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        let rp = valid(fb.primary_rate_bps);
        let rs = valid(fb.secondary_rate_bps);
        if self.paths.is_empty() {
            // No Data yet: the first stamped rate replaces the configured
            // guess, as a Data's would ([`StampedRate`]); later
            // ones only lower it.
            if let Some(r) = rp {
                self.start_rate.on_nack(r);
            }
            return;
        }
        for p in self
            .paths
            .iter_mut()
            .filter(|p| fb.path_id.is_none_or(|id| id == p.path_id))
        {
            if let Some(r) = rp {
                p.primary_bps = p.primary_bps.min(r);
            }
            if let Some(r) = rs {
                p.secondary_bps = p.secondary_bps.min(r);
            }
            p.last_seen = now;
        }
    }

    fn limit(&self) -> SendLimit {
        let bps = self.primary_rate_bps() + self.secondary_rate_bps();
        SendLimit::Rate {
            interests_per_sec: bps / (8.0 * self.data_size.bytes()),
            max_outstanding: self.cfg.max_outstanding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};

    fn data(path: u64, rp: f64, rs: f64) -> DataFeedback {
        DataFeedback {
            primary_rate_bps: Some(rp),
            secondary_rate_bps: Some(rs),
            path_id: Some(path),
            data_size_bytes: 1000,
            ..Default::default()
        }
    }

    #[test]
    fn figure4_scenario2_rates() {
        // Diamond, scenario 2 (§4.3.4): two subflows bottlenecked at 10 Mbit/s
        // (lc, ld), shared lg = 15 Mbit/s. Best subflow 10 → 5 + 5 primary;
        // secondary initially ≈ 5 per path → 10 in total.
        let mut c = MirccConsumer::new(MirccConsumerConfig::default());
        let t = Timestamp::from_millis(1);
        c.on_data(t, &data(1, 10e6, 5e6));
        c.on_data(t, &data(2, 10e6, 5e6));
        assert_eq!(c.primary_rate_bps(), 10e6);
        assert_eq!(c.secondary_rate_bps(), 10e6);
        for p in c.paths() {
            assert_eq!(c.primary_share_bps(p), 5e6);
        }
        // Converged: 2.5 Mbit/s secondary per path → 15 Mbit/s total = lg.
        c.on_data(t, &data(1, 10e6, 2.5e6));
        c.on_data(t, &data(2, 10e6, 2.5e6));
        assert_eq!(c.primary_rate_bps() + c.secondary_rate_bps(), 15e6);
        match c.limit() {
            SendLimit::Rate {
                interests_per_sec, ..
            } => assert!((interests_per_sec - 15e6 / 8000.0).abs() < 1e-6),
            SendLimit::Window { .. } => panic!("rate law must return a rate"),
        }
    }

    #[test]
    fn primary_split_is_proportional_and_capped() {
        // Slingshot-like: paths at 12 and 3 Mbit/s → best 12, split 9.6/2.4.
        let mut c = MirccConsumer::new(MirccConsumerConfig::default());
        let t = Timestamp::from_millis(1);
        c.on_data(t, &data(1, 12e6, 0.0));
        c.on_data(t, &data(2, 3e6, 0.0));
        let shares: Vec<f64> = c.paths().iter().map(|p| c.primary_share_bps(p)).collect();
        assert!((shares[0] - 9.6e6).abs() < 1.0 && (shares[1] - 2.4e6).abs() < 1.0);
        for (p, s) in c.paths().iter().zip(&shares) {
            assert!(*s <= p.primary_bps);
        }
    }

    #[test]
    fn smooth_wrr_is_exact_and_even() {
        let mut credit = [0.0; 3];
        let w = [3.0, 2.0, 1.0];
        let picks: Vec<usize> = (0..600)
            .map(|_| smooth_wrr(&w, &mut credit).unwrap())
            .collect();
        for (i, share) in [(0, 300), (1, 200), (2, 100)] {
            assert_eq!(picks.iter().filter(|&&p| p == i).count(), share);
        }
        // Even: in every window of 6 picks each entry gets its weight ±1.
        for win in picks.windows(6) {
            for (i, wi) in w.iter().enumerate() {
                let n = win.iter().filter(|&&p| p == i).count() as f64;
                assert!((n - wi).abs() <= 1.0, "{win:?}");
            }
        }
        assert_eq!(smooth_wrr(&[0.0, f64::NAN, -1.0], &mut credit), None);
        assert_eq!(smooth_wrr(&[], &mut []), None);
    }

    #[test]
    fn two_equal_paths_alternate() {
        let mut c = MirccConsumer::new(MirccConsumerConfig {
            hintless_fraction: 0.0,
            ..MirccConsumerConfig::default()
        });
        let mut rng = StdRng::seed_from_u64(3);
        let t = Timestamp::from_millis(1);
        c.on_path_data(t, &data(1, 5e6, 2e6), Some(11));
        c.on_path_data(t, &data(2, 5e6, 2e6), Some(22));
        let plans: Vec<InterestPlan> = (0..140).map(|_| c.next_interest(&mut rng)).collect();
        // Classes 5:4 (Rp best 5 vs Rs 2 + 2), each class alternating paths.
        let secondary = plans
            .iter()
            .filter(|p| p.class == TrafficClass::Secondary)
            .count();
        assert!((60..=64).contains(&secondary), "{secondary}");
        for class in [TrafficClass::Primary, TrafficClass::Secondary] {
            let hints: Vec<u64> = plans
                .iter()
                .filter(|p| p.class == class)
                .filter_map(|p| p.steering_hint)
                .collect();
            assert!(hints.windows(2).all(|w| w[0] != w[1]), "{hints:?}");
        }
    }

    #[test]
    fn nack_only_lowers_and_paths_expire() {
        let mut c = MirccConsumer::new(MirccConsumerConfig::default());
        c.on_data(Timestamp::from_millis(1), &data(1, 8e6, 1e6));
        let nack = NackFeedback {
            congestion: true,
            primary_rate_bps: Some(9e6),
            secondary_rate_bps: Some(0.5e6),
            path_id: Some(1),
        };
        c.on_nack(Timestamp::from_millis(2), &nack);
        assert_eq!(c.paths()[0].primary_bps, 8e6);
        assert_eq!(c.paths()[0].secondary_bps, 0.5e6);
        c.on_data(Timestamp::from_secs_f64(5.0), &data(2, 1e6, 0.0));
        assert_eq!(c.paths().len(), 1);
        assert_eq!(c.paths()[0].path_id, 2);
    }

    #[test]
    fn before_any_path_the_first_nack_rate_replaces_the_guess() {
        let mut c = MirccConsumer::new(MirccConsumerConfig::default());
        let nack = |r: f64| NackFeedback {
            congestion: true,
            primary_rate_bps: Some(r),
            secondary_rate_bps: Some(0.0),
            path_id: None,
        };
        c.on_nack(Timestamp::from_millis(1), &nack(5e6));
        assert_eq!(c.primary_rate_bps(), 5e6);
        c.on_nack(Timestamp::from_millis(2), &nack(9e6));
        assert_eq!(c.primary_rate_bps(), 5e6);
        c.on_nack(Timestamp::from_millis(3), &nack(3e6));
        assert_eq!(c.primary_rate_bps(), 3e6);
        // The first Data's path takes over.
        c.on_data(Timestamp::from_millis(4), &data(1, 8e6, 0.0));
        assert_eq!(c.primary_rate_bps(), 8e6);
    }

    #[test]
    fn about_three_percent_hintless_and_hints_follow_paths() {
        let mut c = MirccConsumer::new(MirccConsumerConfig::default());
        let mut rng = StdRng::seed_from_u64(1);
        // No path yet: hint-less.
        assert_eq!(c.next_interest(&mut rng).steering_hint, None);
        let t = Timestamp::from_millis(1);
        c.on_path_data(t, &data(1, 6e6, 0.0), Some(111));
        c.on_path_data(t, &data(2, 2e6, 0.0), Some(222));
        let n = 20_000;
        let (mut none, mut on1) = (0, 0);
        for _ in 0..n {
            let plan = c.next_interest(&mut rng);
            assert_eq!(plan.class, TrafficClass::Primary);
            match plan.steering_hint {
                None => none += 1,
                Some(111) => on1 += 1,
                Some(h) => assert_eq!(h, 222),
            }
        }
        let hintless = f64::from(none) / f64::from(n);
        assert!((hintless - 0.03).abs() < 0.005, "{hintless}");
        let share1 = f64::from(on1) / f64::from(n - none);
        assert!((share1 - 0.75).abs() < 0.02, "{share1}");
    }
}
