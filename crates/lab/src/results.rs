//! Turning a run's raw counters into the figures the scenarios assert and
//! the table prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::metrics::{jain, overshoot, settling_time};
use crate::multicast::GroupResult;
use crate::scenario::Scenario;

/// Drop reasons that mean "congestion" (a full queue or the AQM).
pub fn is_congestion_drop(reason: &str) -> bool {
    reason.contains("queue") || reason.contains("aqm") || reason.contains("overflow")
}

/// Window for rate series, settling and overshoot: 0.5 s holds ~19 Data
/// of 8 KB at 2.5 Mbit/s, so one packet more or less is ~5%, well inside
/// the settling band.
pub const RATE_WINDOW_S: f64 = 0.5;
/// Settling band around the fair share (relative).
pub const SETTLING_BAND: f64 = 0.2;

#[derive(Debug, Clone, Serialize)]
pub struct FlowResult {
    pub name: String,
    /// The consumer's node (delivery times are grouped by it).
    pub consumer: String,
    pub class: String,
    pub start_s: f64,
    pub stop_s: f64,
    /// Data bytes delivered to the consumer's face, over the last half of
    /// the run (or the part of it the flow was active), bit/s.
    pub rate_last_half_bps: f64,
    /// Mean bytes the consumer's face sent per Data (frames, LP header
    /// included) over the flow, to put its rate in another link's frame
    /// bytes; `None` before its first Data.
    pub frame_bytes: Option<f64>,
    /// (window end, bit/s) over the whole flow.
    pub rates: Vec<(f64, f64)>,
    /// The consumer law's sending rate, (run time s, Interests/s) at each
    /// change (rate laws only; empty for window laws).
    pub send_rates: Vec<(f64, f64)>,
    pub nacks: u64,
    /// Smallest RTT sample (≈ propagation + transmission), ms.
    pub rtt_min_ms: Option<f64>,
    /// 95th percentile of the RTT samples of the flow's second half, ms.
    pub rtt_p95_ms: Option<f64>,
    /// (run time s, RTT ms) of every RTT sample; the namespace runner has
    /// no arrival times in icncat's log and puts the flow's start there.
    pub rtt_series_ms: Vec<(f64, f64)>,
    pub error: Option<String>,
    /// Object size of a sized flow (`size_mb`, `[[arrivals]]`).
    pub size_bytes: Option<u64>,
    /// A sized flow's delivery time: its start until the last byte, s;
    /// `None` when it did not complete before the run ended.
    pub delivery_s: Option<f64>,
    /// icncat's `--stats-json`: written when the flow completed, and also
    /// when the harness stopped it at its stop time (SIGINT flushes it).
    pub icncat_stats: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkResult {
    pub from: String,
    pub to: String,
    pub capacity_bps: u64,
    /// Bytes sent by the face over the last half / capacity.
    pub utilisation: f64,
    /// Mean size of the frames the face sent (Data, LP header included),
    /// bytes: the size held Interests are counted at in the queue, and the
    /// one the envelope bounds' Data serialisations use.
    pub frame_bytes: f64,
    /// Data backlog + Interest-shaper backlog (as Data time) of the link, ms.
    pub queue_p95_ms: f64,
    pub queue_max_ms: f64,
    pub marks: u64,
    /// (run time s, bit/s): the rate the link's Interest side stamps into
    /// returning Data (RCP R, MIRCC Rp) at every sample; empty for schemes
    /// that stamp none.
    pub stamped_rates: Vec<(f64, f64)>,
    /// (run time s, bit/s): the target rate the link's scheduler announces
    /// (QSCCP PECN), when it has one.
    pub target_rates: Vec<(f64, f64)>,
    /// (run time s, ms): Data backlog plus held Interests as Data time.
    pub queue_series_ms: Vec<(f64, f64)>,
    /// (window end s, fraction of capacity) of the Data the face sent.
    pub utilisation_series: Vec<(f64, f64)>,
    /// (run time s, cumulative congestion drops) on the link's sending node.
    pub drops_series: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub scheme: String,
    pub duration_s: f64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    /// Congestion drops (queue full, AQM) summed over every node and face.
    pub drops: u64,
    /// `node:reason` -> drops during the run (non-zero only).
    pub drops_by_reason: BTreeMap<String, u64>,
    /// node -> flows its QSCCP schedulers judged greedy (non-zero only).
    pub penalised_flows: BTreeMap<String, u64>,
    /// Jain's index over the flows active during the whole last half.
    pub jain: f64,
    /// After the last flow arrival: time until every flow's windowed rate
    /// stays within ±SETTLING_BAND of its own final rate; `None` = never
    /// (or no arrival).
    pub settling_s: Option<f64>,
    /// Largest excursion of a joining flow's windowed rate above its own
    /// final rate (relative).
    pub overshoot: Option<f64>,
    pub has_arrival: bool,
    pub emulation: bool,
    /// SRMCC multicast groups (`[[group]]`).
    pub groups: Vec<GroupResult>,
}

impl RunResult {
    pub fn flow(&self, name: &str) -> &FlowResult {
        self.flows
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no flow {name}"))
    }
    pub fn bottleneck(&self) -> &LinkResult {
        &self.links[0]
    }
    /// Worst flow's p95 RTT above its minimum RTT: the queueing (and
    /// shaping) delay its consumer saw, end to end.
    pub fn flow_queueing_p95_ms(&self) -> Option<f64> {
        self.flows
            .iter()
            .filter_map(|f| Some(f.rtt_p95_ms? - f.rtt_min_ms?))
            .reduce(f64::max)
    }
    pub fn total_rate_bps(&self) -> f64 {
        self.flows.iter().map(|f| f.rate_last_half_bps).sum()
    }
}

/// What the runners measured, per flow and per link, before the figures
/// computed over all of them.
#[derive(Debug, Clone, Default)]
pub struct Measurements {
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    /// `node:reason` -> drops during the run (non-zero only).
    pub drops_by_reason: BTreeMap<String, u64>,
    pub penalised_flows: BTreeMap<String, u64>,
    /// Whether links had their propagation delay (always, in virtual time).
    pub emulation: bool,
    pub groups: Vec<GroupResult>,
}

/// The run's figures from its measurements: Jain's index over the last
/// half, settling and overshoot after the last arrival. Both runners end here.
pub fn finish(sc: &Scenario, scheme: &str, t_end: f64, m: Measurements) -> RunResult {
    let Measurements {
        flows,
        links,
        drops_by_reason,
        penalised_flows,
        emulation,
        groups,
    } = m;
    let drops = drops_by_reason
        .iter()
        .filter(|(r, _)| is_congestion_drop(r.rsplit(':').next().unwrap_or(r)))
        .map(|(_, c)| c)
        .sum();
    let half = t_end / 2.0;
    // Sized flows (finite transfers) are judged by their delivery times
    // (`crate::delivery`), not by fairness, settling or overshoot.
    let long: Vec<f64> = flows
        .iter()
        .filter(|f| f.size_bytes.is_none())
        .filter(|f| f.start_s <= half + 0.5 && f.stop_s >= t_end - 0.5)
        .map(|f| f.rate_last_half_bps)
        .collect();
    let jain_idx = jain(&long);

    // Flow arrival: the last start after time zero, if any.
    let t_join = flows
        .iter()
        .filter(|f| f.size_bytes.is_none())
        .map(|f| f.start_s)
        .filter(|s| *s > 1.0)
        .fold(None, |a: Option<f64>, s| Some(a.map_or(s, |a| a.max(s))));
    let (mut settling_s, mut over) = (None, None);
    if let Some(tj) = t_join {
        let active: Vec<&FlowResult> = flows
            .iter()
            .filter(|f| f.size_bytes.is_none())
            .filter(|f| f.start_s <= tj + 0.5 && f.stop_s >= t_end - 0.5)
            .collect();
        let tail = t_end - (t_end - tj) / 4.0;
        // Each flow's own final rate: its mean over the last quarter (the
        // allocation the scheme converged to). Overshoot is the peak above
        // it (the control-theory reading); settling is towards it, or
        // towards the equal share of the bottleneck when the scenario says
        // `settle_to = "fair_share"`.
        let fair =
            links.first().map_or(0.0, |l| l.capacity_bps as f64) / active.len().max(1) as f64;
        let finals: Vec<f64> = active
            .iter()
            .map(|f| {
                let w: Vec<f64> = f
                    .rates
                    .iter()
                    .filter(|(t, _)| *t > tail)
                    .map(|x| x.1)
                    .collect();
                w.iter().sum::<f64>() / w.len().max(1) as f64
            })
            .collect();
        let targets: Vec<f64> = if sc.settle_to_fair_share {
            vec![fair; active.len()]
        } else {
            finals.clone()
        };
        // Rates after the join divided by `by`, aligned on the same windows.
        let normalised = |by: &[f64]| -> Vec<Vec<(f64, f64)>> {
            let norm: Vec<Vec<(f64, f64)>> = active
                .iter()
                .zip(by)
                .map(|(f, x)| {
                    f.rates
                        .iter()
                        .filter(|(t, _)| *t > tj)
                        .map(|(t, r)| (*t, r / x))
                        .collect()
                })
                .collect();
            let n = norm.iter().map(Vec::len).min().unwrap_or(0);
            norm.into_iter()
                .map(|mut v| {
                    let k = v.len() - n;
                    v.drain(..k);
                    v
                })
                .collect()
        };
        if !active.is_empty() && finals.iter().chain(&targets).all(|x| *x > 0.0) {
            settling_s = settling_time(&normalised(&targets), tj, 1.0, SETTLING_BAND);
            let joiners: Vec<Vec<(f64, f64)>> = active
                .iter()
                .zip(normalised(&finals))
                .filter(|(f, _)| f.start_s > 1.0)
                .map(|(_, v)| v)
                .collect();
            over = Some(overshoot(&joiners, tj, 1.0));
        }
    }

    RunResult {
        scenario: sc.name.clone(),
        scheme: scheme.to_string(),
        duration_s: t_end,
        flows,
        links,
        drops,
        drops_by_reason,
        penalised_flows,
        jain: jain_idx,
        settling_s,
        overshoot: over,
        has_arrival: t_join.is_some(),
        emulation,
        groups,
    }
}

/// The table's columns.
pub const TABLE_COLUMNS: [&str; 12] = [
    "scenario",
    "scheme",
    "util%",
    "jain",
    "p95q_ms",
    "rttq_ms",
    "drops",
    "marks",
    "nacks",
    "settle_s",
    "over%",
    "flows Mbit/s (last half)",
];

/// Cells padded to the table's column widths.
fn padded<S: std::fmt::Display>(c: &[S; 12]) -> String {
    format!(
        "{:<10} {:<7} {:>6} {:>6} {:>8} {:>8} {:>6} {:>6} {:>6} {:>8} {:>6}  {}",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
    )
}

/// The table header.
pub fn table_header() -> String {
    padded(&TABLE_COLUMNS)
}

/// The table's cells of one run, in the header's order.
pub fn table_cells(r: &RunResult) -> [String; 12] {
    let b = r.bottleneck();
    let nacks: u64 = r.flows.iter().map(|f| f.nacks).sum();
    // Many short flows (Poisson arrivals) would make a row of hundreds of
    // columns; their story is the delivery table.
    let flows: Vec<String> = if r.flows.len() > 8 {
        let sized = r.flows.iter().filter(|f| f.size_bytes.is_some()).count();
        let mut cells = vec![format!("{} flows ({sized} sized)", r.flows.len())];
        cells.extend(
            r.flows
                .iter()
                .filter(|f| f.size_bytes.is_none())
                .take(8)
                .map(|f| format!("{}={:.2}", f.name, f.rate_last_half_bps / 1e6)),
        );
        cells
    } else {
        r.flows
            .iter()
            .map(|f| format!("{}={:.2}", f.name, f.rate_last_half_bps / 1e6))
            .collect()
    };
    let settle = match (r.has_arrival, r.settling_s) {
        (false, _) => "-".to_string(),
        (true, Some(s)) => format!("{s:.1}"),
        (true, None) => "never".to_string(),
    };
    let over = r
        .overshoot
        .map_or_else(|| "-".to_string(), |o| format!("{:.0}", o * 100.0));
    [
        r.scenario.clone(),
        r.scheme.clone(),
        format!("{:.1}", b.utilisation * 100.0),
        if r.flows.iter().all(|f| f.size_bytes.is_some()) {
            "-".to_string()
        } else {
            format!("{:.3}", r.jain)
        },
        format!("{:.1}", b.queue_p95_ms),
        r.flow_queueing_p95_ms()
            .map_or_else(|| "-".to_string(), |q| format!("{q:.1}")),
        r.drops.to_string(),
        b.marks.to_string(),
        nacks.to_string(),
        settle,
        over,
        flows.join(" "),
    ]
}

/// What follows the flows on a row: the other measured links, and a note
/// when links ran without their delay.
pub fn table_suffix(r: &RunResult) -> String {
    let mut s = String::new();
    for l in &r.links[1..] {
        let _ = write!(
            s,
            " | {}->{} util {:.1}%",
            l.from,
            l.to,
            l.utilisation * 100.0
        );
    }
    if !r.emulation {
        s.push_str(" (no delay emulation)");
    }
    s
}

/// One table row.
pub fn table_row(r: &RunResult) -> String {
    padded(&table_cells(r)) + &table_suffix(r)
}
