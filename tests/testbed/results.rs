//! Turning a run's raw counters into the figures the scenarios assert and
//! the table prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::metrics::{jain, mean_rate, overshoot, percentile, settling_time, windowed_rates};
use super::mgmt::FaceSnapshot;
use super::run::RunData;
use super::scenario::Scenario;

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

#[derive(Debug, Clone)]
pub struct FlowResult {
    pub name: String,
    pub class: String,
    pub start_s: f64,
    pub stop_s: f64,
    /// Data bytes delivered to the consumer's face, over the last half of
    /// the run (or the part of it the flow was active), bit/s.
    pub rate_last_half_bps: f64,
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
    pub error: Option<String>,
    /// icncat's `--stats-json`: written when the flow completed, and also
    /// when the harness stopped it at its stop time (SIGINT flushes it).
    pub icncat_stats: Option<serde_json::Value>,
}

#[derive(Debug, Clone)]
pub struct LinkResult {
    pub from: String,
    pub to: String,
    pub capacity_bps: u64,
    /// Bytes sent by the face over the last half / capacity.
    pub utilisation: f64,
    /// Data backlog + Interest-shaper backlog (as Data time) of the link, ms.
    pub queue_p95_ms: f64,
    pub queue_max_ms: f64,
    pub marks: u64,
    /// (run time s, bit/s): the rate the link's Interest side stamps into
    /// returning Data (RCP R, MIRCC Rp) at every sample; empty for schemes
    /// that stamp none.
    pub stamped_rates: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
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

fn series(
    samples: &[(f64, String, FaceSnapshot)],
    node: &str,
    f: impl Fn(&FaceSnapshot) -> Option<f64>,
) -> Vec<(f64, f64)> {
    samples
        .iter()
        .filter(|(_, n, _)| n == node)
        .filter_map(|(t, _, s)| f(s).map(|v| (*t, v)))
        .collect()
}

/// Drop counters as `node:reason` -> count, summed over the node's faces.
/// (A face that closed during the run takes its counters with it.)
fn drops_of(snaps: &BTreeMap<String, FaceSnapshot>) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (node, s) in snaps {
        for st in &s.states {
            for (r, c) in &st.drops {
                *m.entry(format!("{node}:{r}")).or_insert(0) += c;
            }
        }
    }
    m
}

/// node -> flows penalised as greedy on its faces so far (non-zero only).
fn penalties_of(snaps: &BTreeMap<String, FaceSnapshot>) -> BTreeMap<String, u64> {
    snaps
        .iter()
        .map(|(node, s)| {
            (
                node.clone(),
                s.states.iter().map(|st| st.penalised_flows).sum(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

pub fn derive(sc: &Scenario, scheme: &str, d: &RunData) -> RunResult {
    let t_end = d.duration_s;
    let half = t_end / 2.0;
    let mut flows = Vec::new();
    for f in &sc.flows {
        let (start, stop) = d.flow_times.get(&f.name).copied().unwrap_or((0.0, 0.0));
        let (bytes, nacks) = match d.flow_faces.get(&f.name) {
            Some((node, id)) => {
                let b = series(&d.samples, node, |s| {
                    s.face(*id).map(|x| x.n_out_bytes as f64)
                });
                let n = d
                    .samples
                    .iter()
                    .filter(|(_, n, _)| n == node)
                    .filter_map(|(_, _, s)| s.face(*id).map(|x| x.counters.n_out_nacks))
                    .max()
                    .unwrap_or(0);
                (b, n)
            }
            None => (Vec::new(), 0),
        };
        // A flow that completed early stops where its face vanished.
        let stop = bytes.last().map_or(stop, |(t, _)| stop.min(t + 0.1));
        let (a, b) = (start.max(half), stop.min(t_end));
        let rate = if b > a {
            mean_rate(&bytes, a, b) * 8.0
        } else {
            0.0
        };
        let rates: Vec<(f64, f64)> = windowed_rates(&bytes, start, stop, RATE_WINDOW_S)
            .into_iter()
            .map(|(t, r)| (t, r * 8.0))
            .collect();
        let rtts = d.flow_rtts.get(&f.name).map_or(&[][..], Vec::as_slice);
        flows.push(FlowResult {
            name: f.name.clone(),
            class: f.class.clone(),
            start_s: start,
            stop_s: stop,
            rate_last_half_bps: rate,
            rates,
            send_rates: d
                .flow_send_rates
                .get(&f.name)
                .map(|v| v.iter().map(|&(t, r)| (start + t, r)).collect())
                .unwrap_or_default(),
            nacks,
            rtt_min_ms: rtts.iter().copied().reduce(f64::min),
            rtt_p95_ms: percentile(&rtts[rtts.len() / 2..], 0.95),
            error: d.flow_errors.get(&f.name).cloned(),
            icncat_stats: d.flow_stats.get(&f.name).cloned(),
        });
    }

    let mut links = Vec::new();
    for (m, &(fwd, rev)) in sc.measure.iter().zip(&d.measured_faces) {
        let cap = sc.link(&m.from, &m.to).expect("validated").capacity_bps;
        let bytes = series(&d.samples, &m.from, |s| {
            s.face(fwd).map(|x| x.n_out_bytes as f64)
        });
        let utilisation = mean_rate(&bytes, half, t_end) * 8.0 / cap as f64;
        // Average Data size on this face, to express queued Interests as time.
        let data_size = match (d.first[&m.from].face(fwd), d.last[&m.from].face(fwd)) {
            (Some(a), Some(b)) if b.counters.n_out_data > a.counters.n_out_data => {
                (b.n_out_bytes - a.n_out_bytes) as f64
                    / (b.counters.n_out_data - a.counters.n_out_data) as f64
            }
            _ => 8200.0,
        };
        let data_q = series(&d.samples, &m.from, |s| {
            s.state(fwd).map(|x| x.queue_data_bytes as f64)
        });
        let int_q = rev.map(|r| {
            series(&d.samples, &m.to, |s| {
                s.state(r).map(|x| x.queue_interests as f64)
            })
        });
        let delays: Vec<f64> = data_q
            .iter()
            .filter(|(t, _)| *t >= half)
            .map(|(t, q)| {
                let iq = int_q
                    .as_ref()
                    .and_then(|s| super::metrics::value_at(s, *t))
                    .unwrap_or(0.0);
                (q + iq * data_size) * 8.0 / cap as f64 * 1e3
            })
            .collect();
        let marks = match (d.first[&m.from].state(fwd), d.last[&m.from].state(fwd)) {
            (Some(a), Some(b)) => b.n_out_marked.saturating_sub(a.n_out_marked),
            _ => 0,
        };
        let stamped_rates = rev.map_or_else(Vec::new, |r| {
            series(&d.samples, &m.to, |s| {
                s.state(r)?.primary_rate_bps.map(|x| x as f64)
            })
        });
        links.push(LinkResult {
            from: m.from.clone(),
            to: m.to.clone(),
            capacity_bps: cap,
            utilisation,
            queue_p95_ms: percentile(&delays, 0.95).unwrap_or(0.0),
            queue_max_ms: delays.iter().copied().fold(0.0, f64::max),
            marks,
            stamped_rates,
        });
    }

    let (before, after) = (drops_of(&d.first), drops_of(&d.last));
    let drops_by_reason: BTreeMap<String, u64> = after
        .iter()
        .map(|(r, c)| (r.clone(), c - before.get(r).copied().unwrap_or(0).min(*c)))
        .filter(|(_, c)| *c > 0)
        .collect();
    let drops = drops_by_reason
        .iter()
        .filter(|(r, _)| is_congestion_drop(r.rsplit(':').next().unwrap_or(r)))
        .map(|(_, c)| c)
        .sum();

    let long: Vec<f64> = flows
        .iter()
        .filter(|f| f.start_s <= half + 0.5 && f.stop_s >= t_end - 0.5)
        .map(|f| f.rate_last_half_bps)
        .collect();
    let jain_idx = jain(&long);

    // Flow arrival: the last start after time zero, if any.
    let t_join = flows
        .iter()
        .map(|f| f.start_s)
        .filter(|s| *s > 1.0)
        .fold(None, |a: Option<f64>, s| Some(a.map_or(s, |a| a.max(s))));
    let (mut settling_s, mut over) = (None, None);
    if let Some(tj) = t_join {
        let active: Vec<&FlowResult> = flows
            .iter()
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
        penalised_flows: penalties_of(&d.last),
        jain: jain_idx,
        settling_s,
        overshoot: over,
        has_arrival: t_join.is_some(),
        emulation: d.caps.emulation,
    }
}

/// The table header.
pub fn table_header() -> String {
    format!(
        "{:<10} {:<7} {:>6} {:>6} {:>8} {:>8} {:>6} {:>6} {:>6} {:>8} {:>6}  {}",
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
        "flows Mbit/s (last half)"
    )
}

/// One table row.
pub fn table_row(r: &RunResult) -> String {
    let b = r.bottleneck();
    let nacks: u64 = r.flows.iter().map(|f| f.nacks).sum();
    let flows: Vec<String> = r
        .flows
        .iter()
        .map(|f| format!("{}={:.2}", f.name, f.rate_last_half_bps / 1e6))
        .collect();
    let settle = match (r.has_arrival, r.settling_s) {
        (false, _) => "-".to_string(),
        (true, Some(s)) => format!("{s:.1}"),
        (true, None) => "never".to_string(),
    };
    let over = r
        .overshoot
        .map_or_else(|| "-".to_string(), |o| format!("{:.0}", o * 100.0));
    let mut s = format!(
        "{:<10} {:<7} {:>6.1} {:>6.3} {:>8.1} {:>8} {:>6} {:>6} {:>6} {:>8} {:>6}  {}",
        r.scenario,
        r.scheme,
        b.utilisation * 100.0,
        r.jain,
        b.queue_p95_ms,
        r.flow_queueing_p95_ms()
            .map_or_else(|| "-".to_string(), |q| format!("{q:.1}")),
        r.drops,
        b.marks,
        nacks,
        settle,
        over,
        flows.join(" ")
    );
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
