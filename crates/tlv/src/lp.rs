//! NDNLPv2 LpPacket.
//!
//! Decoding turns every header field into a typed field and keeps `fragment`
//! as a slice of the wire. Encoding writes the header fields in strictly
//! ascending TLV-TYPE order, then copies the fragment bytes once; with no
//! header field the bare network packet is emitted. Rewriting one field of a
//! decoded packet therefore never re-encodes the Interest/Data inside.

use bytes::{BufMut, Bytes, BytesMut};

use crate::cc::{CcFields, MccFeedback};
use crate::element::{nni_tlv_len, tlv_len, write_bytes_tlv, write_header, write_nni_tlv, Element};
use crate::error::{Result, TlvError};
use crate::types::{self, lp_is_ignorable};
use crate::varnum::read_nni;

/// Network Nack reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NackReason {
    /// Unspecified (code 0, or NackReason absent).
    None,
    /// Congestion (50).
    Congestion,
    /// Duplicate Nonce (100).
    Duplicate,
    /// No route (150).
    NoRoute,
    /// Any other code.
    Other(u64),
}

impl NackReason {
    /// Wire code.
    pub const fn code(self) -> u64 {
        match self {
            NackReason::None => 0,
            NackReason::Congestion => 50,
            NackReason::Duplicate => 100,
            NackReason::NoRoute => 150,
            NackReason::Other(c) => c,
        }
    }
    /// From a wire code (known codes map to their variant).
    pub const fn from_code(c: u64) -> Self {
        match c {
            0 => NackReason::None,
            50 => NackReason::Congestion,
            100 => NackReason::Duplicate,
            150 => NackReason::NoRoute,
            c => NackReason::Other(c),
        }
    }
}

/// Longest PitToken NDNLPv2 allows.
pub const MAX_PIT_TOKEN_LEN: usize = 32;

/// One NDNLPv2 packet. `Default` is an IDLE packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LpPacket {
    /// Sequence (8 octets on the wire).
    pub sequence: Option<u64>,
    /// FragIndex (absent = 0).
    pub frag_index: Option<u64>,
    /// FragCount (absent = 1).
    pub frag_count: Option<u64>,
    /// PitToken, 1..=32 octets.
    pub pit_token: Option<Bytes>,
    /// Nack; the fragment is then the Nacked Interest.
    pub nack: Option<NackReason>,
    /// IncomingFaceId (local field).
    pub incoming_face_id: Option<u64>,
    /// NextHopFaceId (local field).
    pub next_hop_face_id: Option<u64>,
    /// CachePolicy = NoCache.
    pub cache_policy_no_cache: bool,
    /// CongestionMark; PCON/NFD use 1, WinCM carries its mark count here.
    pub congestion_mark: Option<u64>,
    /// NonDiscovery present.
    pub non_discovery: bool,
    /// Congestion-control fields.
    pub cc: CcFields,
    /// SRMCC MCC feedback (normally on a packet without fragment).
    pub mcc: Option<MccFeedback>,
    /// Fragment: a whole network packet or one piece of it.
    pub fragment: Option<Bytes>,
}

/// Receives header fields in wire order; one implementation measures, one writes.
trait Sink {
    fn nni(&mut self, typ: u32, v: u64);
    fn bytes(&mut self, typ: u32, v: &[u8]);
    fn raw(&mut self, tlv: &[u8]);
}

struct Measure(usize);
impl Sink for Measure {
    fn nni(&mut self, typ: u32, v: u64) {
        self.0 += nni_tlv_len(typ, v);
    }
    fn bytes(&mut self, typ: u32, v: &[u8]) {
        self.0 += tlv_len(typ, v.len());
    }
    fn raw(&mut self, tlv: &[u8]) {
        self.0 += tlv.len();
    }
}

struct Write<'a, B: ?Sized>(&'a mut B);
impl<B: BufMut + ?Sized> Sink for Write<'_, B> {
    fn nni(&mut self, typ: u32, v: u64) {
        write_nni_tlv(self.0, typ, v);
    }
    fn bytes(&mut self, typ: u32, v: &[u8]) {
        write_bytes_tlv(self.0, typ, v);
    }
    fn raw(&mut self, tlv: &[u8]) {
        self.0.put_slice(tlv);
    }
}

/// Writes `inner` (type, NNI) as a nested element into a stack buffer.
fn nested_nni(typ: u32, v: u64) -> ([u8; 16], usize) {
    let mut a = [0u8; 16];
    let n = nni_tlv_len(typ, v);
    let mut s = &mut a[..];
    write_nni_tlv(&mut s, typ, v);
    (a, n)
}

impl LpPacket {
    /// No field and no fragment (`Default`, an IDLE packet), usable in
    /// `const` and `static` items: the header of a bare network packet.
    pub const IDLE: LpPacket = LpPacket {
        sequence: None,
        frag_index: None,
        frag_count: None,
        pit_token: None,
        nack: None,
        incoming_face_id: None,
        next_hop_face_id: None,
        cache_policy_no_cache: false,
        congestion_mark: None,
        non_discovery: false,
        cc: CcFields::NONE,
        mcc: None,
        fragment: None,
    };

    /// A packet carrying `fragment` and no header (encodes bare).
    pub fn from_fragment(fragment: Bytes) -> Self {
        LpPacket {
            fragment: Some(fragment),
            ..Default::default()
        }
    }

    /// A Nack of the Interest whose wire bytes are `interest`.
    pub fn nack(reason: NackReason, interest: Bytes) -> Self {
        LpPacket {
            nack: Some(reason),
            fragment: Some(interest),
            ..Default::default()
        }
    }

    /// Whether any header field is present.
    pub fn has_header(&self) -> bool {
        self.sequence.is_some()
            || self.frag_index.is_some()
            || self.frag_count.is_some()
            || self.pit_token.is_some()
            || self.nack.is_some()
            || self.incoming_face_id.is_some()
            || self.next_hop_face_id.is_some()
            || self.cache_policy_no_cache
            || self.congestion_mark.is_some()
            || self.non_discovery
            || !self.cc.is_empty()
            || self.mcc.is_some()
    }

    /// No header field and a fragment: can be sent as the bare packet.
    pub fn is_bare(&self) -> bool {
        self.fragment.is_some() && !self.has_header()
    }

    /// No fragment: an IDLE packet (or an MCC feedback message).
    pub fn is_idle(&self) -> bool {
        self.fragment.is_none()
    }

    /// Whether the fragment is one piece of a larger packet.
    pub fn is_fragmented(&self) -> bool {
        self.frag_count.unwrap_or(1) > 1 || self.frag_index.unwrap_or(0) > 0
    }

    /// A copy without the Fragment and Sequence/FragIndex/FragCount: the
    /// network-layer headers, as carried by fragment 0.
    pub fn headers_only(&self) -> LpPacket {
        LpPacket {
            sequence: None,
            frag_index: None,
            frag_count: None,
            fragment: None,
            ..self.clone()
        }
    }

    fn visit<S: Sink>(&self, s: &mut S) {
        if let Some(q) = self.sequence {
            s.bytes(types::LP_SEQUENCE, &q.to_be_bytes());
        }
        if let Some(i) = self.frag_index {
            s.nni(types::LP_FRAG_INDEX, i);
        }
        if let Some(c) = self.frag_count {
            s.nni(types::LP_FRAG_COUNT, c);
        }
        if let Some(t) = &self.pit_token {
            s.bytes(types::LP_PIT_TOKEN, t);
        }
        if let Some(r) = self.nack {
            // Always with a NackReason: python-ndn ignores a Nack without one.
            let (a, n) = nested_nni(types::LP_NACK_REASON, r.code());
            s.bytes(types::LP_NACK, a.get(..n).unwrap_or(&[]));
        }
        if let Some(f) = self.incoming_face_id {
            s.nni(types::LP_INCOMING_FACE_ID, f);
        }
        if let Some(f) = self.next_hop_face_id {
            s.nni(types::LP_NEXT_HOP_FACE_ID, f);
        }
        if self.cache_policy_no_cache {
            let (a, n) = nested_nni(types::LP_CACHE_POLICY_TYPE, 1);
            s.bytes(types::LP_CACHE_POLICY, a.get(..n).unwrap_or(&[]));
        }
        if let Some(m) = self.congestion_mark {
            s.nni(types::LP_CONGESTION_MARK, m);
        }
        if self.non_discovery {
            s.bytes(types::LP_NON_DISCOVERY, &[]);
        }
        for (typ, v) in self.cc.nni_fields() {
            if let Some(v) = v {
                s.nni(typ, v);
            }
        }
        if let Some(m) = &self.mcc {
            s.raw(&m.encode());
        }
    }

    /// Octets of the header fields (without the outer TL and the Fragment).
    pub fn header_len(&self) -> usize {
        let mut m = Measure(0);
        self.visit(&mut m);
        m.0
    }

    /// Octets [`LpPacket::encode_into`] writes.
    pub fn encoded_len(&self) -> usize {
        if self.is_bare() {
            return self.fragment.as_ref().map_or(0, Bytes::len);
        }
        tlv_len(types::LP_PACKET, self.value_len(self.header_len()))
    }

    fn value_len(&self, header_len: usize) -> usize {
        header_len
            + self
                .fragment
                .as_ref()
                .map_or(0, |f| tlv_len(types::LP_FRAGMENT, f.len()))
    }

    /// Appends the packet: the bare fragment when there is no header, else
    /// `LpPacket{fields ascending, Fragment}`. The fragment is copied once.
    pub fn encode_into(&self, out: &mut BytesMut) {
        if let (true, Some(f)) = (self.is_bare(), &self.fragment) {
            out.extend_from_slice(f);
            return;
        }
        let h = self.header_len();
        let v = self.value_len(h);
        out.reserve(tlv_len(types::LP_PACKET, v));
        write_header(out, types::LP_PACKET, v);
        self.visit(&mut Write(out));
        if let Some(f) = &self.fragment {
            write_bytes_tlv(out, types::LP_FRAGMENT, f);
        }
    }

    /// Encodes into new bytes. A bare packet returns the fragment itself
    /// (refcount bump, no copy).
    pub fn encode(&self) -> Bytes {
        if let (true, Some(f)) = (self.is_bare(), &self.fragment) {
            return f.clone();
        }
        let mut out = BytesMut::new();
        self.encode_into(&mut out);
        out.freeze()
    }

    /// Decodes one link-layer unit: an LpPacket, or a bare Interest/Data
    /// which becomes a fragment-only packet.
    ///
    /// # Errors
    /// Malformed TLV, a top-level type other than 5/6/100, header fields out
    /// of order (non-ignorable ones), an unknown non-ignorable field, a field
    /// after Fragment, or an invalid field value.
    pub fn decode(wire: Bytes) -> Result<LpPacket> {
        let outer = Element::parse_exact(&wire)?;
        match outer.typ() {
            types::INTEREST | types::DATA => return Ok(LpPacket::from_fragment(wire)),
            types::LP_PACKET => {}
            found => {
                return Err(TlvError::UnexpectedType {
                    expected: types::LP_PACKET,
                    found,
                })
            }
        }
        let mut lp = LpPacket::default();
        let mut last = 0u32;
        for e in outer.children() {
            let e = e?;
            let typ = e.typ();
            let v = e.value();
            if lp.fragment.is_some() {
                return Err(TlvError::OutOfOrder(typ));
            }
            if typ == types::LP_FRAGMENT {
                if v.is_empty() {
                    return Err(TlvError::InvalidValue(typ));
                }
                lp.fragment = Some(wire.slice_ref(v));
                continue;
            }
            if typ <= last {
                // Repeated or out of order: tolerated (skipped) only when ignorable,
                // as NDNts does; ndn-cxx would reject the whole packet.
                if lp_is_ignorable(typ) {
                    continue;
                }
                return Err(TlvError::OutOfOrder(typ));
            }
            last = typ;
            lp.decode_field(&wire, e)?;
        }
        Ok(lp)
    }

    fn decode_field(&mut self, wire: &Bytes, e: Element<'_>) -> Result<()> {
        let typ = e.typ();
        let v = e.value();
        match typ {
            types::LP_SEQUENCE => {
                let s: [u8; 8] = v.try_into().map_err(|_| TlvError::InvalidValue(typ))?;
                self.sequence = Some(u64::from_be_bytes(s));
            }
            types::LP_FRAG_INDEX => self.frag_index = Some(read_nni(v, typ)?),
            types::LP_FRAG_COUNT => self.frag_count = Some(read_nni(v, typ)?),
            types::LP_PIT_TOKEN => {
                if v.is_empty() || v.len() > MAX_PIT_TOKEN_LEN {
                    return Err(TlvError::InvalidValue(typ));
                }
                self.pit_token = Some(wire.slice_ref(v));
            }
            types::LP_NACK => {
                let mut reason = NackReason::None;
                for c in e.children() {
                    let c = c?;
                    if c.typ() == types::LP_NACK_REASON {
                        reason = NackReason::from_code(read_nni(c.value(), c.typ())?);
                    }
                }
                self.nack = Some(reason);
            }
            types::LP_INCOMING_FACE_ID => self.incoming_face_id = Some(read_nni(v, typ)?),
            types::LP_NEXT_HOP_FACE_ID => self.next_hop_face_id = Some(read_nni(v, typ)?),
            types::LP_CACHE_POLICY => {
                let mut no_cache = false;
                for c in e.children() {
                    let c = c?;
                    if c.typ() == types::LP_CACHE_POLICY_TYPE {
                        no_cache = read_nni(c.value(), c.typ())? == 1;
                    }
                }
                if !no_cache {
                    return Err(TlvError::InvalidValue(typ));
                }
                self.cache_policy_no_cache = true;
            }
            types::LP_CONGESTION_MARK => self.congestion_mark = Some(read_nni(v, typ)?),
            types::LP_NON_DISCOVERY => self.non_discovery = true,
            types::CC_MCC_FEEDBACK => {
                self.mcc = Some(MccFeedback::decode(&wire.slice_ref(e.tlv()))?)
            }
            _ => {
                if !self.cc.decode_field(typ, v)? && !lp_is_ignorable(typ) {
                    // Ack, TxSequence and PrefixAnnouncement land here too:
                    // ignorable by number, and this forwarder does not use them.
                    return Err(TlvError::UnrecognizedCritical(typ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_constant_is_the_default() {
        assert_eq!(LpPacket::IDLE, LpPacket::default());
        assert_eq!(CcFields::NONE, CcFields::default());
    }

    #[test]
    fn nack_reason_codes() {
        for r in [
            NackReason::None,
            NackReason::Congestion,
            NackReason::Duplicate,
            NackReason::NoRoute,
            NackReason::Other(7),
        ] {
            assert_eq!(NackReason::from_code(r.code()), r);
        }
    }

    #[test]
    fn bare_and_idle() {
        let frag = Bytes::from_static(&[0x05, 0x03, 0x07, 0x01, 0x08]);
        let lp = LpPacket::from_fragment(frag.clone());
        assert!(lp.is_bare());
        assert_eq!(lp.encode().as_ptr(), frag.as_ptr());
        assert_eq!(&LpPacket::default().encode()[..], &[0x64, 0x00]);
        let mut marked = lp.clone();
        marked.congestion_mark = Some(0);
        assert!(!marked.is_bare());
        assert_eq!(&marked.encode()[..5], &[0x64, 0x0C, 0xFD, 0x03, 0x40]);
    }

    #[test]
    fn all_fields_ascending() {
        let lp = LpPacket {
            sequence: Some(1),
            frag_index: Some(0),
            frag_count: Some(1),
            pit_token: Some(Bytes::from_static(b"tok")),
            nack: Some(NackReason::NoRoute),
            incoming_face_id: Some(300),
            next_hop_face_id: Some(301),
            cache_policy_no_cache: true,
            congestion_mark: Some(2),
            non_discovery: true,
            cc: CcFields {
                primary_rate_bps: Some(1),
                target_rate_bps: Some(2),
                ..Default::default()
            },
            mcc: None,
            fragment: Some(Bytes::from_static(b"piece")),
        };
        let w = lp.encode();
        let outer = Element::parse_exact(&w).unwrap();
        let tys: Vec<u32> = outer.children().map(|e| e.unwrap().typ()).collect();
        assert_eq!(
            tys,
            [81, 82, 83, 98, 800, 812, 816, 820, 832, 844, 900, 940, 80]
        );
        assert_eq!(LpPacket::decode(w).unwrap(), lp);
    }
}
