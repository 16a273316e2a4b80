//! Virtual time and real hosts agree on the dumbbell (issue 19's
//! tolerances, `icn_lab::agree`) for pcon, mircc and qsccp at 8000-byte
//! Data. Root and iproute2; about a minute of namespace runs, so ignored
//! by default: `sudo -E cargo test -p icn-lab --test sim_vs_real -- --ignored --nocapture`.
//! At 1200-byte Data they do not agree yet (docs/testbed.md, "The lab").

use icn_lab::agree::Agreement;
use icn_lab::sim::{self, SimOptions};
use icn_lab::{real, scenario_path, Scenario};

#[test]
#[ignore = "root: namespace runs of about a minute; see the file's header"]
fn dumbbell_agrees_in_virtual_time_and_on_namespaces_at_8000_byte_data() {
    if !real::available_or_explain("sim_vs_real") {
        return;
    }
    let _serial = real::run::lock();
    let sc = Scenario::load(&scenario_path("dumbbell")).unwrap();
    let bins = real::bins::bins().unwrap();
    let duration_s = sc.ci_duration_s;
    let mut rows = vec![Agreement::header()];
    let mut ok = true;
    for scheme in ["pcon", "mircc", "qsccp"] {
        assert_eq!(sc.segment_bytes_for(scheme), 8000);
        let opts = SimOptions {
            seed: 1,
            duration_s,
            sample_ms: 100,
        };
        let s = sim::run(&sc, scheme, &opts, &mut |_, _| {}).unwrap();
        let r = real::run::run(&sc, scheme, duration_s, &bins).unwrap();
        let a = Agreement::of(&s, &r);
        ok &= a.ok();
        rows.push(a.row());
    }
    let table = rows.join("\n");
    eprintln!("{table}");
    assert!(ok, "virtual time and namespaces disagree:\n{table}");
}
