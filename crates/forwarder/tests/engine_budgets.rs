//! Fair shares and byte budgets of the engine's tables: one non-local face
//! holds at most its share of the PIT and of the reassembly budget, the
//! last 1/16 of the PIT is kept for local faces, and reassembled packets
//! over 8800 octets are dropped.

use bytes::Bytes;
use cc_core::{Duration, Timestamp};
use icn_forwarder::engine::{DropReason, EngineConfig, FaceId, FaceParams, Forwarder};
use icn_sim::net::interest;
use icn_tlv::LpPacket;

fn engine(cfg: EngineConfig) -> (Forwarder, FaceId) {
    let mut f = Forwarder::new(cfg, 7);
    let silent = f.add_face(Timestamp::ZERO, FaceParams::non_local("udp4://127.0.0.1:9"));
    f.fib_add_nexthop(&"/p".parse().unwrap(), silent, 0)
        .unwrap();
    (f, silent)
}

fn non_local(f: &mut Forwarder, i: u16) -> FaceId {
    let mut p = FaceParams::non_local(format!("udp4://127.0.0.1:{}", 10_000 + i));
    p.mtu = Some(8800);
    f.add_face(Timestamp::ZERO, p)
}

/// Sends `n` unique Interests `/p/<tag>/<i>` from `face`.
fn flood(f: &mut Forwarder, face: FaceId, tag: &str, n: u32) {
    for i in 0..n {
        f.handle_packet(
            Timestamp::ZERO,
            face,
            interest(&format!("/p/{tag}/{i}"), i + 1),
        );
    }
}

fn drops(f: &Forwarder, face: FaceId, r: DropReason) -> u64 {
    f.face(face).unwrap().counters.drops.get(r)
}

#[test]
fn one_face_takes_its_share_and_local_faces_keep_their_reserve() {
    // 400 entries: 25 % = 100 per non-local face; 400/16 = 25 kept local.
    let (mut f, _) = engine(EngineConfig {
        pit_max_entries: 400,
        face_share_pct: 25,
        ..EngineConfig::default()
    });
    let a = non_local(&mut f, 1);
    flood(&mut f, a, "a", 200);
    assert_eq!(f.counters().n_pit_entries, 100);
    assert_eq!(drops(&f, a, DropReason::FaceShare), 100);
    // Each refusal tells the point-to-point peer to back off.
    let mut nacks = 0;
    while let Some(tx) = f.poll_transmit(Timestamp::ZERO) {
        if tx.face == a {
            let (lp, _) = icn_tlv::decode_packet(tx.bytes).unwrap();
            assert_eq!(lp.nack, Some(icn_tlv::NackReason::Congestion));
            nacks += 1;
        }
    }
    assert_eq!(nacks, 100);
    let others: Vec<FaceId> = (2..5).map(|i| non_local(&mut f, i)).collect();
    for (k, face) in others.iter().enumerate() {
        flood(&mut f, *face, &format!("o{k}"), 100);
    }
    // 100 + 100 + 100 + 75: the non-local part of the table is full.
    assert_eq!(f.counters().n_pit_entries, 375);
    assert_eq!(drops(&f, others[2], DropReason::PitFull), 25);
    let local = f.add_face(Timestamp::ZERO, FaceParams::local("fd://3"));
    flood(&mut f, local, "l", 26);
    assert_eq!(f.counters().n_pit_entries, 400);
    assert_eq!(drops(&f, local, DropReason::PitFull), 1);
    f.check_invariants().unwrap();
    // Entries expire: the bytes and shares are given back.
    f.handle_timeout(Timestamp::ZERO + Duration::from_secs(10));
    assert_eq!((f.counters().n_pit_entries, f.pit_bytes()), (0, 0));
    flood(&mut f, a, "again", 10);
    assert_eq!(f.counters().n_pit_entries, 10);
    f.check_invariants().unwrap();
}

#[test]
fn pit_byte_budget_bounds_interest_octets() {
    let (mut f, _) = engine(EngineConfig {
        pit_max_bytes: 16_000,
        ..EngineConfig::default()
    });
    let a = non_local(&mut f, 1);
    flood(&mut f, a, "a", 1000);
    // Non-local faces get 15/16 of the bytes.
    assert!(f.pit_bytes() <= 15_000, "{}", f.pit_bytes());
    assert!(f.pit_bytes() > 14_000, "{}", f.pit_bytes());
    assert!(drops(&f, a, DropReason::PitFull) > 0);
    f.check_invariants().unwrap();
}

fn fragment(seq: u64, index: u64, count: u64, len: usize) -> Bytes {
    let mut lp = LpPacket::from_fragment(Bytes::from(vec![0u8; len]));
    lp.sequence = Some(seq + index);
    lp.frag_index = Some(index);
    lp.frag_count = Some(count);
    lp.encode()
}

#[test]
fn reassembly_is_bounded_per_face_globally_and_per_packet() {
    // 40 000 octets in all, 25 % (10 000) per face.
    let (mut f, _) = engine(EngineConfig {
        reassembly_max_bytes: 40_000,
        face_share_pct: 25,
        reassembly_max_partial: 1000,
        ..EngineConfig::default()
    });
    let t = Timestamp::ZERO;
    let faces: Vec<FaceId> = (1..=5).map(|i| non_local(&mut f, i)).collect();
    // Face 0 sends first fragments of 30 packets: it keeps 10 000 octets.
    for p in 0..30 {
        f.handle_packet(t, faces[0], fragment(p * 1000, 0, 5, 1000));
    }
    assert_eq!(f.reassembly_bytes(), 10_000);
    // Three more faces fill the global budget; the fifth is refused.
    for face in &faces[1..4] {
        for p in 0..10 {
            f.handle_packet(t, *face, fragment(p * 1000, 0, 5, 1000));
        }
    }
    assert_eq!(f.reassembly_bytes(), 40_000);
    f.handle_packet(t, faces[4], fragment(0, 0, 5, 1000));
    assert_eq!(drops(&f, faces[4], DropReason::Reassembly), 1);
    f.check_invariants().unwrap();
    // Expiry gives the budget back.
    f.handle_timeout(t + Duration::from_secs(2));
    assert_eq!(f.reassembly_bytes(), 0);
    // A packet growing past 8800 octets is dropped as oversized.
    for i in 0..9 {
        f.handle_packet(
            t + Duration::from_secs(2),
            faces[4],
            fragment(50_000, i, 20, 1000),
        );
    }
    assert_eq!(drops(&f, faces[4], DropReason::Oversized), 1);
    assert_eq!(f.reassembly_bytes(), 0);
    f.check_invariants().unwrap();
}

#[test]
fn egress_queues_share_one_byte_budget() {
    let (mut f, _) = engine(EngineConfig {
        queue_max_bytes: 20_000,
        ..EngineConfig::default()
    });
    let t = Timestamp::ZERO;
    let up: Vec<FaceId> = (1..=3).map(|i| non_local(&mut f, i)).collect();
    for (k, face) in up.iter().enumerate() {
        f.fib_add_nexthop(&format!("/q{k}").parse().unwrap(), *face, 0)
            .unwrap();
    }
    let local = f.add_face(t, FaceParams::local("fd://3"));
    // Nothing is transmitted yet, so every forwarded Interest stays queued.
    for i in 0..600u32 {
        let name = format!("/q{}/{i}/{}", i % 3, "x".repeat(40));
        f.handle_packet(t, local, interest(&name, i + 1));
    }
    assert!(f.queued_bytes() <= 20_000, "{}", f.queued_bytes());
    assert!(f.queued_bytes() > 19_000, "{}", f.queued_bytes());
    let refused: u64 = up
        .iter()
        .map(|u| drops(&f, *u, DropReason::QueueFull))
        .sum();
    assert!(refused > 0);
    f.check_invariants().unwrap();
    while f.poll_transmit(t).is_some() {}
    assert_eq!(f.queued_bytes(), 0);
    f.check_invariants().unwrap();
}

#[test]
fn a_reload_applies_shares_and_budgets_to_what_comes_next() {
    let cfg = EngineConfig {
        pit_max_entries: 400,
        face_share_pct: 25,
        reassembly_max_bytes: 40_000,
        reassembly_max_partial: 1000,
        ..EngineConfig::default()
    };
    let (mut f, _) = engine(cfg.clone());
    let t = Timestamp::ZERO;
    let a = non_local(&mut f, 1);
    flood(&mut f, a, "a", 200);
    assert_eq!(f.counters().n_pit_entries, 100);
    // A larger share: the same face gets more entries at once.
    f.apply_budgets(&EngineConfig {
        face_share_pct: 50,
        ..cfg.clone()
    });
    flood(&mut f, a, "b", 200);
    assert_eq!(f.counters().n_pit_entries, 200);
    // A PIT byte budget below what is held: nothing is thrown away,
    // nothing new comes in, and the invariants hold meanwhile.
    let held = f.pit_bytes();
    f.apply_budgets(&EngineConfig {
        face_share_pct: 50,
        pit_max_bytes: held / 2,
        ..cfg.clone()
    });
    let b = non_local(&mut f, 2);
    flood(&mut f, b, "c", 10);
    assert_eq!(f.pit_bytes(), held);
    assert_eq!(drops(&f, b, DropReason::PitFull), 10);
    f.check_invariants().unwrap();
    // Once expired, the new budget is what bounds the table.
    f.handle_timeout(t + Duration::from_secs(10));
    flood(&mut f, b, "d", 200);
    assert!(
        f.pit_bytes() <= held / 2,
        "{} of {}",
        f.pit_bytes(),
        held / 2
    );
    f.check_invariants().unwrap();

    // Reassembly fits a lowered budget at once: 4 faces hold 10 000
    // octets each; 20 000 in all, 25 % (5000) each, keeps 4 × 5000.
    let (mut f, _) = engine(cfg.clone());
    let faces: Vec<FaceId> = (1..=4).map(|i| non_local(&mut f, i)).collect();
    for face in &faces {
        for p in 0..10 {
            f.handle_packet(t, *face, fragment(p * 1000, 0, 5, 1000));
        }
    }
    assert_eq!(f.reassembly_bytes(), 40_000);
    f.apply_budgets(&EngineConfig {
        reassembly_max_bytes: 20_000,
        ..cfg.clone()
    });
    assert_eq!(f.reassembly_bytes(), 20_000);
    f.check_invariants().unwrap();
    // A global budget below the sum of the shares: the largest holders
    // drop their partial packets until it fits.
    f.apply_budgets(&EngineConfig {
        reassembly_max_bytes: 8800,
        face_share_pct: 100,
        ..cfg
    });
    assert!(f.reassembly_bytes() <= 8800, "{}", f.reassembly_bytes());
    f.check_invariants().unwrap();
    f.handle_packet(t, faces[0], fragment(90_000, 0, 5, 1000));
    f.check_invariants().unwrap();
}
