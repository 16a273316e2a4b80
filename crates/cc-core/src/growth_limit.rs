//! Queue-limited growth of the window laws (P10 and W16 in
//! docs/deviations.md): how much one unmarked Data may add to a window
//! while the flow's RTT shows a standing queue.

/// Queue-limited growth of a window law (in the tuned profile PCON's
/// congestion avoidance, P10 in docs/deviations.md, and WinCM's BIC
/// growth, W16; WinCM's congestion state only with its key, off in both
/// profiles).
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
        let queued_s = srtt_s - min_rtt_s;
        (target_s > 0.0 && min_rtt_s > 0.0 && queued_s >= target_s)
            .then(|| target_s / min_rtt_s * (1.0 + 1.0 / cwnd.max(1.0)))
    }
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
}
