use super::*;
use crate::wire::SubscriptionKind;
use cc_core::srmcc::SrmccConfig;

const UP: u64 = 256;
const A: u64 = 300;
const B: u64 = 301;

fn g() -> Name {
    "/mc/g".parse().unwrap()
}

fn ms(n: u64) -> Timestamp {
    Timestamp::from_millis(n)
}

fn join() -> Subscription {
    Subscription::join(g(), Duration::from_secs(3))
}

fn drain(n: &mut MulticastNode) -> Vec<NodeOutput> {
    core::iter::from_fn(|| n.poll_output()).collect()
}

/// Face A's queue holds 10 of 50 packets, B's 30 of 50; upstream is 2 Mbit/s.
fn sampler(face: u64) -> Option<FaceSample> {
    let (q, cap) = match face {
        A => (10, None),
        B => (30, None),
        UP => (0, Some(2_000_000)),
        _ => return None,
    };
    Some(FaceSample {
        queue_packets: q,
        queue_max_packets: 50,
        capacity_bps: cap,
    })
}

fn fb(max: f64, min: f64, fair: u64) -> MccFeedback {
    wire::to_feedback(
        g(),
        &MccMessage {
            max_occupancy: max,
            min_occupancy: min,
            min_fair_share_bps: fair as f64,
        },
    )
}

#[test]
fn first_join_grafts_once_and_last_leave_prunes() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    let out = drain(&mut n);
    assert_eq!(out.len(), 1);
    assert!(
        matches!(&out[0], NodeOutput::Subscription { face: UP, sub } if sub.kind == SubscriptionKind::Join && sub.group == g())
    );
    n.handle_subscription(ms(1), B, &join(), Some(UP)).unwrap();
    n.handle_subscription(ms(2), A, &join(), Some(UP)).unwrap();
    assert!(
        drain(&mut n).is_empty(),
        "second member and refresh do not go upstream"
    );
    n.handle_subscription(ms(3), A, &Subscription::leave(g()), Some(UP))
        .unwrap();
    assert!(drain(&mut n).is_empty());
    n.handle_subscription(ms(4), B, &Subscription::leave(g()), Some(UP))
        .unwrap();
    let out = drain(&mut n);
    assert!(
        matches!(&out[..], [NodeOutput::Subscription { face: UP, sub }] if sub.kind == SubscriptionKind::Leave)
    );
    assert!(n.mnft().is_empty());
    assert_eq!(n.poll_timeout(), None);
}

#[test]
fn join_from_the_upstream_face_is_refused() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    assert_eq!(
        n.handle_subscription(ms(0), UP, &join(), Some(UP)),
        Err(McastError::FromUpstream)
    );
    assert_eq!(n.stats().subscriptions_rejected, 1);
}

#[test]
fn silent_member_expires_and_branch_is_pruned() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    let _ = drain(&mut n);
    let mut t = ms(0);
    while let Some(next) = n.poll_timeout() {
        assert!(next <= ms(3000), "expiry is a deadline");
        t = next;
        n.handle_timeout(t, &sampler);
        let out = drain(&mut n);
        if out.iter().any(|o| matches!(o, NodeOutput::Subscription { sub, .. } if sub.kind == SubscriptionKind::Leave)) {
            break;
        }
    }
    assert_eq!(t, ms(3000));
    assert!(n.mnft().is_empty());
    assert_eq!(n.stats().expirations, 1);
}

#[test]
fn group_data_is_cloned_once_per_downstream_face_from_upstream_only() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    n.handle_subscription(ms(0), B, &join(), Some(UP)).unwrap();
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    let mut out = Vec::new();
    let name: Name = "/mc/g/seq=5".parse().unwrap();
    assert_eq!(
        n.handle_group_data(ms(1), UP, &name, &mut out),
        DataVerdict::Forward
    );
    assert_eq!(out, vec![A, B]);
    out.clear();
    assert_eq!(
        n.handle_group_data(ms(1), A, &name, &mut out),
        DataVerdict::WrongFace
    );
    assert!(out.is_empty());
    let other: Name = "/mc/h/seq=5".parse().unwrap();
    assert_eq!(
        n.handle_group_data(ms(1), UP, &other, &mut out),
        DataVerdict::NotGroup
    );
    assert_eq!((n.stats().copies_out, n.stats().data_wrong_face), (2, 1));
}

#[test]
fn one_message_per_period_carries_the_extremes_of_children_and_self() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    n.handle_subscription(ms(0), B, &join(), Some(UP)).unwrap();
    let _ = drain(&mut n);
    // Let the EWMAs settle on 0.2 (A) and 0.6 (B).
    while let Some(t) = n.poll_timeout().filter(|t| *t < ms(390)) {
        n.handle_timeout(t, &sampler);
    }
    n.handle_feedback(ms(390), A, &fb(0.0, 1.0, 1_500_000))
        .unwrap();
    n.handle_feedback(ms(391), B, &fb(0.7, 0.05, 900_000))
        .unwrap();
    n.handle_feedback(ms(392), B, &fb(0.1, 0.3, 1_000_000))
        .unwrap();
    n.handle_timeout(ms(400), &sampler);
    let out = drain(&mut n);
    assert_eq!(out.len(), 1, "{out:?}");
    let NodeOutput::Feedback { face: UP, feedback } = &out[0] else {
        panic!("{out:?}")
    };
    let m = wire::to_message(feedback);
    assert_eq!(m.min_fair_share_bps, 900_000.0);
    assert!((m.max_occupancy - 0.7).abs() < 1e-6, "{m:?}");
    assert!((m.min_occupancy - 0.05).abs() < 1e-6, "{m:?}");
    assert!((n.occupancy(B).unwrap() - 0.6).abs() < 1e-6);
    assert_eq!(n.fair_share_bps(UP), Some(2_000_000.0));
}

#[test]
fn own_measurements_win_when_they_are_the_extremes() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), B, &join(), Some(UP)).unwrap();
    while let Some(t) = n.poll_timeout().filter(|t| *t < ms(390)) {
        n.handle_timeout(t, &sampler);
    }
    n.handle_feedback(ms(390), B, &fb(0.0, 1.0, 5_000_000))
        .unwrap();
    let _ = drain(&mut n);
    n.handle_timeout(ms(400), &sampler);
    let out = drain(&mut n);
    let [NodeOutput::Feedback { feedback, .. }] = &out[..] else {
        panic!("{out:?}")
    };
    let m = wire::to_message(feedback);
    // Own: occupancy 0.6 on B, fair share 2 Mbit/s / 1 group.
    assert_eq!(m.min_fair_share_bps, 2_000_000.0);
    assert!((m.max_occupancy - 0.6).abs() < 1e-6 && (m.min_occupancy - 0.6).abs() < 1e-6);
}

#[test]
fn missed_period_reuses_the_held_report_then_goes_silent() {
    let cfg = NodeConfig::default();
    let (period, hold) = (cfg.feedback_period, cfg.feedback_hold);
    let mut n = MulticastNode::new(cfg, ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    n.handle_feedback(ms(10), A, &fb(0.0, 1.0, 700_000))
        .unwrap();
    let mut feedbacks = Vec::new();
    let mut t = ms(0);
    while t < ms(10) + hold + 2 * period {
        t = n.poll_timeout().unwrap();
        n.handle_timeout(t, &sampler);
        for o in drain(&mut n) {
            if let NodeOutput::Feedback { feedback, .. } = o {
                feedbacks.push((t, feedback.min_fair_share_bps));
            }
        }
    }
    // Periods at 400, 800, 1200 fall inside the 1.2 s hold of the report at 10 ms.
    assert_eq!(
        feedbacks,
        vec![(ms(400), 700_000), (ms(800), 700_000), (ms(1200), 700_000)]
    );
}

#[test]
fn feedback_from_strangers_is_refused() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    assert_eq!(
        n.handle_feedback(ms(0), A, &fb(0.0, 1.0, 1)),
        Err(McastError::UnknownGroup)
    );
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    assert_eq!(
        n.handle_feedback(ms(0), B, &fb(0.0, 1.0, 1)),
        Err(McastError::NotDownstream)
    );
    assert_eq!(n.stats().feedback_rejected, 2);
}

#[test]
fn membership_is_refreshed_upstream_every_refresh_period() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    let mut joins = 0;
    let mut t = ms(0);
    while t < ms(2500) {
        n.handle_subscription(t, A, &join(), Some(UP)).unwrap();
        for o in drain(&mut n) {
            if matches!(o, NodeOutput::Subscription { sub, .. } if sub.kind == SubscriptionKind::Join)
            {
                joins += 1;
            }
        }
        t = n.poll_timeout().unwrap();
        n.handle_timeout(t, &sampler);
    }
    // The graft at 0, refreshes at 1 s and 2 s.
    assert_eq!(joins, 3);
}

#[test]
fn route_change_moves_the_branch() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    let _ = drain(&mut n);
    n.handle_subscription(ms(5), A, &join(), Some(999)).unwrap();
    let out = drain(&mut n);
    assert!(matches!(&out[..], [
        NodeOutput::Subscription { face: UP, sub: l },
        NodeOutput::Subscription { face: 999, sub: j },
    ] if l.kind == SubscriptionKind::Leave && j.kind == SubscriptionKind::Join));
    assert_eq!(n.mnft().get(&g()).unwrap().upstream, Some(999));
}

#[test]
fn unicast_flows_lower_the_fair_share() {
    let cfg = NodeConfig {
        srmcc: SrmccConfig {
            flow_sample_probability: 1.0,
            ..SrmccConfig::default()
        },
        ..NodeConfig::default()
    };
    let mut n = MulticastNode::new(cfg, ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    n.handle_timeout(ms(400), &sampler);
    for key in [1, 2, 3, 1, 2] {
        n.observe_unicast(UP, key);
    }
    n.observe_unicast(A, 77); // not an upstream: ignored
    assert_eq!(n.fair_share_bps(UP), Some(500_000.0));
    assert_eq!(n.flow_count(UP), Some(4));
    // The flow window (2 s) ends: the count of the last window still holds
    // for one more window, so N_i does not collapse to the group count.
    n.handle_timeout(ms(2000), &sampler);
    assert_eq!(n.fair_share_bps(UP), Some(500_000.0));
    n.observe_unicast(UP, 9);
    assert_eq!(n.flow_count(UP), Some(4), "max(1, 3) flows + 1 group");
    n.handle_subscription(ms(2000), A, &join(), Some(UP))
        .unwrap();
    n.handle_timeout(ms(4000), &sampler);
    n.handle_subscription(ms(4000), A, &join(), Some(UP))
        .unwrap();
    assert_eq!(
        n.flow_count(UP),
        Some(2),
        "only flow 9 was seen last window"
    );
    n.handle_timeout(ms(6000), &sampler);
    assert_eq!(n.flow_count(UP), Some(1));
    assert_eq!(n.fair_share_bps(UP), Some(2_000_000.0));
}

#[test]
fn downstream_face_capacity_caps_the_reported_fair_share() {
    // A receiver that does not know its access capacity reports "no
    // limit"; the node caps it with the capacity of the face it came on.
    let capped = |face: u64| {
        Some(FaceSample {
            queue_packets: 0,
            queue_max_packets: 50,
            capacity_bps: match face {
                A => Some(1_500_000),
                UP => Some(10_000_000),
                _ => None,
            },
        })
    };
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    n.handle_subscription(ms(0), B, &join(), Some(UP)).unwrap();
    let _ = drain(&mut n);
    n.handle_timeout(ms(20), &capped);
    n.handle_feedback(ms(30), A, &fb(0.0, 1.0, wire::UNLIMITED_BPS))
        .unwrap();
    n.handle_feedback(ms(30), B, &fb(0.0, 1.0, 8_000_000))
        .unwrap();
    n.handle_timeout(ms(400), &capped);
    let out = drain(&mut n);
    let m = out
        .iter()
        .find_map(|o| match o {
            NodeOutput::Feedback { feedback, .. } => Some(wire::to_message(feedback)),
            _ => None,
        })
        .expect("one MCC message upstream");
    assert_eq!(m.min_fair_share_bps, 1_500_000.0);
}

#[test]
fn encoded_outputs_decode() {
    let mut n = MulticastNode::new(NodeConfig::default(), ms(0));
    n.handle_subscription(ms(0), A, &join(), Some(UP)).unwrap();
    let t = n.poll_transmit().unwrap();
    assert_eq!(t.face, UP);
    let (_, net) = icn_tlv::decode_packet(t.bytes).unwrap();
    let Some(icn_tlv::NetPacket::Interest(i)) = net else {
        panic!()
    };
    assert_eq!(
        Subscription::from_interest(&i).unwrap().lifetime,
        Duration::from_secs(3)
    );
}

#[test]
fn advance_keeps_phase_and_skips_missed_periods() {
    let p = Duration::from_millis(100);
    assert_eq!(advance(ms(100), p, ms(100)), ms(200));
    assert_eq!(advance(ms(100), p, ms(150)), ms(200));
    assert_eq!(advance(ms(100), p, ms(1000)), ms(1100));
    assert_eq!(advance(ms(500), p, ms(100)), ms(500));
    assert_eq!(
        advance(ms(1), Duration::ZERO, ms(1)),
        Timestamp::from_nanos(1_000_001)
    );
}
