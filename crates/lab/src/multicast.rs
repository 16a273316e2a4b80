//! What a run measured of its SRMCC multicast groups (`[[group]]`): the
//! source's rate (Algorithm 1's choice and what it sent) and each
//! receiver's goodput over time, loss and repairs; and their table.

use std::fmt::Write as _;

use serde::Serialize;

use crate::results::RunResult;

/// One receiver of a group.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiverResult {
    /// The receiver's node.
    pub node: String,
    /// Access capacity it reported (C_access), bit/s.
    pub access_bps: u64,
    /// Payload delivered in order to the application over the last half
    /// of the group's active time, bit/s.
    pub goodput_last_half_bps: f64,
    /// (window end s, bit/s) of the payload delivered in order.
    pub goodput: Vec<(f64, f64)>,
    /// Group Data that arrived (first copies).
    pub packets: u64,
    /// Sequence gaps seen (each then repaired, late, or lost for good).
    pub holes: u64,
    /// Holes filled by repair Interests.
    pub repaired: u64,
    /// Holes released to the application unfilled.
    pub unrepaired: u64,
}

/// One group.
#[derive(Debug, Clone, Serialize)]
pub struct GroupResult {
    pub name: String,
    pub source: String,
    pub start_s: f64,
    pub stop_s: f64,
    /// (run time s, bit/s): every rate Algorithm 1 chose.
    pub source_rates: Vec<(f64, f64)>,
    /// Mean of Algorithm 1's rates over the last half, bit/s.
    pub source_rate_last_half_bps: f64,
    /// (window end s, bit/s) of the group Data the source sent (wire bytes).
    pub source_sent: Vec<(f64, f64)>,
    /// MCC messages that reached the source.
    pub feedback_in: u64,
    pub receivers: Vec<ReceiverResult>,
}

/// The multicast table of `runs`: per group and scheme, the source's rate
/// and each receiver's goodput over the last half, with holes. `None`
/// when no run has a group.
pub fn table(runs: &[RunResult]) -> Option<String> {
    if runs.iter().all(|r| r.groups.is_empty()) {
        return None;
    }
    let mut s = String::from(
        "multicast (last half)  scheme   source Mbit/s  feedback  receivers: goodput Mbit/s (holes/repaired/unrepaired)\n",
    );
    for r in runs {
        for g in &r.groups {
            let rx: Vec<String> = g
                .receivers
                .iter()
                .map(|x| {
                    format!(
                        "{}={:.3} ({}/{}/{})",
                        x.node,
                        x.goodput_last_half_bps / 1e6,
                        x.holes,
                        x.repaired,
                        x.unrepaired
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "{:<22} {:<8} {:>13.3} {:>9}  {}",
                g.name,
                r.scheme,
                g.source_rate_last_half_bps / 1e6,
                g.feedback_in,
                rx.join(" ")
            );
        }
    }
    Some(s)
}
