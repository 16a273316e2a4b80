//! CCC's per-output-interface Interest pacing in the engine: a burst of
//! one flow's Interests leaves towards its next hop at the hop's pace
//! (the constraint, before any pace is measured), not back to back.

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::{Interest, Name};

use crate::config::Config;
use crate::engine::{FaceId, FaceParams};
use crate::router::{build, Router};

fn ms(n: u64) -> Timestamp {
    Timestamp::from_millis(n)
}

/// 1 Mbit/s towards the producer side, 8400-byte Data assumed: the hop's
/// constraint is 1e6 / (8 · 8400) = 14.9 Interests/s.
const UP_BPS: u64 = 1_000_000;

fn engine(extra: &str) -> (Router, FaceId, FaceId) {
    let cfg = Config::from_toml_str(&format!("[cc]\nscheme = \"ccc\"\n[cc.ccc]\n{extra}"))
        .unwrap()
        .router_config();
    let mut f = build(&cfg, 7);
    let down = f.add_face(ms(0), FaceParams::non_local("sim://down"));
    let up = f.add_face(
        ms(0),
        FaceParams::non_local("sim://up").with_capacity_bps(UP_BPS),
    );
    f.fib_add_nexthop(&"/p".parse::<Name>().unwrap(), up, 0)
        .unwrap();
    (f, down, up)
}

fn interest(seg: u64) -> Bytes {
    let mut i = Interest::new(format!("/p/obj/seg={seg}").parse::<Name>().unwrap());
    i.nonce = Some(seg as u32 + 1);
    i.encode()
}

/// When the burst arrives (a time after 0, so the pacer's bucket is full).
const T0: u64 = 1000;

/// Interests sent on `up` by each of `times` (ms after 20 arrived at T0).
fn sent_by(extra: &str, times: &[u64]) -> Vec<usize> {
    let (mut f, down, up) = engine(extra);
    for s in 0..20 {
        f.handle_packet(ms(T0), down, interest(s));
    }
    let mut sent = 0;
    let mut out = Vec::new();
    let mut now = T0;
    for &t in times {
        while now <= T0 + t {
            while let Some(tx) = f.poll_transmit(ms(now)) {
                sent += usize::from(tx.face == up);
            }
            now += 1;
        }
        out.push(sent);
    }
    out
}

#[test]
fn a_burst_leaves_at_the_hops_pace() {
    // Two at once (the bucket's depth), then one per 67 ms.
    let paced = sent_by("", &[10, 500, 1000]);
    assert_eq!(paced[0], 2, "{paced:?}");
    assert!((8..=10).contains(&paced[1]), "{paced:?}");
    assert!((16..=18).contains(&paced[2]), "{paced:?}");
    // The paper profile paces too (at p_o,k; before any measurement, the
    // constraint).
    assert_eq!(sent_by("profile = \"paper\"", &[10, 500]), paced[..2]);
    // Without the pacer the burst goes out at the link's rate.
    let unpaced = sent_by("pace_interests = false", &[10]);
    assert_eq!(unpaced[0], 20, "{unpaced:?}");
}

#[test]
fn a_flow_over_its_pacer_bound_is_refused() {
    let (mut f, down, up) = engine("pacer_queue = 4");
    for s in 0..20 {
        f.handle_packet(ms(T0), down, interest(s));
    }
    let mut to_up = 0;
    let mut to_down = 0;
    for now in T0..=T0 + 2000 {
        while let Some(tx) = f.poll_transmit(ms(now)) {
            if tx.face == up {
                to_up += 1;
            } else if tx.face == down {
                to_down += 1;
            }
        }
    }
    // Four waited in the pacer (and left at its pace); the rest were
    // Nacked back downstream.
    assert_eq!(to_up, 4);
    assert_eq!(to_down, 16);
}

/// Two next hops of 1 and 4 Mbit/s (constraints 14.9 and 59.5
/// Interests/s) and a burst of 20: Interests sent on each by `t` ms.
fn two_hops_sent_by(extra: &str, t: u64) -> (usize, usize) {
    let cfg = Config::from_toml_str(&format!("[cc]\nscheme = \"ccc\"\n[cc.ccc]\n{extra}"))
        .unwrap()
        .router_config();
    let mut f = build(&cfg, 7);
    let down = f.add_face(ms(0), FaceParams::non_local("sim://down"));
    let slow = f.add_face(
        ms(0),
        FaceParams::non_local("sim://slow").with_capacity_bps(UP_BPS),
    );
    let fast = f.add_face(
        ms(0),
        FaceParams::non_local("sim://fast").with_capacity_bps(4 * UP_BPS),
    );
    let p: Name = "/p".parse().unwrap();
    f.fib_add_nexthop(&p, slow, 0).unwrap();
    f.fib_add_nexthop(&p, fast, 0).unwrap();
    for s in 0..20 {
        f.handle_packet(ms(T0), down, interest(s));
    }
    let (mut on_slow, mut on_fast) = (0, 0);
    for now in T0..=T0 + t {
        while let Some(tx) = f.poll_transmit(ms(now)) {
            on_slow += usize::from(tx.face == slow);
            on_fast += usize::from(tx.face == fast);
        }
    }
    (on_slow, on_fast)
}

/// Tuned sends each Interest to the next hop whose pacer releases it
/// first: the burst leaves mostly by the fast hop and is out within
/// 400 ms. By round robin alone (the paper's split, equal objectives
/// before any pace is measured) half of it waits for the slow hop's
/// 67 ms gaps.
#[test]
fn the_next_hop_is_the_one_whose_pacer_has_room() {
    let (slow, fast) = two_hops_sent_by("", 400);
    assert_eq!(slow + fast, 20, "room: {slow} + {fast}");
    assert!(fast >= 14, "room: {slow} + {fast}");
    let (rr_slow, rr_fast) = two_hops_sent_by("next_hop_by_room = false", 400);
    assert_eq!(rr_fast, 10, "round robin: {rr_slow} + {rr_fast}");
    assert!(rr_slow < 10, "round robin: {rr_slow} + {rr_fast}");
}
