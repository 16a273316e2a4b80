//! Queue-limited growth of the window laws (P10 and W16 in
//! docs/deviations.md): how much one unmarked Data may add to a window
//! while the flow's RTT shows a standing queue.

/// Queue-limited growth of a window law (in the tuned profile PCON's
/// congestion avoidance, P10 in docs/deviations.md, and WinCM's BIC
/// growth, W16; WinCM's congestion state has its own form,
/// [`additive_step`](Self::additive_step)).
///
/// Why: a window law grows by about one Interest per round trip per flow
/// (Reno's additive increase; BIC's search steps by more). N flows then
/// add N Data to a shared queue every round trip, and a mark takes at
/// least a round trip to come back, so the queue peaks N Data above the
/// marking target whatever the marker does. Where each flow's share of
/// the path is a few Data (ten 1200-byte flows on 2 Mbit/s at 50 ms: one
/// Data each) that is the whole queue: 50 ms at p95 against the AQM's
/// 5 ms target.
///
/// Rule: while the flow's smoothed RTT exceeds its minimum by at least
/// the marking `target` (a queue stands on its path), a round trip may
/// add at most `(cwnd + 1)·target / min_rtt` Interests; per Data that is
/// `target/min_rtt · (1 + 1/cwnd)`. Summed over the flows of a link, the
/// `cwnd·target/min_rtt` part is the link's rate times `target`: the
/// flows together add at most about one target of queue per round trip,
/// however many they are. The `+ 1` part is the same for every flow and
/// keeps an additive term, so flows of unequal windows still converge (a
/// growth in proportion to the window alone would keep their ratio).
/// Slow start is not limited, nor is growth while no queue shows: a
/// flow regrowing into an empty pipe after a cut grows at its law's pace.
#[derive(Debug, Clone, Copy)]
pub struct QueueGrowthLimit;

impl QueueGrowthLimit {
    /// The most one unmarked Data may add to a window of `cwnd`, given the
    /// marking `target`, the smoothed and the minimum RTT (seconds);
    /// `None` while the RTT shows less queue than `target`.
    pub fn cap(target_s: f64, srtt_s: f64, min_rtt_s: f64, cwnd: f64) -> Option<f64> {
        queue_shown(target_s, srtt_s, min_rtt_s)
            .map(|_| target_s / min_rtt_s * (1.0 + 1.0 / cwnd.max(1.0)))
    }

    /// The most one unmarked Data may add to a window of `cwnd` in WinCM's
    /// congestion state (tuned profile, W16 in docs/deviations.md): while
    /// the RTT shows at least `target` of queue, `target/queue` Interests
    /// per round trip, i.e. `target/queue/cwnd` per Data; `None` while it
    /// shows less.
    ///
    /// Why this form there and not [`cap`](Self::cap)'s: the congestion
    /// state follows every episode, so its growth is what flows regain
    /// their shares with. Flows behind one bottleneck read the same queue
    /// and so add the same number of Interests per round trip whatever
    /// their windows, as Reno's do, and converge to equal windows; `cap`,
    /// mostly in proportion to the window, largely keeps their ratio (under
    /// it the arrival scenario's flows never settled). The more queue
    /// stands, the less each flow adds: at 25 ms of queue and a 5 ms
    /// target, ten flows add two Interests per round trip between them.
    pub fn additive_step(target_s: f64, srtt_s: f64, min_rtt_s: f64, cwnd: f64) -> Option<f64> {
        queue_shown(target_s, srtt_s, min_rtt_s).map(|queued_s| target_s / queued_s / cwnd.max(1.0))
    }
}

/// The queue the smoothed RTT shows above its minimum, when it is at least
/// `target_s` (the gate both forms share); `None` otherwise, or on a zero
/// target or minimum, or a NaN.
fn queue_shown(target_s: f64, srtt_s: f64, min_rtt_s: f64) -> Option<f64> {
    let queued_s = srtt_s - min_rtt_s;
    (target_s > 0.0 && min_rtt_s > 0.0 && queued_s >= target_s).then_some(queued_s)
}

/// `step`, or `cap` when that is smaller (`None`: no limit in force).
#[inline]
pub(crate) fn limited(step: f64, cap: Option<f64>) -> f64 {
    cap.map_or(step, |c| step.min(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit holds only while the smoothed RTT shows at least the
    /// target of queue, and then allows `(cwnd + 1)·target/min_rtt` per
    /// round trip of `cwnd` Data.
    #[test]
    fn queue_growth_limit_applies_only_while_a_queue_shows() {
        let cap = QueueGrowthLimit::cap;
        assert_eq!(cap(0.005, 0.054, 0.050, 2.0), None);
        let c = cap(0.005, 0.056, 0.050, 2.0).expect("6 ms of queue");
        assert!((c - 0.1 * 1.5).abs() < 1e-12, "{c}");
        assert!((2.0 * c - 3.0 * 0.1).abs() < 1e-12);
        // Below one Interest the `+ 1` counts as for a window of one.
        assert_eq!(cap(0.005, 0.2, 0.05, 0.5), cap(0.005, 0.2, 0.05, 1.0));
        assert_eq!(cap(0.0, 0.2, 0.05, 2.0), None);
        assert_eq!(cap(0.005, 0.2, 0.0, 2.0), None);
        assert_eq!(cap(0.005, f64::NAN, 0.05, 2.0), None);
    }

    /// The additive step is `target/queue` Interests per round trip of
    /// `cwnd` Data, the same for every window, and holds only while the
    /// RTT shows the target.
    #[test]
    fn additive_step_is_the_same_per_round_trip_for_every_window() {
        let step = QueueGrowthLimit::additive_step;
        assert_eq!(step(0.005, 0.054, 0.050, 2.0), None);
        for cwnd in [1.0, 2.0, 7.5, 40.0] {
            let s = step(0.005, 0.070, 0.050, cwnd).expect("20 ms of queue");
            assert!((s * cwnd - 0.25).abs() < 1e-12, "{cwnd}: {s}");
        }
        // At the target, about Reno's one Interest per round trip.
        let at_target = step(0.005, 0.0551, 0.050, 4.0).expect("5.1 ms of queue");
        assert!((at_target * 4.0 - 0.005 / 0.0051).abs() < 1e-9);
        assert_eq!(step(0.005, 0.5, 0.05, 0.5), step(0.005, 0.5, 0.05, 1.0));
        assert_eq!(step(0.0, 0.2, 0.05, 2.0), None);
        assert_eq!(step(0.005, 0.2, 0.0, 2.0), None);
        assert_eq!(step(0.005, f64::NAN, 0.05, 2.0), None);
    }
}
