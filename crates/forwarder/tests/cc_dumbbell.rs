//! Dumbbell: 3 long flows through one 20 Mbit/s bottleneck, 20 ms RTT, each
//! scheme's consumer law (cc-core; CCC through icncat's `Scheme`, which
//! puts the objective on every Interest) against real engines running the
//! scheme hop by hop. Virtual time, 8 s, second half measured. Each scheme
//! runs once per process (cached); the table is printed by
//! `cargo test -p icn-forwarder --test cc_dumbbell -- --nocapture`.

mod cc_common;

use cc_common::*;
use cc_core::{ConsumerLaw, LawKind, Timestamp};
use icn_forwarder::cc::CcScheme;
use icn_sim::net::flows::{drive, LawFlow};
use icn_sim::net::{AppId, Network};
use std::sync::OnceLock;

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

/// The outcome of `scheme` on the dumbbell, computed once per process.
fn outcome(scheme: CcScheme) -> &'static Outcome {
    static CACHE: [OnceLock<Outcome>; 7] = [const { OnceLock::new() }; 7];
    let i = CcScheme::ALL
        .iter()
        .position(|s| *s == scheme)
        .map_or(6, |i| i); // `none` is not in ALL
    CACHE[i].get_or_init(|| match scheme {
        // `none`: a fixed window of 150 Interests, for contrast.
        CcScheme::None => dumbbell(scheme, 3, 150.0),
        CcScheme::Ccc => {
            // Objective 20 Mbit/s each, more than the 6.7 Mbit/s share.
            let o = icn_consumer::SchemeOptions {
                objective: Some(icn_consumer::RateSpec::BitsPerSec(20e6)),
                ..opts(LawKind::Ccc, 4000.0)
            };
            dumbbell_with(scheme, 3, |app, prefix, start, stop| {
                scheme_flow(app, prefix, &o, start, stop, app.0 as u64)
            })
        }
        // Every other scheme through icncat's scheme logic too, so MIRCC
        // consumers send secondary Interests as icncat does (a bare
        // MirccConsumer sends every Interest as primary, which hid the
        // testbed's 1200-byte queue from virtual time).
        _ => {
            let o = opts(law(scheme, 0.0).kind(), 4000.0);
            dumbbell_with(scheme, 3, |app, prefix, start, stop| {
                scheme_flow(app, prefix, &o, start, stop, app.0 as u64)
            })
        }
    })
}

#[test]
fn table() {
    println!("| scheme | util    | Jain  | p95 queueing | drops | cNacks | RTOs | per-flow Mbit/s");
    for s in [
        CcScheme::Rcp,
        CcScheme::Mircc,
        CcScheme::Qsccp,
        CcScheme::Ccc,
        CcScheme::Pcon,
        CcScheme::Wincm,
        CcScheme::None,
    ] {
        println!("{}", outcome(s).row());
    }
}

#[test]
fn rate_schemes_fill_the_bottleneck_fairly_without_drops() {
    let pcon = outcome(CcScheme::Pcon);
    for scheme in [CcScheme::Rcp, CcScheme::Mircc, CcScheme::Qsccp] {
        let o = outcome(scheme);
        assert!(
            o.utilisation >= 0.90,
            "{scheme:?} utilisation {:.3}",
            o.utilisation
        );
        assert!(o.jain >= 0.95, "{scheme:?} Jain {:.3}", o.jain);
        assert_eq!(o.data_drops, 0, "{scheme:?} dropped Data");
    }
    // Explicit rates keep the queue shorter than PCON's marking; QSCCP
    // holds its backlog as Interests in the scheduler's flow queues, so its
    // RTT-based p95 is not lower and is not compared.
    for scheme in [CcScheme::Rcp, CcScheme::Mircc] {
        let q = outcome(scheme).p95_queueing;
        assert!(
            q < pcon.p95_queueing,
            "{scheme:?} p95 {q:?} vs pcon {:?}",
            pcon.p95_queueing
        );
    }
}

#[test]
fn ccc_fills_the_bottleneck_fairly() {
    let c = outcome(CcScheme::Ccc);
    assert!(c.utilisation >= 0.90, "utilisation {:.3}", c.utilisation);
    assert!(c.jain >= 0.95, "Jain {:.3}", c.jain);
    // Queue supervision keeps the standing queue short once converged.
    let pcon = outcome(CcScheme::Pcon);
    assert!(c.p95_queueing < pcon.p95_queueing, "{:?}", c.p95_queueing);
}

#[test]
fn marking_schemes_fill_the_bottleneck() {
    let pcon = outcome(CcScheme::Pcon);
    assert!(
        pcon.utilisation >= 0.90,
        "pcon utilisation {:.3}",
        pcon.utilisation
    );
    assert!(pcon.jain >= 0.95, "pcon Jain {:.3}", pcon.jain);
    // WinCM fills the link, but its split oscillates (see cc_wincm.rs: a
    // 4-s window is a lottery between Jain ≈ 0.8 and 1.0; fair over 12 s):
    // asserted here only as "no flow starved".
    let w = outcome(CcScheme::Wincm);
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
fn no_congestion_control_with_a_large_window_bloats_and_drops() {
    let o = outcome(CcScheme::None);
    let mircc = outcome(CcScheme::Mircc);
    assert!(o.data_drops > 0 || o.p95_queueing > mircc.p95_queueing * 4);
    assert!(o.p95_queueing > mircc.p95_queueing);
}
