//! Congestion-control scenarios on a namespace testbed (issue 6): every
//! scheme inside real icnfwd processes, on the papers' topologies, with
//! measured outcomes asserted. docs/testbed.md explains the harness.
//!
//! - CI subset (plain `cargo test`): the tests below without `#[ignore]`,
//!   at each scenario's `ci_duration_s`.
//! - Full set and table: `cargo test --release --test cc_scenarios -- --ignored --nocapture full_table`
//!
//! Without root or `ip netns` every test prints a loud SKIPPED banner.

#[path = "testbed/mod.rs"]
mod testbed;

use testbed::results::{table_header, table_row, RunResult};
use testbed::scenario::Scenario;

/// Runs one scenario under one scheme; `None` when the machine cannot
/// build namespaces (after saying so).
fn run_case(name: &str, scheme: &str, full: bool) -> Option<RunResult> {
    if !testbed::available_or_explain(&format!("{name}/{scheme}")) {
        return None;
    }
    let sc = Scenario::load(&testbed::scenario_path(name)).unwrap_or_else(|e| panic!("{e}"));
    let bins = testbed::bins::bins().unwrap_or_else(|e| panic!("{e}"));
    let _serial = testbed::run::lock();
    let duration = if full { sc.duration_s } else { sc.ci_duration_s };
    let r = testbed::run::run(&sc, scheme, duration, &bins)
        .unwrap_or_else(|e| panic!("{name}/{scheme}: {e}"));
    eprintln!("{}\n{}", table_header(), table_row(&r));
    if !r.drops_by_reason.is_empty() {
        eprintln!("  drops by reason: {:?}", r.drops_by_reason);
    }
    for f in &r.flows {
        if let Some(e) = &f.error {
            eprintln!("  flow {} failed: {e}", f.name);
        }
    }
    Some(r)
}

fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

// ---------------------------------------------------------------- checks

/// Scenario 1 for one controlled scheme.
fn check_dumbbell(r: &RunResult) -> Vec<String> {
    let mut e = Vec::new();
    let b = r.bottleneck();
    if r.scheme == "none" {
        // The contrast: an uncontrolled window fills icnfwd's queue.
        if b.queue_p95_ms < 200.0 {
            e.push(format!("none: p95 queue {:.0} ms, expected a bloated queue (>= 200 ms)", b.queue_p95_ms));
        }
        return e;
    }
    if b.utilisation < 0.90 {
        e.push(format!("{}: utilisation {:.1}% < 90%", r.scheme, b.utilisation * 100.0));
    }
    if r.jain < 0.95 {
        e.push(format!("{}: Jain {:.3} < 0.95", r.scheme, r.jain));
    }
    if matches!(r.scheme.as_str(), "rcp" | "mircc" | "qsccp") && r.drops > 0 {
        e.push(format!("{}: {} Data drops, expected none", r.scheme, r.drops));
    }
    e
}

/// Scenario 1 across schemes: rate-based queues below pcon's.
fn check_dumbbell_delays(rs: &[RunResult]) -> Vec<String> {
    let mut e = Vec::new();
    let Some(pcon) = rs.iter().find(|r| r.scheme == "pcon") else {
        return e;
    };
    for r in rs.iter().filter(|r| matches!(r.scheme.as_str(), "rcp" | "mircc" | "qsccp")) {
        if r.bottleneck().queue_p95_ms >= pcon.bottleneck().queue_p95_ms {
            e.push(format!(
                "{}: p95 queue {:.1} ms not below pcon's {:.1} ms",
                r.scheme,
                r.bottleneck().queue_p95_ms,
                pcon.bottleneck().queue_p95_ms
            ));
        }
    }
    e
}

fn assert_ok(errors: Vec<String>) {
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

// ------------------------------------------------------------- CI subset

#[test]
fn dumbbell_none_contrast() {
    if let Some(r) = run_case("dumbbell", "none", false) {
        assert_ok(check_dumbbell(&r));
    }
}

#[test]
fn dumbbell_pcon() {
    if let Some(r) = run_case("dumbbell", "pcon", false) {
        assert_ok(check_dumbbell(&r));
    }
}
