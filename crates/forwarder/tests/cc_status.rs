//! `FaceInfo::cc` (what `icnfwd status` and the testbed read) is refreshed
//! for every scheme, not only the rate laws: PCON/WinCM markers, the QSCCP
//! scheduler and CCC supervision show live state after a short run.

mod cc_common;

use cc_common::*;
use cc_core::LawKind;
use icn_forwarder::cc::CcScheme;
use icn_forwarder::engine::CcFaceStatus;
use icn_sim::net::flows::{drive, LawFlow};
use icn_sim::net::Network;

/// One flow for 2 s over 20 Mbit/s; (status of the consumer side's face
/// towards the producer, status of the producer side's face back).
fn run(scheme: CcScheme) -> (CcFaceStatus, CcFaceStatus) {
    let mut net = Network::new(3);
    let a = net.add_node(engine(scheme));
    let b = net.add_node(engine(scheme));
    let (ab, ba) = net.connect(a, b, link(20, 10));
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", 4000, None);
    let app = net.add_consumer(a);
    let end = at(2_000);
    match scheme {
        CcScheme::Pcon | CcScheme::Wincm => {
            let mut f = vec![LawFlow::new(app, "/p/x", law(scheme, 0.0), at(0), end)];
            drive(&mut net, &mut f, end, ms(1));
        }
        _ => {
            let kind = if scheme == CcScheme::Ccc {
                LawKind::Ccc
            } else {
                LawKind::Qsccp
            };
            let o = opts(kind, 4000.0);
            let mut f = vec![scheme_flow(app, "/p/x", &o, at(0), end, 1)];
            drive(&mut net, &mut f, end, ms(1));
        }
    }
    (
        net.node(a).face(ab).unwrap().cc,
        net.node(b).face(ba).unwrap().cc,
    )
}

#[test]
fn marker_scheduler_and_supervisor_state_reaches_face_info() {
    for scheme in [CcScheme::Pcon, CcScheme::Wincm] {
        let (_, back) = run(scheme);
        println!("{scheme:?}: {back:?}");
        assert!(
            back.aqm_episodes > 0 && back.aqm_marks > 0,
            "{scheme:?}: {back:?}"
        );
    }
    let (out, _) = run(CcScheme::Qsccp);
    println!("Qsccp: {out:?}");
    assert_eq!(out.flows, 1, "{out:?}");
    assert!(out.target_rate_bps.is_some_and(|r| r > 0), "{out:?}");
    let (_, back) = run(CcScheme::Ccc);
    println!("Ccc: {back:?}");
    assert_eq!(back.flows, 1, "{back:?}");
    // Eq. 12's used bandwidth of the one flow: at most η·C, well above 0.
    let used = back.target_rate_bps.unwrap_or(0);
    assert!((1_000_000..=20_000_000).contains(&used), "{back:?}");
}
