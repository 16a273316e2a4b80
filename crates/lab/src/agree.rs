//! Whether virtual time and real hosts tell the same story about one
//! scheme: issue 19's tolerances between a `--sim` and a `--real` run.

use crate::results::RunResult;

/// Utilisation may differ by this many percentage points.
pub const UTIL_POINTS: f64 = 5.0;
/// Each flow's last-half rate may differ by this fraction.
pub const FLOW_REL: f64 = 0.10;
/// The bottleneck's p95 queue may differ by this much, or by a factor of
/// [`QUEUE_FACTOR`], whichever is looser.
pub const QUEUE_MS: f64 = 10.0;
pub const QUEUE_FACTOR: f64 = 2.0;

/// One scheme's sim-vs-real comparison.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Agreement {
    pub scheme: String,
    pub util_sim: f64,
    pub util_real: f64,
    /// Largest relative per-flow rate difference (against the real rate).
    pub worst_flow_rel: f64,
    pub queue_p95_sim_ms: f64,
    pub queue_p95_real_ms: f64,
}

impl Agreement {
    /// Compares the runs of one scheme on one scenario.
    pub fn of(sim: &RunResult, real: &RunResult) -> Agreement {
        let worst_flow_rel = sim
            .flows
            .iter()
            .zip(&real.flows)
            .map(|(s, r)| {
                (s.rate_last_half_bps - r.rate_last_half_bps).abs() / r.rate_last_half_bps.max(1.0)
            })
            .fold(0.0, f64::max);
        Agreement {
            scheme: sim.scheme.clone(),
            util_sim: sim.bottleneck().utilisation * 100.0,
            util_real: real.bottleneck().utilisation * 100.0,
            worst_flow_rel,
            queue_p95_sim_ms: sim.bottleneck().queue_p95_ms,
            queue_p95_real_ms: real.bottleneck().queue_p95_ms,
        }
    }

    pub fn util_ok(&self) -> bool {
        (self.util_sim - self.util_real).abs() <= UTIL_POINTS
    }

    pub fn flows_ok(&self) -> bool {
        self.worst_flow_rel <= FLOW_REL
    }

    pub fn queue_ok(&self) -> bool {
        let (s, r) = (self.queue_p95_sim_ms, self.queue_p95_real_ms);
        (s - r).abs() <= QUEUE_MS || (s.max(r) <= QUEUE_FACTOR * s.min(r))
    }

    pub fn ok(&self) -> bool {
        self.util_ok() && self.flows_ok() && self.queue_ok()
    }

    /// The table header of [`Agreement::row`].
    pub fn header() -> String {
        format!(
            "{:<7} {:>9} {:>9} {:>9} {:>10} {:>10}  {}",
            "scheme", "util_sim", "util_real", "flow_diff", "p95q_sim", "p95q_real", "agree"
        )
    }

    /// One row: the figures and which tolerance fails.
    pub fn row(&self) -> String {
        let mut fails = Vec::new();
        if !self.util_ok() {
            fails.push("utilisation");
        }
        if !self.flows_ok() {
            fails.push("flow rates");
        }
        if !self.queue_ok() {
            fails.push("p95 queue");
        }
        format!(
            "{:<7} {:>8.1}% {:>8.1}% {:>8.1}% {:>8.1}ms {:>8.1}ms  {}",
            self.scheme,
            self.util_sim,
            self.util_real,
            self.worst_flow_rel * 100.0,
            self.queue_p95_sim_ms,
            self.queue_p95_real_ms,
            if fails.is_empty() {
                "yes".to_string()
            } else {
                format!("no: {}", fails.join(", "))
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agreement(util: (f64, f64), q: (f64, f64), flow: f64) -> Agreement {
        Agreement {
            scheme: "mircc".into(),
            util_sim: util.0,
            util_real: util.1,
            worst_flow_rel: flow,
            queue_p95_sim_ms: q.0,
            queue_p95_real_ms: q.1,
        }
    }

    #[test]
    fn tolerances_are_the_issues() {
        assert!(agreement((96.0, 97.0), (0.0, 3.2), 0.02).ok());
        assert!(!agreement((90.0, 97.0), (0.0, 3.2), 0.02).util_ok());
        assert!(!agreement((96.0, 97.0), (0.0, 3.2), 0.11).flows_ok());
        // 1 ms against 666 ms: neither within 10 ms nor within 2x.
        assert!(!agreement((96.0, 97.0), (1.0, 666.0), 0.0).queue_ok());
        // 30 against 55 ms: 25 ms apart but within 2x.
        assert!(agreement((96.0, 97.0), (30.0, 55.0), 0.0).queue_ok());
    }
}
