use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_multicast::wire::{self, GroupPacket, Subscription};
use icn_tlv::{decode_packet, LpPacket, MccFeedback, Name, NetPacket};

use super::*;
use crate::config::Config;
use crate::engine::{DropReason, FaceParams};
use crate::router::{build, Router, RouterConfig};

fn ms(n: u64) -> Timestamp {
    Timestamp::from_nanos(n * 1_000_000)
}

fn group() -> Name {
    "/mc/g".parse().unwrap()
}

/// One engine with an upstream face (FIB route for the group) and two
/// downstream faces.
fn engine() -> (Router, FaceId, FaceId, FaceId) {
    let mut f = build(&RouterConfig::default(), 7);
    let up = f.add_face(ms(0), FaceParams::non_local("sim://up"));
    let a = f.add_face(ms(0), FaceParams::non_local("sim://a"));
    let b = f.add_face(ms(0), FaceParams::non_local("sim://b"));
    f.fib_add_nexthop(&group(), up, 0).unwrap();
    (f, up, a, b)
}

fn drain(f: &mut Router, now: Timestamp) -> Vec<(FaceId, Bytes)> {
    let mut v = Vec::new();
    while let Some(t) = f.poll_transmit(now) {
        v.push((t.face, t.bytes));
    }
    v
}

fn join(nonce: u32) -> Bytes {
    Subscription::join(group(), Duration::from_secs(3)).encode(nonce)
}

fn group_data(seq: u64) -> Bytes {
    GroupPacket {
        group: group(),
        seq,
        rate_bps: 1_000_000,
        payload: Bytes::from_static(&[1; 100]),
        end: false,
    }
    .encode(None)
}

fn feedback(fair_bps: u64) -> Bytes {
    wire::encode_feedback(&MccFeedback {
        group: group(),
        max_occupancy_ppm: 0,
        min_occupancy_ppm: 1_000_000,
        min_fair_share_bps: fair_bps,
    })
}

#[test]
fn config_section_parses_and_validates() {
    let c = Config::from_toml_str("[multicast_groups]\nfeedback_period_ms = 200\nmax_groups = 8\n")
        .unwrap();
    assert_eq!(c.multicast_groups.feedback_period_ms, 200);
    let n = c.multicast_groups.node_config(1);
    assert_eq!(n.feedback_period, Duration::from_millis(200));
    assert_eq!(n.limits.max_groups, 8);
    assert_eq!(c.router_config().multicast_groups.max_groups, 8);
    let e =
        Config::from_toml_str("[multicast_groups]\nmembership_lifetime_ms = 500\n").unwrap_err();
    assert!(
        e.to_string()
            .contains("multicast_groups.membership_lifetime_ms"),
        "{e}"
    );
    let e = Config::from_toml_str("[multicast_groups]\nbogus = 1\n").unwrap_err();
    assert!(e.to_string().contains("bogus"), "{e}");
}

#[test]
fn join_grafts_upstream_and_data_is_cloned() {
    let (mut f, up, a, b) = engine();
    f.handle_packet(ms(1), a, join(1));
    f.handle_packet(ms(1), b, join(2));
    let out = drain(&mut f, ms(1));
    // One aggregated join upstream, never into the PIT.
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0, up);
    let (_, net) = decode_packet(out[0].1.clone()).unwrap();
    let Some(NetPacket::Interest(i)) = net else {
        panic!("not an Interest")
    };
    assert_eq!(Subscription::from_interest(&i).unwrap().group, group());
    assert_eq!(f.counters().n_pit_entries, 0);

    f.handle_packet(ms(2), up, group_data(0));
    let out = drain(&mut f, ms(2));
    let mut faces: Vec<FaceId> = out.iter().map(|(f, _)| *f).collect();
    faces.sort();
    assert_eq!(faces, vec![a, b]);
    assert!(out.iter().all(|(_, w)| *w == group_data(0)));
    assert_eq!(SrmccGroups::of(&f).unwrap().stats().copies_out, 2);

    // RPF: the same Data from a downstream face is dropped.
    f.handle_packet(ms(3), a, group_data(1));
    assert!(drain(&mut f, ms(3)).is_empty());
    assert_eq!(f.counters().drops.get(DropReason::GroupWrongFace), 1);
}

#[test]
fn data_outside_groups_is_still_unsolicited() {
    let (mut f, up, a, _) = engine();
    f.handle_packet(ms(1), a, join(1));
    let _ = drain(&mut f, ms(1));
    let other = GroupPacket {
        group: "/other".parse().unwrap(),
        ..GroupPacket::from_data(&icn_tlv::Data::decode(group_data(0)).unwrap()).unwrap()
    }
    .encode(None);
    f.handle_packet(ms(2), up, other);
    assert!(drain(&mut f, ms(2)).is_empty());
    assert_eq!(f.counters().drops.get(DropReason::UnsolicitedData), 1);
}

#[test]
fn one_feedback_per_period_goes_upstream_as_lp_frame() {
    let (mut f, up, a, b) = engine();
    f.handle_packet(ms(0), a, join(1));
    f.handle_packet(ms(0), b, join(2));
    let _ = drain(&mut f, ms(0));
    let mut now = ms(0);
    let mut up_feedback = Vec::new();
    while now < ms(4000) {
        now += Duration::from_millis(10);
        if now.as_nanos() % 1_000_000_000 == 0 {
            f.handle_packet(now, a, join(3));
            f.handle_packet(now, b, join(4));
        }
        if now.as_nanos() % 200_000_000 == 0 {
            f.handle_packet(now, a, feedback(3_000_000));
            f.handle_packet(now, b, feedback(2_000_000));
        }
        if f.poll_timeout().is_some_and(|t| t <= now) {
            f.handle_timeout(now);
        }
        for (face, bytes) in drain(&mut f, now) {
            let (lp, net) = decode_packet(bytes).unwrap();
            if let (Some(fb), None) = (lp.mcc, net) {
                assert_eq!(face, up);
                up_feedback.push(fb);
            }
        }
    }
    // 4 s / 400 ms = 10 periods: exactly one message each.
    assert_eq!(up_feedback.len(), 10, "{up_feedback:?}");
    assert!(up_feedback
        .iter()
        .all(|fb| fb.min_fair_share_bps == 2_000_000 && fb.group == group()));
    assert_eq!(f.counters().drops.get(DropReason::Idle), 0);
}

#[test]
fn feedback_for_unknown_group_is_refused_not_idle() {
    let (mut f, _, a, _) = engine();
    f.handle_packet(ms(0), a, feedback(1));
    assert_eq!(f.counters().drops.get(DropReason::GroupRefused), 1);
    assert_eq!(f.counters().drops.get(DropReason::Idle), 0);
    // A truly empty LpPacket is still Idle.
    let idle = LpPacket::default().encode();
    f.handle_packet(ms(0), a, idle);
    assert_eq!(f.counters().drops.get(DropReason::Idle), 1);
}

#[test]
fn removing_the_last_member_prunes_upstream() {
    let (mut f, up, a, _) = engine();
    f.handle_packet(ms(0), a, join(1));
    let _ = drain(&mut f, ms(0));
    f.remove_face(ms(5), a);
    let out = drain(&mut f, ms(5));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, up);
    let (_, net) = decode_packet(out[0].1.clone()).unwrap();
    let Some(NetPacket::Interest(i)) = net else {
        panic!("not an Interest")
    };
    assert_eq!(
        Subscription::from_interest(&i).unwrap().kind,
        icn_multicast::SubscriptionKind::Leave
    );
    assert_eq!(f.poll_timeout(), None);
}

#[test]
fn disabled_hook_leaves_engine_as_before() {
    let cfg = RouterConfig {
        multicast_groups: GroupsConfig {
            enabled: false,
            ..GroupsConfig::default()
        },
        ..RouterConfig::default()
    };
    let mut f = build(&cfg, 1);
    let a = f.add_face(ms(0), FaceParams::non_local("sim://a"));
    f.handle_packet(ms(0), a, feedback(1));
    assert_eq!(f.counters().drops.get(DropReason::Idle), 1);
    assert!(SrmccGroups::of(&f).is_none());
}

#[test]
fn copies_are_paced_by_face_capacity() {
    let (mut f, up, a, _) = engine();
    f.set_face_capacity_bps(a, Some(1_000_000)).unwrap();
    f.handle_packet(ms(0), a, join(1));
    let _ = drain(&mut f, ms(0));
    for s in 0..10 {
        f.handle_packet(ms(1), up, group_data(s));
    }
    // Only the first copy leaves at once; the rest wait in a's Data queue.
    let out = drain(&mut f, ms(1));
    assert_eq!(out.len(), 1);
    let s = f.face_sample(a).unwrap();
    assert_eq!(s.queue_packets, 9);
    assert_eq!(s.capacity_bps, Some(1_000_000));
}

#[test]
fn flow_key_ignores_positional_components_only() {
    let k = |s: &str| flow_key(&s.parse::<Name>().unwrap());
    assert_eq!(k("/uni/a/v=3/seg=1"), k("/uni/a/v=3/seg=99"));
    assert_eq!(k("/uni/a/seg=1"), k("/uni/a"));
    assert_ne!(k("/uni/a/seg=1"), k("/uni/b/seg=1"));
    assert_ne!(k("/p/f0/file/seg=1"), k("/p/f0/other/seg=1"));
}
