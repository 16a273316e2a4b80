//! Random join/leave/feedback/data/timer sequences keep every table of a
//! tree node bounded and never panic.

use cc_core::{Duration, Timestamp};
use icn_multicast::mnft::MnftLimits;
use icn_multicast::wire::Subscription;
use icn_multicast::{FaceSample, MulticastNode, NodeConfig};
use icn_tlv::{MccFeedback, Name};
use proptest::prelude::*;

const MAX_GROUPS: usize = 3;
const MAX_FACES: usize = 2;
const MAX_PENDING: usize = 8;

#[derive(Debug, Clone)]
enum Op {
    Join {
        face: u64,
        group: u8,
        lifetime_ms: u64,
        upstream: Option<u64>,
    },
    Leave {
        face: u64,
        group: u8,
    },
    Feedback {
        face: u64,
        group: u8,
        max: u32,
        min: u32,
        fair: u64,
    },
    Data {
        face: u64,
        group: u8,
    },
    Unicast {
        face: u64,
        key: u64,
    },
    RemoveFace {
        face: u64,
    },
    Advance {
        ms: u64,
    },
    Drain {
        n: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let face = 256u64..262;
    let group = 0u8..6;
    prop_oneof![
        (
            face.clone(),
            group.clone(),
            0u64..10_000,
            proptest::option::of(256u64..262)
        )
            .prop_map(|(face, group, lifetime_ms, upstream)| Op::Join {
                face,
                group,
                lifetime_ms,
                upstream
            }),
        (face.clone(), group.clone()).prop_map(|(face, group)| Op::Leave { face, group }),
        (
            face.clone(),
            group.clone(),
            any::<u32>(),
            any::<u32>(),
            any::<u64>()
        )
            .prop_map(|(face, group, max, min, fair)| Op::Feedback {
                face,
                group,
                max,
                min,
                fair
            }),
        (face.clone(), group.clone()).prop_map(|(face, group)| Op::Data { face, group }),
        (face.clone(), any::<u64>()).prop_map(|(face, key)| Op::Unicast { face, key }),
        face.prop_map(|face| Op::RemoveFace { face }),
        (0u64..3000).prop_map(|ms| Op::Advance { ms }),
        (0usize..4).prop_map(|n| Op::Drain { n }),
    ]
}

fn group(g: u8) -> Name {
    format!("/mc/{g}").parse().unwrap()
}

fn sampler(face: u64) -> Option<FaceSample> {
    (face % 3 != 0).then_some(FaceSample {
        queue_packets: face % 70,
        queue_max_packets: face % 4 * 25,
        capacity_bps: (face % 2 == 0).then_some(face * 1000),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_sequences_keep_tables_bounded(ops in proptest::collection::vec(op(), 1..200)) {
        let cfg = NodeConfig {
            limits: MnftLimits { max_groups: MAX_GROUPS, max_faces_per_group: MAX_FACES, max_lifetime: Duration::from_secs(5) },
            max_pending: MAX_PENDING,
            ..NodeConfig::default()
        };
        let mut now = Timestamp::ZERO;
        let mut n = MulticastNode::new(cfg, now);
        let mut out = Vec::new();
        for op in ops {
            match op {
                Op::Join { face, group: g, lifetime_ms, upstream } => {
                    let _ = n.handle_subscription(now, face, &Subscription::join(group(g), Duration::from_millis(lifetime_ms)), upstream);
                }
                Op::Leave { face, group: g } => {
                    let _ = n.handle_subscription(now, face, &Subscription::leave(group(g)), None);
                }
                Op::Feedback { face, group: g, max, min, fair } => {
                    let fb = MccFeedback { group: group(g), max_occupancy_ppm: max, min_occupancy_ppm: min, min_fair_share_bps: fair };
                    let _ = n.handle_feedback(now, face, &fb);
                }
                Op::Data { face, group: g } => {
                    out.clear();
                    let name = group(g).append(icn_tlv::Component::sequence_num(1));
                    let _ = n.handle_group_data(now, face, &name, &mut out);
                    let mut dedup = out.clone();
                    dedup.sort_unstable();
                    dedup.dedup();
                    prop_assert_eq!(dedup.len(), out.len(), "a face got two copies");
                    prop_assert!(!out.contains(&face), "a copy went back to its source face");
                }
                Op::Unicast { face, key } => n.observe_unicast(face, key),
                Op::RemoveFace { face } => n.remove_face(face),
                Op::Advance { ms } => {
                    now += Duration::from_millis(ms);
                    let mut runs = 0;
                    while let Some(t) = n.poll_timeout().filter(|t| *t <= now) {
                        n.handle_timeout(t, &sampler);
                        runs += 1;
                        prop_assert!(runs < 10_000, "timers do not advance");
                    }
                    prop_assert!(n.poll_timeout().is_none_or(|t| t > now));
                }
                Op::Drain { n: k } => {
                    for _ in 0..k {
                        if let Some(t) = n.poll_transmit() {
                            prop_assert!(icn_tlv::decode_packet(t.bytes).is_ok());
                        }
                    }
                }
            }
            prop_assert!(n.mnft().len() <= MAX_GROUPS);
            for (_, e) in n.mnft().iter() {
                prop_assert!(!e.downstream.is_empty() && e.downstream.len() <= MAX_FACES);
                prop_assert!(e.upstream.is_none_or(|u| e.downstream.iter().all(|d| d.face != u)));
            }
            prop_assert!(n.pending_len() <= MAX_PENDING);
        }
    }
}
