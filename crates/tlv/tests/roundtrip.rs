//! proptest round trips: decode(encode(x)) == x.

mod common;

use bytes::{Bytes, BytesMut};
use common::*;
use icn_tlv::element::Element;
use icn_tlv::{types, CcFields, Component, Data, Interest, LpPacket, MccFeedback, Name};
use proptest::prelude::*;

/// Canonical order written out from the spec, to check the memcmp shortcut.
fn spec_cmp(a: &Name, b: &Name) -> std::cmp::Ordering {
    let ca: Vec<Component> = a.components().collect();
    let cb: Vec<Component> = b.components().collect();
    for (x, y) in ca.iter().zip(&cb) {
        let o = x
            .typ()
            .cmp(&y.typ())
            .then(x.value().len().cmp(&y.value().len()))
            .then(x.value()[..].cmp(&y.value()[..]));
        if o.is_ne() {
            return o;
        }
    }
    ca.len().cmp(&cb.len())
}

proptest! {
    #[test]
    fn name_round_trip(n in name(8)) {
        let w = n.encode();
        prop_assert_eq!(w.len(), n.encoded_len());
        let d = Name::decode(w).unwrap();
        prop_assert_eq!(&d, &n);
        prop_assert_eq!(d.len(), n.len());
        let uri = n.to_string();
        prop_assert_eq!(uri.parse::<Name>().unwrap(), n.clone(), "{}", uri);
        for k in 0..=n.len() {
            let p = n.prefix(k);
            prop_assert_eq!(p.len(), k);
            prop_assert!(p.is_prefix_of(&n));
            prop_assert_eq!(p.value().len(), n.prefix_value_len(k));
            prop_assert_eq!(p, Name::from_components(n.components().take(k)));
        }
        for (i, c) in n.components().enumerate() {
            prop_assert_eq!(n.get(i), Some(c.clone()));
            prop_assert_eq!(c.to_string().parse::<Component>().unwrap(), c);
        }
    }

    #[test]
    fn name_order_is_canonical(a in name(4), b in name(4)) {
        prop_assert_eq!(a.cmp(&b), spec_cmp(&a, &b));
        prop_assert_eq!(a == b, spec_cmp(&a, &b).is_eq());
        prop_assert_eq!(a.is_prefix_of(&b), a.len() <= b.len() && b.prefix(a.len()) == a);
    }

    #[test]
    fn non_minimal_name_normalises(n in name(4)) {
        // Re-encode every component header with 3-octet VarNumbers.
        let mut v = Vec::new();
        for c in n.components() {
            v.extend_from_slice(&[0xFD, (c.typ() >> 8) as u8, c.typ() as u8]);
            v.extend_from_slice(&[0xFD, (c.value().len() >> 8) as u8, c.value().len() as u8]);
            v.extend_from_slice(c.value());
        }
        let d = Name::from_value(Bytes::from(v)).unwrap();
        prop_assert_eq!(d, n);
    }

    #[test]
    fn interest_round_trip(i in interest()) {
        let w = i.encode();
        prop_assert_eq!(w.len(), i.encoded_len());
        let d = Interest::decode(w.clone()).unwrap();
        let mut expect = i.clone();
        expect.name = i.encoded_name();
        prop_assert_eq!(&d, &expect);
        prop_assert_eq!(d.wire(), Some(&w));
        prop_assert!(d.params_digest_ok());
        // Decoded then encoded is byte-identical.
        prop_assert_eq!(d.encode(), w.clone());
        // Nonce / HopLimit splices change only that field.
        let n = Interest::decode(d.with_nonce(0xA5A5_5A5A)).unwrap();
        let mut e2 = expect.clone();
        e2.nonce = Some(0xA5A5_5A5A);
        prop_assert_eq!(&n, &e2);
        prop_assert!(n.params_digest_ok());
        let h = Interest::decode(n.with_hop_limit(9)).unwrap();
        e2.hop_limit = Some(9);
        prop_assert_eq!(&h, &e2);
    }

    #[test]
    fn signed_data_round_trip(d in signed_data()) {
        let w = d.encode();
        let back = Data::decode(w.clone()).unwrap();
        prop_assert_eq!(&back, &d);
        prop_assert_eq!(back.encode(), w);
    }

    #[test]
    fn digest_data_round_trip(d in unsigned_data()) {
        let w = d.encode();
        prop_assert_eq!(&w, &d.encode_signed_digest_sha256());
        let back = Data::decode(w.clone()).unwrap();
        prop_assert_eq!(&back.name, &d.name);
        prop_assert_eq!(&back.meta, &d.meta);
        prop_assert_eq!(&back.content, &d.content);
        prop_assert_eq!(back.sig_type, Some(0));
        prop_assert!(back.verify_digest_sha256());
        prop_assert!(d.verify_digest_sha256());
        prop_assert_eq!(back.implicit_digest(), d.implicit_digest());
        let full = back.full_name();
        let mut i = Interest::new(full);
        prop_assert!(i.matches_data(&back));
        i.name = back.name.clone();
        prop_assert!(i.matches_data(&back));
        i.can_be_prefix = true;
        prop_assert!(i.matches_data(&back));
    }

    #[test]
    fn lp_round_trip(mut lp in lp_headers(), frag in proptest::option::of(net_wire())) {
        lp.fragment = frag;
        let w = lp.encode();
        prop_assert_eq!(w.len(), lp.encoded_len());
        let back = LpPacket::decode(w.clone()).unwrap();
        prop_assert_eq!(&back, &lp);
        prop_assert_eq!(back.encode(), w.clone());
        if lp.is_bare() {
            prop_assert_eq!(&w, lp.fragment.as_ref().unwrap());
        }
        // Header fields appear in strictly ascending order, Fragment last.
        if !lp.is_bare() {
            let outer = Element::parse_exact(&w).unwrap();
            let tys: Vec<u32> = outer.children().map(|e| e.unwrap().typ()).collect();
            let (last, head) = match lp.fragment { Some(_) => (tys.last().copied(), &tys[..tys.len() - 1]), None => (None, &tys[..]) };
            prop_assert!(head.windows(2).all(|p| p[0] < p[1]), "{:?}", tys);
            if lp.fragment.is_some() { prop_assert_eq!(last, Some(types::LP_FRAGMENT)); }
        }
    }

    #[test]
    fn lp_with_opaque_fragment(mut lp in lp_headers(), frag in nonempty_bytes(300), mark in any::<u64>()) {
        lp.congestion_mark = Some(mark); // guarantees a header, so the fragment need not be a packet
        lp.fragment = Some(frag);
        let back = LpPacket::decode(lp.encode()).unwrap();
        prop_assert_eq!(back, lp);
    }

    #[test]
    fn header_rewrite_keeps_fragment_bytes(wire in net_wire(), mark in any::<u64>(), cc in cc_fields()) {
        let lp0 = LpPacket::decode(wire.clone()).unwrap();
        let mut lp = lp0.clone();
        lp.congestion_mark = Some(mark);
        lp.cc = cc;
        let mut out = BytesMut::new();
        lp.encode_into(&mut out);
        let back = LpPacket::decode(out.freeze()).unwrap();
        prop_assert_eq!(back.fragment.as_ref(), Some(&wire));
        prop_assert_eq!(back.cc, cc);
        // The fragment of the decoded packet shares the wire buffer (zero copy).
        let w = lp.encode();
        let again = LpPacket::decode(w.clone()).unwrap();
        let f = again.fragment.unwrap();
        let base = w.as_ptr() as usize;
        prop_assert!(f.as_ptr() as usize >= base && f.as_ptr() as usize + f.len() <= base + w.len());
    }

    #[test]
    fn every_cc_field_round_trips_with_its_number(cc in cc_fields()) {
        let lp = LpPacket { cc, ..Default::default() };
        let w = lp.encode();
        let back = LpPacket::decode(w.clone()).unwrap();
        prop_assert_eq!(back.cc, cc);
        let expect: Vec<u32> = [
            (types::CC_PRIMARY_RATE, cc.primary_rate_bps.is_some()),
            (types::CC_SECONDARY_RATE, cc.secondary_rate_bps.is_some()),
            (types::CC_PATH_ID, cc.path_id.is_some()),
            (types::CC_STEERING_HINT, cc.steering_hint.is_some()),
            (types::CC_TRAFFIC_CLASS, cc.traffic_class.is_some()),
            (types::CC_PACE_OBJECTIVE, cc.pace_objective_milli_ips.is_some()),
            (types::CC_PACE_CONSTRAINT, cc.pace_constraint_milli_ips.is_some()),
            (types::CC_FLOW_DATA_SIZE, cc.flow_data_size_bytes.is_some()),
            (types::CC_SERVICE_CLASS, cc.service_class.is_some()),
            (types::CC_DOWNSTREAM_RATE, cc.downstream_rate_bps.is_some()),
            (types::CC_TARGET_RATE, cc.target_rate_bps.is_some()),
        ].into_iter().filter(|(_, p)| *p).map(|(t, _)| t).collect();
        if expect.is_empty() {
            prop_assert_eq!(&w[..], &[0x64, 0x00]);
        } else {
            let outer = Element::parse_exact(&w).unwrap();
            let tys: Vec<u32> = outer.children().map(|e| e.unwrap().typ()).collect();
            prop_assert_eq!(&tys, &expect);
            // Every CC field is ignorable by the NDNLPv2 rule.
            prop_assert!(tys.iter().all(|&t| types::lp_is_ignorable(t)));
        }
    }

    #[test]
    fn mcc_round_trip(m in mcc()) {
        let w = m.encode();
        prop_assert_eq!(MccFeedback::decode(&w).unwrap(), m.clone());
        let lp = LpPacket { mcc: Some(m.clone()), ..Default::default() };
        let (back, net) = icn_tlv::decode_packet(lp.encode()).unwrap();
        prop_assert!(net.is_none() && back.is_idle());
        prop_assert_eq!(back.mcc, Some(m));
    }
}

#[test]
fn cc_numbers_are_unassigned_and_ignorable() {
    let assigned = [800, 812, 816, 820, 832, 836, 840, 844, 848];
    let ours = [
        types::CC_PRIMARY_RATE,
        types::CC_SECONDARY_RATE,
        types::CC_PATH_ID,
        types::CC_STEERING_HINT,
        types::CC_TRAFFIC_CLASS,
        types::CC_PACE_OBJECTIVE,
        types::CC_PACE_CONSTRAINT,
        types::CC_FLOW_DATA_SIZE,
        types::CC_SERVICE_CLASS,
        types::CC_DOWNSTREAM_RATE,
        types::CC_TARGET_RATE,
        types::CC_MCC_FEEDBACK,
    ];
    for t in ours {
        assert!(types::lp_is_ignorable(t), "{t}");
        assert!(!assigned.contains(&t), "{t}");
    }
    let mut sorted = ours.to_vec();
    sorted.dedup();
    assert_eq!(sorted.len(), ours.len());
}

#[test]
fn unknown_ignorable_fields_skipped_and_critical_rejected() {
    let frag = common::vectors::bytes_of(common::vectors::VECTORS[0].hex).unwrap();
    let build = |fields: &[u8]| {
        let mut v = vec![0x64, (fields.len() + 2 + frag.len()) as u8];
        v.extend_from_slice(fields);
        v.extend_from_slice(&[0x50, frag.len() as u8]);
        v.extend_from_slice(&frag);
        Bytes::from(v)
    };
    // 956 = 0x3BC: ignorable and unknown -> skipped.
    let lp = LpPacket::decode(build(&[0xFD, 0x03, 0xBC, 0x01, 0x07])).unwrap();
    assert!(!lp.has_header());
    // 957: in range but low bits set -> critical.
    assert_eq!(
        LpPacket::decode(build(&[0xFD, 0x03, 0xBD, 0x01, 0x07])),
        Err(icn_tlv::TlvError::UnrecognizedCritical(957))
    );
    // 960 (trailer range) -> critical.
    assert!(LpPacket::decode(build(&[0xFD, 0x03, 0xC0, 0x00])).is_err());
    // Ack (836) twice and TxSequence (840): recognised, skipped.
    let ack = [0xFD, 0x03, 0x44, 0x08, 0, 0, 0, 0, 0, 0, 0, 1];
    let mut f = ack.to_vec();
    f.extend_from_slice(&ack);
    let lp = LpPacket::decode(build(&f)).unwrap();
    assert!(!lp.has_header());
    // Out-of-order ignorable (CongestionMark before Nack) is skipped like NDNts does.
    let lp = LpPacket::decode(build(&[
        0xFD, 0x03, 0x40, 0x01, 0x01, 0xFD, 0x03, 0x20, 0x00,
    ]))
    .unwrap();
    assert_eq!((lp.congestion_mark, lp.nack), (Some(1), None));
    // Nack without NackReason decodes as reason None and re-encodes with a reason.
    let lp = LpPacket::decode(build(&[0xFD, 0x03, 0x20, 0x00])).unwrap();
    assert_eq!(lp.nack, Some(icn_tlv::NackReason::None));
    assert!(lp.encode().windows(3).any(|w| w == [0xFD, 0x03, 0x21]));
    // CachePolicy NoCache.
    let lp = LpPacket::decode(build(&[
        0xFD, 0x03, 0x34, 0x05, 0xFD, 0x03, 0x35, 0x01, 0x01,
    ]))
    .unwrap();
    assert!(lp.cache_policy_no_cache);
    assert!(LpPacket::decode(build(&[
        0xFD, 0x03, 0x34, 0x05, 0xFD, 0x03, 0x35, 0x01, 0x02
    ]))
    .is_err());
}

#[test]
fn cc_field_value_only_changes_header() {
    // Set CongestionMark on a decoded LpPacket wrapping a Data: the Data bytes are untouched.
    let v = common::vectors::VECTORS
        .iter()
        .find(|v| v.file == "lp_pittoken_data.hex")
        .unwrap();
    let w = Bytes::from(common::vectors::bytes_of(v.hex).unwrap());
    let mut lp = LpPacket::decode(w.clone()).unwrap();
    lp.congestion_mark = Some(1);
    lp.cc.target_rate_bps = Some(5_000_000);
    let out = lp.encode();
    let frag = lp.fragment.as_ref().unwrap();
    assert!(out.ends_with(frag));
    let back = LpPacket::decode(out).unwrap();
    assert_eq!(back.cc.target_rate_bps, Some(5_000_000));
    assert_eq!(back.pit_token, lp.pit_token);
    assert_eq!(CcFields::default(), LpPacket::decode(w).unwrap().cc);
}
