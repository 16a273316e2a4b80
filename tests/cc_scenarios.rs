//! Congestion-control scenarios on a namespace testbed (issue 6): every
//! scheme inside real icnfwd processes, on the papers' topologies, with
//! measured outcomes asserted. docs/testbed.md explains the harness.
//!
//! - CI subset (plain `cargo test`): the tests without `#[ignore]`, each
//!   at its scenario's `ci_duration_s`.
//! - Full set and the table: `cargo test --release --test cc_scenarios --
//!   --ignored --nocapture full_table` (every scenario × scheme at
//!   `duration_s`). `ICN_TESTBED_FULL=1` runs the single tests at full length.
//!
//! Without root or `ip netns` every test prints a loud SKIPPED banner.

use std::collections::BTreeMap;
use std::sync::Mutex;

use icn_lab::real as testbed;
use icn_lab::results::{table_header, table_row, RunResult};
use icn_lab::{scenario_path, Scenario};
use icn_sim::response::{Blip, Grid, Response};

fn full_mode() -> bool {
    std::env::var_os("ICN_TESTBED_FULL").is_some_and(|v| v != "0")
}

/// Runs of this process, so cross-scheme checks reuse single-scheme runs.
static CACHE: Mutex<BTreeMap<(String, String, bool), RunResult>> = Mutex::new(BTreeMap::new());

/// Runs one scenario under one scheme (or returns the cached run); `None`
/// when the machine cannot build namespaces (after saying so loudly).
fn run_case(name: &str, scheme: &str, full: bool) -> Option<RunResult> {
    if !testbed::available_or_explain(&format!("{name}/{scheme}")) {
        return None;
    }
    let key = (name.to_string(), scheme.to_string(), full);
    let _serial = testbed::run::lock();
    if let Some(r) = CACHE.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Some(r.clone());
    }
    let sc = Scenario::load(&scenario_path(name)).unwrap_or_else(|e| panic!("{e}"));
    let bins = testbed::bins::bins().unwrap_or_else(|e| panic!("{e}"));
    let duration = if full {
        sc.duration_s
    } else {
        sc.ci_duration_for(scheme)
    };
    let r = testbed::run::run(&sc, scheme, duration, &bins)
        .unwrap_or_else(|e| panic!("{name}/{scheme}: {e}"));
    eprintln!("{}\n{}", table_header(), table_row(&r));
    details(&r);
    CACHE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, r.clone());
    Some(r)
}

fn details(r: &RunResult) {
    if !r.drops_by_reason.is_empty() {
        eprintln!("  drops by reason: {:?}", r.drops_by_reason);
    }
    if !r.penalised_flows.is_empty() {
        eprintln!("  flows penalised as greedy: {:?}", r.penalised_flows);
    }
    for f in &r.flows {
        let rtt = match (f.rtt_min_ms, f.rtt_p95_ms) {
            (Some(a), Some(b)) => format!("rtt min {a:.1} p95 {b:.1} ms"),
            _ => "no rtt samples".to_string(),
        };
        eprintln!(
            "  flow {} [{}] {:.2} Mbit/s, {rtt}, nacks {}{}",
            f.name,
            f.class,
            mbps(f.rate_last_half_bps),
            f.nacks,
            f.error
                .as_deref()
                .map(|e| format!(", FAILED: {e}"))
                .or_else(|| {
                    let st = f.icncat_stats.as_ref()?;
                    let done = st.get("completed").and_then(|v| v.as_bool());
                    Some(format!(
                        ", {}: {:.2} Mbit/s goodput over {:.1} s",
                        if done == Some(true) {
                            "completed"
                        } else {
                            "stopped"
                        },
                        st.get("goodput_bps")?.as_f64()? / 1e6,
                        st.get("elapsed_s")?.as_f64()?
                    ))
                })
                .unwrap_or_default()
        );
    }
}

fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

fn assert_ok(errors: Vec<String>) {
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

/// Flows that exited with an error invalidate any figure.
fn check_flows_ran(r: &RunResult) -> Vec<String> {
    r.flows
        .iter()
        .filter_map(|f| {
            f.error
                .as_ref()
                .map(|e| format!("{}/{}: flow {} failed: {e}", r.scenario, r.scheme, f.name))
        })
        .collect()
}

// ---------------------------------------------------------------- checks

/// Scenario 1 for one scheme.
fn check_dumbbell(r: &RunResult) -> Vec<String> {
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
fn check_dumbbell_delays(rs: &[RunResult]) -> Vec<String> {
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

/// Scenario 2 for one scheme: the four flows end up sharing fairly.
/// (Settling is compared between the schemes, below.)
fn check_arrival(r: &RunResult) -> Vec<String> {
    let mut e = check_flows_ran(r);
    if r.jain < 0.90 {
        e.push(format!(
            "{}: Jain {:.3} < 0.90 after the arrival",
            r.scheme, r.jain
        ));
    }
    e
}

/// The last flow's start (the arrival; 0 when every flow starts at once).
fn join_time(r: &RunResult) -> f64 {
    r.flows.iter().map(|f| f.start_s).fold(0.0, f64::max)
}

/// The arrival's time span: the last join to the first flow stop.
fn arrival_span(r: &RunResult) -> (f64, f64) {
    let end = r
        .flows
        .iter()
        .map(|f| f.stop_s)
        .fold(f64::INFINITY, f64::min);
    (join_time(r), end)
}

/// Prints each flow's windowed rate (Mbit/s) from the join on, with the
/// time after the join at which its peak above its final rate falls.
fn show_arrival(r: &RunResult) {
    let tj = join_time(r);
    let tail = r.duration_s - (r.duration_s - tj) / 4.0;
    for f in &r.flows {
        let last: Vec<f64> = f
            .rates
            .iter()
            .filter(|(t, _)| *t > tail)
            .map(|x| x.1)
            .collect();
        let fin = last.iter().sum::<f64>() / last.len().max(1) as f64;
        let after: Vec<(f64, f64)> = f.rates.iter().copied().filter(|(t, _)| *t > tj).collect();
        let peak = after
            .iter()
            .map(|&(t, x)| (x / fin.max(1.0) - 1.0, t - tj))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        let first: Vec<String> = after
            .iter()
            .take(8)
            .map(|(_, x)| format!("{:.2}", x / 1e6))
            .collect();
        // Windows later than 2 s after the join outside ±20 % of the
        // equal share (what keeps a flow from counting as settled).
        let share =
            r.links.first().map_or(0.0, |l| l.capacity_bps as f64) / r.flows.len().max(1) as f64;
        let late: Vec<String> = after
            .iter()
            .filter(|(t, x)| *t > tj + 2.0 && (x - share).abs() > 0.2 * share)
            .map(|(t, x)| format!("{:.2}@+{:.1}", x / 1e6, t - tj))
            .collect();
        println!(
            "  {} {}: final {:.2} Mbit/s, peak +{:.0}% at +{:.1} s; first 4 s: {}; late out of band: [{}] (last window ends +{:.1} s)",
            r.scheme,
            f.name,
            fin / 1e6,
            peak.0 * 100.0,
            peak.1,
            first.join(" "),
            late.join(" "),
            after.last().map_or(0.0, |x| x.0 - tj)
        );
    }
}

/// Overshoot of the joining flows as a group: the highest 0.5 s window of
/// their summed rate after the join, above the sum of their final rates
/// (means over the last quarter of the run), relative; at least 0.
fn joiners_overshoot(r: &RunResult) -> Option<f64> {
    let tj = join_time(r);
    let tail = r.duration_s - (r.duration_s - tj) / 4.0;
    let joiners: Vec<_> = r.flows.iter().filter(|f| f.start_s > 1.0).collect();
    let mut finals = 0.0;
    let mut series: Vec<Vec<f64>> = Vec::new();
    for f in &joiners {
        let last: Vec<f64> = f
            .rates
            .iter()
            .filter(|(t, _)| *t > tail)
            .map(|x| x.1)
            .collect();
        finals += last.iter().sum::<f64>() / last.len().max(1) as f64;
        series.push(
            f.rates
                .iter()
                .filter(|(t, _)| *t > tj)
                .map(|x| x.1)
                .collect(),
        );
    }
    // Windows are per flow (from its own start); align them on the last.
    let n = series.iter().map(Vec::len).min()?;
    if finals.is_nan() || finals <= 0.0 {
        return None;
    }
    let peak = (0..n)
        .map(|k| series.iter().map(|s| s[s.len() - n + k]).sum::<f64>())
        .fold(0.0, f64::max);
    Some((peak / finals - 1.0).max(0.0))
}

/// Band of a [`Response`]'s settling, relative to the final value.
const RESPONSE_BAND: f64 = 0.10;
/// Excursions this short and this shallow do not unsettle a rate: one
/// control period (T = 100 ms, one face-state sample) plus sampling
/// jitter, up to twice the band. On the testbed a consumer that stalls for
/// a moment (12 processes on 2 cores) sends a period's Interests late;
/// MIRCC's Rp, whose excess term follows each period's input (eqs. 4-5,
/// halved by the EWMA), answers with a 10-13 % step (measured) and is back
/// the next. RCP's R swings by single periods too, but 23-62 % below the
/// share (6 runs with a busy core, session 14): its law, not a stall. With
/// length alone as the allowance, such a swing passed as a blip, and RCP
/// "settled" at its first crossing of the band on the way down (0.48 s,
/// a tie with MIRCC in one of six runs) while it strayed for another 8-15
/// s. Overshoot and undershoot still count every excursion.
const RESPONSE_BLIP: Blip = Blip {
    max_s: 0.15,
    max_dev: 2.0 * RESPONSE_BAND,
};

/// [`Response`] of step series ((time s, value) at each change or sample)
/// on a 10 ms grid from `from` (the last join) to `to`; a series' final
/// value is its mean over the last quarter of that.
fn response(series: &[&[(f64, f64)]], from: f64, to: f64) -> Option<Response> {
    let g = grid(series, from, to)?;
    Some(g.response(&g.tail_means(0.25), RESPONSE_BAND, RESPONSE_BLIP))
}

/// Step series on a 10 ms grid over `[from, to)`; `None` for a span of
/// a second or less.
fn grid(series: &[&[(f64, f64)]], from: f64, to: f64) -> Option<Grid> {
    if to <= from + 1.0 {
        return None;
    }
    Grid::from_steps(series, from, to, 0.01)
}

fn show_response(x: &Response) -> String {
    let s = |x: Option<f64>| x.map_or("never".to_owned(), |s| format!("{s:.2} s"));
    format!(
        "settling {} (±{:.0} %; {} counting blips), overshoot {:.1} %, undershoot {:.1} %",
        s(x.settling_s),
        RESPONSE_BAND * 100.0,
        s(x.settling_strict_s),
        x.over * 100.0,
        x.under * 100.0
    )
}

/// The target utilisation η of RCP (eq. 1) and MIRCC (eq. 3): both
/// schemes' default, what they share among the flows.
const TARGET_UTILISATION: f64 = 0.95;

/// The new fair share each flow is told after the arrival: η·C/N.
fn fair_share_bps(r: &RunResult) -> f64 {
    TARGET_UTILISATION * r.bottleneck().capacity_bps as f64 / r.flows.len().max(1) as f64
}

/// [`Response`] of the bottleneck's stamped rate (RCP R, MIRCC Rp: eq. 1
/// against eqs. 3-5, as icnfwd's face state reports it every 100 ms)
/// towards the new fair share, from the join.
fn fair_share_response(r: &RunResult) -> Option<Response> {
    let (tj, end) = arrival_span(r);
    let g = grid(&[r.bottleneck().stamped_rates.as_slice()], tj, end)?;
    Some(g.response(&[fair_share_bps(r)], RESPONSE_BAND, RESPONSE_BLIP))
}

/// [`Response`] of the same stamped rate towards its own final value (mean
/// over the last quarter): the dynamics alone, whatever rate a scheme ends
/// at.
fn stamped_rate_response(r: &RunResult) -> Option<Response> {
    let (tj, end) = arrival_span(r);
    response(&[r.bottleneck().stamped_rates.as_slice()], tj, end)
}

/// [`Response`] of the consumers' sending rates (their `--log-cwnd`: R, or
/// Rp + Rs, at every change), towards their final values.
fn send_rate_response(r: &RunResult) -> Option<Response> {
    let (tj, end) = arrival_span(r);
    let s: Vec<&[(f64, f64)]> = r.flows.iter().map(|f| f.send_rates.as_slice()).collect();
    response(&s, tj, end)
}

/// Scenario 2: MIRCC's stamped rate reaches the new fair share (η·C/N,
/// ±10 %) within 1 s of the join and no later than RCP's (to the 100 ms
/// sample), and strays from it less once it has reacted.
///
/// Measured on the rate the bottleneck stamps (RCP's R against MIRCC's Rp,
/// what MIRCC Fig. 3 plots and what each consumer applies), read from
/// icnfwd's face state every 100 ms. Settling leaves out one control
/// period's blips after the first return ([`RESPONSE_BLIP`]); the
/// excursion counts every sample from the reaction on ([`Response`]).
///
/// Two effects separate the schemes on this testbed, and the output shows
/// both:
/// - Where each ends: RCP's flows end 14-19 % below the share (1.92-2.04
///   Mbit/s, utilisation 77-82 %): eq. 1 weighs the queue that collisions
///   of the paced 8 KB Data leave as β/α · q/d = q/d, MIRCC's eq. 3 as
///   β' · q/d = q/d / 10.
/// - How each gets there (printed "towards its own final value"): MIRCC's
///   EWMA (α = 0.5)
///   walks Rp down from the old rate and is within 10 % of its final value
///   from the sixth period on, every run; RCP's R (α = β = 0.4, gain T/d
///   capped at 1) cuts within two periods to 16-22 % of the share,
///   then either stays in band (as soon as MIRCC or a sample sooner) or
///   wanders up to +45 % for seconds. The virtual-time arrival test
///   (`crates/forwarder/tests/cc_arrival.rs`) compares the dynamics alone.
///
/// Goodput in 0.5 s windows (the harness's `settle_s` and `over%`, and
/// [`joiners_overshoot`]) and the consumers' sending rates are printed too.
fn check_arrival_pair(mircc: &RunResult, rcp: &RunResult) -> Vec<String> {
    show_arrival(mircc);
    show_arrival(rcp);
    let show = |x: Option<Response>| x.map_or("no series".to_owned(), |x| show_response(&x));
    let towards_share = [fair_share_response(mircc), fair_share_response(rcp)];
    for (r, st) in [mircc, rcp].into_iter().zip(towards_share) {
        println!(
            "  {} stamped rate, towards the fair share {:.2} Mbit/s: {}",
            r.scheme,
            mbps(fair_share_bps(r)),
            show(st)
        );
        println!(
            "  {} stamped rate, towards its own final value: {}",
            r.scheme,
            show(stamped_rate_response(r))
        );
        println!(
            "  {} sending rates, towards their final values: {}",
            r.scheme,
            show(send_rate_response(r))
        );
    }
    let joiners = |r: &RunResult| joiners_overshoot(r).map_or(f64::NAN, |x| x * 100.0);
    println!(
        "joiners' goodput overshoot: mircc {:.1}%, rcp {:.1}%",
        joiners(mircc),
        joiners(rcp)
    );
    let [Some(m), Some(r)] = towards_share else {
        return vec!["no stamped-rate series from the bottleneck".into()];
    };
    let mut e = Vec::new();
    let inf = f64::INFINITY;
    let (sm, sr) = (m.settling_s.unwrap_or(inf), r.settling_s.unwrap_or(inf));
    println!("settling towards the fair share: mircc {sm:.2} s, rcp {sr:.2} s");
    // MIRCC's EWMA takes six periods from the old rate: in band within 1 s.
    if sm > 1.0 {
        e.push(format!(
            "mircc's Rp reaches the fair share {sm:.2} s after the join, expected within 1 s"
        ));
    }
    // Settling is read off face-state samples 100 ms apart, so two times
    // in the same sample are a tie the testbed cannot split. Measured with
    // a busy core (12 runs, session 14): MIRCC 0.38-0.48 s every run, RCP
    // 0.48-2.58 s; RCP's best runs cut and come back within five periods
    // and meet MIRCC's slowest in the same sample (2 of 12), where
    // "sooner" failed on a tie. Later than RCP by a sample still fails.
    if sm > sr {
        e.push(format!(
            "mircc's Rp reaches the fair share in {sm:.2} s, later than rcp's R ({sr:.2} s)"
        ));
    }
    if m.worst() >= r.worst() {
        e.push(format!(
            "mircc's Rp strays {:.1} % from the fair share, not less than rcp's R ({:.1} %)",
            m.worst() * 100.0,
            r.worst() * 100.0
        ));
    }
    e
}

/// Scenario 3: EF capped near 1 Mbit/s at near-propagation RTT, the AF2 :
/// AF1 : BE shares 3 : 2 : 1 within 10%, no drops.
fn check_qsccp_classes(r: &RunResult) -> Vec<String> {
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
fn check_diamond(r: &RunResult) -> Vec<String> {
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
fn check_greedy(r: &RunResult) -> Vec<String> {
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
fn check_ccc(r: &RunResult) -> Vec<String> {
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

// ------------------------------------------------------------- CI subset

macro_rules! case {
    ($test:ident, $scenario:literal, $scheme:literal, $check:ident) => {
        #[test]
        fn $test() {
            if let Some(r) = run_case($scenario, $scheme, full_mode()) {
                assert_ok($check(&r));
            }
        }
    };
}

case!(dumbbell_none_contrast, "dumbbell", "none", check_dumbbell);
case!(dumbbell_pcon, "dumbbell", "pcon", check_dumbbell);
case!(dumbbell_rcp, "dumbbell", "rcp", check_dumbbell);
case!(dumbbell_mircc, "dumbbell", "mircc", check_dumbbell);
// Measured (4 runs at 16 s, 1 at 30 s): 93.1-95.3% utilisation, Jain
// 1.000, 0 Data drops, bottleneck p95 queue 3.2-25.9 ms. CCC is not held
// to zero drops.
case!(dumbbell_ccc, "dumbbell", "ccc", check_dumbbell);
// WinCM runs its full 30 s in CI (dumbbell.toml's
// [ci_duration_s_by_scheme]: its shares wander, so an 8 s last half fell
// below Jain 0.95 in 2 of 10 runs).
case!(dumbbell_wincm, "dumbbell", "wincm", check_dumbbell);
case!(dumbbell_qsccp, "dumbbell", "qsccp", check_dumbbell);

/// Reuses the four single-scheme dumbbell runs of this process (cached).
// Measured (CI length): before the shaper booked a decaying peak of the
// Data sizes, mircc's p95 bottleneck queue was 54.9-64.6 ms in 3 of 12
// runs (pcon 32.3 ms): the first, small Data (RDR metadata) made the
// shaper at r1 underbook, 22-31 Data of the start-up queued at r2, where
// r1's law cannot see them, and stood whenever the flows settled at C.
// Since: no start-up backlog in 9 runs; mircc 3.2-6.5 ms, rcp 0-3.2 ms,
// qsccp 3.2-6.5 ms (counting the Interests its scheduler holds), pcon
// 32.3-35.5 ms in the 5 runs of this comparison.
#[test]
fn dumbbell_rate_based_queue_below_pcon() {
    let rs: Option<Vec<RunResult>> = ["pcon", "rcp", "mircc", "qsccp"]
        .into_iter()
        .map(|s| run_case("dumbbell", s, full_mode()))
        .collect();
    if let Some(rs) = rs {
        let errors = check_dumbbell_delays(&rs);
        if !errors.is_empty() {
            // The runs were cached by their own tests: show them again.
            eprintln!("{}", table_header());
            for r in &rs {
                eprintln!("{}", table_row(r));
                details(r);
            }
        }
        assert_ok(errors);
    }
}

case!(arrival_rcp, "arrival", "rcp", check_arrival);
case!(arrival_mircc, "arrival", "mircc", check_arrival);

/// Scenario 2's comparison; it reuses the two arrival runs above.
// Measured on the bottleneck's stamped rate. Until MIRCC's arrival detector
// needed half a period and eight Data (it took a quarter period and four),
// chance clumps of the paced flows ended periods early in steady state,
// each a 20 % dip of Rp. Since, against each scheme's own final value
// (the dynamics alone, 23 runs): MIRCC 0.38-0.48 s, RCP 0.38-11.48 s,
// either one a sample sooner in some runs; worst excursion MIRCC
// 6.8-12.1 %, RCP 11.2-56.1 %. That comparison failed once in CI (RCP came
// down slowly from above, which the excursion then did not count; it now
// does). Against the fair share η·C/N, what the scenario asks, 5 runs at CI
// length and 3 at full length: MIRCC 0.38-0.48 s, worst excursion
// 7.2-11.0 %; RCP never (its flows end 14-19 % below the share), worst
// excursion 21.8-59.4 %. Since RCP's flows end at the share (the period
// follows the RTT) and the idle-face fix, 12 CI-length runs with a busy
// core (session 14): MIRCC 0.38-0.48 s (strict the same), worst
// 7.1-9.9 %; RCP 0.48-2.58 s (strict 0.58-15.0 s), worst 17.6-61.7 %.
#[test]
fn arrival_mircc_reaches_the_fair_share_no_later_and_strays_less() {
    let (Some(m), Some(r)) = (
        run_case("arrival", "mircc", full_mode()),
        run_case("arrival", "rcp", full_mode()),
    ) else {
        return;
    };
    assert_ok(check_arrival_pair(&m, &r));
}

case!(qsccp_classes, "qsccp_classes", "qsccp", check_qsccp_classes);
case!(diamond_best_route, "diamond", "none", check_diamond);
case!(diamond_mircc, "diamond", "mircc", check_diamond);
case!(diamond_wincm, "diamond", "wincm", check_diamond);
case!(diamond_qsccp, "diamond", "qsccp", check_diamond);
case!(greedy_qsccp, "greedy", "qsccp", check_greedy);
// Measured (3 runs at 21 s, 1 at 30 s): A 14.1-14.3 Mbit/s, B 4.74-4.76,
// shared link 93.7-94.5%, other path 95.3-96.0%, 0 Data drops, p95 queue
// 6.5 ms.
case!(ccc_fig1, "ccc_fig1", "ccc", check_ccc);

// -------------------------------------------------------------- full set

/// A user's own scenario file under the schemes they name:
/// `ICN_TESTBED_SCENARIO=file.toml ICN_TESTBED_SCHEMES=mircc,rcp cargo test
/// --release --test cc_scenarios -- --ignored --nocapture own_scenario`
/// (schemes default to the file's `schemes`). Prints the table; asserts
/// only that every flow ran.
#[test]
#[ignore = "runs ICN_TESTBED_SCENARIO under ICN_TESTBED_SCHEMES"]
fn own_scenario() {
    let Some(path) = std::env::var_os("ICN_TESTBED_SCENARIO") else {
        panic!("set ICN_TESTBED_SCENARIO=path/to/scenario.toml");
    };
    let path = path.to_string_lossy().into_owned();
    let sc = Scenario::load(&scenario_path(&path)).unwrap_or_else(|e| panic!("{e}"));
    let schemes: Vec<String> = match std::env::var("ICN_TESTBED_SCHEMES") {
        Ok(s) => s.split(',').map(|x| x.trim().to_string()).collect(),
        Err(_) => sc.schemes.clone(),
    };
    let mut rows = Vec::new();
    for scheme in &schemes {
        match run_case(&path, scheme, full_mode()) {
            Some(r) => rows.push(table_row(&r)),
            None => return,
        }
    }
    eprintln!("\n{}", table_header());
    for row in &rows {
        eprintln!("{row}");
    }
}

/// Every scenario × scheme at full length: prints the table, then fails
/// with every unmet expectation.
#[test]
#[ignore = "full scenario set (~8 min): cargo test --release --test cc_scenarios -- --ignored --nocapture full_table"]
fn full_table() {
    if !testbed::available_or_explain("full_table") {
        return;
    }
    let names = [
        "dumbbell",
        "arrival",
        "qsccp_classes",
        "diamond",
        "greedy",
        "ccc_fig1",
    ];
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for name in names {
        let sc = Scenario::load(&scenario_path(name)).unwrap_or_else(|e| panic!("{e}"));
        let mut runs = Vec::new();
        for scheme in &sc.schemes {
            let r = std::panic::catch_unwind(|| run_case(name, scheme, true));
            match r {
                Ok(Some(r)) => {
                    rows.push(table_row(&r));
                    runs.push(r);
                }
                Ok(None) => return,
                Err(_) => {
                    rows.push(format!("{name:<10} {scheme:<7} RUN FAILED (see above)"));
                    errors.push(format!("{name}/{scheme}: run failed"));
                }
            }
        }
        for r in &runs {
            errors.extend(match name {
                "dumbbell" => check_dumbbell(r),
                "arrival" => check_arrival(r),
                "qsccp_classes" => check_qsccp_classes(r),
                "diamond" => check_diamond(r),
                "greedy" => check_greedy(r),
                _ => check_ccc(r),
            });
        }
        if name == "dumbbell" {
            errors.extend(check_dumbbell_delays(&runs));
        }
        if name == "arrival" {
            let find = |s: &str| runs.iter().find(|r| r.scheme == s);
            if let (Some(m), Some(r)) = (find("mircc"), find("rcp")) {
                errors.extend(check_arrival_pair(m, r));
            }
        }
    }
    eprintln!("\n{}", table_header());
    for row in &rows {
        eprintln!("{row}");
    }
    assert_ok(errors);
}
