//! The borrowed level: one TLV element over a byte slice.
//!
//! `Element::parse` checks the TLV-TYPE range and that the TLV-LENGTH fits the
//! input; after that every accessor is infallible and cannot panic. The owned
//! packet types build on this and turn value slices into `Bytes` with
//! `Bytes::slice_ref` (a refcount bump, no copy).

use bytes::BufMut;

use crate::error::{Result, TlvError};
use crate::varnum::{nni_len, read_varnum, varnum_len, write_nni, write_varnum};

/// One TLV element borrowed from a wire buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element<'a> {
    typ: u32,
    value: &'a [u8],
    tlv: &'a [u8],
    minimal: bool,
}

impl<'a> Element<'a> {
    /// Parses the element at the front of `buf`; returns it and the rest.
    ///
    /// # Errors
    /// [`TlvError::UnexpectedEnd`] on truncation, [`TlvError::TypeOutOfRange`]
    /// for TLV-TYPE 0 or above 2^32-1, [`TlvError::LengthOverflow`] when the
    /// length does not fit `usize`.
    #[inline]
    pub fn parse(buf: &'a [u8]) -> Result<(Element<'a>, &'a [u8])> {
        let (typ, tn) = read_varnum(buf)?;
        if typ == 0 || typ > u64::from(u32::MAX) {
            return Err(TlvError::TypeOutOfRange(typ));
        }
        let after_t = buf.get(tn..).ok_or(TlvError::UnexpectedEnd)?;
        let (len, ln) = read_varnum(after_t)?;
        let len = usize::try_from(len).map_err(|_| TlvError::LengthOverflow)?;
        let start = tn + ln;
        let end = start.checked_add(len).ok_or(TlvError::LengthOverflow)?;
        let value = buf.get(start..end).ok_or(TlvError::UnexpectedEnd)?;
        let tlv = buf.get(..end).ok_or(TlvError::UnexpectedEnd)?;
        let rest = buf.get(end..).ok_or(TlvError::UnexpectedEnd)?;
        let minimal = varnum_len(typ) == tn && varnum_len(len as u64) == ln;
        Ok((
            Element {
                typ: typ as u32,
                value,
                tlv,
                minimal,
            },
            rest,
        ))
    }

    /// Parses `buf` as exactly one element.
    ///
    /// # Errors
    /// As [`Element::parse`], plus [`TlvError::TrailingBytes`].
    #[inline]
    pub fn parse_exact(buf: &'a [u8]) -> Result<Element<'a>> {
        let (e, rest) = Self::parse(buf)?;
        if rest.is_empty() {
            Ok(e)
        } else {
            Err(TlvError::TrailingBytes)
        }
    }

    /// Parses one element of the given type occupying all of `buf`.
    ///
    /// # Errors
    /// As [`Element::parse_exact`], plus [`TlvError::UnexpectedType`].
    #[inline]
    pub fn parse_typed(buf: &'a [u8], expected: u32) -> Result<Element<'a>> {
        let e = Self::parse_exact(buf)?;
        if e.typ != expected {
            return Err(TlvError::UnexpectedType {
                expected,
                found: e.typ,
            });
        }
        Ok(e)
    }

    /// TLV-TYPE.
    #[inline]
    pub fn typ(&self) -> u32 {
        self.typ
    }

    /// TLV-VALUE.
    #[inline]
    pub fn value(&self) -> &'a [u8] {
        self.value
    }

    /// The whole element: TLV-TYPE, TLV-LENGTH and TLV-VALUE.
    #[inline]
    pub fn tlv(&self) -> &'a [u8] {
        self.tlv
    }

    /// Whether TLV-TYPE and TLV-LENGTH used their shortest encodings.
    #[inline]
    pub fn header_is_minimal(&self) -> bool {
        self.minimal
    }

    /// Iterates over the elements nested in this element's value.
    #[inline]
    pub fn children(&self) -> Elements<'a> {
        Elements::new(self.value)
    }
}

/// Iterator over a concatenation of TLV elements. Yields one `Err` and stops
/// on malformed input.
#[derive(Debug, Clone)]
pub struct Elements<'a> {
    rest: &'a [u8],
}

impl<'a> Elements<'a> {
    /// Iterates over the elements in `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Elements { rest: buf }
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Element<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Element::parse(self.rest) {
            Ok((e, rest)) => {
                self.rest = rest;
                Some(Ok(e))
            }
            Err(err) => {
                self.rest = &[];
                Some(Err(err))
            }
        }
    }
}

/// Octets of a TLV element with this type and value length.
#[inline]
pub const fn tlv_len(typ: u32, value_len: usize) -> usize {
    varnum_len(typ as u64) + varnum_len(value_len as u64) + value_len
}

/// Appends TLV-TYPE and TLV-LENGTH.
#[inline]
pub fn write_header<B: BufMut + ?Sized>(out: &mut B, typ: u32, value_len: usize) {
    write_varnum(out, u64::from(typ));
    write_varnum(out, value_len as u64);
}

/// Appends a whole element with an opaque value.
#[inline]
pub fn write_bytes_tlv<B: BufMut + ?Sized>(out: &mut B, typ: u32, value: &[u8]) {
    write_header(out, typ, value.len());
    out.put_slice(value);
}

/// Octets of a NonNegativeInteger element.
#[inline]
pub const fn nni_tlv_len(typ: u32, v: u64) -> usize {
    tlv_len(typ, nni_len(v))
}

/// Appends a NonNegativeInteger element (shortest encoding).
#[inline]
pub fn write_nni_tlv<B: BufMut + ?Sized>(out: &mut B, typ: u32, v: u64) {
    write_header(out, typ, nni_len(v));
    write_nni(out, v);
}

/// Offset of `sub` inside `base`. Both must come from the same buffer (all
/// callers pass slices obtained by parsing `base`); computed on addresses so
/// it needs no `unsafe`, and saturates instead of panicking.
#[inline]
pub(crate) fn offset_in(base: &[u8], sub: &[u8]) -> usize {
    (sub.as_ptr() as usize).saturating_sub(base.as_ptr() as usize)
}

/// Feeds a whole TLV (header + value) to a SHA-256 hasher without building it.
pub(crate) fn hash_tlv(h: &mut sha2::Sha256, typ: u32, value: &[u8]) {
    use sha2::Digest;
    let (t, tn) = crate::varnum::varnum_bytes(u64::from(typ));
    let (l, ln) = crate::varnum::varnum_bytes(value.len() as u64);
    h.update(&t[..tn]);
    h.update(&l[..ln]);
    h.update(value);
}

/// SHA-256 of a byte string.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_rest() {
        let buf = [0x08, 0x02, b'h', b'i', 0x21, 0x00, 0xFF];
        let (e, rest) = Element::parse(&buf).unwrap();
        assert_eq!((e.typ(), e.value(), e.tlv()), (8, &b"hi"[..], &buf[..4]));
        assert_eq!(rest, &[0x21, 0x00, 0xFF]);
        assert!(e.header_is_minimal());
        let items: Vec<_> = Elements::new(&buf).collect();
        assert_eq!(items.len(), 3);
        assert_eq!(items[2], Err(TlvError::UnexpectedEnd));
    }

    #[test]
    fn rejects_bad_headers() {
        assert_eq!(Element::parse(&[0, 0]), Err(TlvError::TypeOutOfRange(0)));
        let t9 = [0xFF, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        assert_eq!(Element::parse(&t9), Err(TlvError::TypeOutOfRange(1 << 32)));
        assert_eq!(Element::parse(&[8, 5, 1]), Err(TlvError::UnexpectedEnd));
        let huge = [8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
        assert!(Element::parse(&huge).is_err());
        assert_eq!(
            Element::parse_exact(&[8, 0, 1]),
            Err(TlvError::TrailingBytes)
        );
        assert_eq!(
            Element::parse_typed(&[8, 0], 7),
            Err(TlvError::UnexpectedType {
                expected: 7,
                found: 8
            })
        );
        let (e, _) = Element::parse(&[0xFD, 0, 8, 0]).unwrap();
        assert!(!e.header_is_minimal());
    }
}
