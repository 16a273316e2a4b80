//! Fragmentation and bounded reassembly: reordering, loss, duplicates,
//! interleaving remotes, timeouts and the bounds.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::*;
use icn_tlv::frag::MAX_FRAG_COUNT;
use icn_tlv::{
    decode_packet, decode_reassembled, fragment, Data, LpPacket, NetPacket, Reassembler, TlvError,
};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

fn big_data(len: usize) -> Bytes {
    let content: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    Data::new("/big/data".parse().unwrap(), Bytes::from(content)).encode()
}

fn pieces(lp: &LpPacket, mtu: usize, seq: &mut u64) -> Vec<LpPacket> {
    fragment(lp, mtu, seq)
        .unwrap()
        .into_iter()
        .map(|b| {
            assert!(b.len() <= mtu, "fragment {} > mtu {}", b.len(), mtu);
            LpPacket::decode(b).unwrap()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reordered_fragments_reassemble(
        mut headers in lp_headers(),
        len in 1usize..20_000,
        mtu in 200usize..1500,
        order_seed in any::<u64>(),
        seq0 in any::<u64>(),
    ) {
        headers.sequence = None;
        headers.frag_index = None;
        headers.frag_count = None;
        let mut lp = headers.clone();
        lp.fragment = Some(big_data(len));
        let mut seq = seq0;
        let mut ps = match fragment(&lp, mtu, &mut seq) {
            Ok(v) => v.into_iter().map(|b| { assert!(b.len() <= mtu); LpPacket::decode(b).unwrap() }).collect::<Vec<_>>(),
            Err(TlvError::MtuTooSmall) => { prop_assume!(false); unreachable!() }
            Err(e) => panic!("{e}"),
        };
        let fragmented = ps[0].is_fragmented();
        prop_assert_eq!(seq.wrapping_sub(seq0), if fragmented { ps.len() as u64 } else { 0 });
        prop_assert_eq!(fragmented, ps.len() > 1);
        // Only fragment 0 carries the network-layer headers.
        for p in &ps[1..] {
            prop_assert!(p.pit_token.is_none() && p.nack.is_none() && p.cc.is_empty() && p.mcc.is_none());
        }
        // Deterministic shuffle.
        let mut s = order_seed | 1;
        for i in (1..ps.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            ps.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let mut r = Reassembler::new(8, Duration::from_millis(500));
        let n = ps.len();
        let mut done = None;
        for (k, p) in ps.into_iter().enumerate() {
            let out = r.push(k as u64 * MS, 7, p).unwrap();
            if k + 1 < n { prop_assert!(out.is_none()); } else { done = out; }
        }
        let done = done.unwrap();
        prop_assert_eq!(&done, &lp);
        prop_assert!(r.is_empty());
        let (_, net) = decode_reassembled(done).unwrap();
        prop_assert!(matches!(net, Some(NetPacket::Data(_))));
    }

    #[test]
    fn loss_never_completes_and_expires(len in 3000usize..9000, drop_idx in any::<prop::sample::Index>()) {
        let lp = LpPacket::from_fragment(big_data(len));
        let mut seq = 0;
        let mut ps = pieces(&lp, 1000, &mut seq);
        prop_assert!(ps.len() > 1);
        ps.remove(drop_idx.index(ps.len()));
        let mut r = Reassembler::new(4, Duration::from_millis(500));
        for p in ps.clone() {
            prop_assert!(r.push(0, 1, p).unwrap().is_none());
        }
        // Duplicates do not complete it either.
        for p in ps {
            prop_assert!(r.push(MS, 1, p).unwrap().is_none());
        }
        prop_assert_eq!(r.len(), 1);
        prop_assert_eq!(r.next_deadline_ns(), Some(501 * MS));
        prop_assert_eq!(r.expire(500 * MS), 0);
        prop_assert_eq!(r.expire(502 * MS), 1);
        prop_assert!(r.is_empty());
    }
}

#[test]
fn small_packet_is_not_fragmented() {
    let v = common::vectors::VECTORS
        .iter()
        .find(|v| v.file == "lp_congestion_mark_data.hex")
        .unwrap();
    let w = Bytes::from(common::vectors::bytes_of(v.hex).unwrap());
    let lp = LpPacket::decode(w.clone()).unwrap();
    let mut seq = 5;
    let out = fragment(&lp, 1400, &mut seq).unwrap();
    assert_eq!(out, vec![w]);
    assert_eq!(seq, 5);
    let back = LpPacket::decode(out[0].clone()).unwrap();
    assert!(back.sequence.is_none() && back.frag_index.is_none() && back.frag_count.is_none());
}

#[test]
fn interleaved_remotes_with_same_sequence() {
    let a = LpPacket::from_fragment(big_data(3000));
    let b = LpPacket::from_fragment(big_data(2500));
    let (mut sa, mut sb) = (100, 100);
    let pa = pieces(&a, 800, &mut sa);
    let pb = pieces(&b, 800, &mut sb);
    let mut r = Reassembler::new(4, Duration::from_millis(500));
    let mut got = Vec::new();
    let n = pa.len().max(pb.len());
    for k in 0..n {
        for (remote, ps) in [(1u64, &pa), (2u64, &pb)] {
            if let Some(p) = ps.get(k) {
                if let Some(done) = r.push(0, remote, p.clone()).unwrap() {
                    got.push((remote, done));
                }
            }
        }
    }
    got.sort_by_key(|(remote, _)| *remote);
    assert_eq!(got, vec![(1, a), (2, b)]);
}

#[test]
fn bounds_and_bad_fragments() {
    let mut r = Reassembler::new(2, Duration::from_millis(500));
    let frag = |seq: u64, idx: u64, count: u64| LpPacket {
        sequence: Some(seq),
        frag_index: Some(idx),
        frag_count: Some(count),
        fragment: Some(Bytes::from_static(b"xy")),
        ..Default::default()
    };
    // Index >= count, count > 400, missing sequence or fragment.
    assert_eq!(r.push(0, 1, frag(1, 2, 2)), Err(TlvError::BadFragment));
    assert_eq!(
        r.push(0, 1, frag(1, 0, MAX_FRAG_COUNT + 1)),
        Err(TlvError::BadFragment)
    );
    let mut no_seq = frag(1, 1, 2);
    no_seq.sequence = None;
    assert_eq!(r.push(0, 1, no_seq), Err(TlvError::BadFragment));
    let mut no_frag = frag(1, 1, 2);
    no_frag.fragment = None;
    assert_eq!(r.push(0, 1, no_frag), Err(TlvError::BadFragment));
    // FragCount changing mid-packet drops the partial packet.
    assert!(r.push(0, 1, frag(10, 0, 3)).unwrap().is_none());
    assert_eq!(r.push(0, 1, frag(11, 1, 4)), Err(TlvError::BadFragment));
    assert!(r.is_empty());
    // At most max_partial in progress: the oldest is evicted.
    assert!(r.push(0, 1, frag(20, 0, 2)).unwrap().is_none());
    assert!(r.push(MS, 1, frag(30, 0, 2)).unwrap().is_none());
    assert!(r.push(2 * MS, 1, frag(40, 0, 2)).unwrap().is_none());
    assert_eq!(r.len(), 2);
    assert!(r.push(3 * MS, 1, frag(21, 1, 2)).unwrap().is_none()); // 20's partial was evicted
    assert!(r.push(3 * MS, 1, frag(41, 1, 2)).unwrap().is_some());
    assert!(r.dropped() >= 2);
    // A fragment arriving after its partial packet timed out starts over.
    let mut r = Reassembler::new(2, Duration::from_millis(500));
    assert!(r.push(0, 1, frag(50, 0, 2)).unwrap().is_none());
    assert!(r.push(600 * MS, 1, frag(51, 1, 2)).unwrap().is_none());
    // Too small an MTU, too many fragments.
    let lp = LpPacket::from_fragment(big_data(2000));
    assert!(matches!(
        fragment(&lp, 22, &mut 0),
        Err(TlvError::MtuTooSmall)
    ));
    let huge = LpPacket::from_fragment(big_data(200_000));
    assert!(matches!(
        fragment(&huge, 300, &mut 0),
        Err(TlvError::MtuTooSmall)
    ));
}

#[test]
fn fragmented_packet_is_not_decoded_as_network_packet() {
    let lp = LpPacket::from_fragment(big_data(3000));
    let mut seq = 0;
    let frags = fragment(&lp, 1000, &mut seq).unwrap();
    let (first, net) = decode_packet(frags[0].clone()).unwrap();
    assert!(net.is_none() && first.is_fragmented());
}
