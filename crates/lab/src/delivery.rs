//! Delivery times of sized flows (`size_mb`, `[[arrivals]]`): MIRCC's
//! Fig. 9a reports the mean delivery time per consumer node, Fig. 8 their
//! CDF. Flows that did not complete before the run ended are counted apart
//! (a mean over completed flows alone would flatter a slow scheme).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use crate::metrics::percentile;
use crate::results::RunResult;

/// One scheme's delivery figures over a set of flows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeliveryStats {
    pub flows: usize,
    pub completed: usize,
    pub mean_s: Option<f64>,
    pub median_s: Option<f64>,
    pub p95_s: Option<f64>,
}

/// The figures of `run`'s sized flows whose consumer passes `keep`.
pub fn stats(run: &RunResult, keep: &dyn Fn(&str) -> bool) -> DeliveryStats {
    let sized: Vec<_> = run
        .flows
        .iter()
        .filter(|f| f.size_bytes.is_some() && keep(&f.consumer))
        .collect();
    let done: Vec<f64> = sized.iter().filter_map(|f| f.delivery_s).collect();
    DeliveryStats {
        flows: sized.len(),
        completed: done.len(),
        mean_s: (!done.is_empty()).then(|| done.iter().sum::<f64>() / done.len() as f64),
        median_s: percentile(&done, 0.5),
        p95_s: percentile(&done, 0.95),
    }
}

fn cell(s: &DeliveryStats) -> String {
    match s.mean_s {
        Some(m) => format!("{m:.2} ({}/{})", s.completed, s.flows),
        None => format!("- (0/{})", s.flows),
    }
}

/// The delivery table of `runs` (one column per scheme): mean delivery
/// time (completed/flows) per consumer node, then over all flows with the
/// median and p95. `None` when no run has a sized flow.
pub fn table(runs: &[RunResult]) -> Option<String> {
    let nodes: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.flows.iter())
        .filter(|f| f.size_bytes.is_some())
        .map(|f| f.consumer.as_str())
        .collect();
    if nodes.is_empty() {
        return None;
    }
    let mut s = format!("{:<16}", "delivery s (done/n)");
    for r in runs {
        let _ = write!(s, " {:>16}", r.scheme);
    }
    for n in &nodes {
        let _ = write!(s, "\n{:<16}", format!("consumer {n}"));
        for r in runs {
            let _ = write!(s, " {:>16}", cell(&stats(r, &|c| c == *n)));
        }
    }
    let all: Vec<DeliveryStats> = runs.iter().map(|r| stats(r, &|_| true)).collect();
    let _ = write!(s, "\n{:<16}", "all: mean");
    for a in &all {
        let _ = write!(s, " {:>16}", cell(a));
    }
    for (label, pick) in [
        (
            "all: median",
            (|a: &DeliveryStats| a.median_s) as fn(&DeliveryStats) -> Option<f64>,
        ),
        ("all: p95", |a: &DeliveryStats| a.p95_s),
    ] {
        let _ = write!(s, "\n{label:<16}");
        for a in &all {
            let v = pick(a).map_or_else(|| "-".to_string(), |x| format!("{x:.2}"));
            let _ = write!(s, " {v:>16}");
        }
    }
    s.push('\n');
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::FlowResult;

    fn flow(name: &str, consumer: &str, delivery_s: Option<f64>) -> FlowResult {
        FlowResult {
            name: name.into(),
            consumer: consumer.into(),
            class: "be".into(),
            start_s: 0.0,
            stop_s: 10.0,
            rate_last_half_bps: 0.0,
            frame_bytes: None,
            rates: vec![],
            send_rates: vec![],
            nacks: 0,
            rtt_min_ms: None,
            rtt_p95_ms: None,
            rtt_series_ms: vec![],
            error: None,
            size_bytes: Some(1000),
            delivery_s,
            icncat_stats: None,
        }
    }

    fn run(flows: Vec<FlowResult>) -> RunResult {
        RunResult {
            scenario: "t".into(),
            scheme: "mircc".into(),
            duration_s: 10.0,
            flows,
            links: vec![],
            drops: 0,
            drops_by_reason: Default::default(),
            penalised_flows: Default::default(),
            jain: 1.0,
            settling_s: None,
            overshoot: None,
            has_arrival: false,
            emulation: true,
            groups: vec![],
        }
    }

    #[test]
    fn unfinished_flows_are_counted_apart_and_nodes_grouped() {
        let r = run(vec![
            flow("a0", "n1", Some(1.0)),
            flow("a1", "n1", Some(3.0)),
            flow("a2", "n2", None),
            flow("a3", "n2", Some(8.0)),
        ]);
        let n1 = stats(&r, &|c| c == "n1");
        assert_eq!((n1.flows, n1.completed, n1.mean_s), (2, 2, Some(2.0)));
        let all = stats(&r, &|_| true);
        assert_eq!((all.flows, all.completed), (4, 3));
        assert_eq!(all.mean_s, Some(4.0));
        assert_eq!(all.median_s, Some(3.0));
        let t = table(&[r]).expect("sized flows");
        assert!(t.contains("consumer n2") && t.contains("8.00 (1/2)"), "{t}");
        assert!(table(&[run(vec![])]).is_none());
    }
}
