//! Dumbbell: N long flows through one 20 Mbit/s bottleneck, 20 ms RTT, each
//! scheme's consumer law (cc-core) against real engines running the
//! scheme hop by hop. Virtual time; the table is printed with
//! `cargo test --test cc_dumbbell -- --nocapture`.

mod cc_common;

use cc_common::*;
use icn_forwarder::cc::CcScheme;
use icn_forwarder::testing::flows::{drive, LawFlow};
use icn_forwarder::testing::{AppId, Network};
use cc_core::{ConsumerLaw, LawKind, Timestamp};

const CAP_MBPS: u64 = 20;
const RUN_MS: u64 = 8_000;

fn dumbbell(scheme: CcScheme, n: usize, none_window: f64) -> Outcome {
    dumbbell_with(scheme, n, |app, prefix, start, stop| {
        LawFlow::new(app, prefix, law(scheme, none_window), start, stop)
    })
}

/// The dumbbell with the flows `mk(app, prefix, start, stop)` builds.
fn dumbbell_with<L: ConsumerLaw>(
    scheme: CcScheme,
    n: usize,
    mut mk: impl FnMut(AppId, &str, Timestamp, Timestamp) -> LawFlow<L>,
) -> Outcome {
    let mut net = Network::new(7);
    let a = net.add_node(engine(scheme));
    let b = net.add_node(engine(scheme));
    let (ab, _ba) = net.connect(a, b, link(CAP_MBPS, 10));
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", 4000, None);
    let mut flows: Vec<_> = (0..n)
        .map(|i| {
            let app = net.add_consumer(a);
            mk(app, &format!("/p/f{i}"), at(i as u64 * 100), at(RUN_MS))
        })
        .collect();
    drive(&mut net, &mut flows, at(RUN_MS), ms(1));
    for node in [a, b] {
        net.node(node).check_invariants().unwrap();
    }
    let drops = data_drops(&net, &[a, b]);
    summarise(
        scheme,
        &flows,
        at(RUN_MS / 2),
        at(RUN_MS),
        (CAP_MBPS * MBPS) as f64,
        drops,
    )
}

fn header() {
    println!("| scheme | util    | Jain  | p95 queueing | drops | cNacks | RTOs | per-flow Mbit/s");
}

#[test]
fn rate_schemes_fill_the_bottleneck_fairly_without_drops() {
    header();
    let mut p95 = Vec::new();
    for scheme in [CcScheme::Rcp, CcScheme::Mircc] {
        let o = dumbbell(scheme, 3, 0.0);
        println!("{}", o.row());
        assert!(
            o.utilisation >= 0.90,
            "{scheme:?} utilisation {:.3}",
            o.utilisation
        );
        assert!(o.jain >= 0.95, "{scheme:?} Jain {:.3}", o.jain);
        assert_eq!(o.data_drops, 0, "{scheme:?} dropped Data");
        p95.push(o.p95_queueing);
    }
    let pcon = dumbbell(CcScheme::Pcon, 3, 0.0);
    println!("{}", pcon.row());
    for q in p95 {
        assert!(
            q < pcon.p95_queueing,
            "rate-based p95 {q:?} vs pcon {:?}",
            pcon.p95_queueing
        );
    }
}

#[test]
fn marking_schemes_fill_the_bottleneck() {
    header();
    let pcon = dumbbell(CcScheme::Pcon, 3, 0.0);
    println!("{}", pcon.row());
    assert!(
        pcon.utilisation >= 0.90,
        "pcon utilisation {:.3}",
        pcon.utilisation
    );
    assert!(pcon.jain >= 0.95, "pcon Jain {:.3}", pcon.jain);
    // WinCM fills the link, but within 8 s its additive decrease has not
    // yet equalised a flow that started 100 ms earlier (Jain ≈ 0.79 here):
    // asserted only as "no flow starved".
    let w = dumbbell(CcScheme::Wincm, 3, 0.0);
    println!("{}", w.row());
    assert!(
        w.utilisation >= 0.90,
        "wincm utilisation {:.3}",
        w.utilisation
    );
    assert!(
        w.per_flow_mbps.iter().all(|x| *x > 2.0),
        "{:?}",
        w.per_flow_mbps
    );
}

#[test]
fn qsccp_fills_the_bottleneck_without_drops() {
    header();
    let o = dumbbell(CcScheme::Qsccp, 3, 0.0);
    println!("{}", o.row());
    assert!(o.utilisation >= 0.90, "utilisation {:.3}", o.utilisation);
    assert!(o.jain >= 0.95, "Jain {:.3}", o.jain);
    assert_eq!(o.data_drops, 0);
}

#[test]
fn no_congestion_control_with_a_large_window_bloats_and_drops() {
    header();
    let o = dumbbell(CcScheme::None, 3, 150.0);
    println!("{}", o.row());
    let mircc = dumbbell(CcScheme::Mircc, 3, 0.0);
    assert!(o.data_drops > 0 || o.p95_queueing > mircc.p95_queueing * 4);
    assert!(o.p95_queueing > mircc.p95_queueing);
}

#[test]
fn ccc_fills_the_bottleneck_fairly() {
    header();
    // icncat's CCC consumer: objective 20 Mbit/s each (more than the
    // 6.7 Mbit/s share), pace = min(objective, returned constraint).
    let o = icn_consumer::SchemeOptions {
        objective: Some(icn_consumer::RateSpec::BitsPerSec(20e6)),
        ..opts(LawKind::Ccc, 4000.0)
    };
    let c = dumbbell_with(CcScheme::Ccc, 3, |app, prefix, start, stop| {
        scheme_flow(app, prefix, &o, start, stop, app.0 as u64)
    });
    println!("{}", c.row());
    assert!(c.utilisation >= 0.90, "utilisation {:.3}", c.utilisation);
    assert!(c.jain >= 0.95, "Jain {:.3}", c.jain);
}
