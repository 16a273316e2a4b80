//! Virtual time and real hosts agree on the dumbbell (issue 19's
//! tolerances, `icn_lab::agree`): pcon, mircc and qsccp at 8000-byte Data,
//! mircc and qsccp at 1200. Root and iproute2; about a minute and a half
//! of namespace runs, so ignored by default:
//! `sudo -E cargo test -p icn-lab --test sim_vs_real -- --ignored --nocapture`.
//! PCON at 1200 bytes is left out: its shares wander in both runners and
//! flow-by-flow rates differ by 20-30 % (docs/testbed.md, "The lab").

use icn_lab::agree::Agreement;
use icn_lab::sim::{self, SimOptions};
use icn_lab::{real, scenario_path, Scenario};

#[test]
#[ignore = "root: namespace runs of about a minute; see the file's header"]
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
        (8000, "pcon"),
        (8000, "mircc"),
        (8000, "qsccp"),
        (1200, "mircc"),
        (1200, "qsccp"),
    ];
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
    eprintln!("{table}");
    assert!(ok, "virtual time and namespaces disagree:\n{table}");
}
