//! Plumbing shared by the consumer window laws ([`crate::aimd`],
//! [`crate::cubic`], [`crate::wincm`]): the once-per-RTT decrease gate, the
//! in-flight count that weights RTT samples, the RTO estimator, the window
//! bounds and the counters. Each law keeps only its own growth and decrease
//! rules.

use crate::growth_limit::QueueGrowthLimit;
use crate::law::{DataFeedback, NackFeedback, SendLimit};
use crate::rtt::{RttConfig, RttEstimator};
use crate::time::{Duration, Timestamp};

/// Conservative window adaptation: allows at most one decrease per RTT.
#[derive(Debug, Clone, Copy, Default)]
pub struct CwaGate {
    disabled: bool,
    last_decrease: Option<Timestamp>,
    newest_acked_send: Option<Timestamp>,
}

impl CwaGate {
    /// A gate; `disabled` lets every decrease through (ndnget `--no-cwa`).
    pub fn new(disabled: bool) -> Self {
        CwaGate {
            disabled,
            ..CwaGate::default()
        }
    }

    /// Records a Data whose Interest left at `sent`
    /// ([`DataFeedback::sent_at`]; `None` for retransmissions).
    pub fn on_data(&mut self, sent: Option<Timestamp>) {
        if let Some(sent) = sent {
            if self.newest_acked_send.is_none_or(|t| sent > t) {
                self.newest_acked_send = Some(sent);
            }
        }
    }

    /// Returns whether a decrease may happen now, and if so records it.
    pub fn try_decrease(&mut self, now: Timestamp) -> bool {
        let allowed = self.disabled
            || match (self.last_decrease, self.newest_acked_send) {
                (None, _) => true,
                (Some(last), Some(acked)) => acked > last,
                (Some(_), None) => false,
            };
        if allowed {
            self.last_decrease = Some(now);
        }
        allowed
    }

    /// Time of the last decrease the gate let through.
    pub fn last_decrease(&self) -> Option<Timestamp> {
        self.last_decrease
    }
}

/// Pacing of a window law's Interests (the tuned PCON consumer,
/// docs/deviations.md P8): the sender spreads its window over the
/// smoothed RTT at `gain × cwnd / srtt` Interests per second, and at
/// `slow_start_gain ×` that while the window doubles each round trip
/// (Linux TCP's pacing ratios, 200 % and 120 %). Why: an unpaced window
/// sends what each Data opens at once, so a slow start leaves in trains
/// that queue at the bottleneck long before the window fills the path;
/// CoDel marks that train queue, and the first mark ends slow start far
/// below the bandwidth-delay product (one PCON flow of 1200-byte Data on
/// 50 Mbit/s at 150 ms: marked at 256 of 750 Interests, then one more per
/// round trip: 44 % of the link over the run).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct WindowPacing {
    /// Pacing gain while the window doubles each round trip.
    pub slow_start_gain: f64,
    /// Pacing gain otherwise.
    pub gain: f64,
}

impl Default for WindowPacing {
    fn default() -> Self {
        WindowPacing {
            slow_start_gain: 2.0,
            gain: 1.2,
        }
    }
}

impl WindowPacing {
    /// Interests per second for a window of `cwnd` over `srtt`.
    pub fn rate_ips(&self, cwnd: f64, srtt: Duration, slow_start: bool) -> Option<f64> {
        let secs = srtt.as_secs_f64();
        let gain = if slow_start {
            self.slow_start_gain
        } else {
            self.gain
        };
        let ips = gain * cwnd.max(1.0) / secs;
        (secs > 0.0 && ips.is_finite() && ips > 0.0).then_some(ips)
    }
}

/// Counters of a window law.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowStats {
    /// Marked Data received.
    pub marks: u64,
    /// Decreases caused by marks.
    pub mark_decreases: u64,
    /// Decreases caused by timeouts or congestion Nacks.
    pub loss_decreases: u64,
}

/// The path's bandwidth-delay product in Data, measured: Data delivered
/// per smoothed round trip, scaled to the smallest RTT seen, the larger of
/// the last two rounds. A window law whose ceiling follows the path
/// ([`WindowCore::with_path_ceiling`]) keeps at most twice this (or its
/// floor): a fixed ceiling of 512 Interests held one 1200-byte flow on
/// 50 Mbit/s at 150 ms (744 Data of bandwidth-delay product) to 68 %,
/// while on loopback a CUBIC slow start to thousands of Interests only
/// overflowed the forwarder's queues (there the product is a few Data).
#[derive(Debug, Clone, Copy, Default)]
struct PathBdp {
    round_start: Option<Timestamp>,
    delivered: u32,
    last_round: f64,
    bdp: f64,
}

impl PathBdp {
    fn on_data(&mut self, now: Timestamp, srtt: Option<Duration>, min_rtt: Option<Duration>) {
        let (Some(srtt), Some(min_rtt)) = (srtt, min_rtt) else {
            return;
        };
        let start = *self.round_start.get_or_insert(now);
        self.delivered = self.delivered.saturating_add(1);
        let len = now.saturating_since(start);
        if len >= srtt && len > Duration::ZERO {
            let round = self.per_min_rtt(min_rtt, len);
            self.bdp = round.max(self.last_round);
            self.last_round = round;
            self.round_start = Some(now);
            self.delivered = 0;
        }
    }

    /// The round under way's Data, `len` into it, per minimum RTT.
    fn per_min_rtt(&self, min_rtt: Duration, len: Duration) -> f64 {
        f64::from(self.delivered) * min_rtt.as_secs_f64() / len.as_secs_f64()
    }

    /// The product at `now`: the larger of the last two rounds and the
    /// round under way, once it is a quarter of `srtt` long.
    fn at(&self, now: Timestamp, srtt: Duration, min_rtt: Duration) -> f64 {
        let partial = self.round_start.map_or(0.0, |start| {
            let len = now.saturating_since(start);
            if len > Duration::ZERO && len.as_secs_f64() * 4.0 >= srtt.as_secs_f64() {
                self.per_min_rtt(min_rtt, len)
            } else {
                0.0
            }
        });
        self.bdp.max(partial)
    }
}

/// Counts Interests in flight so RTT samples can be weighted (ndnget passes
/// the in-flight count as the expected samples per RTT).
#[derive(Debug, Clone, Copy, Default)]
struct InFlight(u32);

impl InFlight {
    fn sent(&mut self) {
        self.0 = self.0.saturating_add(1);
    }
    fn done(&mut self) {
        self.0 = self.0.saturating_sub(1);
    }
    fn expected_samples(self) -> u32 {
        self.0.saturating_add(1)
    }
}

/// What a Data asks of a window law after marks and the gate are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataVerdict {
    /// Unmarked (or mark ignored): grow.
    Increase,
    /// Marked and the gate let a decrease through.
    Decrease,
    /// Marked but a decrease already happened this RTT.
    Hold,
}

/// The state every window law shares: the window itself, the gate, the RTO
/// estimator, the in-flight count and the counters.
#[derive(Debug, Clone)]
pub(crate) struct WindowCore {
    /// Congestion window, Interests.
    pub(crate) cwnd: f64,
    pub(crate) rtt: RttEstimator,
    pub(crate) stats: WindowStats,
    gate: CwaGate,
    in_flight: InFlight,
    ignore_marks: bool,
    pacing: Option<WindowPacing>,
    path: PathBdp,
    /// Ceiling that follows the path: `max(floor, 2 × BDP)`.
    path_floor: Option<f64>,
    /// The marking target of queue-limited growth ([`QueueGrowthLimit`]).
    growth_target: Option<Duration>,
}

impl WindowCore {
    /// `disable_cwa` lets every decrease through; `ignore_marks` treats
    /// marked Data as unmarked.
    pub(crate) fn new(cwnd: f64, disable_cwa: bool, ignore_marks: bool, rtt: RttConfig) -> Self {
        WindowCore {
            cwnd,
            rtt: RttEstimator::new(rtt),
            stats: WindowStats::default(),
            gate: CwaGate::new(disable_cwa),
            in_flight: InFlight::default(),
            ignore_marks,
            pacing: None,
            path: PathBdp::default(),
            path_floor: None,
            growth_target: None,
        }
    }

    /// Limits growth while the path shows a queue ([`QueueGrowthLimit`];
    /// `None`: the law's own growth alone).
    pub(crate) fn with_growth_limit(mut self, target: Option<Duration>) -> Self {
        self.growth_target = target;
        self
    }

    /// The most one unmarked Data may add to the window outside slow start
    /// ([`QueueGrowthLimit`]); `None` while no limit applies.
    pub(crate) fn growth_cap(&self) -> Option<f64> {
        self.queue_limited(QueueGrowthLimit::cap)
    }

    /// `form(target, srtt, min_rtt, cwnd)` in seconds, once a growth target
    /// is set and the RTT is measured.
    fn queue_limited(&self, form: fn(f64, f64, f64, f64) -> Option<f64>) -> Option<f64> {
        form(
            self.growth_target?.as_secs_f64(),
            self.rtt.srtt()?.as_secs_f64(),
            self.rtt.min_rtt()?.as_secs_f64(),
            self.cwnd,
        )
    }

    /// The most one unmarked Data may add in WinCM's congestion state
    /// ([`QueueGrowthLimit::additive_step`]), or `None`: no limit, also
    /// while the window is below what the path delivered per minimum RTT
    /// ([`measured_bdp`](Self::measured_bdp)). Such a window holds nothing
    /// in the queue the RTT shows (that queue is other flows', or the
    /// smoothed RTT's memory of one the last cut drained), so limiting it
    /// only slows the refilling of the pipe after a cut: the arrival
    /// scenario's four flows, each at a product of 1.4 Data, ran at 96.1 %
    /// with the limit on every window and 98.8 % with this exception (both
    /// with WinCM's mark floor, `WincmConsumerConfig::bandwidth_floor`).
    pub(crate) fn congestion_growth_cap(&self, now: Timestamp) -> Option<f64> {
        if self.measured_bdp(now).is_some_and(|bdp| self.cwnd < bdp) {
            return None;
        }
        self.queue_limited(QueueGrowthLimit::additive_step)
    }

    /// `cut`, raised to what the path delivered per minimum RTT but never
    /// above `before`, the window being cut (PCON's P9 and WinCM's W17,
    /// Westwood+'s bandwidth × min RTT); `cut` itself before anything was
    /// measured or without a path ceiling. With `over_target`, the product
    /// is taken over the minimum RTT plus the growth target (the queue the
    /// AQM lets stand unmarked; nothing added without a target): see
    /// [`Self::target_product_scale`].
    pub(crate) fn floored_at_product(
        &self,
        now: Timestamp,
        cut: f64,
        before: f64,
        over_target: bool,
    ) -> f64 {
        let scale = if over_target {
            self.target_product_scale()
        } else {
            1.0
        };
        self.measured_bdp(now)
            .map_or(cut, |bdp| cut.max((bdp * scale).min(before)))
    }

    /// `(min_rtt + target) / min_rtt`, or 1 without a growth target or a
    /// measured minimum RTT.
    ///
    /// Why (PCON's P9, session 40): a window of exactly rate × min RTT
    /// fills the pipe only while every round trip takes the minimum. On
    /// real hosts they do not: one 1200-byte flow on 2 Mbit/s at 150 ms ran
    /// at 94.9 % on namespaces (100 % in virtual time), its window cut to
    /// the floor, 29.9 Data, against a smoothed RTT 5 ms over the minimum
    /// with a queue of at most one Data. Over the AQM's target the floor
    /// leaves the jitter that much slack, and the flows' floors together
    /// hold at most one target of queue, which the marker tolerates.
    fn target_product_scale(&self) -> f64 {
        match (self.growth_target, self.rtt.min_rtt()) {
            (Some(t), Some(m)) if m > Duration::ZERO => 1.0 + t.as_secs_f64() / m.as_secs_f64(),
            _ => 1.0,
        }
    }

    /// Below the law's own ceiling, the window keeps at most twice the
    /// path's measured bandwidth-delay product, or `floor` Interests when
    /// that is more (`None`: the law's ceiling alone).
    pub(crate) fn with_path_ceiling(mut self, floor: Option<f64>) -> Self {
        self.path_floor = floor;
        self
    }

    /// Paces the law's Interests (`None`: unpaced, as ndnget).
    pub(crate) fn with_pacing(mut self, pacing: Option<WindowPacing>) -> Self {
        self.pacing = pacing;
        self
    }

    /// The pacing rate, once the RTT is measured.
    pub(crate) fn pace_ips(&self, slow_start: bool) -> Option<f64> {
        let p = self.pacing?;
        p.rate_ips(self.cwnd, self.rtt.srtt()?, slow_start)
    }

    pub(crate) fn on_interest_sent(&mut self) {
        self.in_flight.sent();
    }

    /// Books a Data: in-flight count, RTT sample, gate.
    pub(crate) fn record_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        self.in_flight.done();
        if let Some(rtt) = fb.rtt {
            self.rtt.add_sample(rtt, self.in_flight.expected_samples());
        }
        if self.path_floor.is_some() {
            self.path.on_data(now, self.rtt.srtt(), self.rtt.min_rtt());
        }
        self.gate.on_data(fb.sent_at(now));
    }

    /// Books a Data and decides what it does to the window: a mark (unless
    /// ignored) decreases at most once per RTT and never increases.
    fn on_data(&mut self, now: Timestamp, fb: &DataFeedback) -> DataVerdict {
        self.record_data(now, fb);
        if fb.congestion_mark == 0 {
            return DataVerdict::Increase;
        }
        self.stats.marks += 1;
        if self.ignore_marks {
            DataVerdict::Increase
        } else if self.gate.try_decrease(now) {
            self.stats.mark_decreases += 1;
            DataVerdict::Decrease
        } else {
            DataVerdict::Hold
        }
    }

    /// Whether marked Data are treated as unmarked.
    pub(crate) fn ignores_marks(&self) -> bool {
        self.ignore_marks
    }

    /// Whether a Nack counts as a loss; any other Nack just ends its Interest.
    pub(crate) fn nack_is_loss(&mut self, fb: &NackFeedback) -> bool {
        if !fb.congestion {
            self.in_flight.done();
        }
        fb.congestion
    }

    /// Books a timeout or congestion Nack; true when the window must decrease
    /// (the gate let it through; the RTO is then backed off).
    pub(crate) fn on_loss(&mut self, now: Timestamp) -> bool {
        self.in_flight.done();
        let decrease = self.gate.try_decrease(now);
        if decrease {
            self.rtt.backoff();
            self.stats.loss_decreases += 1;
        }
        decrease
    }

    /// Holds the window in `[lo, hi]`, `hi` lowered to the path's ceiling
    /// when one is set (a NaN window falls to `lo`).
    pub(crate) fn clamp(&mut self, lo: f64, hi: f64) {
        let lo = lo.max(0.0);
        let hi = match self.path_floor {
            Some(floor) => hi.min(floor.max(2.0 * self.path.bdp)),
            None => hi,
        };
        let hi = hi.max(lo);
        self.cwnd = if self.cwnd.is_nan() {
            lo
        } else {
            self.cwnd.clamp(lo, hi)
        };
    }

    /// The path's measured bandwidth-delay product in Data at `now`
    /// (`PathBdp::at`); `None` before anything was measured or without a
    /// path ceiling (which keeps the measurement).
    pub(crate) fn measured_bdp(&self, now: Timestamp) -> Option<f64> {
        self.path_floor?;
        let bdp = match (self.rtt.srtt(), self.rtt.min_rtt()) {
            (Some(srtt), Some(min_rtt)) => self.path.at(now, srtt, min_rtt),
            _ => self.path.bdp,
        };
        (bdp > 0.0).then_some(bdp)
    }

    pub(crate) fn limit(&self) -> SendLimit {
        SendLimit::Window {
            interests: self.cwnd,
        }
    }
}

/// Access to a law's [`WindowCore`] (its `core` field, implemented by
/// [`window_consumer_law!`]).
pub(crate) trait HasWindowCore {
    fn core(&self) -> &WindowCore;
    fn core_mut(&mut self) -> &mut WindowCore;
}

/// A window law's own rules; [`window_consumer_law!`] wires them to
/// [`crate::law::ConsumerLaw`] through the shared [`WindowCore`].
pub(crate) trait WindowLaw: HasWindowCore {
    /// Grows the window for an unmarked (or mark-ignored) Data.
    fn increase(&mut self, now: Timestamp);

    /// Shrinks the window after a congestion signal the gate let through.
    fn decrease(&mut self, now: Timestamp);

    /// Shrinks the window after a congestion mark the gate let through (by
    /// default as after a loss).
    fn decrease_on_mark(&mut self, now: Timestamp) {
        self.decrease(now);
    }

    /// Called before a sent Interest, a Data or a loss is booked (CUBIC
    /// starts its clock there).
    fn touch(&mut self, _now: Timestamp) {}

    /// Whether the window doubles each round trip now (its pacing gain).
    fn in_slow_start(&self) -> bool {
        false
    }

    /// Books a Data and applies it: by default a mark decreases at most once
    /// per RTT and never increases.
    fn data(&mut self, now: Timestamp, fb: &DataFeedback) {
        self.apply_data(now, fb);
    }

    /// [`WindowLaw::data`]'s default, for laws that look at a Data first.
    fn apply_data(&mut self, now: Timestamp, fb: &DataFeedback) {
        match self.core_mut().on_data(now, fb) {
            DataVerdict::Increase => self.increase(now),
            DataVerdict::Decrease => self.decrease_on_mark(now),
            DataVerdict::Hold => {}
        }
    }

    /// A timeout or congestion Nack.
    fn loss(&mut self, now: Timestamp) {
        self.touch(now);
        if self.core_mut().on_loss(now) {
            self.decrease(now);
        }
    }
}

/// `impl ConsumerLaw for $law` from its [`WindowLaw`] rules; `$law` keeps
/// its [`WindowCore`] in a field named `core`.
macro_rules! window_consumer_law {
    ($law:ty) => {
        impl $crate::window::HasWindowCore for $law {
            fn core(&self) -> &$crate::window::WindowCore {
                &self.core
            }

            fn core_mut(&mut self) -> &mut $crate::window::WindowCore {
                &mut self.core
            }
        }

        impl $crate::law::ConsumerLaw for $law {
            fn on_interest_sent(&mut self, now: $crate::time::Timestamp, _retransmission: bool) {
                $crate::window::WindowLaw::touch(self, now);
                $crate::window::HasWindowCore::core_mut(self).on_interest_sent();
            }

            fn on_data(&mut self, now: $crate::time::Timestamp, fb: &$crate::law::DataFeedback) {
                $crate::window::WindowLaw::touch(self, now);
                $crate::window::WindowLaw::data(self, now, fb);
            }

            fn on_nack(&mut self, now: $crate::time::Timestamp, fb: &$crate::law::NackFeedback) {
                if $crate::window::HasWindowCore::core_mut(self).nack_is_loss(fb) {
                    $crate::window::WindowLaw::loss(self, now);
                }
            }

            fn on_timeout(&mut self, now: $crate::time::Timestamp) {
                $crate::window::WindowLaw::loss(self, now);
            }

            fn limit(&self) -> $crate::law::SendLimit {
                $crate::window::HasWindowCore::core(self).limit()
            }

            fn pace_ips(&self) -> Option<f64> {
                let slow_start = $crate::window::WindowLaw::in_slow_start(self);
                $crate::window::HasWindowCore::core(self).pace_ips(slow_start)
            }
        }
    };
}
pub(crate) use window_consumer_law;

/// Feedback and event drivers shared by the window laws' tests.
#[cfg(test)]
pub(crate) mod test_events {
    use crate::law::{ConsumerLaw, DataFeedback, NackFeedback};
    use crate::time::{Duration, Timestamp};

    /// A Data whose Interest took `rtt_ms`, carrying `mark`.
    pub(crate) fn data(rtt_ms: u64, mark: u64) -> DataFeedback {
        DataFeedback {
            rtt: Some(Duration::from_millis(rtt_ms)),
            congestion_mark: mark,
            ..DataFeedback::default()
        }
    }

    /// One random event for the bounds proptests: 0 Data, 1 timeout,
    /// 2 congestion Nack, otherwise a sent Interest.
    pub(crate) fn apply(
        law: &mut impl ConsumerLaw,
        kind: u8,
        t: Timestamp,
        rtt_ms: u64,
        mark: u64,
    ) {
        match kind {
            0 => law.on_data(t, &data(rtt_ms, mark)),
            1 => law.on_timeout(t),
            2 => law.on_nack(
                t,
                &NackFeedback {
                    congestion: true,
                    ..Default::default()
                },
            ),
            _ => law.on_interest_sent(t, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(now_ms: u64, rtt_ms: u64, mark: u64) -> (Timestamp, DataFeedback) {
        let fb = DataFeedback {
            rtt: Some(Duration::from_millis(rtt_ms)),
            congestion_mark: mark,
            ..DataFeedback::default()
        };
        (Timestamp::from_millis(now_ms), fb)
    }

    #[test]
    fn marks_decrease_once_per_rtt_and_count() {
        let mut w = WindowCore::new(10.0, false, false, RttConfig::default());
        let (t, fb) = data(100, 50, 1);
        assert_eq!(w.on_data(t, &fb), DataVerdict::Decrease);
        // Sent at 90 ms, before the decrease at 100 ms: held.
        let (t, fb) = data(140, 50, 1);
        assert_eq!(w.on_data(t, &fb), DataVerdict::Hold);
        // Sent at 120 ms, after it: the gate re-opens.
        let (t, fb) = data(170, 50, 1);
        assert_eq!(w.on_data(t, &fb), DataVerdict::Decrease);
        assert_eq!(
            w.stats,
            WindowStats {
                marks: 3,
                mark_decreases: 2,
                loss_decreases: 0
            }
        );
        // With marks ignored a marked Data grows the window but is counted.
        let mut ig = WindowCore::new(10.0, false, true, RttConfig::default());
        let (t, fb) = data(171, 50, 1);
        assert_eq!(ig.on_data(t, &fb), DataVerdict::Increase);
        assert_eq!(ig.stats.marks, 1);
    }

    #[test]
    fn loss_backs_off_the_rto_only_when_the_gate_allows() {
        let mut w = WindowCore::new(10.0, false, false, RttConfig::default());
        let rto0 = w.rtt.rto();
        assert!(w.on_loss(Timestamp::from_millis(1)));
        let rto1 = w.rtt.rto();
        assert!(rto1 > rto0);
        assert!(!w.on_loss(Timestamp::from_millis(2)));
        assert_eq!(w.rtt.rto(), rto1);
        assert_eq!(w.stats.loss_decreases, 1);
        assert!(!w.nack_is_loss(&NackFeedback::default()));
    }

    #[test]
    fn pacing_spreads_the_window_over_the_srtt_once_measured() {
        let p = WindowPacing::default();
        let w = WindowCore::new(10.0, false, false, RttConfig::default());
        // Unpaced by default; paced only once an RTT is measured.
        assert_eq!(w.pace_ips(false), None);
        let mut w = w.with_pacing(Some(p));
        assert_eq!(w.pace_ips(false), None);
        let (t, fb) = data(100, 50, 0);
        w.record_data(t, &fb);
        // 10 Interests over 50 ms: 200/s, × 1.2 and × 2 in slow start.
        let ca = w.pace_ips(false).unwrap();
        let ss = w.pace_ips(true).unwrap();
        assert!((ca - 240.0).abs() < 1e-6, "{ca}");
        assert!((ss - 400.0).abs() < 1e-6, "{ss}");
        // A zero or non-finite RTT gives no pace rather than an infinite one.
        assert_eq!(p.rate_ips(10.0, Duration::ZERO, false), None);
    }

    /// 100 ms round trips: a first round of one Data per 20 ms measures 6
    /// Data; then one per 5 ms. A quarter of an RTT into the faster round
    /// its rate counts (20 Data), before that only the closed rounds do.
    #[test]
    fn measured_bdp_counts_the_round_under_way() {
        let feed = |w: &mut WindowCore, from_ms: u64, to_ms: u64, step_ms: usize| {
            for t in (from_ms..=to_ms).step_by(step_ms) {
                let (t, fb) = data(t, 100, 0);
                w.record_data(t, &fb);
            }
        };
        let mut plain = WindowCore::new(10.0, false, false, RttConfig::default());
        feed(&mut plain, 20, 120, 20);
        assert_eq!(plain.measured_bdp(Timestamp::from_millis(120)), None);
        let mut w =
            WindowCore::new(10.0, false, false, RttConfig::default()).with_path_ceiling(Some(4.0));
        assert_eq!(w.measured_bdp(Timestamp::from_millis(10)), None);
        feed(&mut w, 20, 120, 20);
        let closed = w.measured_bdp(Timestamp::from_millis(120)).unwrap();
        assert!((closed - 6.0).abs() < 1e-9, "{closed}");
        feed(&mut w, 125, 140, 5);
        let early = w.measured_bdp(Timestamp::from_millis(140)).unwrap();
        assert!((early - 6.0).abs() < 1e-9, "{early}");
        feed(&mut w, 145, 175, 5);
        let partial = w.measured_bdp(Timestamp::from_millis(175)).unwrap();
        assert!((partial - 20.0).abs() < 1e-9, "{partial}");
    }

    /// WinCM's congestion-state limit: `target/queue` per round trip while
    /// the smoothed RTT shows the target of queue, none below it, and none
    /// for a window under the path's measured product.
    #[test]
    fn congestion_growth_cap_spares_a_window_under_the_product() {
        let mut w = WindowCore::new(8.0, false, false, RttConfig::default())
            .with_path_ceiling(Some(512.0))
            .with_growth_limit(Some(Duration::from_millis(5)));
        // Six Data per 100 ms round; RTT 100 ms, then 180 ms samples.
        for t in (20..=120).step_by(20) {
            let (t, fb) = data(t, 100, 0);
            w.record_data(t, &fb);
        }
        let now = Timestamp::from_millis(120);
        assert_eq!(w.congestion_growth_cap(now), None, "no queue shows");
        let (t, fb) = data(140, 180, 0);
        w.record_data(t, &fb);
        let now = t;
        let queue = w.rtt.srtt().unwrap().as_secs_f64() - 0.1;
        let cap = w.congestion_growth_cap(now).expect("a queue of 10 ms");
        assert!((cap * 8.0 - 0.005 / queue).abs() < 1e-9, "{cap}");
        // The path delivered six Data per round: a window of five holds
        // none of the queue.
        w.cwnd = 5.0;
        assert!(w.measured_bdp(now).unwrap() > 5.0);
        assert_eq!(w.congestion_growth_cap(now), None, "under the product");
    }

    #[test]
    fn clamp_bounds_and_nan() {
        let mut w = WindowCore::new(f64::NAN, false, false, RttConfig::default());
        w.clamp(2.0, 8.0);
        assert_eq!(w.cwnd, 2.0);
        w.cwnd = 100.0;
        w.clamp(2.0, 8.0);
        assert_eq!(w.cwnd, 8.0);
        // An inverted range collapses to its lower bound.
        w.clamp(5.0, 1.0);
        assert_eq!(w.cwnd, 5.0);
    }
}
