//! Asymmetric links: a face's capacity is per direction. The Interest
//! direction A→B runs at 100 Mbit/s, the Data direction B→A at 10 Mbit/s
//! (`LinkParams::reverse_capacity_bps`; `ingress_capacity_bps` on a
//! `[[face]]`). The rate-based schemes at A must book the 10 Mbit/s the
//! Data come back on, not the 100 Mbit/s A sends on: goodput near 10
//! Mbit/s, no Data dropped at B, B's Data queue short. Booked against the
//! Interest direction instead, A would admit ten times what B can send.

mod cc_common;

use cc_common::*;
use cc_core::LawKind;
use icn_forwarder::cc::CcScheme;
use icn_sim::net::flows::drive;
use icn_sim::net::{LinkParams, Network};

const DATA_BYTES: usize = 8000;

struct Outcome {
    goodput_bps: f64,
    data_drops_at_b: u64,
    sojourn_p95_ms_at_b: f64,
    stamped_bps: Option<u64>,
}

fn run(scheme: CcScheme, kind: LawKind, reverse_mbps: Option<u64>) -> Outcome {
    let mut net = Network::new(7);
    let a = net.add_node(engine(scheme));
    let b = net.add_node(engine(scheme));
    let (ab, ba) = net.connect(
        a,
        b,
        LinkParams {
            reverse_capacity_bps: reverse_mbps.map(|m| m * MBPS),
            ..link(100, 5)
        },
    );
    net.node_mut(a)
        .fib_add_nexthop(&"/p".parse().unwrap(), ab, 1)
        .unwrap();
    net.add_producer(b, "/p", DATA_BYTES, None);
    let app = net.add_consumer(a);
    let end = at(6_000);
    let o = opts(kind, DATA_BYTES as f64);
    let mut f = vec![scheme_flow(app, "/p/x", &o, at(0), end, 1)];
    drive(&mut net, &mut f, end, ms(1));
    let back = net.node(b).face(ba).unwrap();
    Outcome {
        goodput_bps: f[0].stats.goodput_bps(at(3_000), end),
        data_drops_at_b: back.counters.drops.total(),
        sojourn_p95_ms_at_b: back.sojourn.quantile_ns(0.95) as f64 / 1e6,
        stamped_bps: net.node(a).face(ab).unwrap().cc.primary_rate_bps,
    }
}

#[test]
fn rate_schemes_book_the_data_direction_of_an_asymmetric_link() {
    for (scheme, kind) in [
        (CcScheme::Rcp, LawKind::Rcp),
        (CcScheme::Mircc, LawKind::Mircc),
        (CcScheme::Qsccp, LawKind::Qsccp),
    ] {
        let x = run(scheme, kind, Some(10));
        println!(
            "{scheme:?}: goodput {:.2} Mbit/s, Data drops at B {}, B's p95 sojourn {:.1} ms, stamped {:?}",
            x.goodput_bps / 1e6,
            x.data_drops_at_b,
            x.sojourn_p95_ms_at_b,
            x.stamped_bps
        );
        assert!(
            (8.0e6..=10.0e6).contains(&x.goodput_bps),
            "{scheme:?}: goodput {:.2} Mbit/s over a 10 Mbit/s Data direction",
            x.goodput_bps / 1e6
        );
        assert_eq!(x.data_drops_at_b, 0, "{scheme:?}: Data dropped at B");
        // A few 8 KB Data serialisations at 10 Mbit/s (6.4 ms each).
        assert!(
            x.sojourn_p95_ms_at_b < 30.0,
            "{scheme:?}: B's Data queue p95 {:.1} ms",
            x.sojourn_p95_ms_at_b
        );
        if scheme != CcScheme::Qsccp {
            let r = x.stamped_bps.unwrap_or(0) as f64;
            assert!(
                (7.0e6..=10.0e6).contains(&r),
                "{scheme:?}: A stamps {:.2} Mbit/s for a 10 Mbit/s Data direction",
                r / 1e6
            );
        }
    }
}
