//! No input may panic a decoder: arbitrary bytes and mutated vectors go
//! through every decoder and, when decoding succeeds, through the accessors
//! that work on decoded packets.

mod common;

use bytes::Bytes;
use common::vectors::{bytes_of, VECTORS};
use icn_tlv::element::Elements;
use icn_tlv::{
    decode_packet, Component, Data, Interest, LpPacket, MccFeedback, Name, NetPacket, Reassembler,
};
use proptest::prelude::*;

fn exercise(b: &[u8]) {
    let w = Bytes::copy_from_slice(b);
    for e in Elements::new(b).flatten() {
        for c in e.children() {
            let _ = c;
        }
    }
    if let Ok(n) = Name::decode(w.clone()) {
        let s = n.to_string();
        assert_eq!(s.parse::<Name>().ok(), Some(n.clone()));
        let _ = n.prefix(n.len() / 2);
    }
    if let Ok(n) = Name::from_value(w.clone()) {
        let _ = n.to_string();
    }
    let _ = Component::decode(&w);
    let _ = MccFeedback::decode(&w);
    if let Ok(i) = Interest::decode(w.clone()) {
        // Whatever decodes re-encodes to the same meaning (the fuzz target's oracle).
        let mut expect = i.clone();
        expect.name = i.encoded_name();
        assert_eq!(Interest::decode(i.encode()).ok(), Some(expect));
        let _ = i.with_nonce(1);
        let _ = i.with_hop_limit(1);
        let _ = i.verify_digest_sha256();
        let _ = i.params_digest_ok();
        let _ = i.to_owned().name.to_string();
    }
    if let Ok(d) = Data::decode(w.clone()) {
        assert_eq!(Data::decode(d.encode()).ok(), Some(d.clone()));
        let _ = d.verify_digest_sha256();
        let _ = d.full_name();
    }
    if let Ok((lp, net)) = decode_packet(w.clone()) {
        assert_eq!(LpPacket::decode(lp.encode()).ok(), Some(lp.clone()));
        let mut r = Reassembler::new(4, std::time::Duration::from_millis(500));
        let _ = r.push(0, 1, lp.clone());
        if let Some(NetPacket::Interest(i)) = &net {
            let _ = i.encode();
        }
        let _ = icn_tlv::fragment(&lp, 64, &mut 0);
    }
    let _ = LpPacket::decode(w);
    if let Ok(s) = std::str::from_utf8(b) {
        let _ = s.parse::<Name>();
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

fn apply(mut v: Vec<u8>, ms: &[Mutation]) -> Vec<u8> {
    for m in ms {
        let n = v.len().max(1);
        match *m {
            Mutation::Flip(i, b) => {
                if let Some(x) = v.get_mut(i % n) {
                    *x ^= b | 1;
                }
            }
            Mutation::Truncate(i) => v.truncate(i % n),
            Mutation::Insert(i, b) => v.insert((i % n).min(v.len()), b),
            Mutation::Remove(i) => {
                if !v.is_empty() {
                    v.remove(i % n);
                }
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..400)) {
        exercise(&b);
    }

    #[test]
    fn tlv_shaped_bytes_never_panic(
        top in prop::sample::select(vec![5u8, 6, 7, 100, 0x50]),
        body in prop::collection::vec(any::<u8>(), 0..250),
    ) {
        let mut b = vec![top, body.len() as u8];
        b.extend_from_slice(&body);
        exercise(&b);
    }

    #[test]
    fn mutated_vectors_never_panic(
        idx in 0..VECTORS.len(),
        ms in prop::collection::vec(mutation(), 1..6),
    ) {
        let v = bytes_of(VECTORS[idx].hex).unwrap();
        exercise(&apply(v, &ms));
    }
}

#[test]
fn every_vector_and_prefix_is_handled() {
    for v in VECTORS {
        let b = bytes_of(v.hex).unwrap();
        for k in 0..=b.len() {
            exercise(&b[..k]);
        }
    }
}
