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

use cc_core::Profile;
use icn_lab::real as testbed;
use icn_lab::results::{table_header, table_row, RunResult};
use icn_lab::{scenario_path, Scenario};

fn full_mode() -> bool {
    std::env::var_os("ICN_TESTBED_FULL").is_some_and(|v| v != "0")
}

/// Runs of this process, so cross-scheme checks reuse single-scheme runs.
type CaseKey = (String, String, bool, &'static str);
static CACHE: Mutex<BTreeMap<CaseKey, RunResult>> = Mutex::new(BTreeMap::new());

/// Runs one scenario under one scheme (or returns the cached run); `None`
/// when the machine cannot build namespaces (after saying so loudly).
fn run_case(name: &str, scheme: &str, full: bool) -> Option<RunResult> {
    run_case_profiled(name, scheme, full, Profile::Tuned)
}

/// [`run_case`] with every forwarder and consumer in `profile`.
fn run_case_profiled(name: &str, scheme: &str, full: bool, profile: Profile) -> Option<RunResult> {
    if !testbed::available_or_explain(&format!("{name}/{scheme}")) {
        return None;
    }
    let key = (name.to_string(), scheme.to_string(), full, profile.name());
    let _serial = testbed::run::lock();
    if let Some(r) = CACHE.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Some(r.clone());
    }
    let mut sc = Scenario::load(&scenario_path(name)).unwrap_or_else(|e| panic!("{e}"));
    sc.profile = profile;
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

fn assert_ok(errors: Vec<String>) {
    assert!(errors.is_empty(), "\n{}", errors.join("\n"));
}

#[path = "cc_scenarios/arrival.rs"]
mod arrival;
#[path = "cc_scenarios/checks.rs"]
mod checks;

use arrival::*;
use checks::*;

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

/// The rate-based schemes against PCON as its paper runs it (CoDel
/// marking, ndnget's halving): the comparison the MIRCC and QSCCP papers
/// make. Reuses the three rate-based dumbbell runs of this process.
// Measured (CI length): before the shaper booked a decaying peak of the
// Data sizes, mircc's p95 bottleneck queue was 54.9-64.6 ms in 3 of 12
// runs (pcon 32.3 ms): the first, small Data (RDR metadata) made the
// shaper at r1 underbook, 22-31 Data of the start-up queued at r2, where
// r1's law cannot see them, and stood whenever the flows settled at C.
// Since: no start-up backlog in 9 runs; mircc 3.2-6.5 ms, rcp 0-3.2 ms,
// qsccp 3.2-6.5 ms (counting the Interests its scheduler holds), pcon
// 32.3-35.5 ms in the 5 runs of this comparison. Tuned PCON (step marking
// and the proportional cut, docs/deviations.md) has since kept a 5.1 ms
// p95 queue here, level with qsccp's, so the papers' baseline is the
// paper profile's PCON.
#[test]
fn dumbbell_rate_based_queue_below_pcon() {
    let paper_pcon = run_case_profiled("dumbbell", "pcon", full_mode(), Profile::Paper);
    let rs: Option<Vec<RunResult>> = ["rcp", "mircc", "qsccp"]
        .into_iter()
        .map(|s| run_case("dumbbell", s, full_mode()))
        .chain([paper_pcon])
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

/// Scenario 2's comparison; it reuses the two arrival runs above
/// (`check_arrival_pair` says what it asserts and why the order of the
/// settling times is not among it).
#[test]
fn arrival_mircc_reaches_the_fair_share_within_a_second_and_strays_less() {
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
