//! PCON (Schneider, Yi, Zhang, Zhang, ACM ICN'16): forwarder-side marking
//! and the forwarding-percentage strategy (docs/algorithms.md §6.2).
//!
//! * Detection and marking: CoDel on the queue's sojourn time, target 5 ms,
//!   interval 100 ms, marks spaced `interval/√count`: [`crate::codel`].
//!   NFD's deployed variant, which marks on send-queue *length* (65 536 bytes
//!   for 100 ms, then every `interval/√(n+1)`), is [`NfdQueueMarker`].
//! * Consumer: the ndnget AIMD or CUBIC window reacting to marks
//!   ([`PconConsumer`] over [`crate::aimd::Aimd`] or [`crate::cubic::Cubic`]
//!   with `ignore_marks` forced false).
//! * Forwarding: per (prefix, face) forwarding percentages ([`PconSplit`]):
//!   Interests pick a face by roulette on the percentages, with probability
//!   0.001 also probing every other face; a marked Data from face f moves
//!   Δ = change_per_mark·fwPerc(f) from f to the other faces equally; a
//!   marked Nack does the same at most once per 110 ms; a PIT expiry on f
//!   moves an absolute change_per_mark. Percentages start at 100 % on the
//!   first (cheapest) next hop (`INIT_SHORTEST_PATH`).
//!
//! Deviation: the PCON paper text was not available (docs/algorithms.md §6.2);
//! the strategy follows the authors' NFD code as summarised there.

use crate::aimd::{Aimd, AimdConfig};
use crate::cubic::{Cubic, CubicConfig};
use crate::law::{ConsumerLaw, DataFeedback, NackFeedback, SendLimit};
use crate::time::{Duration, Timestamp};
use alloc::vec::Vec;
use rand_core::RngCore;

/// NFD `GenericLinkService` congestion-marking parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct NfdMarkerConfig {
    /// Send-queue length above which the face is congested, bytes.
    pub threshold_bytes: usize,
    /// Time congested before the first mark, and the base mark spacing.
    pub interval: Duration,
}

impl Default for NfdMarkerConfig {
    fn default() -> Self {
        NfdMarkerConfig {
            threshold_bytes: 65_536,
            interval: Duration::from_millis(100),
        }
    }
}

/// NFD's queue-length congestion marker (one per face).
#[derive(Debug, Clone)]
pub struct NfdQueueMarker {
    cfg: NfdMarkerConfig,
    next_mark: Option<Timestamp>,
    marked_in_episode: u32,
}

impl NfdQueueMarker {
    /// Creates a marker in the uncongested state.
    pub fn new(cfg: NfdMarkerConfig) -> Self {
        NfdQueueMarker {
            cfg,
            next_mark: None,
            marked_in_episode: 0,
        }
    }

    /// Called for each packet sent with `queue_bytes` waiting behind it;
    /// returns whether the packet carries CongestionMark = 1.
    pub fn on_send(&mut self, now: Timestamp, queue_bytes: usize) -> bool {
        if queue_bytes <= self.cfg.threshold_bytes {
            self.next_mark = None;
            self.marked_in_episode = 0;
            return false;
        }
        let Some(next) = self.next_mark else {
            self.next_mark = Some(now + self.cfg.interval);
            return false;
        };
        if now < next {
            return false;
        }
        self.marked_in_episode = self.marked_in_episode.saturating_add(1);
        let n = f64::from(self.marked_in_episode) + 1.0;
        let gap = self.cfg.interval.as_nanos() as f64 / libm::sqrt(n);
        self.next_mark = Some(next + Duration::from_nanos(gap as u64));
        true
    }
}

impl Default for NfdQueueMarker {
    fn default() -> Self {
        NfdQueueMarker::new(NfdMarkerConfig::default())
    }
}

/// PCON strategy parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct PconConfig {
    /// Fraction of a face's share moved per mark (0.02 in PCON; 0.1 in the
    /// QSCCP authors' port).
    pub change_per_mark: f64,
    /// Probability of probing all other faces with an Interest copy.
    pub probing_probability: f64,
    /// Minimum spacing of updates caused by marked Nacks.
    pub nack_update_spacing: Duration,
    /// Minimum spacing of updates caused by marked Data (zero: every
    /// marked Data moves the split, as PCON's strategy). With step marking
    /// (`codel::CodelConfig::step_marking`) every Data that queued past the
    /// target is marked, tens of times RFC CoDel's marks; spaced like the
    /// Nack updates the split moves about as often as under RFC marking.
    pub mark_update_spacing: Duration,
    /// Start with 100 % on the first next hop (else an equal split).
    pub init_shortest_path: bool,
    /// Bound on next hops tracked per prefix.
    pub max_faces: usize,
}

impl Default for PconConfig {
    fn default() -> Self {
        PconConfig {
            change_per_mark: 0.02,
            probing_probability: 0.001,
            nack_update_spacing: Duration::from_millis(110),
            mark_update_spacing: Duration::ZERO,
            init_shortest_path: true,
            max_faces: 32,
        }
    }
}

/// What [`PconSplit::choose`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PconChoice {
    /// Face to forward the Interest to.
    pub face: u64,
    /// Also send copies to every other candidate (probing).
    pub probe_others: bool,
}

/// Whether an update spaced at least `spacing` after the last one (`last`)
/// may happen at `now`; if so it is recorded. A zero spacing lets every
/// update through.
fn update_due(last: &mut Option<Timestamp>, now: Timestamp, spacing: Duration) -> bool {
    if last.is_some_and(|t| now.saturating_since(t) < spacing) {
        return false;
    }
    *last = Some(now);
    true
}

/// Uniform float in [0, 1) from 53 random bits.
pub(crate) fn unit_f64(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Forwarding percentages of one FIB prefix.
#[derive(Debug, Clone)]
pub struct PconSplit {
    cfg: PconConfig,
    faces: Vec<(u64, f64)>,
    last_nack_update: Option<Timestamp>,
    last_mark_update: Option<Timestamp>,
}

impl PconSplit {
    /// Creates an empty split; faces join on the first [`choose`](Self::choose).
    pub fn new(cfg: PconConfig) -> Self {
        PconSplit {
            cfg,
            faces: Vec::new(),
            last_nack_update: None,
            last_mark_update: None,
        }
    }

    /// Share of `face`, if tracked.
    pub fn percentage(&self, face: u64) -> Option<f64> {
        self.faces.iter().find(|f| f.0 == face).map(|f| f.1)
    }

    /// Picks a next hop among `candidates` (ordered by cost, cheapest
    /// first); `None` if there are none.
    pub fn choose(&mut self, candidates: &[u64], rng: &mut impl RngCore) -> Option<PconChoice> {
        let first = *candidates.first()?;
        self.sync(candidates);
        let total: f64 = self
            .faces
            .iter()
            .filter(|f| candidates.contains(&f.0))
            .map(|f| f.1)
            .sum();
        let mut face = first;
        if total > 0.0 {
            let r = unit_f64(rng) * total;
            let mut acc = 0.0;
            for &(id, p) in self.faces.iter().filter(|f| candidates.contains(&f.0)) {
                acc += p;
                face = id;
                if r < acc {
                    break;
                }
            }
        }
        let probe_others = candidates.len() > 1 && unit_f64(rng) < self.cfg.probing_probability;
        Some(PconChoice { face, probe_others })
    }

    /// A Data carrying a congestion mark came back from `face` (moves the
    /// split at most once per `mark_update_spacing`).
    pub fn on_marked_data(&mut self, now: Timestamp, face: u64) {
        if update_due(
            &mut self.last_mark_update,
            now,
            self.cfg.mark_update_spacing,
        ) {
            self.shift(face);
        }
    }

    fn shift(&mut self, face: u64) {
        if let Some(p) = self.percentage(face) {
            self.shift_from(face, self.cfg.change_per_mark * p);
        }
    }

    /// A Nack carrying a congestion mark came back from `face`.
    pub fn on_marked_nack(&mut self, now: Timestamp, face: u64) {
        if update_due(
            &mut self.last_nack_update,
            now,
            self.cfg.nack_update_spacing,
        ) {
            self.shift(face);
        }
    }

    /// A PIT entry expired with its out-record on `face`.
    pub fn on_expiry(&mut self, face: u64) {
        self.shift_from(face, self.cfg.change_per_mark);
    }

    fn sync(&mut self, candidates: &[u64]) {
        let was_empty = self.faces.is_empty();
        for &c in candidates {
            if self.faces.len() >= self.cfg.max_faces.max(1) {
                break;
            }
            if !self.faces.iter().any(|f| f.0 == c) {
                self.faces.push((c, 0.0));
            }
        }
        if was_empty && !self.faces.is_empty() {
            if self.cfg.init_shortest_path {
                self.faces[0].1 = 1.0;
            } else {
                let share = 1.0 / self.faces.len() as f64;
                self.faces.iter_mut().for_each(|f| f.1 = share);
            }
        }
    }

    fn shift_from(&mut self, face: u64, delta: f64) {
        let n = self.faces.len();
        if n < 2 {
            return;
        }
        let Some(i) = self.faces.iter().position(|f| f.0 == face) else {
            return;
        };
        let moved = delta.clamp(0.0, self.faces[i].1);
        self.faces[i].1 -= moved;
        let each = moved / (n - 1) as f64;
        for (j, f) in self.faces.iter_mut().enumerate() {
            if j != i {
                f.1 += each;
            }
        }
    }
}

impl Default for PconSplit {
    fn default() -> Self {
        PconSplit::new(PconConfig::default())
    }
}

/// The tuned PCON consumer's least ssthresh [D]: one Interest, where
/// ndnget keeps two. The envelope's window floor is one Data per flow
/// beyond the bandwidth-delay product; with two, three flows of 8 KB Data
/// on 2 Mbit/s at 10 ms kept five Data queued (161 ms at p95) and ten kept
/// nineteen (612 ms), twice what one each leaves (docs/deviations.md).
pub const PCON_MIN_SSTHRESH: f64 = 1.0;

/// AIMD's decrease on a mark in a PCON consumer of `profile` when it is a
/// fixed factor: the paper's consumer (ndnget) halves as on a loss. The
/// tuned consumer cuts in proportion instead ([`pcon_aimd`]).
pub fn pcon_mark_md_coef(profile: crate::Profile) -> Option<f64> {
    match profile {
        crate::Profile::Paper => Some(0.5),
        crate::Profile::Tuned => None,
    }
}

/// Pacing of a PCON consumer's window in `profile` [D]: the tuned
/// consumer spreads its Interests over the RTT (P8 in docs/deviations.md,
/// [`crate::window::WindowPacing`]); the paper's (ndnget) sends as its
/// window opens.
pub fn pcon_pacing(profile: crate::Profile) -> Option<crate::window::WindowPacing> {
    match profile {
        crate::Profile::Paper => None,
        crate::Profile::Tuned => Some(crate::window::WindowPacing::default()),
    }
}

/// The AIMD window of a PCON consumer from `aimd`: marks always count;
/// with a fixed cut on a mark (`mark_md_coef`, the paper's 0.5 or a
/// user's) ndnget's rules, else the tuned consumer [D]: the cut in
/// proportion to the marked fraction of each round trip (DCTCP; it pairs
/// with the routers' step marking, docs/deviations.md), a floor of
/// [`PCON_MIN_SSTHRESH`], no cut below the path's measured
/// bandwidth-delay product (`AimdConfig::bandwidth_floor`), and growth
/// limited while a queue shows (`AimdConfig::queue_growth_target`, CoDel's
/// 5 ms target unless set; [`crate::growth_limit::QueueGrowthLimit`]).
pub fn pcon_aimd(aimd: AimdConfig) -> AimdConfig {
    match aimd.mark_md_coef {
        Some(_) => AimdConfig {
            ignore_marks: false,
            ..aimd
        },
        None => AimdConfig {
            ignore_marks: false,
            proportional_mark_cut: true,
            min_ssthresh: PCON_MIN_SSTHRESH,
            bandwidth_floor: true,
            queue_growth_target: aimd
                .queue_growth_target
                .or(Some(crate::codel::CodelConfig::default().target)),
            ..aimd
        },
    }
}

/// Which ndnget window a PCON consumer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum PconWindow {
    /// AIMD, the window of the PCON paper's consumer.
    #[default]
    Aimd,
    /// CUBIC.
    Cubic,
}

/// The PCON consumer: an AIMD or CUBIC window that always reacts to marks.
#[derive(Debug, Clone)]
pub enum PconConsumer {
    /// AIMD window.
    Aimd(Aimd),
    /// CUBIC window.
    Cubic(Cubic),
}

impl PconConsumer {
    /// Builds the chosen window from its config, with `ignore_marks` forced
    /// off: marks are PCON's only congestion signal besides timeouts. The
    /// AIMD window is [`pcon_aimd`]'s.
    pub fn new(window: PconWindow, aimd: AimdConfig, cubic: CubicConfig) -> Self {
        match window {
            PconWindow::Aimd => PconConsumer::Aimd(Aimd::new(pcon_aimd(aimd))),
            PconWindow::Cubic => PconConsumer::Cubic(Cubic::new(CubicConfig {
                ignore_marks: false,
                ..cubic
            })),
        }
    }

    /// The congestion window, Interests.
    pub fn cwnd(&self) -> f64 {
        match self {
            PconConsumer::Aimd(l) => l.cwnd(),
            PconConsumer::Cubic(l) => l.cwnd(),
        }
    }
}

impl ConsumerLaw for PconConsumer {
    fn on_interest_sent(&mut self, now: Timestamp, retransmission: bool) {
        match self {
            PconConsumer::Aimd(l) => l.on_interest_sent(now, retransmission),
            PconConsumer::Cubic(l) => l.on_interest_sent(now, retransmission),
        }
    }
    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        match self {
            PconConsumer::Aimd(l) => l.on_data(now, fb),
            PconConsumer::Cubic(l) => l.on_data(now, fb),
        }
    }
    fn on_nack(&mut self, now: Timestamp, fb: &NackFeedback) {
        match self {
            PconConsumer::Aimd(l) => l.on_nack(now, fb),
            PconConsumer::Cubic(l) => l.on_nack(now, fb),
        }
    }
    fn on_timeout(&mut self, now: Timestamp) {
        match self {
            PconConsumer::Aimd(l) => l.on_timeout(now),
            PconConsumer::Cubic(l) => l.on_timeout(now),
        }
    }
    fn limit(&self) -> SendLimit {
        match self {
            PconConsumer::Aimd(l) => l.limit(),
            PconConsumer::Cubic(l) => l.limit(),
        }
    }
    fn pace_ips(&self) -> Option<f64> {
        match self {
            PconConsumer::Aimd(l) => l.pace_ips(),
            PconConsumer::Cubic(l) => l.pace_ips(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn nfd_marker_waits_one_interval_then_speeds_up() {
        let mut m = NfdQueueMarker::default();
        let marks: Vec<u64> = (0..=300)
            .filter(|&t| m.on_send(Timestamp::from_millis(t), 100_000))
            .collect();
        // Congested at 0 → first mark at 100; next += 100/√2 = 70.71 → 171;
        // then += 100/√3 = 57.74 → 228.45 → 229; then += 50 → 279.
        assert_eq!(marks, [100, 171, 229, 279]);
        assert!(!m.on_send(Timestamp::from_millis(301), 10));
        assert!(!m.on_send(Timestamp::from_millis(302), 100_000));
    }

    #[test]
    fn marks_shift_share_to_other_faces() {
        let mut s = PconSplit::default();
        let mut rng = StdRng::seed_from_u64(1);
        let c = s.choose(&[7, 8, 9], &mut rng).unwrap();
        assert_eq!(c.face, 7);
        assert_eq!(s.percentage(7), Some(1.0));
        s.on_marked_data(Timestamp::ZERO, 7);
        assert!((s.percentage(7).unwrap() - 0.98).abs() < 1e-12);
        assert!((s.percentage(8).unwrap() - 0.01).abs() < 1e-12);
        s.on_expiry(7);
        assert!((s.percentage(7).unwrap() - 0.96).abs() < 1e-12);
        s.on_marked_nack(Timestamp::from_millis(0), 7);
        let after_first = s.percentage(7).unwrap();
        s.on_marked_nack(Timestamp::from_millis(50), 7); // within 110 ms: ignored
        assert_eq!(s.percentage(7).unwrap(), after_first);
    }

    #[test]
    fn spaced_mark_updates_move_the_split_once_per_spacing() {
        let mut s = PconSplit::new(PconConfig {
            mark_update_spacing: Duration::from_millis(110),
            ..PconConfig::default()
        });
        let mut rng = StdRng::seed_from_u64(1);
        s.choose(&[7, 8], &mut rng).unwrap();
        for ms in [0, 10, 50, 109] {
            s.on_marked_data(Timestamp::from_millis(ms), 7);
        }
        assert!((s.percentage(7).unwrap() - 0.98).abs() < 1e-12);
        s.on_marked_data(Timestamp::from_millis(110), 7);
        assert!((s.percentage(7).unwrap() - 0.98 * 0.98).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn shares_stay_a_distribution(ops in proptest::collection::vec((0u8..3, 0u64..4), 1..300), seed: u64) {
            let mut s = PconSplit::new(PconConfig { change_per_mark: 0.1, ..PconConfig::default() });
            let mut rng = StdRng::seed_from_u64(seed);
            let cands = [0u64, 1, 2, 3];
            for (op, f) in ops {
                match op {
                    0 => { let c = s.choose(&cands, &mut rng).unwrap(); prop_assert!(cands.contains(&c.face)); }
                    1 => s.on_marked_data(Timestamp::ZERO, f),
                    _ => s.on_expiry(f),
                }
                let sum: f64 = cands.iter().filter_map(|&f| s.percentage(f)).sum();
                prop_assert!((sum - 1.0).abs() < 1e-9 || sum == 0.0);
                prop_assert!(cands.iter().filter_map(|&f| s.percentage(f)).all(|p| p >= 0.0));
            }
        }
    }
}
