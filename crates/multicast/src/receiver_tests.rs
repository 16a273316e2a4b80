use super::*;
use icn_tlv::{decode_packet, NetPacket};

fn data(seq: u64, rate: u64) -> Data {
    let p = GroupPacket {
        group: "/g".parse().unwrap(),
        seq,
        rate_bps: rate,
        payload: Bytes::from_static(&[7; 100]),
        end: false,
    };
    match decode_packet(p.encode(None)).unwrap().1 {
        Some(NetPacket::Data(d)) => d,
        _ => unreachable!(),
    }
}

fn rx() -> MulticastReceiver {
    let cfg = ReceiverConfig {
        access_capacity_bps: 1_500_000,
        ..ReceiverConfig::default()
    };
    MulticastReceiver::new("/g".parse().unwrap(), cfg, Timestamp::ZERO)
}

#[test]
fn joins_at_once_and_sends_initial_mcc_values() {
    let mut r = rx();
    assert!(
        matches!(r.poll_output(), Some(ReceiverOutput::Subscription(s)) if s.lifetime == Duration::from_secs(3))
    );
    let Some(ReceiverOutput::Feedback(fb)) = r.poll_output() else {
        panic!()
    };
    assert_eq!(
        (
            fb.max_occupancy_ppm,
            fb.min_occupancy_ppm,
            fb.min_fair_share_bps
        ),
        (0, 1_000_000, 1_500_000)
    );
    assert_eq!(r.poll_timeout(), Timestamp::from_millis(400));
    r.handle_timeout(Timestamp::from_millis(400));
    assert!(matches!(r.poll_output(), Some(ReceiverOutput::Feedback(_))));
    r.handle_timeout(Timestamp::from_millis(1000));
    assert!(matches!(
        r.poll_output(),
        Some(ReceiverOutput::Subscription(_))
    ));
}

#[test]
fn a_receiver_from_the_start_repairs_a_lost_first_packet() {
    let cfg = ReceiverConfig {
        start_seq: Some(0),
        ..ReceiverConfig::default()
    };
    let mut r = MulticastReceiver::new("/g".parse().unwrap(), cfg, Timestamp::ZERO);
    r.handle_data(Timestamp::ZERO, &data(1, 99)).unwrap();
    assert_eq!(r.stats().lost, 1, "seq 0 is lost, not before the start");
    assert!(r.pop_delivery().is_none(), "1 waits for 0");
    r.handle_data(Timestamp::from_millis(20), &data(0, 99))
        .unwrap();
    assert_eq!((r.stats().lost, r.stats().late), (0, 1));
    let seqs: Vec<u64> = core::iter::from_fn(|| r.pop_delivery())
        .map(|d| match d {
            Delivery::Payload { seq, .. } | Delivery::Gap { seq } => seq,
        })
        .collect();
    assert_eq!(seqs, vec![0, 1]);
}

#[test]
fn gaps_late_and_duplicates_are_accounted() {
    let mut r = rx();
    let t = Timestamp::ZERO;
    for s in [10, 11, 14, 12, 12, 15] {
        r.handle_data(t, &data(s, 99)).unwrap();
    }
    let st = r.stats();
    // 13 is missing; 12 came late, then twice.
    assert_eq!(st.lost, 1);
    assert_eq!((st.late, st.duplicates, st.packets), (1, 1, 5));
    r.handle_data(t, &data(13, 1)).unwrap();
    assert_eq!(r.stats().lost, 0);
    assert_eq!(
        r.stats().announced_rate_bps,
        99,
        "late packets do not move the announced rate"
    );
    r.handle_data(t, &data(200, 98)).unwrap();
    // 100 is beyond the 64-packet gap window but a hole under repair:
    // it fills the hole; 5 is before the stream started: too old.
    r.handle_data(t, &data(100, 98)).unwrap();
    r.handle_data(t, &data(5, 98)).unwrap();
    let st = r.stats();
    assert_eq!((st.lost, st.late, st.too_old, st.packets), (183, 3, 1, 8));
    assert_eq!(
        (st.first_seq, st.highest_seq, st.announced_rate_bps),
        (Some(10), Some(200), 98)
    );
    assert!((st.loss_ratio() - 183.0 / 191.0).abs() < 1e-12);
}

#[test]
fn gaps_are_repaired_by_interests_and_released_in_order() {
    let mut r = rx();
    let _ = core::iter::from_fn(|| r.poll_output()).count();
    r.handle_data(Timestamp::ZERO, &data(0, 1)).unwrap();
    r.handle_data(Timestamp::ZERO, &data(2, 1)).unwrap();
    r.handle_timeout(Timestamp::from_millis(10));
    let asks: Vec<_> = core::iter::from_fn(|| r.poll_output())
        .filter_map(|o| match o {
            ReceiverOutput::Repair { name, lifetime } => Some((name, lifetime)),
            _ => None,
        })
        .collect();
    assert_eq!(
        asks,
        vec![("/g/seq=1".parse().unwrap(), Duration::from_millis(400))]
    );
    let (_, net) = icn_tlv::decode_packet(
        ReceiverOutput::Repair {
            name: asks[0].0.clone(),
            lifetime: asks[0].1,
        }
        .encode(7),
    )
    .unwrap();
    assert!(matches!(net, Some(NetPacket::Interest(i)) if i.name == asks[0].0));
    let order = |r: &mut MulticastReceiver| -> Vec<u64> {
        core::iter::from_fn(|| r.pop_delivery())
            .map(|d| match d {
                Delivery::Payload { seq, .. } => seq,
                Delivery::Gap { seq } => 1000 + seq,
            })
            .collect()
    };
    assert_eq!(order(&mut r), vec![0]);
    r.handle_data(Timestamp::from_millis(60), &data(1, 1))
        .unwrap();
    assert_eq!(order(&mut r), vec![1, 2]);
    assert_eq!(r.repair_stats().repaired, 1);
    assert_eq!(r.stats().lost, 0);
    // A hole nobody answers is released as a gap after the window.
    r.handle_data(Timestamp::from_millis(100), &data(4, 1))
        .unwrap();
    r.handle_timeout(Timestamp::from_millis(2100));
    assert_eq!(order(&mut r), vec![1003, 4]);
    assert_eq!(r.repair_stats().unrepaired, 1);
}

#[test]
fn a_silent_tail_is_asked_for_until_the_end_arrives() {
    let mut r = rx();
    let _ = core::iter::from_fn(|| r.poll_output()).count();
    // 100 B payloads at 100 kbit/s: ~13 ms apart; no RTT measured yet,
    // so the silence is the repair retry (400 ms).
    let spacing_ms = 13;
    for s in 0..10u64 {
        let now = Timestamp::from_millis(s * spacing_ms);
        r.handle_data(now, &data(s, 100_000)).unwrap();
        r.handle_timeout(now);
    }
    assert!(core::iter::from_fn(|| r.poll_output())
        .all(|o| !matches!(o, ReceiverOutput::Repair { .. })));
    let last = Timestamp::from_millis(9 * spacing_ms);
    r.handle_timeout(last + Duration::from_millis(399));
    let _ = core::iter::from_fn(|| r.poll_output()).count();
    assert_eq!(r.stats().tail_probes, 0);
    assert!(r.poll_timeout() <= last + Duration::from_millis(400));
    r.handle_timeout(last + Duration::from_millis(400));
    let asks: Vec<Name> = core::iter::from_fn(|| r.poll_output())
        .filter_map(|o| match o {
            ReceiverOutput::Repair { name, .. } => Some(name),
            _ => None,
        })
        .collect();
    assert_eq!(asks, vec!["/g/seq=10".parse().unwrap()]);
    assert_eq!(r.stats().tail_probes, 1);
    // The answer is the end packet: complete, and no more asks.
    let mut end = GroupPacket::from_data(&data(10, 100_000)).unwrap();
    end.end = true;
    let Some(NetPacket::Data(d)) = decode_packet(end.encode(None)).unwrap().1 else {
        unreachable!()
    };
    r.handle_data(last + Duration::from_millis(450), &d)
        .unwrap();
    assert!(r.is_complete());
    r.handle_timeout(Timestamp::from_millis(60_000));
    assert_eq!(r.stats().tail_probes, 1);
}

#[test]
fn received_rate_is_measured_per_window() {
    let mut r = rx();
    let d = data(0, 0);
    let len = d.wire().unwrap().len() as f64;
    for i in 0..=100u64 {
        r.handle_data(Timestamp::from_millis(i * 10), &data(i, 0))
            .unwrap();
    }
    // 100 packets in the first second.
    let expect = 100.0 * len * 8.0;
    assert!(
        (r.received_rate_bps() - expect).abs() / expect < 0.02,
        "{}",
        r.received_rate_bps()
    );
}

#[test]
fn leave_stops_everything_but_the_leave() {
    let mut r = rx();
    r.leave();
    assert!(
        matches!(r.poll_output(), Some(ReceiverOutput::Subscription(s)) if s.kind == crate::SubscriptionKind::Leave)
    );
    assert!(r.poll_output().is_none());
    assert_eq!(r.poll_timeout(), Timestamp::MAX);
    let mut other = data(0, 0);
    other.name = "/h/seq=1".parse().unwrap();
    assert!(r.handle_data(Timestamp::ZERO, &other).is_err());
}
