//! SRMCC multicast groups in the lab (`[[group]]`), in virtual time:
//! `configs/scenarios/srmcc_tree.toml` (the paper's Figure 4, scenario 4)
//! runs with real engines, and the group's figures follow from physics:
//! one stream reaches every receiver, the source stays below the
//! bottleneck, and the stream yields when competitors arrive.

use icn_lab::scenario::scenario_path;
use icn_lab::sim::{self, SimOptions};
use icn_lab::Scenario;

fn mean_between(s: &[(f64, f64)], a: f64, b: f64) -> f64 {
    let v: Vec<f64> = s
        .iter()
        .filter(|(t, _)| *t > a && *t <= b)
        .map(|x| x.1)
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

#[test]
fn srmcc_tree_streams_to_every_receiver_and_yields_to_competitors() {
    let sc = Scenario::load(&scenario_path("srmcc_tree")).unwrap();
    let opts = SimOptions {
        seed: 1,
        duration_s: sc.duration_s,
        sample_ms: 100,
    };
    let r = sim::run(&sc, "none", &opts, &mut |_, _| {}).unwrap();
    let t = icn_lab::multicast::table(std::slice::from_ref(&r)).expect("a group");
    eprintln!("{}\n{t}", icn_lab::results::table_row(&r));
    let g = &r.groups[0];
    let cap = sc.link("r0", "r1").unwrap().capacity_bps as f64;
    assert_eq!(g.receivers.len(), 3);

    // One stream: every receiver gets the same payload (repairs fill the
    // holes drop-tail losses leave), and no more than the source sent.
    let rx: Vec<f64> = g
        .receivers
        .iter()
        .map(|x| x.goodput_last_half_bps)
        .collect();
    let sent = mean_between(&g.source_sent, 30.0, 60.0);
    for (x, rate) in g.receivers.iter().zip(&rx) {
        assert!(*rate > 0.0, "{}: nothing delivered", x.node);
        assert!((rate - rx[0]).abs() <= 0.01 * rx[0], "receivers {rx:?}");
        assert!(*rate <= sent * 1.02, "{rate} delivered, {sent} sent");
        assert_eq!(x.unrepaired, 0, "{}: holes released unfilled", x.node);
    }
    // Algorithm 1 stays under the bottleneck it shares with a cubic flow.
    assert!(g.source_rate_last_half_bps > 0.0 && g.source_rate_last_half_bps < cap);
    // One MCC message per 400 ms feedback period reaches the source.
    let periods = (r.duration_s / 0.4) as u64;
    assert!(
        (periods - 10..=periods + 1).contains(&g.feedback_in),
        "{} MCC messages in {} s",
        g.feedback_in,
        r.duration_s
    );
    // The stream yields: with TCP2 and the CBR competing (24-36 s) it gets
    // less than with TCP1 alone (0-9 s).
    let m1 = &g.receivers[0].goodput;
    let (alone, crowded) = (mean_between(m1, 3.0, 9.0), mean_between(m1, 27.0, 36.0));
    assert!(crowded < alone, "alone {alone}, crowded {crowded}");
    // The bottleneck stays busy.
    assert!(
        r.bottleneck().utilisation > 0.9,
        "{}",
        r.bottleneck().utilisation
    );
}
