//! What a fetch counts: the numbers ndnget prints, plus a per-interval time
//! series for plots (`--stats-json`).

use crate::rate::format_bit_rate;
use cc_core::{Duration, Timestamp};
use serde::Serialize;
use std::fmt::Write as _;

/// Most samples a series keeps (a 100 ms interval covers ~2.7 hours).
pub const MAX_SAMPLES: usize = 100_000;

/// One point of the time series, taken every sample interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the pipeline started.
    pub t_s: f64,
    /// Congestion window (Interests), for window laws.
    pub window: Option<f64>,
    /// Interest rate (Interests/s), for rate laws.
    pub rate_ips: Option<f64>,
    /// Interests outstanding.
    pub in_flight: u32,
    /// Content goodput over the interval, bit/s.
    pub goodput_bps: f64,
    /// Smoothed RTT, ms.
    pub srtt_ms: Option<f64>,
    /// Retransmission timeout, ms.
    pub rto_ms: f64,
    /// Cumulative counters at the sample time.
    pub segments: u64,
    pub marks: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub retransmissions: u64,
}

/// Min/avg/max of the RTT samples, for the summary (the RFC 6298 estimator
/// keeps only smoothed values).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RttSummary {
    min_s: f64,
    max_s: f64,
    sum_s: f64,
    samples: u64,
}

impl RttSummary {
    /// Folds in one sample.
    pub fn add(&mut self, rtt: Duration) {
        let r = rtt.as_secs_f64();
        self.min_s = if self.samples == 0 {
            r
        } else {
            self.min_s.min(r)
        };
        self.max_s = self.max_s.max(r);
        self.sum_s += r;
        self.samples += 1;
    }

    /// (min, avg, max), `None` before the first sample.
    pub fn min_avg_max(&self) -> Option<(Duration, Duration, Duration)> {
        (self.samples > 0).then(|| {
            (
                Duration::from_secs_f64(self.min_s),
                Duration::from_secs_f64(self.sum_s / self.samples as f64),
                Duration::from_secs_f64(self.max_s),
            )
        })
    }

    /// Number of samples.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

/// Why a fetch ended before its last segment without failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// `icncat --duration` expired.
    Duration,
    /// SIGINT (Ctrl-C).
    Sigint,
    /// SIGTERM.
    Sigterm,
}

impl StopReason {
    /// icncat's exit status for a transfer stopped this way: 3 for
    /// `--duration` (1 is an error, 2 a usage error), 128 + the signal
    /// number for signals, as shells report a process killed by it.
    pub fn exit_code(self) -> i32 {
        match self {
            StopReason::Duration => 3,
            StopReason::Sigint => 130,
            StopReason::Sigterm => 143,
        }
    }

    /// What stopped the transfer, for the summary.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Duration => "--duration expired",
            StopReason::Sigint => "SIGINT",
            StopReason::Sigterm => "SIGTERM",
        }
    }
}

/// Counters of one fetch.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FetchStats {
    /// Congestion-control scheme name.
    pub scheme: String,
    /// The versioned name that was fetched.
    pub name: String,
    /// Whether every segment was received.
    pub completed: bool,
    /// Set when the transfer was stopped before completing (not an error).
    pub stopped_by: Option<StopReason>,
    /// Seconds from the first Interest of the pipeline to the last segment
    /// (or to the stop).
    pub elapsed_s: f64,
    pub segments_received: u64,
    /// Content bytes (what ndnget calls the transferred size).
    pub bytes_received: u64,
    /// Data packet bytes on the wire.
    pub wire_bytes_received: u64,
    /// Content bits per second over `elapsed_s`.
    pub goodput_bps: f64,
    pub interests_sent: u64,
    pub retransmissions: u64,
    /// Retransmissions dropped because the Data arrived while queued.
    pub skipped_retransmissions: u64,
    /// Segments whose Data may have answered another Interest too (a
    /// version-discovery probe), so they gave no RTT sample.
    pub ambiguous_rtt_samples: u64,
    pub congestion_marks: u64,
    /// Window/rate decreases that followed a mark.
    pub mark_decreases: u64,
    pub timeouts: u64,
    /// Window/rate decreases that followed a timeout (at most one per RTT).
    pub timeout_decreases: u64,
    pub nacks: u64,
    pub nacks_congestion: u64,
    pub nacks_duplicate: u64,
    pub nacks_no_route: u64,
    pub nacks_other: u64,
    pub rtt_min_ms: Option<f64>,
    pub rtt_avg_ms: Option<f64>,
    pub rtt_max_ms: Option<f64>,
    /// Last segment number (from FinalBlockId).
    pub final_segment: Option<u64>,
    /// Samples not recorded because the series was full.
    pub samples_dropped: u64,
    pub series: Vec<Sample>,
}

impl FetchStats {
    /// Appends a sample, bounded by [`MAX_SAMPLES`].
    pub fn push_sample(&mut self, s: Sample) {
        if self.series.len() < MAX_SAMPLES {
            self.series.push(s);
        } else {
            self.samples_dropped += 1;
        }
    }

    /// Sets elapsed time and goodput from the pipeline's start and end.
    pub fn finish_timing(&mut self, start: Timestamp, end: Timestamp) {
        let el: Duration = end - start;
        self.elapsed_s = el.as_secs_f64();
        self.goodput_bps = if self.elapsed_s > 0.0 {
            self.bytes_received as f64 * 8.0 / self.elapsed_s
        } else {
            0.0
        };
    }

    /// The summary, in ndnget's words.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        match (self.completed, self.stopped_by) {
            (true, _) => {
                let _ = writeln!(s, "All segments have been received.");
            }
            (false, Some(r)) => {
                let _ = writeln!(
                    s,
                    "Transfer stopped by {} before the last segment (not completed).",
                    r.describe()
                );
            }
            (false, None) => {
                let _ = writeln!(s, "Transfer did not complete.");
            }
        }
        let _ = writeln!(s, "Name: {}", self.name);
        let _ = writeln!(s, "Congestion control: {}", self.scheme);
        let _ = writeln!(s, "Time elapsed: {:.3} milliseconds", self.elapsed_s * 1e3);
        match self.final_segment.filter(|_| !self.completed) {
            Some(last) => {
                let _ = writeln!(
                    s,
                    "Segments received: {} of {}",
                    self.segments_received,
                    last.saturating_add(1)
                );
            }
            None => {
                let _ = writeln!(s, "Segments received: {}", self.segments_received);
            }
        }
        let _ = writeln!(
            s,
            "Transferred size: {} kB",
            self.bytes_received as f64 / 1e3
        );
        let _ = writeln!(s, "Goodput: {}", format_bit_rate(self.goodput_bps));
        let _ = writeln!(
            s,
            "Congestion marks: {} (caused {} window decreases)",
            self.congestion_marks, self.mark_decreases
        );
        let _ = writeln!(
            s,
            "Timeouts: {} (caused {} window decreases)",
            self.timeouts, self.timeout_decreases
        );
        let _ = writeln!(
            s,
            "Nacks: {} (congestion {}, duplicate {}, no route {}, other {})",
            self.nacks,
            self.nacks_congestion,
            self.nacks_duplicate,
            self.nacks_no_route,
            self.nacks_other
        );
        let pct = if self.interests_sent == 0 {
            0.0
        } else {
            self.retransmissions as f64 * 100.0 / self.interests_sent as f64
        };
        let _ = writeln!(
            s,
            "Retransmitted segments: {} ({pct}%), skipped: {}",
            self.retransmissions, self.skipped_retransmissions
        );
        match (self.rtt_min_ms, self.rtt_avg_ms, self.rtt_max_ms) {
            (Some(a), Some(b), Some(c)) => {
                let _ = writeln!(s, "RTT min/avg/max = {a:.3}/{b:.3}/{c:.3} ms");
            }
            _ => {
                let _ = writeln!(s, "RTT stats unavailable");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_and_summary_lines() {
        let mut st = FetchStats {
            completed: true,
            bytes_received: 1_000_000,
            segments_received: 125,
            interests_sent: 130,
            retransmissions: 5,
            rtt_min_ms: Some(1.0),
            rtt_avg_ms: Some(2.0),
            rtt_max_ms: Some(3.0),
            ..Default::default()
        };
        st.finish_timing(Timestamp::ZERO, Timestamp::from_millis(2000));
        assert!((st.goodput_bps - 4e6).abs() < 1e-6);
        let s = st.summary();
        assert!(s.contains("Time elapsed: 2000.000 milliseconds"));
        assert!(s.contains("Goodput: 4.000000 Mbit/s"));
        assert!(s.contains("Retransmitted segments: 5 ("));
        assert!(s.contains("RTT min/avg/max = 1.000/2.000/3.000 ms"));
        assert!(s.starts_with("All segments have been received."));
    }

    #[test]
    fn stopped_summary_and_json_say_so() {
        let st = FetchStats {
            stopped_by: Some(StopReason::Duration),
            segments_received: 40,
            final_segment: Some(99),
            ..Default::default()
        };
        let s = st.summary();
        assert!(
            s.starts_with("Transfer stopped by --duration expired"),
            "{s}"
        );
        assert!(s.contains("not completed"));
        assert!(s.contains("Segments received: 40 of 100"));
        let j = serde_json::to_value(&st).unwrap();
        assert_eq!(j["completed"], false);
        assert_eq!(j["stopped_by"], "duration");
        let codes: Vec<i32> = [
            StopReason::Duration,
            StopReason::Sigint,
            StopReason::Sigterm,
        ]
        .map(StopReason::exit_code)
        .to_vec();
        assert_eq!(codes, [3, 130, 143]);
    }

    #[test]
    fn rtt_summary_tracks_min_avg_max() {
        let mut r = RttSummary::default();
        assert!(r.min_avg_max().is_none());
        for v in [20, 10, 30] {
            r.add(Duration::from_millis(v));
        }
        let (mn, avg, mx) = r.min_avg_max().unwrap();
        assert_eq!(
            (mn, mx),
            (Duration::from_millis(10), Duration::from_millis(30))
        );
        assert!((avg.as_secs_f64() - 0.02).abs() < 1e-9);
        assert_eq!(r.samples(), 3);
    }

    #[test]
    fn series_is_bounded() {
        let mut st = FetchStats::default();
        for _ in 0..MAX_SAMPLES + 3 {
            st.push_sample(Sample::default());
        }
        assert_eq!(st.series.len(), MAX_SAMPLES);
        assert_eq!(st.samples_dropped, 3);
    }
}
