//! A signed segment's wire in three pieces: the head (Data header, Name,
//! MetaInfo, Content header), the content itself and the tail
//! (SignatureInfo and the DigestSha256 SignatureValue).
//!
//! Kept apart, the content goes out in a vectored write straight from where
//! it lives (a memory-mapped file: the kernel copies from the page cache),
//! so the producer copies no content byte itself; concatenated, the pieces
//! are byte for byte `Data::encode_signed_digest_sha256`. The digest is
//! computed over the pieces without joining them, which lets a publisher
//! sign every segment once when it publishes and keep only 32 bytes each.

use bytes::{BufMut, Bytes, BytesMut};
use icn_tlv::element::{write_bytes_tlv, write_header};
use icn_tlv::{types, Data, MetaInfo, Name};
use sha2::{Digest, Sha256};

/// SignatureInfo of DigestSha256, as a whole TLV.
const SIG_INFO_TLV: [u8; 5] = [
    types::SIGNATURE_INFO as u8,
    3,
    types::SIGNATURE_TYPE as u8,
    1,
    0,
];
/// SignatureValue TLV of a SHA-256 digest.
const TAIL_BYTES: usize = SIG_INFO_TLV.len() + 2 + 32;

/// A DigestSha256 signature value.
pub type Digest32 = [u8; 32];

/// One segment's wire as pieces (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentWire {
    pub head: Bytes,
    pub content: Bytes,
    pub tail: Bytes,
}

impl SegmentWire {
    /// Length of the whole Data.
    pub fn len(&self) -> usize {
        self.head.len() + self.content.len() + self.tail.len()
    }

    /// Never empty (a Data has at least a header and a Name).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The pieces in wire order.
    pub fn into_parts(self) -> [Bytes; 3] {
        [self.head, self.content, self.tail]
    }

    /// The Data as one buffer (a copy).
    pub fn to_bytes(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(self.len());
        out.put_slice(&self.head);
        out.put_slice(&self.content);
        out.put_slice(&self.tail);
        out.freeze()
    }
}

/// Length of a TLV with a value of `len` octets.
fn tlv_len(typ: u32, len: usize) -> usize {
    varnum_len(u64::from(typ)) + varnum_len(len as u64) + len
}

fn varnum_len(v: u64) -> usize {
    match v {
        0..=252 => 1,
        253..=0xFFFF => 3,
        0x1_0000..=0xFFFF_FFFF => 5,
        _ => 9,
    }
}

/// The MetaInfo TLV of `meta` as it is encoded inside a Data (the same
/// for every segment of an object, so it is encoded once).
pub fn meta_tlv(meta: &MetaInfo) -> Bytes {
    let mut d = Data::new(Name::default(), Bytes::new());
    d.meta = meta.clone();
    let wire = d.encode_signed_digest_sha256();
    // Data header, an empty Name (`07 00`), MetaInfo, then the tail.
    let hdr = icn_tlv::varnum::read_varnum(&wire)
        .and_then(|(_, a)| icn_tlv::varnum::read_varnum(&wire[a..]).map(|(_, b)| a + b))
        .unwrap_or(0);
    wire.slice((hdr + 2).min(wire.len())..wire.len().saturating_sub(TAIL_BYTES))
}

/// The head of a Data named `name` with the encoded MetaInfo `meta_tlv`
/// and `content_len` content octets, and where its signed portion starts
/// (after the Data header).
pub fn head(name: &Name, meta_tlv: &[u8], content_len: usize) -> (Bytes, usize) {
    let content_tlv = if content_len == 0 {
        0
    } else {
        tlv_len(types::CONTENT, content_len)
    };
    let body = name.encoded_len() + meta_tlv.len() + content_tlv + TAIL_BYTES;
    // Two headers of at most 9 octets each, the Name and the MetaInfo.
    let mut out = BytesMut::with_capacity(18 + name.encoded_len() + meta_tlv.len());
    write_header(&mut out, types::DATA, body);
    let signed_from = out.len();
    name.encode_into(&mut out);
    out.put_slice(meta_tlv);
    if content_len > 0 {
        write_header(&mut out, types::CONTENT, content_len);
    }
    (out.freeze(), signed_from)
}

/// The DigestSha256 of a segment: SHA-256 over the head's signed part,
/// the content and the SignatureInfo, read in place.
pub fn digest(signed_head: &[u8], content: &[u8]) -> Digest32 {
    let mut h = Sha256::new();
    h.update(signed_head);
    h.update(content);
    h.update(SIG_INFO_TLV);
    h.finalize().into()
}

/// The tail carrying `digest`.
pub fn tail(digest: &Digest32) -> Bytes {
    let mut out = BytesMut::with_capacity(TAIL_BYTES);
    out.put_slice(&SIG_INFO_TLV);
    write_bytes_tlv(&mut out, types::SIGNATURE_VALUE, digest);
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_tlv::Component;

    fn pieces(name: &Name, meta: &MetaInfo, content: Bytes) -> SegmentWire {
        let (head, from) = head(name, &meta_tlv(meta), content.len());
        let d = digest(&head[from..], &content);
        SegmentWire {
            tail: tail(&d),
            head,
            content,
        }
    }

    /// The pieces joined are the library's own encoding, for empty, small
    /// and large content (one- and three-octet lengths) and a long name.
    #[test]
    fn pieces_are_the_signed_encoding() {
        let long: Name = "/a/b/c".parse().unwrap();
        let mut long_name = long.clone();
        for i in 0..40u64 {
            long_name = long_name.append(Component::segment(i));
        }
        for name in [long, long_name] {
            for size in [0usize, 1, 200, 252, 253, 8000, 60_000] {
                let name = name.append(Component::segment(size as u64));
                let meta = MetaInfo {
                    freshness_period: Some(cc_core::Duration::from_secs(10)),
                    final_block_id: Some(Component::segment(99)),
                    ..MetaInfo::default()
                };
                let content = Bytes::from((0..size).map(|i| i as u8).collect::<Vec<u8>>());
                let mut d = Data::new(name.clone(), content.clone());
                d.meta = meta.clone();
                let want = d.encode_signed_digest_sha256();
                let got = pieces(&name, &meta, content);
                assert_eq!(got.to_bytes(), want, "size {size}");
                assert_eq!(got.len(), want.len());
                let back = Data::decode(got.to_bytes()).unwrap();
                assert!(back.verify_digest_sha256());
            }
        }
    }
}
