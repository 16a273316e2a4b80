//! Data packet, MetaInfo and DigestSha256 signatures.

use core::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};

use crate::element::{
    nni_tlv_len, offset_in, sha256, tlv_len, write_bytes_tlv, write_header, write_nni_tlv, Element,
    Elements,
};
use crate::error::{Result, TlvError};
use crate::name::{Component, Name};
use crate::types::{self, is_critical};
use crate::varnum::read_nni;

/// MetaInfo. All fields optional; an all-`None` MetaInfo is not encoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaInfo {
    /// ContentType (0 = BLOB is the default).
    pub content_type: Option<u64>,
    /// FreshnessPeriod; absent or zero means non-fresh at once.
    pub freshness_period: Option<Duration>,
    /// FinalBlockId (one whole name component).
    pub final_block_id: Option<Component>,
}

impl MetaInfo {
    fn is_empty(&self) -> bool {
        self.content_type.is_none()
            && self.freshness_period.is_none()
            && self.final_block_id.is_none()
    }

    fn value_len(&self) -> usize {
        self.content_type
            .map_or(0, |t| nni_tlv_len(types::CONTENT_TYPE, t))
            + self
                .freshness_period
                .map_or(0, |f| nni_tlv_len(types::FRESHNESS_PERIOD, ms(f)))
            + self
                .final_block_id
                .as_ref()
                .map_or(0, |c| tlv_len(types::FINAL_BLOCK_ID, c.encoded_len()))
    }

    fn encoded_len(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            tlv_len(types::META_INFO, self.value_len())
        }
    }

    fn encode_into<B: BufMut + ?Sized>(&self, out: &mut B) {
        if self.is_empty() {
            return;
        }
        write_header(out, types::META_INFO, self.value_len());
        if let Some(t) = self.content_type {
            write_nni_tlv(out, types::CONTENT_TYPE, t);
        }
        if let Some(f) = self.freshness_period {
            write_nni_tlv(out, types::FRESHNESS_PERIOD, ms(f));
        }
        if let Some(c) = &self.final_block_id {
            write_header(out, types::FINAL_BLOCK_ID, c.encoded_len());
            c.encode_into(out);
        }
    }

    fn decode(wire: &Bytes, value: &[u8]) -> Result<MetaInfo> {
        let mut m = MetaInfo::default();
        let mut last = 0u32;
        for e in Elements::new(value) {
            let e = e?;
            let typ = e.typ();
            let known = matches!(
                typ,
                types::CONTENT_TYPE | types::FRESHNESS_PERIOD | types::FINAL_BLOCK_ID
            );
            if !known || typ <= last {
                if is_critical(typ) {
                    return Err(TlvError::UnrecognizedCritical(typ));
                }
                continue;
            }
            last = typ;
            match typ {
                types::CONTENT_TYPE => m.content_type = Some(read_nni(e.value(), typ)?),
                types::FRESHNESS_PERIOD => {
                    m.freshness_period = Some(Duration::from_millis(read_nni(e.value(), typ)?))
                }
                _ => {
                    let c = Component::decode(&wire.slice_ref(e.value()))
                        .map_err(|_| TlvError::InvalidValue(typ))?;
                    m.final_block_id = Some(c);
                }
            }
        }
        Ok(m)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// SignatureType from a SignatureInfo / InterestSignatureInfo TLV-VALUE.
pub(crate) fn signature_type(sig_info: &[u8]) -> Result<u64> {
    for e in Elements::new(sig_info) {
        let e = e?;
        if e.typ() == types::SIGNATURE_TYPE {
            return read_nni(e.value(), types::SIGNATURE_TYPE);
        }
    }
    Err(TlvError::MissingElement(types::SIGNATURE_TYPE))
}

/// SignatureInfo value of DigestSha256: `SignatureType = 0`.
const DIGEST_SHA256_SIG_INFO: [u8; 3] = [types::SIGNATURE_TYPE as u8, 1, 0];

/// A Data packet.
#[derive(Debug, Clone)]
pub struct Data {
    /// Name.
    pub name: Name,
    /// MetaInfo.
    pub meta: MetaInfo,
    /// Content (empty content is not encoded).
    pub content: Bytes,
    /// SignatureType from SignatureInfo.
    pub sig_type: Option<u64>,
    /// SignatureInfo TLV-VALUE (includes SignatureType).
    pub sig_info: Option<Bytes>,
    /// SignatureValue TLV-VALUE.
    pub sig_value: Option<Bytes>,
    wire: Option<Bytes>,
    /// Signed portion of `wire`: from Name to the end of SignatureInfo.
    signed: (usize, usize),
}

impl PartialEq for Data {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.meta == o.meta
            && self.content == o.content
            && self.sig_type == o.sig_type
            && self.sig_info == o.sig_info
            && self.sig_value == o.sig_value
    }
}
impl Eq for Data {}

fn rank(typ: u32) -> Option<u8> {
    Some(match typ {
        types::META_INFO => 1,
        types::CONTENT => 2,
        types::SIGNATURE_INFO => 3,
        types::SIGNATURE_VALUE => 4,
        _ => return None,
    })
}

impl Data {
    /// An unsigned Data; `encode` signs it with DigestSha256.
    pub fn new(name: Name, content: Bytes) -> Self {
        Data {
            name,
            meta: MetaInfo::default(),
            content,
            sig_type: None,
            sig_info: None,
            sig_value: None,
            wire: None,
            signed: (0, 0),
        }
    }

    /// Decodes a whole Data TLV, keeping `wire`.
    ///
    /// # Errors
    /// Malformed TLV, missing Name/SignatureInfo/SignatureValue, an
    /// unrecognised critical element.
    pub fn decode(wire: Bytes) -> Result<Data> {
        let outer = Element::parse_typed(&wire, types::DATA)?;
        let mut it = Elements::new(outer.value());
        let name_el = match it.next() {
            Some(e) => e?,
            None => return Err(TlvError::MissingElement(types::NAME)),
        };
        if name_el.typ() != types::NAME {
            return Err(TlvError::MissingElement(types::NAME));
        }
        let mut d = Data::new(
            Name::from_value(wire.slice_ref(name_el.value()))?,
            Bytes::new(),
        );
        let signed_start = offset_in(&wire, name_el.tlv());
        let mut signed_end = None;
        let mut last = 0u8;
        for e in it {
            let e = e?;
            let typ = e.typ();
            match rank(typ) {
                Some(r) if r > last => last = r,
                _ => {
                    if is_critical(typ) {
                        return Err(TlvError::UnrecognizedCritical(typ));
                    }
                    continue;
                }
            }
            let v = e.value();
            match typ {
                types::META_INFO => d.meta = MetaInfo::decode(&wire, v)?,
                types::CONTENT => d.content = wire.slice_ref(v),
                types::SIGNATURE_INFO => {
                    d.sig_type = Some(signature_type(v)?);
                    d.sig_info = Some(wire.slice_ref(v));
                    signed_end = Some(offset_in(&wire, e.tlv()) + e.tlv().len());
                }
                _ => d.sig_value = Some(wire.slice_ref(v)),
            }
        }
        let Some(end) = signed_end else {
            return Err(TlvError::MissingElement(types::SIGNATURE_INFO));
        };
        if d.sig_value.is_none() {
            return Err(TlvError::MissingElement(types::SIGNATURE_VALUE));
        }
        d.signed = (signed_start, end);
        d.wire = Some(wire);
        Ok(d)
    }

    /// The bytes this Data was decoded from.
    #[inline]
    pub fn wire(&self) -> Option<&Bytes> {
        self.wire.as_ref()
    }

    fn unsigned_len(&self, sig_info_len: usize) -> usize {
        self.name.encoded_len()
            + self.meta.encoded_len()
            + if self.content.is_empty() {
                0
            } else {
                tlv_len(types::CONTENT, self.content.len())
            }
            + tlv_len(types::SIGNATURE_INFO, sig_info_len)
    }

    fn write_unsigned<B: BufMut + ?Sized>(&self, out: &mut B, sig_info: &[u8]) {
        self.name.encode_into(out);
        self.meta.encode_into(out);
        if !self.content.is_empty() {
            write_bytes_tlv(out, types::CONTENT, &self.content);
        }
        write_bytes_tlv(out, types::SIGNATURE_INFO, sig_info);
    }

    /// Encodes with a DigestSha256 signature into `out` (one pass, one buffer).
    pub fn encode_signed_digest_sha256_into(&self, out: &mut BytesMut) {
        let body =
            self.unsigned_len(DIGEST_SHA256_SIG_INFO.len()) + tlv_len(types::SIGNATURE_VALUE, 32);
        out.reserve(tlv_len(types::DATA, body));
        write_header(out, types::DATA, body);
        let start = out.len();
        self.write_unsigned(out, &DIGEST_SHA256_SIG_INFO);
        let digest = sha256(out.get(start..).unwrap_or(&[]));
        write_bytes_tlv(out, types::SIGNATURE_VALUE, &digest);
    }

    /// Encodes with a DigestSha256 signature.
    pub fn encode_signed_digest_sha256(&self) -> Bytes {
        let mut out = BytesMut::new();
        self.encode_signed_digest_sha256_into(&mut out);
        out.freeze()
    }

    /// Encodes from the public fields, keeping `sig_info`/`sig_value` when
    /// both are set, else signing with DigestSha256.
    pub fn encode_into(&self, out: &mut BytesMut) {
        let (Some(si), Some(sv)) = (&self.sig_info, &self.sig_value) else {
            return self.encode_signed_digest_sha256_into(out);
        };
        let body = self.unsigned_len(si.len()) + tlv_len(types::SIGNATURE_VALUE, sv.len());
        out.reserve(tlv_len(types::DATA, body));
        write_header(out, types::DATA, body);
        self.write_unsigned(out, si);
        write_bytes_tlv(out, types::SIGNATURE_VALUE, sv);
    }

    /// Encodes from the public fields (see [`Data::encode_into`]).
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        self.encode_into(&mut out);
        out.freeze()
    }

    /// Whether the signature is a correct DigestSha256 over the signed portion
    /// (the received bytes when decoded, else the encoded fields).
    pub fn verify_digest_sha256(&self) -> bool {
        let Some(wire) = &self.wire else {
            return match Data::decode(self.encode()) {
                Ok(d) => d.wire.is_some() && d.verify_digest_sha256(),
                Err(_) => false,
            };
        };
        let (Some(sv), Some(signed)) = (&self.sig_value, wire.get(self.signed.0..self.signed.1))
        else {
            return false;
        };
        self.sig_type == Some(types::SIGNATURE_DIGEST_SHA256) && sha256(signed)[..] == sv[..]
    }

    /// SHA-256 of the whole Data TLV (the implicit digest).
    pub fn implicit_digest(&self) -> [u8; 32] {
        match &self.wire {
            Some(w) => sha256(w),
            None => sha256(&self.encode()),
        }
    }

    /// Name plus the implicit digest component.
    pub fn full_name(&self) -> Name {
        self.name
            .append(Component::implicit_digest(self.implicit_digest()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metainfo_order_and_empty_content() {
        // FreshnessPeriod (25) before ContentType (24): ContentType is then out of
        // order and critical -> error.
        let mut w = hex::decode("060f0703080161140619010018010016031b01001700").unwrap();
        w[1] = (w.len() - 2) as u8;
        assert_eq!(
            Data::decode(Bytes::from(w)),
            Err(TlvError::UnrecognizedCritical(24))
        );
        let d = Data::new("/a".parse().unwrap(), Bytes::new());
        let enc = d.encode();
        assert!(!enc.windows(2).any(|p| p == [types::CONTENT as u8, 0]));
        let back = Data::decode(enc).unwrap();
        assert!(back.content.is_empty() && back.verify_digest_sha256());
        assert_eq!(back.meta, MetaInfo::default());
    }

    #[test]
    fn keeps_foreign_signature() {
        let mut d = Data::new("/a".parse().unwrap(), Bytes::from_static(b"c"));
        d.sig_type = Some(3);
        d.sig_info = Some(Bytes::from_static(&[0x1B, 0x01, 0x03]));
        d.sig_value = Some(Bytes::from_static(&[9; 8]));
        let back = Data::decode(d.encode()).unwrap();
        assert_eq!(back, d);
        assert!(!back.verify_digest_sha256());
    }
}
