//! The icnfwd-specific dataset `/localhost/nfd/multicast/icnfwd-groups`:
//! the SRMCC multicast tree node's counters and its groups (issue 7).
//! Served like every status dataset; `icnfwd status` prints it.
//!
//! ```text
//! McastState     = 160 TLV-LENGTH *Counter *Group   (one item, always present)
//! Counter        = 161 TLV-LENGTH CounterName Count
//! CounterName    = 162 UTF-8 (kebab-case: "mcc-in", "copies-out", ...)
//! Count          = 163 NNI
//! Group          = 170 TLV-LENGTH Name [Upstream] *Downstream CopiesSent
//!                    [AnnouncedRateBps] [LastSeq] [FairShareBps] [FlowCount]
//!                    OccupancyPpm
//! Upstream       = 171 NNI    Downstream       = 172 NNI (face ids)
//! CopiesSent     = 173 NNI    AnnouncedRateBps = 174 NNI (the source's)
//! LastSeq        = 175 NNI    FairShareBps     = 176 NNI (C_i / N_i)
//! FlowCount      = 177 NNI (N_i)   OccupancyPpm = 178 NNI (largest EWMA)
//! ```
//! Decoders skip unknown elements, so fields can be added.

use crate::Name;
use bytes::{Bytes, BytesMut};

use super::wire::{self, put_name, put_nested, put_nni, put_opt_nni, put_tlv, TlvReader};
use super::MgmtError;

/// The dataset's module and name under `/localhost/nfd`.
pub const DATASET: (&str, &str) = ("multicast", "icnfwd-groups");

const STATE: u32 = 160;
const COUNTER: u32 = 161;
const COUNTER_NAME: u32 = 162;
const COUNT: u32 = 163;
const GROUP: u32 = 170;
const UPSTREAM: u32 = 171;
const DOWNSTREAM: u32 = 172;
const COPIES_SENT: u32 = 173;
const ANNOUNCED_RATE_BPS: u32 = 174;
const LAST_SEQ: u32 = 175;
const FAIR_SHARE_BPS: u32 = 176;
const FLOW_COUNT: u32 = 177;
const OCCUPANCY_PPM: u32 = 178;
const NAME: u32 = 7;

/// One group of the tree node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McastGroupState {
    pub name: Name,
    /// Face towards the source.
    pub upstream: Option<u64>,
    /// Downstream member faces.
    pub downstream: Vec<u64>,
    /// Data copies made for this group.
    pub copies_sent: u64,
    /// Rate the source announces in its latest packet, bit/s.
    pub announced_rate_bps: Option<u64>,
    /// Latest sequence number cloned.
    pub last_seq: Option<u64>,
    /// This node's fair share of its upstream link, `C_i / N_i`, bit/s.
    pub fair_share_bps: Option<u64>,
    /// `N_i`: groups plus sampled unicast flows on the upstream link.
    pub flow_count: Option<u64>,
    /// Largest occupancy EWMA over the downstream faces, ppm.
    pub occupancy_ppm: u64,
}

/// The tree node: named counters and groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McastState {
    /// (name, count), in a fixed order.
    pub counters: Vec<(String, u64)>,
    pub groups: Vec<McastGroupState>,
}

impl McastState {
    /// The count named `name` (0 if absent).
    pub fn counter(&self, name: &str) -> u64 {
        wire::named_count(&self.counters, name)
    }

    /// The dataset payload.
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(64 + 48 * self.groups.len());
        for (name, count) in &self.counters {
            let mut c = BytesMut::with_capacity(name.len() + 12);
            put_tlv(&mut c, COUNTER_NAME, name.as_bytes());
            put_nni(&mut c, COUNT, *count);
            put_nested(&mut b, COUNTER, &c);
        }
        for g in &self.groups {
            let mut e = BytesMut::with_capacity(48 + 4 * g.downstream.len());
            put_name(&mut e, &g.name);
            put_opt_nni(&mut e, UPSTREAM, g.upstream);
            for d in &g.downstream {
                put_nni(&mut e, DOWNSTREAM, *d);
            }
            put_nni(&mut e, COPIES_SENT, g.copies_sent);
            put_opt_nni(&mut e, ANNOUNCED_RATE_BPS, g.announced_rate_bps);
            put_opt_nni(&mut e, LAST_SEQ, g.last_seq);
            put_opt_nni(&mut e, FAIR_SHARE_BPS, g.fair_share_bps);
            put_opt_nni(&mut e, FLOW_COUNT, g.flow_count);
            put_nni(&mut e, OCCUPANCY_PPM, g.occupancy_ppm);
            put_nested(&mut b, GROUP, &e);
        }
        let mut out = BytesMut::with_capacity(b.len() + 8);
        put_nested(&mut out, STATE, &b);
        out.freeze()
    }

    /// Decodes the dataset payload.
    pub fn decode(payload: Bytes) -> Result<Self, MgmtError> {
        let v = wire::single(payload, STATE)?;
        let mut s = McastState::default();
        let mut r = TlvReader::new(v);
        while let Some((t, v)) = r.next_element()? {
            match t {
                COUNTER => {
                    let (mut name, mut count) = (None, 0);
                    let mut rr = TlvReader::new(v);
                    while let Some((t, v)) = rr.next_element()? {
                        match t {
                            COUNTER_NAME => name = Some(wire::utf8(&v)?),
                            COUNT => count = wire::nni(&v)?,
                            _ => {}
                        }
                    }
                    s.counters
                        .push((name.ok_or(MgmtError::Missing("CounterName"))?, count));
                }
                GROUP => s.groups.push(decode_group(v)?),
                _ => {}
            }
        }
        Ok(s)
    }
}

fn decode_group(v: Bytes) -> Result<McastGroupState, MgmtError> {
    let mut name = None;
    let mut g = McastGroupState {
        name: Name::root(),
        upstream: None,
        downstream: Vec::new(),
        copies_sent: 0,
        announced_rate_bps: None,
        last_seq: None,
        fair_share_bps: None,
        flow_count: None,
        occupancy_ppm: 0,
    };
    let mut r = TlvReader::new(v);
    while let Some((t, v)) = r.next_element()? {
        match t {
            NAME => name = Some(wire::name(&v)?),
            UPSTREAM => g.upstream = Some(wire::nni(&v)?),
            DOWNSTREAM => g.downstream.push(wire::nni(&v)?),
            COPIES_SENT => g.copies_sent = wire::nni(&v)?,
            ANNOUNCED_RATE_BPS => g.announced_rate_bps = Some(wire::nni(&v)?),
            LAST_SEQ => g.last_seq = Some(wire::nni(&v)?),
            FAIR_SHARE_BPS => g.fair_share_bps = Some(wire::nni(&v)?),
            FLOW_COUNT => g.flow_count = Some(wire::nni(&v)?),
            OCCUPANCY_PPM => g.occupancy_ppm = wire::nni(&v)?,
            _ => {}
        }
    }
    g.name = name.ok_or(MgmtError::Missing("Name"))?;
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_group() -> impl Strategy<Value = McastGroupState> {
        (
            "[a-z]{1,8}",
            proptest::option::of(any::<u64>()),
            proptest::collection::vec(any::<u64>(), 0..5),
            any::<u64>(),
            proptest::array::uniform4(proptest::option::of(any::<u64>())),
            any::<u64>(),
        )
            .prop_map(
                |(n, upstream, downstream, copies_sent, o, occ)| McastGroupState {
                    name: format!("/mc/{n}").parse().unwrap(),
                    upstream,
                    downstream,
                    copies_sent,
                    announced_rate_bps: o[0],
                    last_seq: o[1],
                    fair_share_bps: o[2],
                    flow_count: o[3],
                    occupancy_ppm: occ,
                },
            )
    }

    proptest! {
        #[test]
        fn roundtrip(
            counters in proptest::collection::vec(("[a-z-]{1,12}", any::<u64>()), 0..6),
            groups in proptest::collection::vec(arb_group(), 0..4),
        ) {
            let s = McastState { counters, groups };
            prop_assert_eq!(McastState::decode(s.encode()).unwrap(), s);
        }
    }

    #[test]
    fn a_group_needs_its_name() {
        let mut g = BytesMut::new();
        put_nni(&mut g, COPIES_SENT, 1);
        let mut b = BytesMut::new();
        put_nested(&mut b, GROUP, &g);
        let mut out = BytesMut::new();
        put_nested(&mut out, STATE, &b);
        assert_eq!(
            McastState::decode(out.freeze()),
            Err(MgmtError::Missing("Name"))
        );
    }
}
