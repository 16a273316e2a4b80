//! Repair of a lossy multicast stream over real engines in virtual time
//! (issue 7). Figure 4 with random frame loss on the S–C link (1 %) and on
//! every access link (2 %), both directions. Receivers ask for each
//! missing packet with an Interest `/<group>/seq=<n>`: B's or C's Content
//! Store answers when the packet reached it, the source's bounded buffer
//! when it was lost before C (S runs without a Content Store here). With repair, every receiver gets the whole
//! stream in order; without, the losses are released as gaps.

mod mcast_common;

use icn_multicast::{ReceiverConfig, SourceConfig};
use icn_sim::net::flows::LawFlow;
use icn_sim::net::LinkParams;
use icn_sim::net::Network;
use icn_tlv::Name;
use mcast_common::*;

const PACKETS: u64 = 3000;

fn lossy(bps: u64, delay_ms: u64, loss: f64) -> LinkParams {
    LinkParams {
        loss,
        ..link(bps, delay_ms)
    }
}

/// The lossy tree, a 3000-packet stream; returns the applications and
/// the network after the stream ended and repairs settled.
fn lossy_run(repair: bool) -> (Apps, Network, Vec<icn_sim::net::NodeId>) {
    let g: Name = "/mc/file".parse().unwrap();
    let mut net = Network::new(21);
    // S has no Content Store, so losses on S–C are the source's to repair.
    let s = net.add_node(icn_forwarder::engine::EngineConfig {
        cs_max_packets: 0,
        ..engine(100)
    });
    let c = net.add_node(engine(100));
    let b = net.add_node(engine(100));
    let (_, c_up) = net.connect(s, c, lossy(10_000_000, 5, 0.01));
    let (_, b_up) = net.connect(c, b, link(2_000_000, 20));
    route(&mut net, c, &g, c_up);
    route(&mut net, b, &g, b_up);
    let mut apps = Apps::default();
    apps.add_source(&mut net, s, &g, SourceConfig::default());
    apps.sources[0].end_after = Some(PACKETS);
    let mut nodes = vec![s, c, b];
    for _ in 0..3 {
        let r = net.add_node(engine(100));
        let (_, up) = net.connect(b, r, lossy(1_500_000, 2, 0.02));
        route(&mut net, r, &g, up);
        let cfg = ReceiverConfig {
            repair: repair.then(Default::default),
            ..rx_cfg(1_500_000)
        };
        apps.add_receiver(&mut net, r, &g, cfg);
        nodes.push(r);
    }
    let mut none: Vec<LawFlow<cc_core::AnyConsumerLaw>> = Vec::new();
    // ~3 MB at up to 1.5 Mbit/s after the ramp: 40 s is ample.
    run(&mut net, &mut apps, &mut none, secs(40), |_, _| {});
    (apps, net, nodes)
}

#[test]
fn lost_packets_are_repaired_from_the_tree_and_the_source() {
    let (apps, net, nodes) = lossy_run(true);
    let src = &apps.sources[0];
    let cs_hits: Vec<u64> = nodes[1..3]
        .iter()
        .map(|n| net.node(*n).counters().n_cs_hits)
        .collect();
    eprintln!(
        "source: {} packets, {} repairs answered from its buffer ({} missed); CS hits C/B {cs_hits:?}",
        src.src.stats().packets_sent,
        src.repairs_answered,
        src.src.stats().repairs_missed,
    );
    for (i, r) in apps.receivers.iter().enumerate() {
        let st = r.rx.stats();
        let rp = r.rx.repair_stats();
        eprintln!(
            "receiver {i}: {} packets, gaps seen {} (late {}), repair Interests {}, repaired {}, unrepaired {}, delivered {}, complete {}",
            st.packets,
            rp.repaired + rp.late + rp.unrepaired,
            st.late,
            rp.interests,
            rp.repaired,
            rp.unrepaired,
            r.delivered.len(),
            r.rx.is_complete()
        );
        assert!(rp.repaired > 10, "receiver {i}: too few losses to test");
        assert_eq!(rp.unrepaired, 0, "receiver {i}");
        assert!(r.gaps.is_empty(), "receiver {i}: gaps {:?}", r.gaps);
        assert!(r.rx.is_complete(), "receiver {i} incomplete");
        let first = r.delivered[0].0;
        assert_eq!(first, 0, "receiver {i} joined before the stream");
        let in_order = r
            .delivered
            .iter()
            .enumerate()
            .all(|(k, (seq, ok))| *seq == k as u64 && *ok);
        assert!(in_order, "receiver {i}: out of order or wrong bytes");
        assert_eq!(r.delivered.len() as u64, PACKETS, "receiver {i}");
    }
    assert!(src.repairs_answered > 0, "losses on S–C need the source");
    assert!(cs_hits[1] > 0, "B's CS answers losses on the access links");
}

#[test]
fn without_repair_losses_are_released_as_gaps() {
    let (apps, _, _) = lossy_run(false);
    for (i, r) in apps.receivers.iter().enumerate() {
        let st = r.rx.stats();
        eprintln!(
            "receiver {i} (no repair): {} packets, lost {}, gaps released {}",
            st.packets,
            st.lost,
            r.gaps.len()
        );
        assert!(!r.gaps.is_empty());
        assert_eq!(r.gaps.len() as u64, st.lost, "receiver {i}");
        assert_eq!(
            r.delivered.len() as u64 + r.gaps.len() as u64,
            r.delivered.last().unwrap().0 + 1,
            "every sequence number is either delivered or a gap"
        );
        assert_eq!(r.rx.repair_stats().interests, 0);
    }
}

/// The stream's last three packets, the end packet among them, are lost
/// before the first link: no later packet reveals the hole, so only the
/// receivers' tail probe (`icn_multicast::tail`) recovers them, from the
/// source's buffer. Without it every receiver waited for its idle timeout
/// and delivered a truncated stream.
#[test]
fn a_lost_tail_is_asked_for_and_the_stream_completes() {
    const N: u64 = 400;
    let g: Name = "/mc/tail".parse().unwrap();
    let mut f = Fig4::new(5, 100, 2, 1_500_000);
    f.route_to_source(&g);
    let mut apps = Apps::default();
    apps.add_source(&mut f.net, f.s, &g, SourceConfig::default());
    apps.sources[0].end_after = Some(N);
    apps.sources[0].lose_seqs = vec![N - 3, N - 2, N - 1];
    for r in f.r.clone() {
        let cfg = ReceiverConfig {
            start_seq: Some(0),
            ..rx_cfg(1_500_000)
        };
        apps.add_receiver(&mut f.net, r, &g, cfg);
    }
    let mut none: Vec<LawFlow<cc_core::AnyConsumerLaw>> = Vec::new();
    // 400 kB at up to 1.5 Mbit/s after the ramp: 15 s is ample.
    run(&mut f.net, &mut apps, &mut none, secs(15), |_, _| {});
    assert_eq!(apps.sources[0].src.next_seq(), N);
    for (i, r) in apps.receivers.iter().enumerate() {
        let st = r.rx.stats();
        eprintln!(
            "receiver {i}: {} packets, tail probes {}, repaired {}, complete {}",
            st.packets,
            st.tail_probes,
            r.rx.repair_stats().repaired,
            r.rx.is_complete()
        );
        assert!(st.tail_probes >= 1, "receiver {i}: the tail was asked for");
        assert!(r.rx.is_complete(), "receiver {i} incomplete");
        assert!(r.gaps.is_empty(), "receiver {i}: gaps {:?}", r.gaps);
        assert_eq!(r.delivered.len() as u64, N, "receiver {i}");
        assert!(r
            .delivered
            .iter()
            .enumerate()
            .all(|(k, (s, ok))| *s == k as u64 && *ok));
    }
}
