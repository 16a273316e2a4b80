//! WinCM consumer window (Algorithm 2, cleaned as docs/algorithms.md §5.2).
//!
//! * marked Data: `numMarked += 1`, `normData = 0`; on the first mark of an
//!   episode `prevMax = bicMax`, `bicMax = cwnd` and `ssthresh = cwnd/2`
//!   (a congestion episode ends slow start, Reno's rule; docs/algorithms.md
//!   §5.2); then `cwnd = max(cwnd − β, cwnd_min)`, `bicMin = cwnd`, and BIC
//!   fast convergence `bicMax = (bicMax + bicMin)/2` when `bicMax < prevMax`;
//! * unmarked Data in the congestion state: `cwnd += 1/cwnd`; after n = 8
//!   consecutive ones the state ends and BIC resumes towards
//!   `(bicMax + bicMin)/2`;
//! * unmarked Data otherwise: BIC increase;
//! * timeout or congestion Nack: BIC decrease, at most once per RTT;
//! * optional (`hold_after_cut`, off in both profiles): in the
//!   congestion state, Data whose Interest left before the last cut add
//!   nothing (W15 in docs/deviations.md);
//! * tuned (`once_per_window`): a mark that would open a new episode is
//!   dropped when its Interest left before the last episode began. Each
//!   episode of the AQM marks about a queue's worth of Data; on a path
//!   whose round trip outlasts the AQM's next detection, the next episode
//!   marks Data the last cuts have not reached yet. Envelope grid: 43 → 50
//!   of 108 points (one 8 KB flow on 10 Mbit/s at 150 ms: 89.1 → 99.7 %);
//! * tuned (`queue_growth_target`): while the smoothed RTT shows the AQM's
//!   5 ms of queue, BIC's growth adds at most (cwnd + 1)·target per
//!   minimum RTT ([`crate::growth_limit::QueueGrowthLimit`]; W16 in
//!   docs/deviations.md, envelope grid 66 → 71);
//! * tuned (`growth_limit_in_congestion`): while the RTT shows the same
//!   target of queue, the congestion state adds `target/queue` Interests
//!   per round trip instead of one, the same for every flow behind the
//!   queue, unless the window is below what the path delivers per minimum
//!   RTT ([`crate::growth_limit::QueueGrowthLimit::additive_step`]; W16);
//! * tuned (`bandwidth_floor`): a mark's cut stops at what the path
//!   delivered per minimum RTT (W17, PCON's P9). With the last two,
//!   envelope grid 71 → 90.
//!
//! Deviation: β defaults to 1.5, not the paper's 4 (UIW's d is 1.1, see
//! `forwarding`). Multi-congestion marking marks about one queue's worth
//! of Data per episode (the paper: "the amount of marked packets equals to
//! the excessive data"), so an episode takes β × queue off the window. The
//! queue at detection (sojourn above Target for a whole 100 ms Interval
//! while BIC keeps growing) is often as large as the BDP on short paths,
//! and β = 4 then empties the pipe at every episode. Smaller β fills two
//! paths better but makes competing flows converge more slowly (the cut is
//! proportional to a flow's share of the marks, so β sets how fast shares
//! equalise). Measured in virtual time, one consumer on the two-path
//! 10 Mbit/s diamond, d = 1.1, 6 seeds each:
//!
//! | Data, RTT | β = 4 | β = 2 | β = 1.5 | β = 1.1 |
//! |---|---|---|---|---|
//! | 4000 B, 20 ms | 16.2–17.5 | 19.1–19.5 | 19.6–19.9 | 19.8–20.0 |
//! | 8000 B, 14 ms | 15.7–16.8 | 16.0–16.5 | 18.0–18.6 | 19.4–19.7 |
//!
//! On the testbed dumbbell (3 flows, 8000-byte Data) β = 1.1 gave Jain
//! 0.839, 0.962, 0.966 in three runs, β = 1.5 0.997 in one; 1.5 is the
//! compromise, and still above 1 as the paper requires.

use super::bic::{Bic, BicConfig};
use crate::growth_limit::limited;
use crate::law::DataFeedback;
use crate::rtt::{RttConfig, RttEstimator};
use crate::time::{Duration, Timestamp};
use crate::window::{window_consumer_law, WindowCore, WindowLaw, WindowPacing};

/// WinCM consumer parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct WincmConsumerConfig {
    /// Initial window, also the floor (ndnSIM ConsumerWindow: 1).
    pub init_cwnd: f64,
    /// Ceiling of the window.
    pub max_window: f64,
    /// Ceiling that follows the path: at most `max(floor, 2 × measured
    /// bandwidth-delay product)` Interests, below `max_window` (`None`:
    /// `max_window` alone; [`crate::window`]'s `PathBdp`).
    pub path_window_floor: Option<f64>,
    /// Additive decrease per marked Data (must be > 1; paper 4, default
    /// 1.5: see the module doc).
    pub beta: f64,
    /// Consecutive unmarked Data that end the congestion state (paper: 8).
    pub n_normal: u32,
    /// BIC growth parameters.
    pub bic: BicConfig,
    /// Let every timeout decrease (no once-per-RTT limit).
    pub disable_cwa: bool,
    /// RTO estimator parameters.
    pub rtt: RttConfig,
    /// The first mark of an episode sets ssthresh to half the window it
    /// found (Reno's rule, docs/algorithms.md §5.2) [D]; Algorithm 2 sets
    /// it only on timeouts and Nacks.
    pub mark_ends_slow_start: bool,
    /// A mark that would open a new episode is ignored when its Interest
    /// left before the last episode began: it reports the queue the last
    /// episode's cuts already answer (ECN's once-per-window response, RFC
    /// 3168 §6.1.2) [D]. Algorithm 2 opens an episode on every such mark.
    pub once_per_window: bool,
    /// In the congestion state, an unmarked Data whose Interest left
    /// before the last cut adds nothing: it reports the path the cut
    /// already answered (TCP's CWR state, RFC 3168 §6.1.2) [D].
    /// Algorithm 2 adds 1/cwnd for every unmarked Data there, so a window
    /// cut to its floor of one takes back an Interest for each Data still
    /// queued from before the cut, most of the cut within one round trip.
    /// Off in both profiles (W15 in docs/deviations.md, measured and not
    /// taken): the envelope grid's WinCM points 66 → 71, but on the
    /// namespace testbed real runs lost 2-6 points of utilisation that
    /// virtual time did not show (agreeing points 14 → 10), and ccc_fig1
    /// 99.7 → 96.7 % on namespaces; `icncat --wincm-hold-after-cut true`
    /// for single-path links whose bandwidth-delay product is a few Data.
    pub hold_after_cut: bool,
    /// Spread the window's Interests over the RTT
    /// ([`crate::window::WindowPacing`]). Off in both profiles, as
    /// Algorithm 2 sends: measured with the tuned profile and not taken
    /// (docs/deviations.md, W10: envelope wincm 50 → 48, none in).
    pub pacing: Option<WindowPacing>,
    /// While the RTT shows a queue of at least this marking target, BIC's
    /// growth outside slow start adds at most `(cwnd + 1)·target /
    /// min_rtt` Interests per round trip
    /// ([`crate::growth_limit::QueueGrowthLimit`]) [D]. Tuned: the AQM's
    /// 5 ms (W16 in docs/deviations.md: envelope grid 66 → 71, the
    /// scenario set unchanged); paper: `None`, BIC as Algorithm 2.
    pub queue_growth_target: Option<Duration>,
    /// While the RTT shows at least `queue_growth_target` of queue (or,
    /// when that is `None`, the AQM's 5 ms), the congestion state adds at
    /// most `target/queue` Interests per round trip instead of one, unless
    /// the window is below what the path delivers per minimum RTT
    /// ([`crate::growth_limit::QueueGrowthLimit::additive_step`]) [D].
    /// Tuned: on (W16 in docs/deviations.md, with `bandwidth_floor`);
    /// paper: off, 1/cwnd per unmarked Data as Algorithm 2.
    pub growth_limit_in_congestion: bool,
    /// A mark's cut never leaves the window below what the path delivered
    /// per minimum RTT over the last round trips, nor above the window it
    /// cuts (PCON's P9, TCP Westwood+'s bandwidth × min RTT) [D]. Tuned:
    /// on (W17 in docs/deviations.md); paper: off, `cwnd − β` whatever
    /// the path.
    pub bandwidth_floor: bool,
}

impl WincmConsumerConfig {
    /// Algorithm 2 with the paper's constants: β = 4, ssthresh untouched
    /// by marks.
    pub fn paper() -> Self {
        WincmConsumerConfig {
            beta: 4.0,
            bic: BicConfig::paper(),
            mark_ends_slow_start: false,
            once_per_window: false,
            hold_after_cut: false,
            pacing: None,
            queue_growth_target: None,
            growth_limit_in_congestion: false,
            bandwidth_floor: false,
            ..WincmConsumerConfig::default()
        }
    }

    /// The configuration of `profile` (tuned is the default).
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::default(),
        }
    }
}

impl Default for WincmConsumerConfig {
    fn default() -> Self {
        WincmConsumerConfig {
            init_cwnd: 1.0,
            max_window: 100_000.0,
            path_window_floor: None,
            beta: 1.5,
            n_normal: 8,
            bic: BicConfig::default(),
            disable_cwa: false,
            rtt: RttConfig::default(),
            mark_ends_slow_start: true,
            once_per_window: true,
            hold_after_cut: false,
            pacing: None,
            queue_growth_target: Some(crate::wincm::MultiMarkConfig::default().target),
            growth_limit_in_congestion: true,
            bandwidth_floor: true,
        }
    }
}

/// The WinCM consumer window law.
#[derive(Debug, Clone)]
pub struct WincmConsumer {
    cfg: WincmConsumerConfig,
    bic: Bic,
    prev_max: f64,
    num_marked: u32,
    norm_data: u32,
    /// When the last episode's first mark arrived.
    episode_start: Option<Timestamp>,
    /// When the window was last cut (a mark or a BIC decrease).
    last_cut: Option<Timestamp>,
    core: WindowCore,
}

impl WincmConsumer {
    /// Creates the law with `cwnd = init_cwnd`.
    pub fn new(cfg: WincmConsumerConfig) -> Self {
        let min = cfg.init_cwnd.max(1.0);
        let max = cfg.max_window.max(min);
        WincmConsumer {
            cfg: WincmConsumerConfig {
                init_cwnd: min,
                max_window: max,
                ..cfg
            },
            bic: Bic::new(cfg.bic, max),
            prev_max: max,
            num_marked: 0,
            norm_data: 0,
            episode_start: None,
            last_cut: None,
            core: WindowCore::new(min, cfg.disable_cwa, false, cfg.rtt)
                .with_pacing(cfg.pacing)
                .with_path_ceiling(cfg.path_window_floor)
                .with_growth_limit(
                    cfg.queue_growth_target.or(cfg
                        .growth_limit_in_congestion
                        .then(|| super::MultiMarkConfig::default().target)),
                ),
        }
    }

    /// Congestion window, Interests.
    pub fn cwnd(&self) -> f64 {
        self.core.cwnd
    }

    /// Marks counted in the current congestion episode (0 = normal state).
    pub fn num_marked(&self) -> u32 {
        self.num_marked
    }

    /// (bicMin, bicMax).
    pub fn bic_bounds(&self) -> (f64, f64) {
        (self.bic.min_win, self.bic.max_win)
    }

    /// RTT/RTO estimator fed by this law.
    pub fn rtt(&self) -> &RttEstimator {
        &self.core.rtt
    }

    fn on_mark(&mut self, now: Timestamp) {
        self.num_marked = self.num_marked.saturating_add(1);
        self.norm_data = 0;
        if self.num_marked == 1 {
            self.prev_max = self.bic.max_win;
            self.bic.max_win = self.core.cwnd;
            // A congestion episode ends slow start, as in every window
            // law: below BIC's low window growth is Reno's, doubling per
            // RTT while cwnd < ssthresh, and Algorithm 2 never sets
            // ssthresh on a mark. Reno's rule: half the window the
            // episode found, whatever the marks then take off.
            if self.cfg.mark_ends_slow_start {
                self.bic.ssthresh = self.core.cwnd * self.bic.cfg.reno_beta;
            }
        }
        let before = self.core.cwnd;
        self.core.cwnd = (before - self.cfg.beta).max(self.cfg.init_cwnd);
        if self.cfg.bandwidth_floor {
            // The bare product: over the target too (PCON's P9 since
            // session 40) left the grid at 91, 2 in and 2 out, with queues
            // up a Data at several points (docs/deviations.md, section P9
            // over the target).
            self.core.cwnd = self
                .core
                .floored_at_product(now, self.core.cwnd, before, false);
        }
        self.bic.min_win = self.core.cwnd;
        if self.num_marked == 1 && self.bic.max_win < self.prev_max {
            self.bic.max_win = (self.bic.max_win + self.bic.min_win) / 2.0;
        }
        self.bic.retarget();
    }

    fn clamp(&mut self) {
        self.core.clamp(self.cfg.init_cwnd, self.cfg.max_window);
    }

    /// Whether `hold_after_cut` keeps this unmarked Data from growing the
    /// window: its Interest left before the last cut.
    fn held(&self, now: Timestamp, fb: &DataFeedback) -> bool {
        self.cfg.hold_after_cut && fb.sent_before(now, self.last_cut)
    }
}

impl Default for WincmConsumer {
    fn default() -> Self {
        WincmConsumer::new(WincmConsumerConfig::default())
    }
}

impl WindowLaw for WincmConsumer {
    fn in_slow_start(&self) -> bool {
        self.core.cwnd < self.bic.ssthresh
    }

    /// BIC growth (normal state).
    fn increase(&mut self, _now: Timestamp) {
        let cap = self
            .cfg
            .queue_growth_target
            .and_then(|_| self.core.growth_cap());
        self.bic.increase(&mut self.core.cwnd, cap);
        self.clamp();
    }

    /// BIC multiplicative decrease (timeouts and congestion Nacks only).
    fn decrease(&mut self, now: Timestamp) {
        self.last_cut = Some(now);
        self.bic.decrease(&mut self.core.cwnd);
        self.clamp();
    }

    /// Marks are not gated: each one subtracts β (`on_mark`).
    fn data(&mut self, now: Timestamp, fb: &DataFeedback) {
        self.core.record_data(now, fb);
        if fb.congestion_mark > 0 {
            if self.num_marked == 0 {
                let stale = self.cfg.once_per_window && fb.sent_before(now, self.episode_start);
                if stale {
                    return;
                }
                self.episode_start = Some(now);
            }
            self.last_cut = Some(now);
            self.on_mark(now);
            self.clamp();
            return;
        }
        if self.num_marked > 0 {
            self.norm_data += 1;
            if !self.held(now, fb) {
                let step = 1.0 / self.core.cwnd;
                let cap = self
                    .cfg
                    .growth_limit_in_congestion
                    .then(|| self.core.congestion_growth_cap(now))
                    .flatten();
                self.core.cwnd += limited(step, cap);
            }
            if self.norm_data >= self.cfg.n_normal {
                self.norm_data = 0;
                self.num_marked = 0;
                self.bic.retarget();
            }
        } else {
            self.increase(now);
            return;
        }
        self.clamp();
    }
}

window_consumer_law!(WincmConsumer);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::{ConsumerLaw, NackFeedback};
    use crate::time::Duration;
    use proptest::prelude::*;

    fn data(mark: u64) -> DataFeedback {
        DataFeedback {
            rtt: Some(Duration::from_millis(10)),
            congestion_mark: mark,
            ..DataFeedback::default()
        }
    }

    /// Tuned: a mark ends slow start (Reno's rule); the paper's Algorithm
    /// 2 leaves ssthresh alone, so after the episode a small window doubles
    /// per RTT again.
    #[test]
    fn a_mark_ends_slow_start_only_in_the_tuned_profile() {
        let t = Timestamp::from_millis(1);
        let after_episode = |cfg: WincmConsumerConfig| {
            let mut c = WincmConsumer::new(cfg);
            for _ in 0..7 {
                c.on_data(t, &data(0)); // slow start: 1 → 8
            }
            c.on_data(t, &data(1)); // 8 − β
            let w = c.cwnd();
            c.on_data(t, &data(0));
            c.on_data(t, &data(0));
            for _ in 0..8 {
                c.on_data(t, &data(0)); // leave the episode
            }
            let w_before = c.cwnd();
            c.on_data(t, &data(0));
            (w, c.cwnd() - w_before)
        };
        let (w_tuned, step_tuned) = after_episode(WincmConsumerConfig::default());
        assert!((w_tuned - 6.5).abs() < 1e-12);
        assert!(step_tuned < 0.5, "congestion avoidance: {step_tuned}");
        let (w_paper, step_paper) = after_episode(WincmConsumerConfig::paper());
        assert!((w_paper - 4.0).abs() < 1e-12);
        assert_eq!(step_paper, 1.0, "slow start again");
    }

    /// A Data with an RTT sample of `ms` and `mark` congestion marks.
    fn at(ms: u64, mark: u64) -> DataFeedback {
        DataFeedback {
            rtt: Some(Duration::from_millis(ms)),
            congestion_mark: mark,
            ..DataFeedback::default()
        }
    }

    /// W16, tuned: after an episode, BIC's growth per unmarked Data is
    /// at most 5/200 · (1 + 1/cwnd) while the RTT shows the 5 ms target
    /// of queue, and BIC's own step while it does not; the paper's
    /// Algorithm 2 takes BIC's step either way.
    #[test]
    fn bic_growth_is_limited_while_a_queue_shows_in_the_tuned_profile() {
        let t = Timestamp::from_millis(1);
        // One BIC step after an episode, with later RTT samples of `ms`.
        let bic_step = |cfg: WincmConsumerConfig, ms: u64| {
            let mut c = WincmConsumer::new(cfg);
            for _ in 0..31 {
                c.on_data(t, &at(200, 0)); // slow start to 32; min RTT 200 ms
            }
            for _ in 0..10 {
                c.on_data(t, &at(200, 1)); // the episode: 32 − 10·β
            }
            for _ in 0..8 {
                c.on_data(t, &at(200, 0)); // its end: BIC resumes
            }
            for _ in 0..40 {
                c.on_data(t, &at(ms, 0)); // srtt settles at `ms`
            }
            let w = c.cwnd();
            c.on_data(t, &at(ms, 0));
            (w, c.cwnd() - w)
        };
        let tuned = WincmConsumerConfig::default();
        let (w, queued) = bic_step(tuned, 210);
        let cap = 0.005 / 0.200 * (1.0 + 1.0 / w);
        assert!(
            queued > 0.0 && queued <= cap + 1e-12,
            "{queued} against {cap}"
        );
        let (_, free) = bic_step(tuned, 200);
        assert!(free > cap, "no queue shows: BIC's step {free}");
        let paper = WincmConsumerConfig {
            beta: 1.5,
            ..WincmConsumerConfig::paper()
        };
        let (_, paper_step) = bic_step(paper, 210);
        assert!(paper_step > cap, "Algorithm 2: {paper_step}");
        // The congestion state's key alone leaves BIC's growth alone.
        let congestion_only = WincmConsumerConfig {
            queue_growth_target: None,
            growth_limit_in_congestion: true,
            ..tuned
        };
        let (_, bic_free) = bic_step(congestion_only, 210);
        assert!(bic_free > cap, "BIC unlimited: {bic_free}");
    }

    /// `growth_limit_in_congestion` (W16, tuned): in the congestion state
    /// an unmarked Data adds 1/cwnd while the RTT shows no queue, and
    /// `target/queue/cwnd` once it shows the 5 ms target (`queue_growth_target`'s,
    /// or the AQM's when that is `None`); without the key (the paper
    /// profile) 1/cwnd.
    #[test]
    fn congestion_state_growth_is_limited_with_the_key() {
        let t = Timestamp::from_millis(1);
        let step = |cfg: WincmConsumerConfig, rtt_ms: u64| {
            let mut c = WincmConsumer::new(cfg);
            c.on_data(t, &at(50, 0)); // slow start 1 → 2; min RTT 50 ms
            c.on_data(t, &at(50, 1)); // 2 − β: the floor of one
            assert_eq!(c.cwnd(), 1.0);
            c.on_data(t, &at(rtt_ms, 0));
            c.cwnd() - 1.0
        };
        let tuned = WincmConsumerConfig::default();
        assert!(tuned.growth_limit_in_congestion);
        assert!((step(tuned, 50) - 1.0).abs() < 1e-12);
        // srtt 50 → 56.25 ms: 6.25 ms of queue, 5/6.25 of an Interest.
        assert!((step(tuned, 100) - 0.8).abs() < 1e-12);
        let congestion_only = WincmConsumerConfig {
            queue_growth_target: None,
            ..tuned
        };
        assert!((step(congestion_only, 100) - 0.8).abs() < 1e-12);
        let without = WincmConsumerConfig {
            growth_limit_in_congestion: false,
            ..tuned
        };
        assert!((step(without, 100) - 1.0).abs() < 1e-12);
        assert!((step(WincmConsumerConfig::paper(), 100) - 1.0).abs() < 1e-12);
    }

    /// `bandwidth_floor` (W17, tuned): a mark's cut stops at what the path
    /// delivered per minimum RTT, and never lifts the window it cuts; the
    /// paper profile cuts β whatever the path.
    #[test]
    fn a_cut_stops_at_the_measured_product_in_the_tuned_profile() {
        let ms = Timestamp::from_millis;
        // Seven unmarked Data `gap_ms` apart over a 100 ms path (slow
        // start 1 → 8), then a mark `late_ms` after the last.
        let run = |cfg: WincmConsumerConfig, gap_ms: u64, late_ms: u64| {
            let mut c = WincmConsumer::new(WincmConsumerConfig {
                path_window_floor: Some(512.0),
                ..cfg
            });
            for i in 1..=7 {
                c.on_data(ms(gap_ms * i), &at(100, 0));
            }
            let w = c.cwnd();
            let mark_at = ms(gap_ms * 7 + late_ms);
            c.on_data(mark_at, &at(100, 1));
            (w, c.cwnd(), c.core.measured_bdp(mark_at))
        };
        // Eight Data (the marked one too) in a 115 ms round: a product of
        // 6.96, between 8 − β and 8.
        let tuned = WincmConsumerConfig::default();
        let (w, cut, bdp) = run(tuned, 14, 31);
        let bdp = bdp.expect("measured");
        assert_eq!(w, 8.0);
        assert!(w - 1.5 < bdp && bdp < w, "{bdp}");
        assert!((cut - bdp).abs() < 1e-9, "{w} → {cut}, product {bdp}");
        // Eight Data in 73 ms: a product of 11, above the window: no cut.
        let (w, cut, _) = run(tuned, 12, 1);
        assert_eq!(cut, w);
        let floorless = WincmConsumerConfig {
            bandwidth_floor: false,
            ..tuned
        };
        assert_eq!(run(floorless, 14, 31).1, 8.0 - 1.5);
        assert_eq!(run(WincmConsumerConfig::paper(), 14, 31).1, 8.0 - 4.0);
    }

    /// `hold_after_cut`: after a cut, unmarked Data whose Interests left
    /// before it add nothing in the congestion state; Data sent after it
    /// add 1/cwnd. Without it (both profiles) both add 1/cwnd.
    #[test]
    fn data_sent_before_a_cut_do_not_grow_the_window_with_hold_after_cut() {
        let at = Timestamp::from_millis;
        let fb = |mark: u64, rtt_ms: u64| DataFeedback {
            rtt: Some(Duration::from_millis(rtt_ms)),
            congestion_mark: mark,
            ..DataFeedback::default()
        };
        let run = |cfg: WincmConsumerConfig| {
            let mut c = WincmConsumer::new(WincmConsumerConfig { beta: 4.0, ..cfg });
            for i in 0..8 {
                c.on_data(at(10 * i), &fb(0, 10)); // slow start: 1 → 9
            }
            c.on_data(at(100), &fb(1, 10)); // 9 − 4 = 5, cut at 100 ms
            let cut = c.cwnd();
            // Three Data sent at 95 ms, before the cut.
            for t in [105, 106, 107] {
                c.on_data(at(t), &fb(0, t - 95));
            }
            let after_old = c.cwnd();
            // One sent at 101 ms, after it.
            c.on_data(at(111), &fb(0, 10));
            (cut, after_old, c.cwnd())
        };
        let (cut, old, new) = run(WincmConsumerConfig {
            hold_after_cut: true,
            ..WincmConsumerConfig::default()
        });
        assert_eq!(cut, 5.0);
        assert_eq!(old, cut, "held");
        assert!((new - (cut + 1.0 / cut)).abs() < 1e-12);
        let (cut, old, _) = run(WincmConsumerConfig::default());
        assert_eq!(cut, 5.0);
        let grown = cut + 1.0 / cut;
        let grown = grown + 1.0 / grown;
        assert!((old - (grown + 1.0 / grown)).abs() < 1e-12, "{old}");
    }

    /// Tuned: once an episode has ended, a mark on Data whose Interest
    /// left before that episode began opens no new one (the cuts already
    /// answer that queue); one on Data sent after it does. The paper
    /// profile cuts on both.
    #[test]
    fn a_mark_older_than_the_last_episode_opens_no_new_one_in_the_tuned_profile() {
        let rtt = Duration::from_millis(100);
        let at = |ms: u64| Timestamp::from_millis(ms);
        let fb = |mark: u64| DataFeedback {
            rtt: Some(rtt),
            congestion_mark: mark,
            ..DataFeedback::default()
        };
        let run = |cfg: WincmConsumerConfig| {
            let mut c = WincmConsumer::new(WincmConsumerConfig {
                init_cwnd: 1.0,
                ..cfg
            });
            for i in 0..20 {
                c.on_data(at(i), &fb(0));
            }
            c.on_data(at(1_000), &fb(1)); // the episode begins
            for i in 0..8 {
                c.on_data(at(1_001 + i), &fb(0)); // and ends
            }
            let w = c.cwnd();
            // Sent at 950 ms, before the episode began: stale.
            c.on_data(at(1_050), &fb(1));
            let after_stale = c.cwnd();
            // Sent at 1 020 ms, after it began: a new episode.
            c.on_data(at(1_120), &fb(1));
            (w, after_stale, c.cwnd(), c.cfg.beta)
        };
        let (w, stale, fresh, beta) = run(WincmConsumerConfig::default());
        assert_eq!(stale, w);
        assert!((fresh - (w - beta)).abs() < 1e-12);
        let (w, stale, _, beta) = run(WincmConsumerConfig::paper());
        assert!((stale - (w - beta)).abs() < 1e-12);
    }

    #[test]
    fn each_mark_subtracts_beta_and_eight_clean_data_end_the_episode() {
        let mut c = WincmConsumer::new(WincmConsumerConfig {
            beta: 4.0,
            ..Default::default()
        });
        let t = Timestamp::from_millis(1);
        for _ in 0..29 {
            c.on_data(t, &data(0));
        }
        // Reno-like +1 up to 14, then BIC +16/cwnd per Data.
        assert!(c.cwnd() > 14.0 && c.cwnd() < 30.0);
        let w0 = c.cwnd();
        c.on_data(t, &data(1));
        c.on_data(t, &data(1));
        c.on_data(t, &data(1));
        assert!((c.cwnd() - (w0 - 12.0)).abs() < 1e-12);
        assert_eq!(c.num_marked(), 3);
        // bicMax = cwnd at the first mark, then fast convergence since w0 < prevMax.
        let (bmin, bmax) = c.bic_bounds();
        assert!((bmin - (w0 - 12.0)).abs() < 1e-12);
        assert!((bmax - (w0 + (w0 - 4.0)) / 2.0).abs() < 1e-12);
        // Data sent after the cuts (RTT 10 ms): each adds 1/cwnd.
        let later = Timestamp::from_millis(30);
        for i in 0..7 {
            let before = c.cwnd();
            c.on_data(later, &data(0));
            assert!((c.cwnd() - (before + 1.0 / before)).abs() < 1e-12);
            assert_eq!(
                c.num_marked(),
                3,
                "still congested after {} clean Data",
                i + 1
            );
        }
        c.on_data(later, &data(0));
        assert_eq!(c.num_marked(), 0);
    }

    /// A marking episode ends slow start at half the window it found:
    /// with slow start left on, one flow at 4400-byte Data on 2 Mbit/s
    /// doubled from 5 to 15 Interests between episodes (p95 queue 196 ms
    /// in the envelope sweep, 71 ms with this rule).
    #[test]
    fn a_mark_ends_slow_start() {
        let mut c = WincmConsumer::default();
        let t = Timestamp::from_millis(1);
        for _ in 0..6 {
            c.on_data(t, &data(0));
        }
        assert_eq!(c.cwnd(), 7.0, "slow start before any mark");
        // Marked at 7: ssthresh 3.5, the window 5.5.
        c.on_data(t, &data(1));
        assert_eq!(c.cwnd(), 5.5);
        for _ in 0..8 {
            c.on_data(t, &data(0));
        }
        assert_eq!(c.num_marked(), 0, "episode over");
        // Above ssthresh: congestion avoidance, +1/cwnd per Data.
        let w = c.cwnd();
        c.on_data(t, &data(0));
        assert!(
            (c.cwnd() - (w + 1.0 / w)).abs() < 1e-12,
            "{w} -> {}",
            c.cwnd()
        );
        // Marks that take the window below ssthresh leave slow start to
        // bring it back there: a window of 1 does not crawl at +1 per RTT.
        let mut c = WincmConsumer::default();
        for _ in 0..9 {
            c.on_data(t, &data(0));
        }
        assert_eq!(c.cwnd(), 10.0);
        for _ in 0..6 {
            c.on_data(t, &data(1));
        }
        assert_eq!(c.cwnd(), 1.0);
        for _ in 0..8 {
            c.on_data(t, &data(0));
        }
        let w = c.cwnd();
        assert!(w < 5.0, "{w}");
        c.on_data(t, &data(0));
        assert_eq!(c.cwnd(), w + 1.0, "slow start below ssthresh 5");
    }

    #[test]
    fn window_never_drops_below_the_initial_window() {
        let mut c = WincmConsumer::default();
        for _ in 0..5 {
            c.on_data(Timestamp::ZERO, &data(1));
        }
        assert_eq!(c.cwnd(), 1.0);
    }

    #[test]
    fn timeout_applies_bic_multiplicative_decrease_once_per_rtt() {
        let mut c = WincmConsumer::default();
        for _ in 0..19 {
            c.on_data(Timestamp::from_millis(1), &data(0));
        }
        let w = c.cwnd();
        assert!(w >= 14.0);
        c.on_timeout(Timestamp::from_millis(20));
        assert!((c.cwnd() - 0.8 * w).abs() < 1e-12);
        c.on_timeout(Timestamp::from_millis(21));
        assert!((c.cwnd() - 0.8 * w).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn window_stays_within_bounds(ev in proptest::collection::vec((0u8..4, 0u64..50, 0u64..2), 1..500)) {
            let mut c = WincmConsumer::new(WincmConsumerConfig { max_window: 80.0, ..Default::default() });
            let mut now = 0;
            for (k, dt, m) in ev {
                now += dt;
                let t = Timestamp::from_millis(now);
                match k {
                    0 | 3 => c.on_data(t, &data(m)),
                    1 => c.on_timeout(t),
                    _ => c.on_nack(t, &NackFeedback { congestion: true, ..Default::default() }),
                }
                prop_assert!(c.cwnd().is_finite() && (1.0..=80.0).contains(&c.cwnd()));
            }
        }
    }
}
