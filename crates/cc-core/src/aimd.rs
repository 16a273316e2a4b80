//! AIMD consumer window, as ndn-tools' `ndnget` (`pipeline-interests-aimd`
//! on top of `pipeline-interests-adaptive`), the consumer half of PCON.
//!
//! Rules (docs/algorithms.md §6.2, ndn-tools `tools/get/`):
//! * unmarked Data: slow start `cwnd += ai_step` while `cwnd < ssthresh`,
//!   else congestion avoidance `cwnd += ai_step/⌊cwnd⌋`;
//! * marked Data (CongestionMark > 0, unless `ignore_marks`), timeout, or
//!   Nack with reason Congestion: `ssthresh = max(2, cwnd·md_coef)`
//!   (`mark_md_coef` instead on a mark when set),
//!   `cwnd = ssthresh` (or `init_cwnd` when `reset_cwnd_to_init`), at most
//!   once per RTT (conservative window adaptation, [`CwaGate`]); a marked
//!   Data never increases the window; a timeout also backs off the RTO;
//! * defaults: init_cwnd 2, ssthresh ∞, ai_step 1, md_coef 0.5.
//!
//! Proportional cut on marks ([`AimdConfig::proportional_mark_cut`], the
//! tuned PCON consumer; DCTCP, RFC 8257 §3.3-3.4): the fraction F of Data
//! marked in each round trip feeds α ← (1 − g)·α + g·F (g = 1/16, α from
//! 1), and a mark the gate lets through sets `ssthresh = cwnd·(1 − α/2)`.
//! A queue that step marking ([`crate::codel::CodelConfig::step_marking`])
//! marks for a whole round trip halves the window; one that only brushes
//! the target takes a few percent.
//!
//! Bandwidth floor ([`AimdConfig::bandwidth_floor`], the tuned PCON
//! consumer; TCP Westwood+'s bandwidth × min RTT): a decrease never leaves
//! the window below what the path delivered per minimum RTT in the last
//! round trips (the measurement of the path ceiling, [`crate::window`]),
//! nor above the window it cuts. A cut by a fixed or a proportional
//! factor is relative to a window whose size says how late the congestion
//! signal came back, not how large the path is: the cut that ended slow
//! start on one 1200-byte flow over 50 Mbit/s at 150 ms (751 Data of
//! product; the window had reached 1037 when its first loss was seen)
//! halved it to 519, from where Reno's one Interest per RTT stayed under
//! 640 for 20 s (80.5 % utilisation); with the floor 95.7 %. On shared
//! links each flow's delivery is its share, so the floors sum to the
//! product and a cut still drains the queue. With a growth target
//! ([`AimdConfig::queue_growth_target`], CoDel's 5 ms when tuned) the
//! product is taken over the minimum RTT plus that target, so real round
//! trips that run a little over the minimum still find the pipe full and
//! the floors together hold at most one target of queue (P9 in
//! docs/deviations.md, session 40).
//!
//! Deviations: ndnget gates decreases on segment numbers (`highData >
//! recPoint`, with `recPoint = highInterest` at the last decrease). The
//! [`crate::law::ConsumerLaw`] interface carries no segment for sent Interests, so the
//! gate uses send times instead (send time = now − RTT of each Data): "a Data
//! answering an Interest sent after the last decrease has arrived", which is
//! the same condition when segments are sent in increasing order. The window
//! is clamped to `[min_window, max_window]` (ndnget has no explicit bounds).

use crate::growth_limit::limited;
use crate::law::DataFeedback;
use crate::rtt::{RttConfig, RttEstimator};
use crate::time::{Duration, Timestamp};
use crate::window::{window_consumer_law, WindowCore, WindowLaw};

pub use crate::window::{CwaGate, WindowPacing, WindowStats};

/// ndnget's MIN_SSTHRESH.
pub const MIN_SSTHRESH: f64 = 2.0;

/// AIMD parameters; defaults are ndnget's.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct AimdConfig {
    /// Initial window, Interests.
    pub init_cwnd: f64,
    /// Initial slow-start threshold (∞: slow start until the first decrease).
    pub init_ssthresh: f64,
    /// Additive increase per RTT.
    pub ai_step: f64,
    /// Multiplicative decrease factor.
    pub md_coef: f64,
    /// Multiplicative decrease factor on a congestion mark (`None`: as on a
    /// loss, `md_coef`, ndnget's rule). An AQM marks before any queue
    /// overflows, so a mark may call for a gentler cut than a loss (RFC
    /// 8511, Alternative Backoff with ECN: 0.8 for Reno); PCON uses that.
    pub mark_md_coef: Option<f64>,
    /// After a decrease, restart from `init_cwnd` instead of `ssthresh`.
    pub reset_cwnd_to_init: bool,
    /// Let every congestion signal decrease (no once-per-RTT limit).
    pub disable_cwa: bool,
    /// Treat marked Data as unmarked.
    pub ignore_marks: bool,
    /// Cut on a mark by `1 − α/2`, α the smoothed fraction of Data marked
    /// per round trip (module doc); `mark_md_coef` is then unused.
    pub proportional_mark_cut: bool,
    /// Least ssthresh a decrease leaves (ndnget's [`MIN_SSTHRESH`], 2).
    pub min_ssthresh: f64,
    /// A decrease leaves at least the path's measured bandwidth-delay
    /// product (needs `path_window_floor`, which measures it; module doc).
    /// ndnget: off.
    pub bandwidth_floor: bool,
    /// Lower bound of the window, Interests.
    pub min_window: f64,
    /// Upper bound of the window, Interests.
    pub max_window: f64,
    /// Ceiling that follows the path: at most `max(floor, 2 × measured
    /// bandwidth-delay product)` Interests, below `max_window` (`None`:
    /// `max_window` alone; [`crate::window`]'s `PathBdp`).
    pub path_window_floor: Option<f64>,
    /// While the RTT shows a queue of at least this marking target, limit
    /// congestion avoidance to [`crate::growth_limit::QueueGrowthLimit`]'s
    /// `(cwnd + 1)·target/min_rtt` per round trip (`None`: ndnget's
    /// growth; the tuned PCON consumer: CoDel's 5 ms).
    pub queue_growth_target: Option<Duration>,
    /// RTO estimator parameters.
    pub rtt: RttConfig,
    /// Spread the window's Interests over the RTT (`None`: unpaced, as
    /// ndnget; the tuned PCON consumer paces, [`crate::pcon::pcon_pacing`]).
    pub pacing: Option<WindowPacing>,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            init_cwnd: 2.0,
            init_ssthresh: f64::INFINITY,
            ai_step: 1.0,
            md_coef: 0.5,
            mark_md_coef: None,
            reset_cwnd_to_init: false,
            disable_cwa: false,
            ignore_marks: false,
            proportional_mark_cut: false,
            min_ssthresh: MIN_SSTHRESH,
            bandwidth_floor: false,
            min_window: 1.0,
            max_window: 1_000_000.0,
            path_window_floor: None,
            queue_growth_target: None,
            rtt: RttConfig::default(),
            pacing: None,
        }
    }
}

/// DCTCP's gain g of the marked-fraction average (RFC 8257 §4.2: 1/16).
pub const MARK_FRACTION_GAIN: f64 = 1.0 / 16.0;

/// The marked fraction of the Data of each round trip, smoothed (α).
#[derive(Debug, Clone, Copy)]
struct MarkedFraction {
    alpha: f64,
    /// When the round trip being counted began.
    round_start: Option<Timestamp>,
    marked: u32,
    total: u32,
}

impl MarkedFraction {
    fn new() -> Self {
        MarkedFraction {
            alpha: 1.0,
            round_start: None,
            marked: 0,
            total: 0,
        }
    }

    /// Counts a Data; a Data whose Interest left after the round began
    /// closes the round and folds its fraction into α.
    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        self.total = self.total.saturating_add(1);
        if fb.congestion_mark > 0 {
            self.marked = self.marked.saturating_add(1);
        }
        let Some(start) = self.round_start else {
            self.round_start = Some(now);
            return;
        };
        if fb.sent_at(now).is_some_and(|sent| sent >= start) {
            let f = f64::from(self.marked) / f64::from(self.total.max(1));
            self.alpha += MARK_FRACTION_GAIN * (f - self.alpha);
            self.round_start = Some(now);
            self.marked = 0;
            self.total = 0;
        }
    }
}

/// ndnget's AIMD window.
#[derive(Debug, Clone)]
pub struct Aimd {
    cfg: AimdConfig,
    ssthresh: f64,
    core: WindowCore,
    marked: MarkedFraction,
}

impl Aimd {
    /// Creates the law with `cwnd = init_cwnd`.
    pub fn new(cfg: AimdConfig) -> Self {
        let mut a = Aimd {
            cfg,
            ssthresh: cfg.init_ssthresh,
            core: WindowCore::new(cfg.init_cwnd, cfg.disable_cwa, cfg.ignore_marks, cfg.rtt)
                .with_pacing(cfg.pacing)
                .with_path_ceiling(cfg.path_window_floor)
                .with_growth_limit(cfg.queue_growth_target),
            marked: MarkedFraction::new(),
        };
        a.clamp();
        a
    }

    /// Congestion window, Interests.
    pub fn cwnd(&self) -> f64 {
        self.core.cwnd
    }

    /// Slow-start threshold.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// RTT/RTO estimator fed by this law (the pipeline's retransmission timer).
    pub fn rtt(&self) -> &RttEstimator {
        &self.core.rtt
    }

    /// Counters.
    pub fn stats(&self) -> WindowStats {
        self.core.stats
    }

    /// The smoothed fraction of Data marked per round trip (α; tracked
    /// always, used when `proportional_mark_cut` is set).
    pub fn marked_fraction(&self) -> f64 {
        self.marked.alpha
    }

    fn clamp(&mut self) {
        self.core.clamp(self.cfg.min_window, self.cfg.max_window);
    }
}

impl WindowLaw for Aimd {
    fn increase(&mut self, _now: Timestamp) {
        if self.core.cwnd < self.ssthresh {
            self.core.cwnd += self.cfg.ai_step;
        } else {
            let step = self.cfg.ai_step / libm::floor(self.core.cwnd).max(1.0);
            self.core.cwnd += limited(step, self.core.growth_cap());
        }
        self.clamp();
    }

    fn in_slow_start(&self) -> bool {
        self.core.cwnd < self.ssthresh
    }

    fn decrease(&mut self, now: Timestamp) {
        self.decrease_by(now, self.cfg.md_coef);
    }

    fn decrease_on_mark(&mut self, now: Timestamp) {
        let coef = if self.cfg.proportional_mark_cut {
            1.0 - self.marked.alpha / 2.0
        } else {
            self.cfg.mark_md_coef.unwrap_or(self.cfg.md_coef)
        };
        self.decrease_by(now, coef);
    }

    fn data(&mut self, now: Timestamp, fb: &DataFeedback) {
        if !self.core.ignores_marks() {
            self.marked.on_data(now, fb);
        }
        self.apply_data(now, fb);
    }
}

impl Aimd {
    fn decrease_by(&mut self, now: Timestamp, coef: f64) {
        let before = self.core.cwnd;
        self.ssthresh = (before * coef).max(self.cfg.min_ssthresh);
        if self.cfg.bandwidth_floor {
            self.ssthresh = self
                .core
                .floored_at_product(now, self.ssthresh, before, true);
        }
        self.core.cwnd = if self.cfg.reset_cwnd_to_init {
            self.cfg.init_cwnd
        } else {
            self.ssthresh
        };
        self.clamp();
    }
}

window_consumer_law!(Aimd);

impl Default for Aimd {
    fn default() -> Self {
        Aimd::new(AimdConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::{ConsumerLaw, SendLimit};
    use crate::time::Duration;
    use crate::window::test_events::{apply, data};
    use proptest::prelude::*;

    /// A path that delivers 100 Data/s at a 100 ms round trip (10 Data of
    /// bandwidth-delay product): with a path ceiling over a floor of 4 the
    /// slow start stops at twice the product; without, it runs to the
    /// law's own ceiling.
    #[test]
    fn a_path_ceiling_holds_the_window_at_twice_the_measured_product() {
        let run = |floor: Option<f64>| {
            let mut a = Aimd::new(AimdConfig {
                max_window: 1_000.0,
                path_window_floor: floor,
                ..AimdConfig::default()
            });
            for i in 1..=3_000u64 {
                a.on_interest_sent(Timestamp::from_millis(10 * i), false);
                a.on_data(Timestamp::from_millis(10 * i), &data(100, 0));
            }
            a.cwnd()
        };
        let held = run(Some(4.0));
        assert!((19.0..=21.0).contains(&held), "held at {held}");
        assert_eq!(run(None), 1_000.0);
        // The floor is a floor: a path smaller than half of it keeps it.
        let mut a = Aimd::new(AimdConfig {
            max_window: 1_000.0,
            path_window_floor: Some(512.0),
            ..AimdConfig::default()
        });
        for i in 1..=3_000u64 {
            a.on_data(Timestamp::from_millis(10 * i), &data(100, 0));
        }
        assert_eq!(a.cwnd(), 512.0);
    }

    /// (window before, window after) a loss at 30 s on a path that
    /// delivers 100 Data/s at a 100 ms round trip (10 Data of product),
    /// the window held at 20 by the path ceiling.
    fn cut_after_a_steady_path(cfg: AimdConfig) -> (f64, f64) {
        let mut a = Aimd::new(AimdConfig {
            max_window: 1_000.0,
            path_window_floor: Some(4.0),
            ..cfg
        });
        for i in 1..=3_000u64 {
            a.on_interest_sent(Timestamp::from_millis(10 * i), false);
            a.on_data(Timestamp::from_millis(10 * i), &data(100, 0));
        }
        let before = a.cwnd();
        a.on_timeout(Timestamp::from_millis(30_005));
        (before, a.cwnd())
    }

    /// A loss that would cut the window to 4 (`md_coef` 0.2) leaves it at
    /// the measured 10 with the bandwidth floor; a cut that stays above
    /// the product is as before.
    #[test]
    fn the_bandwidth_floor_keeps_a_cut_at_the_measured_product() {
        let run = |floor: bool, md_coef: f64| {
            cut_after_a_steady_path(AimdConfig {
                bandwidth_floor: floor,
                md_coef,
                ..AimdConfig::default()
            })
        };
        let (before, cut) = run(false, 0.2);
        assert!((19.0..=21.0).contains(&before), "held at {before}");
        assert!((cut - before * 0.2).abs() < 1e-9, "plain cut {cut}");
        let (_, floored) = run(true, 0.2);
        assert!((9.5..=10.5).contains(&floored), "floored at {floored}");
        // A cut that stays above the product is unchanged.
        let (before, mild) = run(true, 0.8);
        assert!((mild - before * 0.8).abs() < 1e-9, "mild cut {mild}");
    }

    /// With a growth target the floor is the product over the minimum RTT
    /// plus the target: the same path (10 Data per 100 ms) and a 25 ms
    /// target floor the cut at 12.5, never above the window being cut.
    #[test]
    fn the_bandwidth_floor_counts_the_growth_target() {
        let run = |target_ms: Option<u64>, md_coef: f64| {
            cut_after_a_steady_path(AimdConfig {
                bandwidth_floor: true,
                queue_growth_target: target_ms.map(Duration::from_millis),
                md_coef,
                ..AimdConfig::default()
            })
        };
        let (_, bare) = run(None, 0.2);
        assert!((9.5..=10.5).contains(&bare), "bare product {bare}");
        let (before, over) = run(Some(25), 0.2);
        assert!(
            (11.9..=13.1).contains(&over) && over < before,
            "over target {over}"
        );
        // A target as long as the path: the floor stops at the window.
        let (before, capped) = run(Some(1_000), 0.2);
        assert!(
            (capped - before).abs() < 1e-9,
            "capped {capped} of {before}"
        );
    }

    #[test]
    fn a_paced_window_paces_at_twice_its_rate_in_slow_start_and_1_2_after() {
        let mut a = Aimd::new(AimdConfig {
            pacing: Some(WindowPacing::default()),
            ..AimdConfig::default()
        });
        assert_eq!(a.pace_ips(), None, "no RTT yet");
        a.on_interest_sent(Timestamp::ZERO, false);
        a.on_data(Timestamp::from_millis(100), &data(100, 0));
        // Slow start: cwnd 3 over 100 ms, × 2.
        assert!((a.pace_ips().unwrap() - 60.0).abs() < 1e-6);
        a.on_timeout(Timestamp::from_millis(150));
        // Halved to ssthresh 2 (ndnget's floor): congestion avoidance, × 1.2.
        assert_eq!(a.cwnd(), 2.0);
        let srtt = 0.1;
        assert!((a.pace_ips().unwrap() - 1.2 * 2.0 / srtt).abs() < 1e-6);
        // ndnget's window (the default) does not pace.
        assert_eq!(Aimd::default().pace_ips(), None);
    }

    #[test]
    fn slow_start_then_halving_then_congestion_avoidance() {
        let mut a = Aimd::default();
        let mut t = 0;
        for _ in 0..8 {
            t += 1;
            a.on_data(Timestamp::from_millis(t), &data(1, 0));
        }
        assert_eq!(a.cwnd(), 10.0); // 2 + 8 × 1
        a.on_data(Timestamp::from_millis(10), &data(1, 1));
        assert_eq!((a.cwnd(), a.ssthresh()), (5.0, 5.0));
        // Congestion avoidance: + 1/⌊cwnd⌋ per Data.
        a.on_data(Timestamp::from_millis(11), &data(1, 0));
        assert!((a.cwnd() - 5.2).abs() < 1e-12);
        for _ in 0..4 {
            a.on_data(Timestamp::from_millis(12), &data(1, 0));
        }
        assert!((a.cwnd() - 6.0).abs() < 1e-12);
        a.on_data(Timestamp::from_millis(13), &data(1, 0));
        assert!((a.cwnd() - (6.0 + 1.0 / 6.0)).abs() < 1e-12);
    }

    #[test]
    fn at_most_one_decrease_per_rtt() {
        let mut a = Aimd::default();
        for i in 0..18 {
            a.on_data(Timestamp::from_millis(i), &data(100, 0));
        }
        assert_eq!(a.cwnd(), 20.0);
        a.on_data(Timestamp::from_millis(200), &data(100, 1)); // → 10
                                                               // Marks on Data sent before the decrease (sent at 150 ms < 200 ms) are ignored.
        a.on_data(Timestamp::from_millis(250), &data(100, 1));
        a.on_timeout(Timestamp::from_millis(260));
        assert_eq!(a.cwnd(), 10.0);
        assert_eq!(a.stats().marks, 2);
        // Data sent at 205 ms (after the decrease) re-opens the gate.
        a.on_data(Timestamp::from_millis(305), &data(100, 1));
        assert_eq!(a.cwnd(), 5.0);
        a.on_timeout(Timestamp::from_millis(306));
        assert_eq!(a.cwnd(), 5.0);
    }

    #[test]
    fn a_mark_cuts_by_mark_md_coef_and_a_loss_by_md_coef() {
        let mut a = Aimd::new(AimdConfig {
            mark_md_coef: Some(0.8),
            ..AimdConfig::default()
        });
        for i in 0..18 {
            a.on_data(Timestamp::from_millis(i), &data(100, 0));
        }
        assert_eq!(a.cwnd(), 20.0);
        a.on_data(Timestamp::from_millis(200), &data(100, 1));
        assert!((a.cwnd() - 16.0).abs() < 1e-9, "{}", a.cwnd());
        // A timeout an RTT later still halves.
        a.on_data(Timestamp::from_millis(305), &data(100, 0));
        a.on_timeout(Timestamp::from_millis(306));
        assert!(
            (a.cwnd() - (16.0 + 1.0 / 16.0) * 0.5).abs() < 1e-9,
            "{}",
            a.cwnd()
        );
        // Unset, a mark halves like a loss (ndnget).
        let mut b = Aimd::default();
        for i in 0..18 {
            b.on_data(Timestamp::from_millis(i), &data(100, 0));
        }
        b.on_data(Timestamp::from_millis(200), &data(100, 1));
        assert_eq!(b.cwnd(), 10.0);
    }

    #[test]
    fn ignore_marks_increases_on_marked_data_and_min_ssthresh_holds() {
        let mut a = Aimd::new(AimdConfig {
            ignore_marks: true,
            ..AimdConfig::default()
        });
        a.on_data(Timestamp::from_millis(1), &data(1, 1));
        assert_eq!(a.cwnd(), 3.0);
        let mut b = Aimd::new(AimdConfig {
            disable_cwa: true,
            ..AimdConfig::default()
        });
        for i in 0..5 {
            b.on_timeout(Timestamp::from_millis(i));
        }
        assert_eq!((b.cwnd(), b.ssthresh()), (2.0, 2.0));
        assert!(b.rtt().rto() > Duration::from_secs(1));
    }

    /// The tuned PCON consumer past slow start: with no queue on the path
    /// it grows as ndnget (an Interest per round trip, 1/⌊cwnd⌋ per Data);
    /// once its RTT shows the 5 ms target of queue, a Data adds at most
    /// `target/min_rtt · (1 + 1/cwnd)` (here 0.1 · 1.5 at a window of 2).
    /// The paper's consumer grows as ndnget either way.
    #[test]
    fn tuned_growth_is_limited_while_the_rtt_shows_a_queue() {
        use crate::pcon::pcon_aimd;
        let grow = |cfg: AimdConfig, queued_ms: u64| {
            let mut a = Aimd::new(pcon_aimd(AimdConfig {
                init_cwnd: 2.0,
                init_ssthresh: 1.0,
                ..cfg
            }));
            let t = Timestamp::from_millis(1);
            a.on_data(t, &data(50, 0));
            let before = a.cwnd();
            a.on_data(t, &data(50 + queued_ms, 0));
            a.cwnd() - before
        };
        let tuned = AimdConfig::default();
        let paper = AimdConfig {
            mark_md_coef: Some(0.5),
            ..AimdConfig::default()
        };
        // The first Data takes the window 2 → 2.5; the second adds
        // 1/⌊2.5⌋ unless limited.
        let free = grow(tuned, 0);
        assert!((free - 0.5).abs() < 1e-9, "{free}");
        // A 100 ms sample moves srtt from 50 to 56.25 ms: a queue shows,
        // and the Data adds 5/50 · (1 + 1/2.5).
        let held = grow(tuned, 50);
        assert!((held - 0.1 * 1.4).abs() < 1e-9, "{held}");
        assert!((grow(paper, 50) - 0.5).abs() < 1e-9);
    }

    /// α follows the marked fraction round by round; the cut is α/2 and
    /// the floor one Interest.
    #[test]
    fn proportional_cut_follows_the_marked_fraction() {
        let mut a = Aimd::new(AimdConfig {
            proportional_mark_cut: true,
            min_ssthresh: 1.0,
            init_cwnd: 20.0,
            init_ssthresh: 20.0,
            ..AimdConfig::default()
        });
        // 40 round trips of 10 ms, one Data a millisecond, none marked:
        // α decays by 15/16 a round.
        for t in 0..400 {
            a.on_data(Timestamp::from_millis(t), &data(10, 0));
        }
        let alpha = a.marked_fraction();
        assert!(alpha < 0.1 && alpha > 0.05, "{alpha}");
        let w = a.cwnd();
        a.on_data(Timestamp::from_millis(400), &data(10, 1));
        assert!((a.cwnd() - w * (1.0 - alpha / 2.0)).abs() < 1e-9);
        // Every Data marked: α climbs towards 1, cuts deepen, and the
        // window ends at the floor of one Interest.
        for t in 401..2000 {
            a.on_data(Timestamp::from_millis(t), &data(10, 1));
        }
        assert!(a.marked_fraction() > 0.99);
        assert_eq!(a.cwnd(), 1.0);
        // The fixed factor applies when the cut is not proportional.
        let mut b = Aimd::new(AimdConfig {
            mark_md_coef: Some(0.8),
            init_cwnd: 20.0,
            init_ssthresh: 20.0,
            ..AimdConfig::default()
        });
        for t in 0..400 {
            b.on_data(Timestamp::from_millis(t), &data(10, 0));
        }
        let w = b.cwnd();
        b.on_data(Timestamp::from_millis(400), &data(10, 1));
        assert!((b.cwnd() - w * 0.8).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn window_stays_within_bounds(ev in proptest::collection::vec((0u8..4, 0u64..500, 0u64..3), 1..400)) {
            let cfg = AimdConfig { min_window: 1.0, max_window: 64.0, ..AimdConfig::default() };
            let mut a = Aimd::new(cfg);
            let mut now = 0;
            for (kind, dt, mark) in ev {
                now += dt;
                let t = Timestamp::from_millis(now);
                apply(&mut a, kind, t, dt % 300 + 1, mark);
                let SendLimit::Window { interests } = a.limit() else { unreachable!() };
                prop_assert!(interests.is_finite() && (1.0..=64.0).contains(&interests));
            }
        }
    }
}
