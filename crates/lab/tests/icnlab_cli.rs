//! `icnlab run` and `icnlab compare` in virtual time, end to end: the
//! binary as a user runs it, and the files it promises.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn scenario(name: &str) -> String {
    format!(
        "{}/../../configs/scenarios/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs icnlab with `args`, writing into `out`; returns its stdout.
fn icnlab(args: &[&str], out: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_icnlab"))
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run icnlab");
    assert!(
        o.status.success(),
        "icnlab {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8 stdout")
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn is_svg(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<svg") || t.starts_with("<?xml")
}

/// The files `icnlab run` promises, checked for content: the table, a
/// JSON with three flows filling most of the dumbbell's bottleneck, CSVs
/// with rows, SVGs that draw lines, and a report holding table and plots.
fn check_dumbbell_mircc_run_dir(stdout: &str, out: &Path) {
    assert!(
        stdout.contains("p95q_ms") && stdout.contains("dumbbell   mircc"),
        "{stdout}"
    );
    assert!(stdout.contains("report.html"), "{stdout}");
    assert_eq!(read(out.join("summary.txt")).lines().count(), 2);

    let json: Value = serde_json::from_str(&read(out.join("results.json"))).unwrap();
    let run = &json["runs"][0];
    assert_eq!(run["scheme"], "mircc");
    assert_eq!(run["flows"].as_array().unwrap().len(), 3);
    // Three greedy MIRCC flows fill most of the 20 Mbit/s bottleneck.
    let util = run["links"][0]["utilisation"].as_f64().unwrap();
    assert!((0.5..1.05).contains(&util), "utilisation {util}");
    assert!(!run["links"][0]["stamped_rates"]
        .as_array()
        .unwrap()
        .is_empty());

    for stem in [
        "flow_goodput",
        "flow_rtt",
        "link_queue",
        "link_utilisation",
        "link_rates",
        "link_drops",
    ] {
        let csv = read(out.join(format!("{stem}.csv")));
        let mut lines = csv.lines();
        assert!(
            lines.next().unwrap().starts_with("scheme,entity,t_s,"),
            "{stem}"
        );
        assert!(lines.count() > 10, "{stem}.csv has almost no rows");
    }
    let html = read(out.join("report.html"));
    assert!(html.contains("<table>") && html.contains("<td>mircc</td>"));
    for stem in ["flow_goodput", "link_queue", "link_rates", "rtt_cdf"] {
        let svg = read(out.join(format!("{stem}.svg")));
        assert!(is_svg(&svg), "{stem}.svg: {}", &svg[..svg.len().min(80)]);
        assert!(
            svg.contains("<polyline") || svg.contains("<path"),
            "{stem}.svg draws no line"
        );
        assert!(html.contains(svg.trim_start().lines().next().unwrap()));
    }
}

/// `icnlab run dumbbell --scheme mircc <mode> --duration 6`, checked.
fn run_dumbbell_mircc(mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let dumbbell = scenario("dumbbell");
    let args = [
        "run",
        &dumbbell,
        "--scheme",
        "mircc",
        mode,
        "--duration",
        "6",
    ];
    check_dumbbell_mircc_run_dir(&icnlab(&args, &out), &out);
}

#[test]
fn run_dumbbell_mircc_sim_writes_the_table_csvs_svgs_and_report() {
    run_dumbbell_mircc("--sim");
}

/// The same set from real icnfwd/icnput/icncat processes (root; about ten
/// seconds once the release binaries are built).
#[test]
fn run_dumbbell_mircc_real_writes_the_same_set() {
    if icn_lab::real::available_or_explain("icnlab run --real") {
        run_dumbbell_mircc("--real");
    }
}

#[test]
fn a_seeded_sim_run_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let args = |seed| {
        vec![
            "run".to_string(),
            scenario("greedy"),
            "--scheme".into(),
            "qsccp".into(),
            "--duration".into(),
            "4".into(),
            "--seed".into(),
            seed,
        ]
    };
    let runs: Vec<Value> = ["a", "b"]
        .iter()
        .map(|d| {
            let a = args("7".into());
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            icnlab(&a, &dir.path().join(d));
            let v: Value =
                serde_json::from_str(&read(dir.path().join(d).join("results.json"))).unwrap();
            v["runs"].clone()
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn compare_on_diamond_renders_the_schemes_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let stdout = icnlab(
        &[
            "compare",
            &scenario("diamond"),
            "--schemes",
            "none,mircc",
            "--sim",
            "--duration",
            "5",
        ],
        &out,
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("diamond")).count(),
        2,
        "{stdout}"
    );
    let json: Value = serde_json::from_str(&read(out.join("results.json"))).unwrap();
    let schemes: Vec<&str> = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scheme"].as_str().unwrap())
        .collect();
    assert_eq!(schemes, ["none", "mircc"]);
    let html = read(out.join("report.html"));
    assert!(html.contains("<td>none</td>") && html.contains("<td>mircc</td>"));
    // One plot holds both schemes' lines, labelled by scheme.
    let goodput = read(out.join("flow_goodput.svg"));
    assert!(goodput.contains("none f1") && goodput.contains("mircc f1"));
}

#[test]
fn an_unknown_key_in_the_scenario_is_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        read(PathBuf::from(scenario("diamond"))).replace("[[flow]]", "[[flow]]\nrate_mpbs = 3");
    let file = dir.path().join("typo.toml");
    std::fs::write(&file, &text).unwrap();
    let line = text.lines().position(|l| l.contains("rate_mpbs")).unwrap() + 1;
    let o = Command::new(env!("CARGO_BIN_EXE_icnlab"))
        .args(["run", file.to_str().unwrap(), "--scheme", "mircc", "--sim"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rate_mpbs") && err.contains(&format!("typo.toml:{line}:")),
        "{err}"
    );
}

/// `icnlab sweep --sim` on two generated points: one report directory per
/// point with its scenario file, and a CSV row per scheme-point whose
/// figures are those of a working run (the bottleneck mostly used).
#[test]
fn sweep_sim_runs_generated_points_and_writes_one_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let stdout = icnlab(
        &[
            "sweep",
            "--sim",
            "--point",
            "dumbbell,1200,10,10,2",
            "--point",
            "parking-lot,4400,10",
            "--schemes",
            "rcp,qsccp",
            "--duration",
            "8",
        ],
        &out,
    );
    assert!(stdout.contains("## dumbbell-1200B-10M-10ms-2f"), "{stdout}");
    for p in ["dumbbell-1200B-10M-10ms-2f", "parking-lot-4400B-10M"] {
        assert!(read(out.join(p).join("scenario.toml")).contains("[[flow]]"));
        assert!(out.join(p).join("report.html").exists());
    }
    let csv = read(out.join("sweep.csv"));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    for r in rows {
        let util: f64 = r.split(',').nth(3).unwrap().parse().unwrap();
        assert!(util > 80.0, "{r}");
    }
}
