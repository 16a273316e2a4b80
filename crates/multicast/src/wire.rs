//! Wire formats of the multicast service.
//!
//! * **Subscription** (join/refresh and leave): an ordinary Interest named
//!   `/<group>/32=mcast-join` or `/<group>/32=mcast-leave`. A join's
//!   InterestLifetime is the membership lifetime the sender asks for (soft
//!   state: the receiver refreshes before it runs out). Being an Interest,
//!   it travels through every face type, FIB-routed towards the source, and
//!   needs nothing new in the codec; a tree node consumes it (it never
//!   enters the PIT) and sends its own aggregated join upstream.
//! * **Group Data**: a Data named `/<group>/seq=<n>` whose Content is a
//!   small TLV envelope: `McastRate` (the source's current SRMCC rate, bit/s),
//!   `McastPayload` (the application bytes) and an optional empty `McastEnd`
//!   on the last packet of a stream.
//! * **MCC feedback**: the codec's [`MccFeedback`], an LpPacket header field
//!   without fragment, hop by hop from receivers to the source. Occupancies
//!   travel in ppm, the fair share in bit/s; [`to_message`] and
//!   [`to_feedback`] convert to the floating-point [`MccMessage`] that
//!   cc-core's SRMCC code uses.

use bytes::{BufMut, Bytes, BytesMut};
use cc_core::srmcc::MccMessage;
use cc_core::Duration;
use icn_tlv::cc::PPM_FULL;
use icn_tlv::element::{write_bytes_tlv, write_header, write_nni_tlv, Elements};
use icn_tlv::varnum::read_nni;
use icn_tlv::{Component, Data, Interest, LpPacket, MccFeedback, MetaInfo, Name};

use crate::error::McastError;

/// Keyword component (type 32) ending a join/refresh Interest.
pub const JOIN_KEYWORD: &[u8] = b"mcast-join";
/// Keyword component (type 32) ending a leave Interest.
pub const LEAVE_KEYWORD: &[u8] = b"mcast-leave";
/// Content TLV: the source's announced rate (NonNegativeInteger, bit/s).
pub const TLV_MCAST_RATE: u32 = 200;
/// Content TLV: application payload bytes.
pub const TLV_MCAST_PAYLOAD: u32 = 202;
/// Content TLV: empty marker on the last packet of a stream.
pub const TLV_MCAST_END: u32 = 204;
/// Fair share that stands for "no limit known" (a link without a
/// configured capacity). Finite on purpose: cc-core maps non-finite rates
/// to zero.
pub const UNLIMITED_BPS: u64 = u64::MAX;
/// Longest group name accepted, in components (like the FIB's depth limit).
pub const MAX_GROUP_COMPONENTS: usize = 32;

const KEYWORD_TYPE: u32 = 32;

/// Join/refresh or leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubscriptionKind {
    /// Create or refresh membership for `lifetime`.
    Join,
    /// Remove membership now.
    Leave,
}

/// A membership message for one group, as carried by an Interest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The group prefix (GUMGID).
    pub group: Name,
    /// Join or leave.
    pub kind: SubscriptionKind,
    /// How long the membership lasts without a refresh (joins).
    pub lifetime: Duration,
}

impl Subscription {
    /// A join/refresh asking for `lifetime` of membership.
    pub fn join(group: Name, lifetime: Duration) -> Self {
        Subscription {
            group,
            kind: SubscriptionKind::Join,
            lifetime,
        }
    }

    /// A leave.
    pub fn leave(group: Name) -> Self {
        Subscription {
            group,
            kind: SubscriptionKind::Leave,
            lifetime: Duration::from_secs(1),
        }
    }

    /// The Interest name: the group plus the join or leave keyword.
    pub fn name(&self) -> Name {
        let kw = match self.kind {
            SubscriptionKind::Join => JOIN_KEYWORD,
            SubscriptionKind::Leave => LEAVE_KEYWORD,
        };
        self.group
            .append(Component::keyword(Bytes::from_static(kw)))
    }

    /// The Interest carrying this subscription. The nonce must be fresh
    /// for each transmission (dead-nonce lists on the way).
    pub fn to_interest(&self, nonce: u32) -> Interest {
        let mut i = Interest::new(self.name());
        i.nonce = Some(nonce);
        i.must_be_fresh = true;
        i.lifetime = Some(self.lifetime);
        i
    }

    /// The encoded Interest.
    pub fn encode(&self, nonce: u32) -> Bytes {
        self.to_interest(nonce).encode()
    }

    /// Recognises a subscription Interest; `None` for any other Interest
    /// (which then follows the normal pipeline).
    pub fn from_interest(interest: &Interest) -> Option<Subscription> {
        let kind = subscription_kind(&interest.name)?;
        let group = interest.name.prefix(interest.name.len() - 1);
        Some(Subscription {
            group,
            kind,
            lifetime: interest.lifetime_or_default(),
        })
    }
}

/// Join or leave if `name` ends with one of the subscription keywords and
/// has a non-empty, bounded group before it. Cheap enough for the engine to
/// call on every Interest.
pub fn subscription_kind(name: &Name) -> Option<SubscriptionKind> {
    let n = name.len();
    if !(2..=MAX_GROUP_COMPONENTS + 1).contains(&n) {
        return None;
    }
    let (typ, value) = name.raw_components().last()?;
    if typ != KEYWORD_TYPE {
        return None;
    }
    match value {
        JOIN_KEYWORD => Some(SubscriptionKind::Join),
        LEAVE_KEYWORD => Some(SubscriptionKind::Leave),
        _ => None,
    }
}

/// One packet of a group's stream, as carried by a Data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupPacket {
    /// The group prefix.
    pub group: Name,
    /// Sequence number, from 0, one per packet.
    pub seq: u64,
    /// The source's rate when it sent the packet (bit/s).
    pub rate_bps: u64,
    /// Application bytes.
    pub payload: Bytes,
    /// Last packet of the stream.
    pub end: bool,
}

impl GroupPacket {
    /// The Data name `/<group>/seq=<n>`.
    pub fn name(&self) -> Name {
        self.group.append(Component::sequence_num(self.seq))
    }

    /// The Data, signed with DigestSha256 by `Data::encode`.
    pub fn to_data(&self, freshness: Option<Duration>) -> Data {
        let mut content = BytesMut::with_capacity(self.payload.len() + 24);
        write_nni_tlv(&mut content, TLV_MCAST_RATE, self.rate_bps);
        write_bytes_tlv(&mut content, TLV_MCAST_PAYLOAD, &self.payload);
        if self.end {
            write_header(&mut content, TLV_MCAST_END, 0);
        }
        let mut d = Data::new(self.name(), content.freeze());
        d.meta = MetaInfo {
            freshness_period: freshness,
            ..MetaInfo::default()
        };
        d
    }

    /// The encoded Data.
    pub fn encode(&self, freshness: Option<Duration>) -> Bytes {
        self.to_data(freshness).encode()
    }

    /// Parses a group Data: last component a sequence number, Content the
    /// envelope. Unknown envelope elements are skipped.
    ///
    /// # Errors
    /// [`McastError::NotMulticast`] when the name or content does not have
    /// this shape.
    pub fn from_data(data: &Data) -> Result<GroupPacket, McastError> {
        let n = data.name.len();
        if !(2..=MAX_GROUP_COMPONENTS + 1).contains(&n) {
            return Err(McastError::NotMulticast("name length"));
        }
        let seq = data
            .name
            .last()
            .and_then(|c| c.as_sequence_num())
            .ok_or(McastError::NotMulticast("no sequence number"))?;
        let mut rate_bps = None;
        let mut payload = None;
        let mut end = false;
        for e in Elements::new(&data.content) {
            let e = e?;
            match e.typ() {
                TLV_MCAST_RATE => rate_bps = Some(read_nni(e.value(), TLV_MCAST_RATE)?),
                TLV_MCAST_PAYLOAD => payload = Some(data.content.slice_ref(e.value())),
                TLV_MCAST_END => end = true,
                _ => {}
            }
        }
        Ok(GroupPacket {
            group: data.name.prefix(n - 1),
            seq,
            rate_bps: rate_bps.ok_or(McastError::NotMulticast("no rate"))?,
            payload: payload.ok_or(McastError::NotMulticast("no payload"))?,
            end,
        })
    }
}

/// Occupancy fraction to ppm (clamped, NaN → 0).
pub fn occupancy_to_ppm(o: f64) -> u32 {
    if o.is_nan() {
        return 0;
    }
    let ppm = (o.clamp(0.0, 1.0) * f64::from(PPM_FULL)).round();
    (ppm as u32).min(PPM_FULL)
}

/// ppm to occupancy fraction.
pub fn ppm_to_occupancy(ppm: u32) -> f64 {
    f64::from(ppm.min(PPM_FULL)) / f64::from(PPM_FULL)
}

/// Rate in bit/s to the wire integer: the codec's one rule
/// ([`icn_tlv::cc::rate_to_wire`]: rounded to the nearest bit/s,
/// saturating, NaN or negative → 0, +∞ → [`UNLIMITED_BPS`]).
pub fn rate_to_wire(bps: f64) -> u64 {
    icn_tlv::cc::rate_to_wire(bps)
}

/// The floating-point body of a received feedback.
pub fn to_message(fb: &MccFeedback) -> MccMessage {
    MccMessage {
        max_occupancy: ppm_to_occupancy(fb.max_occupancy_ppm),
        min_occupancy: ppm_to_occupancy(fb.min_occupancy_ppm),
        min_fair_share_bps: fb.min_fair_share_bps as f64,
    }
}

/// The wire feedback for `group`.
pub fn to_feedback(group: Name, msg: &MccMessage) -> MccFeedback {
    MccFeedback {
        group,
        max_occupancy_ppm: occupancy_to_ppm(msg.max_occupancy),
        min_occupancy_ppm: occupancy_to_ppm(msg.min_occupancy),
        min_fair_share_bps: rate_to_wire(msg.min_fair_share_bps),
    }
}

/// The LpPacket frame carrying `fb` (no fragment).
pub fn encode_feedback(fb: &MccFeedback) -> Bytes {
    LpPacket {
        mcc: Some(fb.clone()),
        ..LpPacket::default()
    }
    .encode()
}

/// Copies `payload` into a buffer; helper for callers that build payloads.
pub fn payload_from_slice(payload: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(payload.len());
    b.put_slice(payload);
    b.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_tlv::{decode_packet, NetPacket};

    fn group() -> Name {
        "/mc/video".parse().unwrap()
    }

    #[test]
    fn join_interest_round_trips_through_the_codec() {
        let s = Subscription::join(group(), Duration::from_millis(3000));
        let wire = s.encode(7);
        let (_, net) = decode_packet(wire).unwrap();
        let Some(NetPacket::Interest(i)) = net else {
            panic!("not an Interest")
        };
        assert_eq!(i.name.to_string(), "/mc/video/32=mcast-join");
        assert_eq!(Subscription::from_interest(&i), Some(s));
    }

    #[test]
    fn leave_is_recognised_and_ordinary_interests_are_not() {
        let s = Subscription::leave(group());
        let i = s.to_interest(1);
        assert_eq!(
            Subscription::from_interest(&i).unwrap().kind,
            SubscriptionKind::Leave
        );
        let plain = Interest::new("/mc/video/seq=3".parse().unwrap());
        assert_eq!(Subscription::from_interest(&plain), None);
        let bare_kw = Interest::new("/32=mcast-join".parse().unwrap());
        assert_eq!(
            Subscription::from_interest(&bare_kw),
            None,
            "empty group refused"
        );
        let other_kw = Interest::new("/mc/32=mcast-other".parse().unwrap());
        assert_eq!(Subscription::from_interest(&other_kw), None);
    }

    #[test]
    fn group_data_round_trips_with_rate_and_end_marker() {
        let p = GroupPacket {
            group: group(),
            seq: 41,
            rate_bps: 1_234_567,
            payload: Bytes::from_static(b"hello"),
            end: true,
        };
        let (_, net) = decode_packet(p.encode(Some(Duration::from_millis(100)))).unwrap();
        let Some(NetPacket::Data(d)) = net else {
            panic!("not a Data")
        };
        assert_eq!(d.name.to_string(), "/mc/video/seq=41");
        assert_eq!(GroupPacket::from_data(&d).unwrap(), p);
    }

    #[test]
    fn ordinary_data_is_not_a_group_packet() {
        let d = Data::new("/mc/video/seg=1".parse().unwrap(), Bytes::from_static(b"x"));
        assert!(GroupPacket::from_data(&d).is_err());
        let d = Data::new("/mc/seq=1".parse().unwrap(), Bytes::from_static(b"\xff"));
        assert!(
            GroupPacket::from_data(&d).is_err(),
            "garbage content refused"
        );
    }

    #[test]
    fn feedback_frame_decodes_as_mcc_without_network_packet() {
        let msg = MccMessage {
            max_occupancy: 0.4,
            min_occupancy: 0.1,
            min_fair_share_bps: 1.5e6,
        };
        let fb = to_feedback(group(), &msg);
        let (lp, net) = decode_packet(encode_feedback(&fb)).unwrap();
        assert!(net.is_none());
        let back = lp.mcc.unwrap();
        assert_eq!(back, fb);
        let m = to_message(&back);
        assert!((m.max_occupancy - 0.4).abs() < 1e-6 && (m.min_occupancy - 0.1).abs() < 1e-6);
        assert_eq!(m.min_fair_share_bps, 1.5e6);
    }

    #[test]
    fn conversions_clamp_and_saturate() {
        assert_eq!(occupancy_to_ppm(f64::NAN), 0);
        assert_eq!(occupancy_to_ppm(2.0), PPM_FULL);
        assert_eq!(occupancy_to_ppm(-1.0), 0);
        assert_eq!(rate_to_wire(f64::INFINITY), UNLIMITED_BPS);
        assert_eq!(rate_to_wire(f64::NAN), 0);
        assert_eq!(rate_to_wire(1e30), u64::MAX);
        assert_eq!(rate_to_wire(999_999.6), 1_000_000);
        assert_eq!(ppm_to_occupancy(u32::MAX), 1.0);
    }
}
