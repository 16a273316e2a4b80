//! Minimal TLV reading/writing for the management TLVs.
//!
//! The management structures are small, cold-path TLVs nested several levels
//! deep; a tiny reader over `Bytes` (zero-copy sub-slices) and a few writer
//! helpers keep their codecs independent of the packet codec's internals.

use bytes::{BufMut, Bytes, BytesMut};
use icn_tlv::Name;

use super::MgmtError;

/// Appends a VAR-NUMBER in its shortest form.
pub(crate) fn put_varnum(out: &mut BytesMut, v: u64) {
    if v < 253 {
        out.put_u8(v as u8);
    } else if v <= 0xFFFF {
        out.put_u8(0xFD);
        out.put_u16(v as u16);
    } else if v <= 0xFFFF_FFFF {
        out.put_u8(0xFE);
        out.put_u32(v as u32);
    } else {
        out.put_u8(0xFF);
        out.put_u64(v);
    }
}

/// Length of the shortest NonNegativeInteger encoding of `v`.
pub(crate) fn nni_len(v: u64) -> usize {
    if v <= 0xFF {
        1
    } else if v <= 0xFFFF {
        2
    } else if v <= 0xFFFF_FFFF {
        4
    } else {
        8
    }
}

/// Appends a whole TLV element with an opaque value.
pub(crate) fn put_tlv(out: &mut BytesMut, typ: u32, value: &[u8]) {
    put_varnum(out, u64::from(typ));
    put_varnum(out, value.len() as u64);
    out.put_slice(value);
}

/// Appends a NonNegativeInteger element.
pub(crate) fn put_nni(out: &mut BytesMut, typ: u32, v: u64) {
    put_varnum(out, u64::from(typ));
    let len = nni_len(v);
    put_varnum(out, len as u64);
    match len {
        1 => out.put_u8(v as u8),
        2 => out.put_u16(v as u16),
        4 => out.put_u32(v as u32),
        _ => out.put_u64(v),
    }
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
    Ok(match value.len() {
        1 => u64::from(value[0]),
        2 => u64::from(u16::from_be_bytes([value[0], value[1]])),
        4 => u64::from(u32::from_be_bytes([value[0], value[1], value[2], value[3]])),
        8 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(value);
            u64::from_be_bytes(b)
        }
        _ => return Err(MgmtError::BadNni),
    })
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

    fn varnum(&mut self) -> Result<u64, MgmtError> {
        let b = &self.buf[self.pos..];
        let first = *b.first().ok_or(MgmtError::Truncated)?;
        let (v, n) = match first {
            0..=252 => (u64::from(first), 1),
            0xFD if b.len() >= 3 => (u64::from(u16::from_be_bytes([b[1], b[2]])), 3),
            0xFE if b.len() >= 5 => (u64::from(u32::from_be_bytes([b[1], b[2], b[3], b[4]])), 5),
            0xFF if b.len() >= 9 => {
                let mut a = [0u8; 8];
                a.copy_from_slice(&b[1..9]);
                (u64::from_be_bytes(a), 9)
            }
            _ => return Err(MgmtError::Truncated),
        };
        self.pos += n;
        Ok(v)
    }

    /// Next element, `None` at the end; errors on a truncated element.
    pub(crate) fn next_element(&mut self) -> Result<Option<(u32, Bytes)>, MgmtError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let typ = self.varnum()?;
        let len = self.varnum()?;
        let typ = u32::try_from(typ).map_err(|_| MgmtError::Truncated)?;
        let len = usize::try_from(len).map_err(|_| MgmtError::Truncated)?;
        if typ == 0 || self.buf.len() - self.pos < len {
            return Err(MgmtError::Truncated);
        }
        let v = self.buf.slice(self.pos..self.pos + len);
        self.pos += len;
        Ok(Some((typ, v)))
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
