//! One peer floods the PIT at the full rate of its link while a consumer
//! on another face fetches: with the per-face share of the PIT the
//! transfer keeps at least 90 % of its goodput; without it (share 100 %)
//! it collapses, so the share is what protects it. Virtual time.

use cc_core::fixed::{FixedWindow, FixedWindowConfig};
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{DropReason, EngineConfig};
use icn_sim::net::flows::{drive, LawFlow};
use icn_sim::net::{interest, LinkParams, Network};

const RUN: Duration = Duration::from_secs(3);
/// Flood Interests per millisecond (10 000/s; the share of 500 entries
/// fills in 50 ms, entries live 4 s).
const FLOOD_PER_MS: u32 = 10;

fn at_ms(ms: u64) -> Timestamp {
    Timestamp::ZERO + Duration::from_millis(ms)
}

/// Goodput of the legitimate transfer in bit/s over [1 s, RUN), and the
/// face-share drops the flooder's face saw.
fn transfer(flood: bool, face_share_pct: u32) -> (f64, u64) {
    let mut net = Network::new(17);
    let fwd = net.add_node(EngineConfig {
        pit_max_entries: 2000,
        face_share_pct,
        ..EngineConfig::default()
    });
    let client = net.add_node(EngineConfig::default());
    let attacker = net.add_node(EngineConfig {
        pit_max_entries: 1 << 20,
        ..EngineConfig::default()
    });
    let link = |mbps: u64, delay_ms: u64| LinkParams {
        delay: Duration::from_millis(delay_ms),
        capacity_bps: Some(mbps * 1_000_000),
        ..LinkParams::default()
    };
    let (c_up, _) = net.connect(client, fwd, link(20, 5));
    let (a_up, a_face) = net.connect(attacker, fwd, link(100, 1));
    net.add_producer(fwd, "/data", 1000, None);
    let (_silent, silent_face) = net.add_app(fwd, None);
    net.node_mut(fwd)
        .fib_add_nexthop(&"/silent".parse().unwrap(), silent_face, 0)
        .unwrap();
    net.node_mut(client)
        .fib_add_nexthop(&"/data".parse().unwrap(), c_up, 0)
        .unwrap();
    net.node_mut(attacker)
        .fib_add_nexthop(&"/silent".parse().unwrap(), a_up, 0)
        .unwrap();
    let consumer = net.add_consumer(client);
    let flooder = net.add_consumer(attacker);
    let law = FixedWindow::new(FixedWindowConfig {
        window_interests: 16.0,
    });
    let mut flows = [LawFlow::new(consumer, "/data", law, at_ms(0), at_ms(3000))];
    let mut n = 0u32;
    while net.now() < Timestamp::ZERO + RUN {
        if flood {
            for _ in 0..FLOOD_PER_MS {
                n += 1;
                net.send(flooder, interest(&format!("/silent/{n}"), n));
            }
            net.take_inbox(flooder);
        }
        let next = net.now() + Duration::from_millis(1);
        drive(&mut net, &mut flows, next, Duration::from_millis(1));
    }
    net.node(fwd).check_invariants().unwrap();
    let share_drops = net
        .node(fwd)
        .face(a_face)
        .map_or(0, |f| f.counters.drops.get(DropReason::FaceShare));
    (
        flows[0]
            .stats
            .goodput_bps(at_ms(1000), Timestamp::ZERO + RUN),
        share_drops,
    )
}

#[test]
fn a_pit_flood_from_one_peer_leaves_other_transfers_their_goodput() {
    let (alone, _) = transfer(false, 25);
    assert!(alone > 1e6, "baseline goodput {alone} bit/s");
    let (flooded, share_drops) = transfer(true, 25);
    assert!(share_drops > 0, "the flood reached its share");
    assert!(
        flooded >= 0.9 * alone,
        "goodput {flooded:.0} bit/s under the flood, {alone:.0} alone"
    );
    // Without a per-face share the flood takes the PIT and the transfer.
    let (unshared, _) = transfer(true, 100);
    assert!(
        unshared < 0.5 * alone,
        "goodput {unshared:.0} bit/s without shares, {alone:.0} alone"
    );
    eprintln!("goodput alone {alone:.0} bit/s, flooded {flooded:.0}, without shares {unshared:.0}");
}
