//! Virtual time and real hosts agree on the dumbbell (issue 19's
//! tolerances, `icn_lab::agree`, never widened here): pcon, mircc and
//! qsccp at 1200- and 8000-byte Data, 16 s each (the scenario's CI
//! length). Root and iproute2; six namespace runs of 16 s plus set-up,
//! about two minutes, so ignored by default:
//! `sudo -E cargo test --release -p icn-lab --test sim_vs_real -- --ignored --nocapture`.
//! Every case runs before the verdict, so one run shows every
//! disagreement; the measured figures are in docs/testbed.md.

use icn_lab::agree::Agreement;
use icn_lab::sim::{self, SimOptions};
use icn_lab::{real, scenario_path, Scenario};

#[test]
#[ignore = "root: six namespace runs, about two minutes; see the file's header"]
fn dumbbell_agrees_in_virtual_time_and_on_namespaces() {
    if !real::available_or_explain("sim_vs_real") {
        return;
    }
    let _serial = real::run::lock();
    let mut sc = Scenario::load(&scenario_path("dumbbell")).unwrap();
    let bins = real::bins::bins().unwrap();
    let duration_s = sc.ci_duration_s;
    let mut rows = vec![Agreement::header()];
    let mut ok = true;
    let cases = [
        (1200, "pcon"),
        (1200, "mircc"),
        (1200, "qsccp"),
        (8000, "pcon"),
        (8000, "mircc"),
        (8000, "qsccp"),
    ];
    let t0 = std::time::Instant::now();
    for (bytes, scheme) in cases {
        sc.segment_bytes = bytes;
        let opts = SimOptions {
            seed: 1,
            duration_s,
            sample_ms: 100,
        };
        let s = sim::run(&sc, scheme, &opts, &mut |_, _| {}).unwrap();
        let r = real::run::run(&sc, scheme, duration_s, &bins).unwrap();
        let a = Agreement::of(&s, &r);
        ok &= a.ok();
        rows.push(format!("{} ({bytes} B)", a.row()));
    }
    let table = rows.join("\n");
    eprintln!(
        "{table}\n({:.0} s for {} cases)",
        t0.elapsed().as_secs_f64(),
        cases.len()
    );
    assert!(ok, "virtual time and namespaces disagree:\n{table}");
}
