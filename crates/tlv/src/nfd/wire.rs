//! Minimal TLV reading/writing for the management TLVs.
//!
//! The management structures are small, cold-path TLVs nested several levels
//! deep; a tiny reader over `Bytes` (zero-copy sub-slices) and a few writer
//! helpers, all on icn_tlv's VAR-NUMBER/element primitives, with errors in
//! [`MgmtError`] terms.

use crate::element::Element;
use crate::Name;
use bytes::{Bytes, BytesMut};

use super::MgmtError;

/// Appends a whole TLV element with an opaque value.
pub(crate) use crate::element::write_bytes_tlv as put_tlv;
/// Appends a NonNegativeInteger element (shortest encoding).
pub(crate) use crate::element::write_nni_tlv as put_nni;

/// The count named `name` in a (name, count) list, 0 if absent.
pub(crate) fn named_count(list: &[(String, u64)], name: &str) -> u64 {
    list.iter().find(|(n, _)| n == name).map_or(0, |(_, c)| *c)
}

/// Appends an optional NonNegativeInteger element.
pub(crate) fn put_opt_nni(out: &mut BytesMut, typ: u32, v: Option<u64>) {
    if let Some(v) = v {
        put_nni(out, typ, v);
    }
}

/// Appends a Name TLV.
pub(crate) fn put_name(out: &mut BytesMut, name: &Name) {
    name.encode_into(out);
}

/// Appends `typ` wrapping an already encoded body.
pub(crate) fn put_nested(out: &mut BytesMut, typ: u32, body: &BytesMut) {
    put_tlv(out, typ, body);
}

/// Decodes a NonNegativeInteger value (1, 2, 4 or 8 octets).
pub(crate) fn nni(value: &[u8]) -> Result<u64, MgmtError> {
    crate::varnum::read_nni(value, 0).map_err(|_| MgmtError::BadNni)
}

/// Decodes a UTF-8 string value.
pub(crate) fn utf8(value: &Bytes) -> Result<String, MgmtError> {
    core::str::from_utf8(value)
        .map(str::to_owned)
        .map_err(|_| MgmtError::BadUtf8)
}

/// Decodes a Name from its TLV-VALUE.
pub(crate) fn name(value: &Bytes) -> Result<Name, MgmtError> {
    Name::from_value(value.clone()).map_err(|_| MgmtError::BadName)
}

/// Iterates over the TLV elements of a buffer, yielding (type, value).
pub(crate) struct TlvReader {
    buf: Bytes,
    pos: usize,
}

impl TlvReader {
    pub(crate) fn new(buf: Bytes) -> Self {
        TlvReader { buf, pos: 0 }
    }

    /// Next element, `None` at the end; errors on a truncated element (or a
    /// TLV-TYPE of 0 or above 2^32-1).
    pub(crate) fn next_element(&mut self) -> Result<Option<(u32, Bytes)>, MgmtError> {
        let Some(rest) = self.buf.get(self.pos..).filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        let (e, _) = Element::parse(rest).map_err(|_| MgmtError::Truncated)?;
        let v = self.buf.slice_ref(e.value());
        self.pos += e.tlv().len();
        Ok(Some((e.typ(), v)))
    }
}

/// Decodes a buffer that must hold exactly one TLV of type `typ`; returns its value.
pub(crate) fn single(buf: Bytes, typ: u32) -> Result<Bytes, MgmtError> {
    let mut r = TlvReader::new(buf);
    match r.next_element()? {
        Some((t, v)) if t == typ => {
            if r.next_element()?.is_some() {
                return Err(MgmtError::TrailingBytes);
            }
            Ok(v)
        }
        Some((t, _)) => Err(MgmtError::UnexpectedType(t)),
        None => Err(MgmtError::Truncated),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nni_roundtrip_all_widths() {
        for v in [0u64, 255, 256, 65535, 65536, 0xFFFF_FFFF, 0x1_0000_0000] {
            let mut out = BytesMut::new();
            put_nni(&mut out, 105, v);
            let mut r = TlvReader::new(out.freeze());
            let (t, val) = r.next_element().unwrap().unwrap();
            assert_eq!(t, 105);
            assert_eq!(nni(&val).unwrap(), v);
        }
        assert!(nni(&[1, 2, 3]).is_err());
    }

    #[test]
    fn varnum_forms() {
        let mut out = BytesMut::new();
        put_tlv(&mut out, 800, &[0u8; 300]);
        assert_eq!(&out[..6], &[0xFD, 0x03, 0x20, 0xFD, 0x01, 0x2C]);
        let mut r = TlvReader::new(out.freeze());
        let (t, v) = r.next_element().unwrap().unwrap();
        assert_eq!((t, v.len()), (800, 300));
    }

    #[test]
    fn truncated_is_error() {
        let mut r = TlvReader::new(Bytes::from_static(&[0x07, 0x05, 0x08]));
        assert!(r.next_element().is_err());
    }
}
