//! Sized flows in virtual time: a flow with `size_mb` ends when it has the
//! object and reports its delivery time; one too large for the run reports
//! none. Bounds are physical: the object cannot arrive faster than the
//! bottleneck serialises it plus one round trip.

use icn_lab::sim::{self, SimOptions};
use icn_lab::Scenario;

const LINE: &str = r#"
    name = "line"
    title = "two sized flows on one 10 Mbit/s link"
    duration_s = 10
    schemes = ["mircc"]
    segment_bytes = 1200
    measure = [["p", "r"]]
    [[node]]
    name = "c"
    [[node]]
    name = "r"
    [[node]]
    name = "p"
    [[link]]
    a = "c"
    b = "r"
    capacity_mbps = 100
    delay_ms = 1
    [[link]]
    a = "r"
    b = "p"
    capacity_mbps = 10
    delay_ms = 9
    [[flow]]
    name = "small"
    consumer = "c"
    producer = "p"
    size_mb = 1.2
    [[flow]]
    name = "huge"
    consumer = "c"
    producer = "p"
    start_s = 5
    size_mb = 100
"#;

#[test]
fn a_sized_flow_reports_its_delivery_time_and_an_unfinished_one_none() {
    let sc = Scenario::parse(LINE).unwrap();
    let opts = SimOptions {
        seed: 1,
        duration_s: sc.duration_s,
        sample_ms: 100,
    };
    for scheme in ["mircc", "qsccp", "pcon"] {
        let r = sim::run(&sc, scheme, &opts, &mut |_, _| {}).unwrap();
        let small = r.flow("small");
        let d = small
            .delivery_s
            .unwrap_or_else(|| panic!("{scheme}: 1.2 MB on 10 Mbit/s not done in 10 s"));
        // 1.2 MB of content at 10 Mbit/s is 0.96 s before any header, plus
        // the 20 ms round trip; the flow ran alone until 5 s.
        assert!(d >= 0.96 + 0.02, "{scheme}: delivered in {d} s");
        assert!(d < 5.0, "{scheme}: delivered in {d} s");
        assert_eq!(small.size_bytes, Some(1_200_000));
        // 100 MB cannot cross 10 Mbit/s in the 5 s left.
        assert_eq!(r.flow("huge").delivery_s, None, "{scheme}");
        let t = icn_lab::delivery::table(&[r]).expect("sized flows");
        assert!(t.contains("(1/2)"), "{scheme}:\n{t}");
    }
}
