//! Interest packet (NDN packet format v0.3 §Interest).
//!
//! Decoding keeps the received bytes (`wire`) and slices of them; a forwarder
//! passes `wire` on unchanged, and [`Interest::with_nonce`] /
//! [`Interest::with_hop_limit`] splice one element into a copy instead of
//! re-encoding the packet.

use core::ops::Range;
use core::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use sha2::Digest;

use crate::data::Data;
use crate::element::{
    hash_tlv, nni_tlv_len, offset_in, tlv_len, write_bytes_tlv, write_header, write_nni_tlv,
    Element,
};
use crate::error::{Result, TlvError};
use crate::name::{Component, Name};
use crate::types::{self, is_critical};
use crate::varnum::read_nni;

/// InterestLifetime when the element is absent.
pub const DEFAULT_INTEREST_LIFETIME: Duration = Duration::from_millis(4000);

/// Where in `wire` a Nonce/HopLimit sits (or would be inserted: empty range),
/// and where the signed/digested tail starts.
#[derive(Debug, Clone, Default)]
struct Layout {
    value_start: usize,
    nonce: Range<usize>,
    hop_limit: Range<usize>,
    params_start: Option<usize>,
    sig_value_start: Option<usize>,
}

/// An Interest. Public fields are the packet's meaning; `encode` builds from
/// them. `wire()` is the bytes it was decoded from and does not follow later
/// edits of the fields.
#[derive(Debug, Clone)]
pub struct Interest {
    /// Name (at least one component on the wire).
    pub name: Name,
    /// CanBePrefix present.
    pub can_be_prefix: bool,
    /// MustBeFresh present.
    pub must_be_fresh: bool,
    /// ForwardingHint names (empty = absent).
    pub forwarding_hint: Vec<Name>,
    /// Nonce (4 octets, big-endian).
    pub nonce: Option<u32>,
    /// InterestLifetime; `None` means the 4000 ms default.
    pub lifetime: Option<Duration>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters TLV-VALUE.
    pub app_params: Option<Bytes>,
    /// InterestSignatureInfo TLV-VALUE.
    pub sig_info: Option<Bytes>,
    /// InterestSignatureValue TLV-VALUE.
    pub sig_value: Option<Bytes>,
    wire: Option<Bytes>,
    layout: Layout,
}

impl PartialEq for Interest {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.can_be_prefix == o.can_be_prefix
            && self.must_be_fresh == o.must_be_fresh
            && self.forwarding_hint == o.forwarding_hint
            && self.nonce == o.nonce
            && self.lifetime == o.lifetime
            && self.hop_limit == o.hop_limit
            && self.app_params == o.app_params
            && self.sig_info == o.sig_info
            && self.sig_value == o.sig_value
    }
}
impl Eq for Interest {}

/// Position of each recognised element in the specified order.
fn rank(typ: u32) -> Option<u8> {
    Some(match typ {
        types::NAME => 0,
        types::CAN_BE_PREFIX => 1,
        types::MUST_BE_FRESH => 2,
        types::FORWARDING_HINT => 3,
        types::NONCE => 4,
        types::INTEREST_LIFETIME => 5,
        types::HOP_LIMIT => 6,
        types::APPLICATION_PARAMETERS => 7,
        types::INTEREST_SIGNATURE_INFO => 8,
        types::INTEREST_SIGNATURE_VALUE => 9,
        _ => return None,
    })
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Interest {
    /// An Interest for `name` with every optional field absent.
    pub fn new(name: Name) -> Self {
        Interest {
            name,
            can_be_prefix: false,
            must_be_fresh: false,
            forwarding_hint: Vec::new(),
            nonce: None,
            lifetime: None,
            hop_limit: None,
            app_params: None,
            sig_info: None,
            sig_value: None,
            wire: None,
            layout: Layout::default(),
        }
    }

    /// Decodes a whole Interest TLV, keeping `wire`.
    ///
    /// Unrecognised or out-of-order elements are skipped when non-critical and
    /// rejected when critical (types <= 31 or odd).
    ///
    /// # Errors
    /// Any malformation; see [`TlvError`].
    pub fn decode(wire: Bytes) -> Result<Interest> {
        let outer = Element::parse_typed(&wire, types::INTEREST)?;
        let value = outer.value();
        let mut it = crate::element::Elements::new(value);
        let name_el = match it.next() {
            Some(e) => e?,
            None => return Err(TlvError::MissingElement(types::NAME)),
        };
        if name_el.typ() != types::NAME {
            return Err(TlvError::MissingElement(types::NAME));
        }
        let name = Name::from_value(wire.slice_ref(name_el.value()))?;
        if name.is_empty() {
            return Err(TlvError::InvalidValue(types::NAME));
        }
        let mut i = Interest::new(name);
        let after_name = offset_in(&wire, name_el.tlv()) + name_el.tlv().len();
        let mut layout = Layout {
            value_start: offset_in(&wire, value),
            nonce: after_name..after_name,
            hop_limit: after_name..after_name,
            params_start: None,
            sig_value_start: None,
        };
        let mut last = 0u8;
        for e in it {
            let e = e?;
            let typ = e.typ();
            let start = offset_in(&wire, e.tlv());
            let end = start + e.tlv().len();
            let accepted = match rank(typ) {
                Some(r) if r > last => match typ {
                    types::INTEREST_SIGNATURE_INFO => i.app_params.is_some(),
                    types::INTEREST_SIGNATURE_VALUE => i.sig_info.is_some(),
                    _ => true,
                },
                _ => false,
            };
            if !accepted {
                if is_critical(typ) {
                    return Err(TlvError::UnrecognizedCritical(typ));
                }
                continue;
            }
            let r = rank(typ).unwrap_or(last);
            last = r;
            let v = e.value();
            match typ {
                types::CAN_BE_PREFIX => i.can_be_prefix = true,
                types::MUST_BE_FRESH => i.must_be_fresh = true,
                types::FORWARDING_HINT => {
                    for d in e.children() {
                        let d = d?;
                        if d.typ() != types::NAME {
                            return Err(TlvError::InvalidValue(types::FORWARDING_HINT));
                        }
                        i.forwarding_hint
                            .push(Name::from_value(wire.slice_ref(d.value()))?);
                    }
                    if i.forwarding_hint.is_empty() {
                        return Err(TlvError::InvalidValue(types::FORWARDING_HINT));
                    }
                }
                types::NONCE => {
                    let n: [u8; 4] = v.try_into().map_err(|_| TlvError::InvalidValue(typ))?;
                    i.nonce = Some(u32::from_be_bytes(n));
                    layout.nonce = start..end;
                }
                types::INTEREST_LIFETIME => {
                    i.lifetime = Some(Duration::from_millis(read_nni(v, typ)?));
                }
                types::HOP_LIMIT => {
                    let [h] = *v else {
                        return Err(TlvError::InvalidValue(typ));
                    };
                    i.hop_limit = Some(h);
                    layout.hop_limit = start..end;
                }
                types::APPLICATION_PARAMETERS => {
                    i.app_params = Some(wire.slice_ref(v));
                    layout.params_start = Some(start);
                }
                types::INTEREST_SIGNATURE_INFO => i.sig_info = Some(wire.slice_ref(v)),
                _ => {
                    i.sig_value = Some(wire.slice_ref(v));
                    layout.sig_value_start = Some(start);
                }
            }
            // Insertion points stay just after the last element that precedes them.
            if r < 4 {
                layout.nonce = end..end;
            }
            if r < 6 && layout.hop_limit.is_empty() {
                layout.hop_limit = end..end;
            }
        }
        i.layout = layout;
        i.wire = Some(wire);
        Ok(i)
    }

    /// The bytes this Interest was decoded from.
    #[inline]
    pub fn wire(&self) -> Option<&Bytes> {
        self.wire.as_ref()
    }

    /// InterestLifetime, or 4000 ms when absent.
    #[inline]
    pub fn lifetime_or_default(&self) -> Duration {
        self.lifetime.unwrap_or(DEFAULT_INTEREST_LIFETIME)
    }

    fn tail_len(&self) -> usize {
        let mut n = 0;
        if let Some(p) = &self.app_params {
            n += tlv_len(types::APPLICATION_PARAMETERS, p.len());
            if let Some(s) = &self.sig_info {
                n += tlv_len(types::INTEREST_SIGNATURE_INFO, s.len());
                if let Some(v) = &self.sig_value {
                    n += tlv_len(types::INTEREST_SIGNATURE_VALUE, v.len());
                }
            }
        }
        n
    }

    fn write_tail<B: BufMut + ?Sized>(&self, out: &mut B) {
        if let Some(p) = &self.app_params {
            write_bytes_tlv(out, types::APPLICATION_PARAMETERS, p);
            if let Some(s) = &self.sig_info {
                write_bytes_tlv(out, types::INTEREST_SIGNATURE_INFO, s);
                if let Some(v) = &self.sig_value {
                    write_bytes_tlv(out, types::INTEREST_SIGNATURE_VALUE, v);
                }
            }
        }
    }

    /// SHA-256 over ApplicationParameters and everything after it.
    fn params_digest(&self) -> Option<[u8; 32]> {
        let p = self.app_params.as_ref()?;
        let mut h = sha2::Sha256::new();
        hash_tlv(&mut h, types::APPLICATION_PARAMETERS, p);
        if let Some(s) = &self.sig_info {
            hash_tlv(&mut h, types::INTEREST_SIGNATURE_INFO, s);
            if let Some(v) = &self.sig_value {
                hash_tlv(&mut h, types::INTEREST_SIGNATURE_VALUE, v);
            }
        }
        Some(h.finalize().into())
    }

    /// (offset of the params-digest component value inside the name value, or
    /// `None` to append), and the encoded name value length.
    fn name_plan(&self) -> (Option<usize>, usize) {
        if self.app_params.is_none() {
            return (None, self.name.value().len());
        }
        let base = &self.name.value()[..];
        for (typ, v) in self.name.raw_components() {
            if typ == types::PARAMETERS_SHA256_DIGEST {
                return (Some(offset_in(base, v)), base.len());
            }
        }
        (
            None,
            base.len() + tlv_len(types::PARAMETERS_SHA256_DIGEST, 32),
        )
    }

    fn body_len(&self, name_value_len: usize) -> usize {
        let mut n = tlv_len(types::NAME, name_value_len);
        n += usize::from(self.can_be_prefix) * 2 + usize::from(self.must_be_fresh) * 2;
        if !self.forwarding_hint.is_empty() {
            let fh: usize = self.forwarding_hint.iter().map(Name::encoded_len).sum();
            n += tlv_len(types::FORWARDING_HINT, fh);
        }
        n += self.nonce.map_or(0, |_| 6);
        n += self
            .lifetime
            .map_or(0, |d| nni_tlv_len(types::INTEREST_LIFETIME, duration_ms(d)));
        n += self.hop_limit.map_or(0, |_| 3);
        n + self.tail_len()
    }

    /// Octets [`Interest::encode_into`] writes.
    pub fn encoded_len(&self) -> usize {
        tlv_len(types::INTEREST, self.body_len(self.name_plan().1))
    }

    /// Encodes from the public fields into `out`. When `app_params` is set,
    /// the name's ParametersSha256DigestComponent is filled with the correct
    /// digest (replaced in place, or appended when absent).
    pub fn encode_into(&self, out: &mut BytesMut) {
        let (digest_at, name_len) = self.name_plan();
        let body = self.body_len(name_len);
        out.reserve(tlv_len(types::INTEREST, body));
        write_header(out, types::INTEREST, body);
        write_header(out, types::NAME, name_len);
        let nv = &self.name.value()[..];
        match (self.params_digest(), digest_at) {
            (Some(d), Some(at)) => {
                out.put_slice(nv.get(..at).unwrap_or(nv));
                out.put_slice(&d);
                out.put_slice(nv.get(at + 32..).unwrap_or(&[]));
            }
            (Some(d), None) => {
                out.put_slice(nv);
                write_bytes_tlv(out, types::PARAMETERS_SHA256_DIGEST, &d);
            }
            (None, _) => out.put_slice(nv),
        }
        if self.can_be_prefix {
            write_header(out, types::CAN_BE_PREFIX, 0);
        }
        if self.must_be_fresh {
            write_header(out, types::MUST_BE_FRESH, 0);
        }
        if !self.forwarding_hint.is_empty() {
            let fh: usize = self.forwarding_hint.iter().map(Name::encoded_len).sum();
            write_header(out, types::FORWARDING_HINT, fh);
            for n in &self.forwarding_hint {
                n.encode_into(out);
            }
        }
        if let Some(n) = self.nonce {
            write_bytes_tlv(out, types::NONCE, &n.to_be_bytes());
        }
        if let Some(d) = self.lifetime {
            write_nni_tlv(out, types::INTEREST_LIFETIME, duration_ms(d));
        }
        if let Some(h) = self.hop_limit {
            write_bytes_tlv(out, types::HOP_LIMIT, &[h]);
        }
        self.write_tail(out);
    }

    /// Encodes from the public fields into new bytes.
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        self.encode_into(&mut out);
        out.freeze()
    }

    /// Copies `wire` with `range` replaced by `repl`, fixing the outer length.
    fn splice(&self, wire: &Bytes, range: Range<usize>, repl: &[u8]) -> Bytes {
        let vs = self.layout.value_start;
        let (Some(before), Some(after)) = (wire.get(vs..range.start), wire.get(range.end..)) else {
            return wire.clone();
        };
        let body = before.len() + repl.len() + after.len();
        let mut out = BytesMut::with_capacity(tlv_len(types::INTEREST, body));
        write_header(&mut out, types::INTEREST, body);
        out.put_slice(before);
        out.put_slice(repl);
        out.put_slice(after);
        out.freeze()
    }

    /// The wire form with Nonce set to `nonce`; everything else byte-identical.
    /// Copies once; re-encodes from fields only for a locally built Interest.
    pub fn with_nonce(&self, nonce: u32) -> Bytes {
        match &self.wire {
            Some(w) => {
                let mut t = [types::NONCE as u8, 4, 0, 0, 0, 0];
                t[2..].copy_from_slice(&nonce.to_be_bytes());
                self.splice(w, self.layout.nonce.clone(), &t)
            }
            None => {
                let mut i = self.clone();
                i.nonce = Some(nonce);
                i.encode()
            }
        }
    }

    /// The wire form with HopLimit set to `hop`; everything else byte-identical.
    pub fn with_hop_limit(&self, hop: u8) -> Bytes {
        match &self.wire {
            Some(w) => self.splice(
                w,
                self.layout.hop_limit.clone(),
                &[types::HOP_LIMIT as u8, 1, hop],
            ),
            None => {
                let mut i = self.clone();
                i.hop_limit = Some(hop);
                i.encode()
            }
        }
    }

    /// Whether `data` satisfies this Interest by name: exact name, prefix when
    /// CanBePrefix, or full name with implicit digest. Freshness is not checked.
    pub fn matches_data(&self, data: &Data) -> bool {
        let n = &self.name;
        let dn = &data.name;
        if n.len() <= dn.len() {
            return if self.can_be_prefix {
                n.is_prefix_of(dn)
            } else {
                n == dn
            };
        }
        // Only the full name (data name + implicit digest) is one longer.
        if n.len() != dn.len() + 1 || !dn.is_prefix_of(n) {
            return false;
        }
        match n.last().and_then(|c| c.as_implicit_digest()) {
            Some(d) => d == data.implicit_digest(),
            None => false,
        }
    }

    /// SignatureType inside InterestSignatureInfo.
    pub fn sig_type(&self) -> Option<u64> {
        crate::data::signature_type(self.sig_info.as_ref()?).ok()
    }

    /// Whether the ParametersSha256DigestComponent matches the received bytes
    /// (true when there are no ApplicationParameters and no such component,
    /// and for locally built Interests, whose digest `encode` computes).
    pub fn params_digest_ok(&self) -> bool {
        let comp = self
            .name
            .raw_components()
            .find(|(t, _)| *t == types::PARAMETERS_SHA256_DIGEST)
            .map(|(_, v)| v);
        let Some(wire) = &self.wire else {
            return true;
        };
        match (self.layout.params_start, comp) {
            (None, None) => true,
            (Some(p), Some(c)) => match wire.get(p..) {
                Some(tail) => crate::element::sha256(tail)[..] == *c,
                None => false,
            },
            _ => false,
        }
    }

    /// Verifies a v0.3 signed Interest whose signature is DigestSha256:
    /// SHA-256 over the name components except params-sha256, then
    /// ApplicationParameters up to InterestSignatureValue. Needs `wire`.
    pub fn verify_digest_sha256(&self) -> bool {
        let Some(sv) = &self.sig_value else {
            return false;
        };
        if self.sig_type() != Some(types::SIGNATURE_DIGEST_SHA256) {
            return false;
        }
        let Some(signed) = self.signed_portion() else {
            return false;
        };
        crate::element::sha256(&signed)[..] == sv[..]
    }

    /// The octets a v0.3 signed Interest's signature covers: the name
    /// components except params-sha256 (as TLVs), then ApplicationParameters
    /// up to InterestSignatureValue, as received. `None` without `wire`, or
    /// without ApplicationParameters and InterestSignatureValue.
    pub fn signed_portion(&self) -> Option<Vec<u8>> {
        let wire = self.wire.as_ref()?;
        let (p, s) = (self.layout.params_start?, self.layout.sig_value_start?);
        let tail = wire.get(p..s)?;
        let mut out = Vec::with_capacity(self.name.value().len() + tail.len());
        for (typ, v) in self.name.raw_components() {
            if typ != types::PARAMETERS_SHA256_DIGEST {
                crate::element::write_bytes_tlv(&mut out, typ, v);
            }
        }
        out.extend_from_slice(tail);
        Some(out)
    }

    /// The name with a fresh params-sha256 component as `encode` would write it.
    pub fn encoded_name(&self) -> Name {
        match self.params_digest() {
            None => self.name.clone(),
            Some(d) => {
                let comps = self.name.components().map(|c| {
                    if c.typ() == types::PARAMETERS_SHA256_DIGEST {
                        Component::params_digest(d)
                    } else {
                        c
                    }
                });
                let n = Name::from_components(comps);
                if n.raw_components()
                    .any(|(t, _)| t == types::PARAMETERS_SHA256_DIGEST)
                {
                    n
                } else {
                    n.append(Component::params_digest(d))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Bytes {
        Bytes::from(hex::decode(s).unwrap())
    }

    #[test]
    fn defaults_and_unknown_elements() {
        // Name /a, unknown non-critical element 0x80 (128), Nonce.
        let i = Interest::decode(hex("050e0703080161800100 0a0401020304"
            .replace(' ', "")
            .as_str()))
        .unwrap();
        assert_eq!(i.nonce, Some(0x0102_0304));
        assert_eq!(i.lifetime_or_default(), DEFAULT_INTEREST_LIFETIME);
        // HopLimit after Nonce is fine; Nonce after HopLimit is out of order and
        // critical (10 <= 31) -> error.
        assert_eq!(
            Interest::decode(hex("050e07030801612201050a0401020304")),
            Err(TlvError::UnrecognizedCritical(10))
        );
        // Out-of-order HopLimit (non-critical 34) after ApplicationParameters is skipped.
        let mut built = Interest::new("/a".parse().unwrap());
        built.app_params = Some(Bytes::from_static(b"p"));
        let mut w = built.encode().to_vec();
        w.extend_from_slice(&[0x22, 0x01, 0x09]);
        w[1] += 3;
        let d = Interest::decode(Bytes::from(w)).unwrap();
        assert_eq!(d.hop_limit, None);
        assert!(d.app_params.is_some());
    }

    #[test]
    fn matching() {
        let data = Data::new("/a/b".parse().unwrap(), Bytes::from_static(b"x"));
        let mut i = Interest::new("/a".parse().unwrap());
        assert!(!i.matches_data(&data));
        i.can_be_prefix = true;
        assert!(i.matches_data(&data));
        let exact = Interest::new("/a/b".parse().unwrap());
        assert!(exact.matches_data(&data));
        let wrong = Interest::new(
            "/a/b"
                .parse::<Name>()
                .unwrap()
                .append(Component::implicit_digest([0; 32])),
        );
        assert!(!wrong.matches_data(&data));
        let right = Interest::new(data.full_name());
        assert!(right.matches_data(&data));
        let longer = Interest::new("/a/b/c".parse().unwrap());
        assert!(!longer.matches_data(&data));
    }
}
