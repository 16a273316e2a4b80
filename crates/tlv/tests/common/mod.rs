//! proptest strategies shared by the integration tests.
#![allow(dead_code)]

pub mod vectors;

use std::time::Duration;

use bytes::Bytes;
use icn_tlv::{
    types, CcFields, Component, Data, Interest, LpPacket, MccFeedback, MetaInfo, NackReason, Name,
    ServiceClass, TrafficClass,
};
use proptest::prelude::*;

pub fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..=max).prop_map(Bytes::from)
}

pub fn nonempty_bytes(max: usize) -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 1..=max).prop_map(Bytes::from)
}

pub fn component() -> impl Strategy<Value = Component> {
    prop_oneof![
        4 => bytes(12).prop_map(Component::generic),
        1 => bytes(6).prop_map(Component::keyword),
        1 => any::<u64>().prop_map(Component::segment),
        1 => any::<u64>().prop_map(Component::version),
        1 => any::<u64>().prop_map(Component::timestamp),
        1 => any::<u64>().prop_map(Component::sequence_num),
        1 => any::<u64>().prop_map(Component::byte_offset),
        1 => any::<[u8; 32]>().prop_map(Component::implicit_digest),
        1 => (3u32..=65535, bytes(8)).prop_map(|(t, v)| Component::new(t, v).unwrap()),
    ]
}

pub fn name(max: usize) -> impl Strategy<Value = Name> {
    prop::collection::vec(component(), 0..=max).prop_map(Name::from_components)
}

pub fn nonempty_name(max: usize) -> impl Strategy<Value = Name> {
    prop::collection::vec(component(), 1..=max).prop_map(Name::from_components)
}

fn sig_info() -> impl Strategy<Value = Bytes> {
    (any::<u8>(), bytes(6)).prop_map(|(t, extra)| {
        let mut v = vec![types::SIGNATURE_TYPE as u8, 1, t];
        // An opaque trailing element (SignatureNonce-like, type 38).
        v.extend_from_slice(&[38, extra.len() as u8]);
        v.extend_from_slice(&extra);
        Bytes::from(v)
    })
}

pub fn interest() -> impl Strategy<Value = Interest> {
    (
        nonempty_name(5),
        any::<(bool, bool)>(),
        prop::collection::vec(nonempty_name(3), 0..3),
        proptest::option::of(any::<u32>()),
        proptest::option::of(0u64..=u64::from(u32::MAX)),
        proptest::option::of(any::<u8>()),
        proptest::option::of((
            bytes(20),
            proptest::option::of((sig_info(), proptest::option::of(bytes(40)))),
        )),
    )
        .prop_map(|(name, (cbp, mbf), fh, nonce, life, hop, params)| {
            let mut i = Interest::new(name);
            i.can_be_prefix = cbp;
            i.must_be_fresh = mbf;
            i.forwarding_hint = fh;
            i.nonce = nonce;
            i.lifetime = life.map(Duration::from_millis);
            i.hop_limit = hop;
            if let Some((p, sig)) = params {
                i.app_params = Some(p);
                if let Some((si, sv)) = sig {
                    i.sig_info = Some(si);
                    i.sig_value = sv;
                }
            }
            i
        })
}

pub fn meta() -> impl Strategy<Value = MetaInfo> {
    (
        proptest::option::of(any::<u64>()),
        proptest::option::of(0u64..=u64::from(u32::MAX)),
        proptest::option::of(component()),
    )
        .prop_map(|(t, f, b)| MetaInfo {
            content_type: t,
            freshness_period: f.map(Duration::from_millis),
            final_block_id: b,
        })
}

/// A Data with an explicit signature (so decode(encode(x)) == x exactly).
pub fn signed_data() -> impl Strategy<Value = Data> {
    (name(5), meta(), bytes(200), sig_info(), bytes(64)).prop_map(|(n, m, c, si, sv)| {
        let mut d = Data::new(n, c);
        d.meta = m;
        d.sig_type = Some(u64::from(si[2]));
        d.sig_info = Some(si);
        d.sig_value = Some(sv);
        d
    })
}

/// A Data without signature (encode signs it with DigestSha256).
pub fn unsigned_data() -> impl Strategy<Value = Data> {
    (name(5), meta(), bytes(200)).prop_map(|(n, m, c)| {
        let mut d = Data::new(n, c);
        d.meta = m;
        d
    })
}

pub fn cc_fields() -> impl Strategy<Value = CcFields> {
    let opt = || proptest::option::of(any::<u64>());
    (
        (opt(), opt(), opt(), opt()),
        proptest::option::of(prop_oneof![
            Just(TrafficClass::Primary),
            Just(TrafficClass::Secondary)
        ]),
        (opt(), opt(), opt()),
        proptest::option::of((0usize..8, any::<bool>())),
        (opt(), opt()),
    )
        .prop_map(
            |((p, s, path, hint), tc, (po, pc, dsz), sc, (ds, tr))| CcFields {
                primary_rate_bps: p,
                secondary_rate_bps: s,
                path_id: path,
                steering_hint: hint,
                traffic_class: tc,
                pace_objective_milli_ips: po,
                pace_constraint_milli_ips: pc,
                flow_data_size_bytes: dsz,
                service_class: sc.map(|(c, _)| ServiceClass::ALL[c]),
                service_penalised: sc.is_some_and(|(_, p)| p),
                downstream_rate_bps: ds,
                target_rate_bps: tr,
            },
        )
}

pub fn mcc() -> impl Strategy<Value = MccFeedback> {
    (name(4), 0u32..=1_000_000, 0u32..=1_000_000, any::<u64>()).prop_map(|(g, a, b, r)| {
        MccFeedback {
            group: g,
            max_occupancy_ppm: a,
            min_occupancy_ppm: b,
            min_fair_share_bps: r,
        }
    })
}

/// A valid network packet as fragment payload.
pub fn net_wire() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        interest().prop_map(|i| i.encode()),
        unsigned_data().prop_map(|d| d.encode()),
    ]
}

pub fn lp_headers() -> impl Strategy<Value = LpPacket> {
    (
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of(0u64..400),
            proptest::option::of(1u64..=400),
        ),
        proptest::option::of(nonempty_bytes(32)),
        proptest::option::of(any::<u64>().prop_map(NackReason::from_code)),
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of(any::<u64>()),
        ),
        (
            any::<bool>(),
            proptest::option::of(any::<u64>()),
            any::<bool>(),
        ),
        cc_fields(),
        proptest::option::of(mcc()),
    )
        .prop_map(
            |((seq, fi, fc), tok, nack, (inc, nh), (nc, cm, nd), cc, mcc)| LpPacket {
                sequence: seq,
                frag_index: fi,
                frag_count: fc,
                pit_token: tok,
                nack,
                incoming_face_id: inc,
                next_hop_face_id: nh,
                cache_policy_no_cache: nc,
                congestion_mark: cm,
                non_discovery: nd,
                cc,
                mcc,
                fragment: None,
            },
        )
}
