//! The outcome each scenario's runs must show (docs/testbed.md lists them):
//! one check per scenario, returning what it missed.

use icn_lab::results::RunResult;
use icn_lab::{scenario_path, Scenario};

pub fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

/// Flows that exited with an error invalidate any figure.
pub fn check_flows_ran(r: &RunResult) -> Vec<String> {
    r.flows
        .iter()
        .filter_map(|f| {
            f.error
                .as_ref()
                .map(|e| format!("{}/{}: flow {} failed: {e}", r.scenario, r.scheme, f.name))
        })
        .collect()
}

/// Scenario 1 for one scheme.
pub fn check_dumbbell(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    let b = r.bottleneck();
    if r.scheme == "none" {
        // The contrast: a window far above the BDP fills icnfwd's queue.
        if b.queue_p95_ms < 200.0 {
            e.push(format!(
                "none: p95 queue {:.0} ms, expected a bloated queue (>= 200 ms)",
                b.queue_p95_ms
            ));
        }
        return e;
    }
    if b.utilisation < 0.90 {
        e.push(format!(
            "{}: utilisation {:.1}% < 90%",
            r.scheme,
            b.utilisation * 100.0
        ));
    }
    if r.jain < 0.95 {
        e.push(format!("{}: Jain {:.3} < 0.95", r.scheme, r.jain));
    }
    if matches!(r.scheme.as_str(), "rcp" | "mircc" | "qsccp") && r.drops > 0 {
        e.push(format!(
            "{}: {} Data drops, expected none",
            r.scheme, r.drops
        ));
    }
    e
}

/// Scenario 1 across schemes: the rate-based schemes queue less than pcon
/// (bottleneck queue p95, from the forwarder's counters).
pub fn check_dumbbell_delays(rs: &[RunResult]) -> Vec<String> {
    let mut e = Vec::new();
    let Some(pcon) = rs.iter().find(|r| r.scheme == "pcon") else {
        return vec!["no pcon run to compare with".into()];
    };
    for r in rs
        .iter()
        .filter(|r| matches!(r.scheme.as_str(), "rcp" | "mircc" | "qsccp"))
    {
        if r.bottleneck().queue_p95_ms >= pcon.bottleneck().queue_p95_ms {
            e.push(format!(
                "{}: p95 queue {:.1} ms (max {:.1}) not below pcon's {:.1} ms",
                r.scheme,
                r.bottleneck().queue_p95_ms,
                r.bottleneck().queue_max_ms,
                pcon.bottleneck().queue_p95_ms
            ));
        }
    }
    e
}

/// Scenario 3: EF capped near 1 Mbit/s at near-propagation RTT, the AF2 :
/// AF1 : BE shares 3 : 2 : 1 within 10%, no drops.
pub fn check_qsccp_classes(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    let rate = |n: &str| r.flow(n).rate_last_half_bps;
    let ef = mbps(rate("ef"));
    if !(0.8..=1.15).contains(&ef) {
        e.push(format!(
            "EF {ef:.2} Mbit/s, expected its 1 Mbit/s cap (0.8..=1.15)"
        ));
    }
    let be = rate("be").max(1.0);
    for (class, want) in [("af2", 3.0), ("af1", 2.0)] {
        let ratio = rate(class) / be;
        if (ratio - want).abs() > 0.1 * want {
            e.push(format!("{class}/be = {ratio:.2}, expected {want} ± 10%"));
        }
    }
    if r.drops > 0 {
        e.push(format!("{} Data drops, expected none", r.drops));
    }
    // Every consumer follows TargetRate: none may be judged greedy (one CI
    // run did, lagging its σ cut, and its flow queue stood full).
    if !r.penalised_flows.is_empty() {
        e.push(format!(
            "compliant flows penalised as greedy: {:?}",
            r.penalised_flows
        ));
    }
    // "Near propagation delay": the p95 within three 8 KB Data
    // serialisations at 10 Mbit/s (~20 ms) of its minimum RTT, and the
    // minimum itself near the path's propagation RTT from the scenario file
    // (plus one Data serialisation at the bottleneck and 5 ms of processing
    // on 2 cores); its queueing delay (p95 − min) far below every other
    // class's.
    let ef_rtt = r.flow("ef").rtt_p95_ms;
    match (r.flow("ef").rtt_min_ms, ef_rtt) {
        (Some(min), Some(p95)) if p95 <= min + 20.0 => {}
        (min, p95) => e.push(format!(
            "EF RTT p95 {p95:?} ms not within 20 ms of its minimum {min:?} ms"
        )),
    }
    let sc = Scenario::load(&scenario_path(&r.scenario)).unwrap_or_else(|e| panic!("{e}"));
    let ef = sc
        .flows
        .iter()
        .find(|f| f.name == "ef")
        .expect("an ef flow");
    let prop_rtt_ms = 2.0 * sc.path_delay_ms(&ef.consumer, &ef.producer).unwrap_or(0.0);
    let serialisation_ms = 8000.0 * 8.0 / r.bottleneck().capacity_bps as f64 * 1e3;
    let allowed = prop_rtt_ms + serialisation_ms + 5.0;
    match r.flow("ef").rtt_min_ms {
        Some(min) if min <= allowed => {}
        min => e.push(format!(
            "EF minimum RTT {min:?} ms above the path's propagation RTT {prop_rtt_ms:.1} ms + one Data serialisation {serialisation_ms:.1} ms + 5 ms"
        )),
    }
    let queueing = |c: &str| {
        let f = r.flow(c);
        Some(f.rtt_p95_ms? - f.rtt_min_ms?)
    };
    let others = ["af2", "af1", "be"].map(|c| queueing(c).unwrap_or(f64::INFINITY));
    // Below half the best other class's, or two Data serialisations at the
    // bottleneck, whichever is more: the link is not preemptive, so an EF
    // Data may wait behind the DT Data in service and then serialise
    // itself (2 × 6.4 ms here). Measured: EF 9.7-12 ms above its minimum
    // before and after QSCCP's DT headroom; the DT classes' queueing fell
    // from 40-90 ms (σ let their queues stand) to 7-10 ms, so half of
    // theirs went below what a non-preemptive link allows any class.
    if let Some(ef) = queueing("ef") {
        let best = others.into_iter().fold(f64::INFINITY, f64::min);
        let floor = 2.0 * serialisation_ms;
        if ef >= (best / 2.0).max(floor) {
            e.push(format!(
                "EF queueing (RTT p95 - min) {ef:.1} ms not below half the best other class's ({best:.1} ms) nor two Data serialisations ({floor:.1} ms)"
            ));
        }
    }
    if r.bottleneck().utilisation < 0.90 {
        e.push(format!(
            "utilisation {:.1}% < 90%",
            r.bottleneck().utilisation * 100.0
        ));
    }
    // No standing queue: measured 38.8-58.2 ms p95 (Interests held at r1
    // plus r2's Data backlog), 432 ms in the CI run that found the pacing
    // and greed defects.
    let q = r.bottleneck().queue_p95_ms;
    if q > 150.0 {
        e.push(format!("bottleneck p95 queue {q:.1} ms > 150 ms"));
    }
    e
}

/// Scenario 4: ≥ 18 Mbit/s over the two 10 Mbit/s paths for multipath
/// schemes; best-route (none) about 10.
pub fn check_diamond(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    let got = mbps(r.total_rate_bps());
    if r.scheme == "none" {
        if !(8.0..=11.0).contains(&got) {
            e.push(format!(
                "best-route got {got:.2} Mbit/s, expected about 10 (8..=11)"
            ));
        }
    } else if got < 18.0 {
        e.push(format!(
            "{}: {got:.2} Mbit/s over two 10 Mbit/s paths, expected >= 18",
            r.scheme
        ));
    }
    e
}

/// Scenario 5: the greedy flow keeps at most its share, the others ≥ 90%.
pub fn check_greedy(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    let share = r.bottleneck().capacity_bps as f64 / r.flows.len() as f64;
    let g = r.flow("g").rate_last_half_bps;
    if r.scheme == "qsccp" && r.penalised_flows.is_empty() {
        e.push("no QSCCP scheduler penalised the greedy flow".to_string());
    }
    if g > 1.1 * share {
        e.push(format!(
            "greedy flow kept {:.2} Mbit/s, more than its share {:.2} (+10%)",
            mbps(g),
            mbps(share)
        ));
    }
    for n in ["c1", "c2"] {
        let x = r.flow(n).rate_last_half_bps;
        if x < 0.9 * share {
            e.push(format!(
                "well-behaved {n} got {:.2} Mbit/s, below 90% of its share {:.2}",
                mbps(x),
                mbps(share)
            ));
        }
    }
    e
}

/// Scenario 6: per-link max-min on the shared link, A on its other path.
pub fn check_ccc(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    let (a, b) = (
        mbps(r.flow("A").rate_last_half_bps),
        mbps(r.flow("B").rate_last_half_bps),
    );
    let shared = r.links[0].capacity_bps as f64 / 1e6;
    if !(0.4 * shared..=0.6 * shared).contains(&b) {
        e.push(format!(
            "B got {b:.2} Mbit/s, expected about half of the shared {shared} Mbit/s"
        ));
    }
    if a < 1.2 * shared {
        e.push(format!(
            "A got {a:.2} Mbit/s, expected its other path plus half the shared link (>= {:.1})",
            1.2 * shared
        ));
    }
    for l in &r.links {
        if l.utilisation < 0.85 {
            e.push(format!(
                "{}->{} utilisation {:.1}% < 85%",
                l.from,
                l.to,
                l.utilisation * 100.0
            ));
        }
    }
    e
}
