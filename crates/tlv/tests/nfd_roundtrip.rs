//! Property tests of the NFD management TLVs: every record decodes to what
//! was encoded, whatever its field values, and no input makes a decoder
//! panic.

mod common;

use bytes::{Bytes, BytesMut};
use common::name;
use icn_tlv::nfd::dataset::{encode_list, items};
use icn_tlv::nfd::{
    ControlParameters, ControlResponse, CsInfo, FaceStatus, FibEntry, ForwarderStatus,
    PacketCounters, RibEntryStatus, RouteRecord, StrategyChoiceStatus,
};
use proptest::prelude::*;

fn opt_u64() -> impl Strategy<Value = Option<u64>> {
    prop::option::of(any::<u64>())
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,24}"
}

fn control_parameters() -> impl Strategy<Value = ControlParameters> {
    (
        (
            prop::option::of(name(4)),
            opt_u64(),
            prop::option::of(text()),
            prop::option::of(text()),
            opt_u64(),
            opt_u64(),
            opt_u64(),
            opt_u64(),
        ),
        (
            opt_u64(),
            opt_u64(),
            prop::option::of(name(4)),
            opt_u64(),
            opt_u64(),
            opt_u64(),
            opt_u64(),
            opt_u64(),
        ),
    )
        .prop_map(
            |(
                (name, face_id, uri, local_uri, origin, cost, capacity, count),
                (flags, mask, strategy, exp, pers, bcmi, dct, mtu),
            )| ControlParameters {
                name,
                face_id,
                uri,
                local_uri,
                origin,
                cost,
                capacity,
                count,
                flags,
                mask,
                strategy,
                expiration_period_ms: exp,
                face_persistency: pers,
                base_congestion_marking_interval_ns: bcmi,
                default_congestion_threshold_bytes: dct,
                mtu,
            },
        )
}

fn counters() -> impl Strategy<Value = PacketCounters> {
    any::<[u64; 6]>().prop_map(|c| PacketCounters {
        n_in_interests: c[0],
        n_in_data: c[1],
        n_in_nacks: c[2],
        n_out_interests: c[3],
        n_out_data: c[4],
        n_out_nacks: c[5],
    })
}

fn face_status() -> impl Strategy<Value = FaceStatus> {
    (
        (
            any::<u64>(),
            text(),
            text(),
            opt_u64(),
            0u64..2,
            0u64..3,
            0u64..3,
        ),
        (
            opt_u64(),
            opt_u64(),
            opt_u64(),
            counters(),
            any::<[u64; 3]>(),
        ),
    )
        .prop_map(
            |((id, uri, local, exp, scope, pers, link), (bcmi, dct, mtu, counters, n))| {
                FaceStatus {
                    face_id: id,
                    uri,
                    local_uri: local,
                    expiration_period_ms: exp,
                    face_scope: scope,
                    face_persistency: pers,
                    link_type: link,
                    base_congestion_marking_interval_ns: bcmi,
                    default_congestion_threshold_bytes: dct,
                    mtu,
                    counters,
                    n_in_bytes: n[0],
                    n_out_bytes: n[1],
                    flags: n[2],
                }
            },
        )
}

fn route() -> impl Strategy<Value = RouteRecord> {
    (any::<[u64; 4]>(), opt_u64()).prop_map(|(v, exp)| RouteRecord {
        face_id: v[0],
        origin: v[1],
        cost: v[2],
        flags: v[3],
        expiration_period_ms: exp,
    })
}

/// Encodes `list` as a dataset payload and decodes it item by item.
fn list_round_trip<T>(
    list: &[T],
    enc: impl Fn(&T, &mut BytesMut),
    dec: impl Fn(Bytes) -> Result<T, icn_tlv::nfd::MgmtError>,
) -> Vec<T> {
    items(encode_list(list, enc))
        .unwrap()
        .into_iter()
        .map(|v| dec(v).unwrap())
        .collect()
}

proptest! {
    #[test]
    fn control_parameters_round_trip(p in control_parameters()) {
        prop_assert_eq!(ControlParameters::decode(p.encode()).unwrap(), p);
    }

    #[test]
    fn control_response_round_trip(
        code in 100u32..700,
        text in text(),
        body in prop::option::of(control_parameters()),
    ) {
        let r = ControlResponse { code, text, body };
        prop_assert_eq!(ControlResponse::decode(r.encode()).unwrap(), r);
    }

    #[test]
    fn face_status_list_round_trip(list in prop::collection::vec(face_status(), 0..4)) {
        let back = list_round_trip(&list, FaceStatus::encode_into, FaceStatus::decode_value);
        prop_assert_eq!(back, list);
    }

    #[test]
    fn fib_rib_strategy_round_trip(
        fib in prop::collection::vec(
            (name(4), prop::collection::vec(any::<(u64, u64)>(), 0..4)), 0..4),
        rib in prop::collection::vec((name(4), prop::collection::vec(route(), 0..4)), 0..4),
        sc in prop::collection::vec((name(4), name(4)), 0..4),
    ) {
        let fib: Vec<FibEntry> =
            fib.into_iter().map(|(name, next_hops)| FibEntry { name, next_hops }).collect();
        prop_assert_eq!(
            list_round_trip(&fib, FibEntry::encode_into, FibEntry::decode_value), fib);
        let rib: Vec<RibEntryStatus> =
            rib.into_iter().map(|(name, routes)| RibEntryStatus { name, routes }).collect();
        prop_assert_eq!(
            list_round_trip(&rib, RibEntryStatus::encode_into, RibEntryStatus::decode_value),
            rib
        );
        let sc: Vec<StrategyChoiceStatus> = sc
            .into_iter()
            .map(|(name, strategy)| StrategyChoiceStatus { name, strategy })
            .collect();
        prop_assert_eq!(
            list_round_trip(
                &sc,
                StrategyChoiceStatus::encode_into,
                StrategyChoiceStatus::decode_value
            ),
            sc
        );
    }

    #[test]
    fn forwarder_status_round_trip(
        version in text(),
        v in any::<[u64; 9]>(),
        counters in counters(),
    ) {
        let s = ForwarderStatus {
            nfd_version: version,
            start_timestamp_ms: v[0],
            current_timestamp_ms: v[1],
            n_name_tree_entries: v[2],
            n_fib_entries: v[3],
            n_pit_entries: v[4],
            n_measurements_entries: v[5],
            n_cs_entries: v[6],
            counters,
            n_satisfied_interests: v[7],
            n_unsatisfied_interests: v[8],
        };
        let mut b = BytesMut::new();
        s.encode_into(&mut b);
        prop_assert_eq!(ForwarderStatus::decode(b.freeze()).unwrap(), s);
    }

    #[test]
    fn cs_info_round_trip(v in any::<[u64; 5]>(), cap in opt_u64(), n in opt_u64()) {
        let c = CsInfo {
            capacity: v[0],
            flags: v[1],
            n_entries: v[2],
            n_hits: v[3],
            n_misses: v[4],
            capacity_bytes: cap,
            n_bytes: n,
        };
        prop_assert_eq!(CsInfo::decode(c.encode()).unwrap(), c);
    }

    #[test]
    fn management_decoders_never_panic(b in prop::collection::vec(any::<u8>(), 0..160)) {
        let b = Bytes::from(b);
        let _ = ControlParameters::decode(b.clone());
        let _ = ControlParameters::decode_value(b.clone());
        let _ = ControlResponse::decode(b.clone());
        let _ = FaceStatus::decode_value(b.clone());
        let _ = FibEntry::decode_value(b.clone());
        let _ = RibEntryStatus::decode_value(b.clone());
        let _ = StrategyChoiceStatus::decode_value(b.clone());
        let _ = ForwarderStatus::decode(b.clone());
        let _ = CsInfo::decode(b.clone());
        let _ = items(b);
    }
}
