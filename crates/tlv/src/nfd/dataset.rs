//! Status dataset items (§3.8): FaceStatus, FibEntry, RibEntry,
//! ForwarderStatus (status/general) and StrategyChoice, with encoders for the
//! manager and decoders for `icnfwd status`.

use crate::Name;
use bytes::{Bytes, BytesMut};

use super::params::tt::{
    COST, EXPIRATION_PERIOD, FACE_ID, FLAGS, LOCAL_URI, NAME, ORIGIN, STRATEGY, URI,
};
use super::wire::{self, put_name, put_nested, put_nni, put_opt_nni, put_tlv, TlvReader};
use super::MgmtError;

/// Item TLV-TYPE shared by every list dataset.
pub const ITEM: u32 = 128;
const NEXT_HOP_RECORD: u32 = 129;
const ROUTE: u32 = 129;

/// NFD's per-segment content limit (8800 − 800).
pub const MAX_SEGMENT_CONTENT: usize = 8000;

mod fs {
    pub const FACE_SCOPE: u32 = 132;
    pub const FACE_PERSISTENCY: u32 = 133;
    pub const LINK_TYPE: u32 = 134;
    pub const BCMI: u32 = 135;
    pub const DCT: u32 = 136;
    pub const MTU: u32 = 137;
    pub const N_IN_INTERESTS: u32 = 144;
    pub const N_IN_DATA: u32 = 145;
    pub const N_OUT_INTERESTS: u32 = 146;
    pub const N_OUT_DATA: u32 = 147;
    pub const N_IN_BYTES: u32 = 148;
    pub const N_OUT_BYTES: u32 = 149;
    pub const N_IN_NACKS: u32 = 151;
    pub const N_OUT_NACKS: u32 = 152;
}

/// Per-face packet counters as NFD reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketCounters {
    pub n_in_interests: u64,
    pub n_in_data: u64,
    pub n_in_nacks: u64,
    pub n_out_interests: u64,
    pub n_out_data: u64,
    pub n_out_nacks: u64,
}

/// One `faces/list` item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceStatus {
    pub face_id: u64,
    pub uri: String,
    pub local_uri: String,
    pub expiration_period_ms: Option<u64>,
    /// 0 non-local, 1 local.
    pub face_scope: u64,
    /// 0 persistent, 1 on-demand, 2 permanent.
    pub face_persistency: u64,
    /// 0 point-to-point, 1 multi-access, 2 ad hoc.
    pub link_type: u64,
    pub base_congestion_marking_interval_ns: Option<u64>,
    pub default_congestion_threshold_bytes: Option<u64>,
    pub mtu: Option<u64>,
    pub counters: PacketCounters,
    pub n_in_bytes: u64,
    pub n_out_bytes: u64,
    pub flags: u64,
}

impl FaceStatus {
    pub fn encode_into(&self, out: &mut BytesMut) {
        let mut b = BytesMut::with_capacity(128);
        put_nni(&mut b, FACE_ID, self.face_id);
        put_tlv(&mut b, URI, self.uri.as_bytes());
        put_tlv(&mut b, LOCAL_URI, self.local_uri.as_bytes());
        put_opt_nni(&mut b, EXPIRATION_PERIOD, self.expiration_period_ms);
        put_nni(&mut b, fs::FACE_SCOPE, self.face_scope);
        put_nni(&mut b, fs::FACE_PERSISTENCY, self.face_persistency);
        put_nni(&mut b, fs::LINK_TYPE, self.link_type);
        put_opt_nni(&mut b, fs::BCMI, self.base_congestion_marking_interval_ns);
        put_opt_nni(&mut b, fs::DCT, self.default_congestion_threshold_bytes);
        put_opt_nni(&mut b, fs::MTU, self.mtu);
        let c = &self.counters;
        put_nni(&mut b, fs::N_IN_INTERESTS, c.n_in_interests);
        put_nni(&mut b, fs::N_IN_DATA, c.n_in_data);
        put_nni(&mut b, fs::N_IN_NACKS, c.n_in_nacks);
        put_nni(&mut b, fs::N_OUT_INTERESTS, c.n_out_interests);
        put_nni(&mut b, fs::N_OUT_DATA, c.n_out_data);
        put_nni(&mut b, fs::N_OUT_NACKS, c.n_out_nacks);
        put_nni(&mut b, fs::N_IN_BYTES, self.n_in_bytes);
        put_nni(&mut b, fs::N_OUT_BYTES, self.n_out_bytes);
        put_nni(&mut b, FLAGS, self.flags);
        put_nested(out, ITEM, &b);
    }

    pub fn decode_value(v: Bytes) -> Result<Self, MgmtError> {
        let mut f = FaceStatus::default();
        let mut r = TlvReader::new(v);
        while let Some((t, v)) = r.next_element()? {
            match t {
                FACE_ID => f.face_id = wire::nni(&v)?,
                URI => f.uri = wire::utf8(&v)?,
                LOCAL_URI => f.local_uri = wire::utf8(&v)?,
                EXPIRATION_PERIOD => f.expiration_period_ms = Some(wire::nni(&v)?),
                fs::FACE_SCOPE => f.face_scope = wire::nni(&v)?,
                fs::FACE_PERSISTENCY => f.face_persistency = wire::nni(&v)?,
                fs::LINK_TYPE => f.link_type = wire::nni(&v)?,
                fs::BCMI => f.base_congestion_marking_interval_ns = Some(wire::nni(&v)?),
                fs::DCT => f.default_congestion_threshold_bytes = Some(wire::nni(&v)?),
                fs::MTU => f.mtu = Some(wire::nni(&v)?),
                fs::N_IN_INTERESTS => f.counters.n_in_interests = wire::nni(&v)?,
                fs::N_IN_DATA => f.counters.n_in_data = wire::nni(&v)?,
                fs::N_IN_NACKS => f.counters.n_in_nacks = wire::nni(&v)?,
                fs::N_OUT_INTERESTS => f.counters.n_out_interests = wire::nni(&v)?,
                fs::N_OUT_DATA => f.counters.n_out_data = wire::nni(&v)?,
                fs::N_OUT_NACKS => f.counters.n_out_nacks = wire::nni(&v)?,
                fs::N_IN_BYTES => f.n_in_bytes = wire::nni(&v)?,
                fs::N_OUT_BYTES => f.n_out_bytes = wire::nni(&v)?,
                FLAGS => f.flags = wire::nni(&v)?,
                _ => {}
            }
        }
        Ok(f)
    }
}

/// One `fib/list` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FibEntry {
    pub name: Name,
    /// (FaceId, cost).
    pub next_hops: Vec<(u64, u64)>,
}

impl FibEntry {
    pub fn encode_into(&self, out: &mut BytesMut) {
        let mut b = BytesMut::with_capacity(64);
        put_name(&mut b, &self.name);
        for &(face, cost) in &self.next_hops {
            let mut nh = BytesMut::with_capacity(12);
            put_nni(&mut nh, FACE_ID, face);
            put_nni(&mut nh, COST, cost);
            put_nested(&mut b, NEXT_HOP_RECORD, &nh);
        }
        put_nested(out, ITEM, &b);
    }

    pub fn decode_value(v: Bytes) -> Result<Self, MgmtError> {
        let mut name = None;
        let mut next_hops = Vec::new();
        let mut r = TlvReader::new(v);
        while let Some((t, v)) = r.next_element()? {
            match t {
                NAME => name = Some(wire::name(&v)?),
                NEXT_HOP_RECORD => {
                    let (mut face, mut cost) = (0, 0);
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            FACE_ID => face = wire::nni(&v)?,
                            COST => cost = wire::nni(&v)?,
                            _ => {}
                        }
                    }
                    next_hops.push((face, cost));
                }
                _ => {}
            }
        }
        Ok(FibEntry {
            name: name.ok_or(MgmtError::Missing("Name"))?,
            next_hops,
        })
    }
}

/// One route of a `rib/list` item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteRecord {
    pub face_id: u64,
    pub origin: u64,
    pub cost: u64,
    pub flags: u64,
    pub expiration_period_ms: Option<u64>,
}

/// One `rib/list` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RibEntryStatus {
    pub name: Name,
    pub routes: Vec<RouteRecord>,
}

impl RibEntryStatus {
    pub fn encode_into(&self, out: &mut BytesMut) {
        let mut b = BytesMut::with_capacity(64);
        put_name(&mut b, &self.name);
        for r in &self.routes {
            let mut rb = BytesMut::with_capacity(24);
            put_nni(&mut rb, FACE_ID, r.face_id);
            put_nni(&mut rb, ORIGIN, r.origin);
            put_nni(&mut rb, COST, r.cost);
            put_nni(&mut rb, FLAGS, r.flags);
            put_opt_nni(&mut rb, EXPIRATION_PERIOD, r.expiration_period_ms);
            put_nested(&mut b, ROUTE, &rb);
        }
        put_nested(out, ITEM, &b);
    }

    pub fn decode_value(v: Bytes) -> Result<Self, MgmtError> {
        let mut name = None;
        let mut routes = Vec::new();
        let mut r = TlvReader::new(v);
        while let Some((t, v)) = r.next_element()? {
            match t {
                NAME => name = Some(wire::name(&v)?),
                ROUTE => {
                    let mut rec = RouteRecord::default();
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            FACE_ID => rec.face_id = wire::nni(&v)?,
                            ORIGIN => rec.origin = wire::nni(&v)?,
                            COST => rec.cost = wire::nni(&v)?,
                            FLAGS => rec.flags = wire::nni(&v)?,
                            EXPIRATION_PERIOD => rec.expiration_period_ms = Some(wire::nni(&v)?),
                            _ => {}
                        }
                    }
                    routes.push(rec);
                }
                _ => {}
            }
        }
        Ok(RibEntryStatus {
            name: name.ok_or(MgmtError::Missing("Name"))?,
            routes,
        })
    }
}

/// One `strategy-choice/list` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyChoiceStatus {
    pub name: Name,
    pub strategy: Name,
}

impl StrategyChoiceStatus {
    pub fn encode_into(&self, out: &mut BytesMut) {
        let mut b = BytesMut::with_capacity(64);
        put_name(&mut b, &self.name);
        let mut s = BytesMut::new();
        put_name(&mut s, &self.strategy);
        put_nested(&mut b, STRATEGY, &s);
        put_nested(out, ITEM, &b);
    }

    pub fn decode_value(v: Bytes) -> Result<Self, MgmtError> {
        let (mut name, mut strategy) = (None, None);
        let mut r = TlvReader::new(v);
        while let Some((t, v)) = r.next_element()? {
            match t {
                NAME => name = Some(wire::name(&v)?),
                STRATEGY => strategy = Some(wire::name(&wire::single(v, NAME)?)?),
                _ => {}
            }
        }
        Ok(StrategyChoiceStatus {
            name: name.ok_or(MgmtError::Missing("Name"))?,
            strategy: strategy.ok_or(MgmtError::Missing("Strategy"))?,
        })
    }
}

mod gs {
    pub const NFD_VERSION: u32 = 128;
    pub const START_TIMESTAMP: u32 = 129;
    pub const CURRENT_TIMESTAMP: u32 = 130;
    pub const N_NAME_TREE_ENTRIES: u32 = 131;
    pub const N_FIB_ENTRIES: u32 = 132;
    pub const N_PIT_ENTRIES: u32 = 133;
    pub const N_MEASUREMENTS_ENTRIES: u32 = 134;
    pub const N_CS_ENTRIES: u32 = 135;
    pub const N_SATISFIED_INTERESTS: u32 = 153;
    pub const N_UNSATISFIED_INTERESTS: u32 = 154;
}

/// `status/general` (flat, no item wrapper). Timestamps are ms since the Unix epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    pub nfd_version: String,
    pub start_timestamp_ms: u64,
    pub current_timestamp_ms: u64,
    pub n_name_tree_entries: u64,
    pub n_fib_entries: u64,
    pub n_pit_entries: u64,
    pub n_measurements_entries: u64,
    pub n_cs_entries: u64,
    pub counters: PacketCounters,
    pub n_satisfied_interests: u64,
    pub n_unsatisfied_interests: u64,
}

impl ForwarderStatus {
    pub fn encode_into(&self, b: &mut BytesMut) {
        put_tlv(b, gs::NFD_VERSION, self.nfd_version.as_bytes());
        put_nni(b, gs::START_TIMESTAMP, self.start_timestamp_ms);
        put_nni(b, gs::CURRENT_TIMESTAMP, self.current_timestamp_ms);
        put_nni(b, gs::N_NAME_TREE_ENTRIES, self.n_name_tree_entries);
        put_nni(b, gs::N_FIB_ENTRIES, self.n_fib_entries);
        put_nni(b, gs::N_PIT_ENTRIES, self.n_pit_entries);
        put_nni(b, gs::N_MEASUREMENTS_ENTRIES, self.n_measurements_entries);
        put_nni(b, gs::N_CS_ENTRIES, self.n_cs_entries);
        let c = &self.counters;
        put_nni(b, fs::N_IN_INTERESTS, c.n_in_interests);
        put_nni(b, fs::N_IN_DATA, c.n_in_data);
        put_nni(b, fs::N_IN_NACKS, c.n_in_nacks);
        put_nni(b, fs::N_OUT_INTERESTS, c.n_out_interests);
        put_nni(b, fs::N_OUT_DATA, c.n_out_data);
        put_nni(b, fs::N_OUT_NACKS, c.n_out_nacks);
        put_nni(b, gs::N_SATISFIED_INTERESTS, self.n_satisfied_interests);
        put_nni(b, gs::N_UNSATISFIED_INTERESTS, self.n_unsatisfied_interests);
    }

    pub fn decode(payload: Bytes) -> Result<Self, MgmtError> {
        let mut s = ForwarderStatus::default();
        let mut r = TlvReader::new(payload);
        while let Some((t, v)) = r.next_element()? {
            match t {
                gs::NFD_VERSION => s.nfd_version = wire::utf8(&v)?,
                gs::START_TIMESTAMP => s.start_timestamp_ms = wire::nni(&v)?,
                gs::CURRENT_TIMESTAMP => s.current_timestamp_ms = wire::nni(&v)?,
                gs::N_NAME_TREE_ENTRIES => s.n_name_tree_entries = wire::nni(&v)?,
                gs::N_FIB_ENTRIES => s.n_fib_entries = wire::nni(&v)?,
                gs::N_PIT_ENTRIES => s.n_pit_entries = wire::nni(&v)?,
                gs::N_MEASUREMENTS_ENTRIES => s.n_measurements_entries = wire::nni(&v)?,
                gs::N_CS_ENTRIES => s.n_cs_entries = wire::nni(&v)?,
                fs::N_IN_INTERESTS => s.counters.n_in_interests = wire::nni(&v)?,
                fs::N_IN_DATA => s.counters.n_in_data = wire::nni(&v)?,
                fs::N_IN_NACKS => s.counters.n_in_nacks = wire::nni(&v)?,
                fs::N_OUT_INTERESTS => s.counters.n_out_interests = wire::nni(&v)?,
                fs::N_OUT_DATA => s.counters.n_out_data = wire::nni(&v)?,
                fs::N_OUT_NACKS => s.counters.n_out_nacks = wire::nni(&v)?,
                gs::N_SATISFIED_INTERESTS => s.n_satisfied_interests = wire::nni(&v)?,
                gs::N_UNSATISFIED_INTERESTS => s.n_unsatisfied_interests = wire::nni(&v)?,
                _ => {}
            }
        }
        Ok(s)
    }
}

/// Splits a dataset payload into the TLV-VALUEs of its items (type 128).
pub fn items(payload: Bytes) -> Result<Vec<Bytes>, MgmtError> {
    let mut out = Vec::new();
    let mut r = TlvReader::new(payload);
    while let Some((t, v)) = r.next_element()? {
        if t == ITEM {
            out.push(v);
        }
    }
    Ok(out)
}

/// Cuts a payload into segment contents of at most `max` octets (at least one,
/// possibly empty, segment).
pub fn segment_payload(payload: &Bytes, max: usize) -> Vec<Bytes> {
    let max = max.max(1);
    if payload.is_empty() {
        return vec![Bytes::new()];
    }
    (0..payload.len())
        .step_by(max)
        .map(|s| payload.slice(s..(s + max).min(payload.len())))
        .collect()
}

/// Encodes a list of items with `f` into one payload.
pub fn encode_list<T>(items: &[T], f: impl Fn(&T, &mut BytesMut)) -> Bytes {
    let mut out = BytesMut::with_capacity(items.len() * 64);
    for it in items {
        f(it, &mut out);
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn face_status_roundtrip() {
        let f = FaceStatus {
            face_id: 257,
            uri: "udp4://127.0.0.1:6364".into(),
            local_uri: "udp4://127.0.0.1:6363".into(),
            face_scope: 0,
            face_persistency: 1,
            link_type: 0,
            mtu: Some(8800),
            counters: PacketCounters {
                n_in_interests: 5,
                n_out_data: 70000,
                ..Default::default()
            },
            n_in_bytes: 1 << 33,
            flags: 0,
            ..Default::default()
        };
        let payload = encode_list(std::slice::from_ref(&f), FaceStatus::encode_into);
        let it = items(payload).unwrap();
        assert_eq!(it.len(), 1);
        assert_eq!(FaceStatus::decode_value(it[0].clone()).unwrap(), f);
    }

    #[test]
    fn fib_rib_strategy_roundtrip() {
        let fib = FibEntry {
            name: "/a/b".parse().unwrap(),
            next_hops: vec![(256, 0), (300, 10)],
        };
        let rib = RibEntryStatus {
            name: "/a".parse().unwrap(),
            routes: vec![RouteRecord {
                face_id: 256,
                origin: 255,
                cost: 3,
                flags: 1,
                expiration_period_ms: Some(5000),
            }],
        };
        let sc = StrategyChoiceStatus {
            name: "/".parse().unwrap(),
            strategy: "/localhost/nfd/strategy/best-route/v=5".parse().unwrap(),
        };
        let mut b = BytesMut::new();
        fib.encode_into(&mut b);
        let it = items(b.freeze()).unwrap();
        assert_eq!(FibEntry::decode_value(it[0].clone()).unwrap(), fib);
        let mut b = BytesMut::new();
        rib.encode_into(&mut b);
        let it = items(b.freeze()).unwrap();
        assert_eq!(RibEntryStatus::decode_value(it[0].clone()).unwrap(), rib);
        let mut b = BytesMut::new();
        sc.encode_into(&mut b);
        let it = items(b.freeze()).unwrap();
        assert_eq!(
            StrategyChoiceStatus::decode_value(it[0].clone()).unwrap(),
            sc
        );
    }

    #[test]
    fn general_status_roundtrip() {
        let s = ForwarderStatus {
            nfd_version: "icnfwd-0.1.0".into(),
            start_timestamp_ms: 1_700_000_000_000,
            current_timestamp_ms: 1_700_000_001_000,
            n_pit_entries: 3,
            n_satisfied_interests: 9,
            ..Default::default()
        };
        let mut b = BytesMut::new();
        s.encode_into(&mut b);
        assert_eq!(ForwarderStatus::decode(b.freeze()).unwrap(), s);
    }

    proptest! {
        #[test]
        fn segments_reassemble(len in 0usize..30000, max in 1usize..9000) {
            let payload = Bytes::from(vec![7u8; len]);
            let segs = segment_payload(&payload, max);
            prop_assert!(segs.iter().all(|s| s.len() <= max));
            let joined: Vec<u8> = segs.iter().flat_map(|s| s.iter().copied()).collect();
            prop_assert_eq!(joined.len(), len);
        }

        #[test]
        fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let b = Bytes::from(bytes);
            let _ = FaceStatus::decode_value(b.clone());
            let _ = FibEntry::decode_value(b.clone());
            let _ = RibEntryStatus::decode_value(b.clone());
            let _ = ForwarderStatus::decode(b.clone());
            let _ = items(b);
        }
    }
}
