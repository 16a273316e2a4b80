//! VarNumber (TLV-TYPE / TLV-LENGTH) and NonNegativeInteger.
//!
//! Hand-written rather than `ndn_tlv::VarNum`: that type encodes into a fresh
//! `Bytes` per number and decodes by consuming a `Bytes`, which costs an
//! allocation or a refcount per call on the hot path. The tests check both
//! agree byte for byte.
//!
//! Encoders always use the shortest form; decoders accept non-minimal forms
//! (as ndn-cxx and python-ndn do), see docs/protocol.md §1.1.

use bytes::BufMut;

use crate::error::{Result, TlvError};

/// Reads one VarNumber from the front of `buf`.
///
/// Returns the value and the number of octets it occupied.
///
/// # Errors
/// [`TlvError::UnexpectedEnd`] when `buf` is too short.
#[inline]
pub fn read_varnum(buf: &[u8]) -> Result<(u64, usize)> {
    match buf.first() {
        None => Err(TlvError::UnexpectedEnd),
        Some(&b) if b < 0xFD => Ok((u64::from(b), 1)),
        Some(&0xFD) => match buf.get(1..3) {
            Some(s) => Ok((u64::from(u16::from_be_bytes([s[0], s[1]])), 3)),
            None => Err(TlvError::UnexpectedEnd),
        },
        Some(&0xFE) => match buf.get(1..5) {
            Some(s) => Ok((u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]])), 5)),
            None => Err(TlvError::UnexpectedEnd),
        },
        Some(_) => match buf.get(1..9) {
            Some(s) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                Ok((u64::from_be_bytes(a), 9))
            }
            None => Err(TlvError::UnexpectedEnd),
        },
    }
}

/// Number of octets the shortest VarNumber encoding of `v` takes.
#[inline]
pub const fn varnum_len(v: u64) -> usize {
    if v < 0xFD {
        1
    } else if v <= 0xFFFF {
        3
    } else if v <= 0xFFFF_FFFF {
        5
    } else {
        9
    }
}

/// Appends the shortest VarNumber encoding of `v`.
#[inline]
pub fn write_varnum<B: BufMut + ?Sized>(out: &mut B, v: u64) {
    if v < 0xFD {
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

/// Writes the shortest VarNumber of `v` into a stack buffer; returns the
/// buffer and the used length. Used where a `BufMut` is not at hand
/// (feeding a hasher).
#[inline]
pub(crate) fn varnum_bytes(v: u64) -> ([u8; 9], usize) {
    let mut a = [0u8; 9];
    let n = varnum_len(v);
    let mut s = &mut a[..];
    write_varnum(&mut s, v);
    (a, n)
}

/// Decodes a NonNegativeInteger from a complete TLV-VALUE.
///
/// # Errors
/// [`TlvError::InvalidValue`] (with `typ`) unless the value is 1, 2, 4 or 8 octets.
#[inline]
pub fn read_nni(value: &[u8], typ: u32) -> Result<u64> {
    match *value {
        [a] => Ok(u64::from(a)),
        [a, b] => Ok(u64::from(u16::from_be_bytes([a, b]))),
        [a, b, c, d] => Ok(u64::from(u32::from_be_bytes([a, b, c, d]))),
        [a, b, c, d, e, f, g, h] => Ok(u64::from_be_bytes([a, b, c, d, e, f, g, h])),
        _ => Err(TlvError::InvalidValue(typ)),
    }
}

/// Octets of the shortest NonNegativeInteger encoding of `v` (1, 2, 4 or 8).
#[inline]
pub const fn nni_len(v: u64) -> usize {
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

/// Appends the shortest NonNegativeInteger encoding of `v` (value only).
#[inline]
pub fn write_nni<B: BufMut + ?Sized>(out: &mut B, v: u64) {
    match nni_len(v) {
        1 => out.put_u8(v as u8),
        2 => out.put_u16(v as u16),
        4 => out.put_u32(v as u32),
        _ => out.put_u64(v),
    }
}

/// Whether `value` is the shortest NonNegativeInteger encoding of some number.
#[inline]
pub(crate) fn nni_is_minimal(value: &[u8]) -> bool {
    match read_nni(value, 0) {
        Ok(v) => nni_len(v) == value.len(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use ndn_tlv::{NonNegativeInteger, TlvEncode, VarNum};
    use proptest::prelude::*;

    #[test]
    fn spec_examples() {
        let mut b = BytesMut::new();
        write_varnum(&mut b, 1024);
        assert_eq!(&b[..], &[0xFD, 0x04, 0x00]);
        for (v, enc) in [
            (0u64, &[0u8][..]),
            (255, &[0xFF]),
            (256, &[1, 0]),
            (65535, &[0xFF, 0xFF]),
            (65536, &[0, 1, 0, 0]),
        ] {
            let mut b = BytesMut::new();
            write_nni(&mut b, v);
            assert_eq!(&b[..], enc);
            assert_eq!(read_nni(enc, 1).unwrap(), v);
        }
        assert_eq!(read_nni(&[1, 2, 3], 9), Err(TlvError::InvalidValue(9)));
        assert_eq!(read_nni(&[], 9), Err(TlvError::InvalidValue(9)));
    }

    #[test]
    fn lenient_decode_of_non_minimal() {
        assert_eq!(read_varnum(&[0xFE, 0, 0, 4, 0]).unwrap(), (1024, 5));
        assert_eq!(read_varnum(&[0xFD, 0]), Err(TlvError::UnexpectedEnd));
        assert_eq!(read_varnum(&[]), Err(TlvError::UnexpectedEnd));
    }

    proptest! {
        #[test]
        fn varnum_round_trip_and_matches_ndn_tlv(v: u64) {
            let mut b = BytesMut::new();
            write_varnum(&mut b, v);
            prop_assert_eq!(b.len(), varnum_len(v));
            prop_assert_eq!(&b[..], &VarNum::from(v).encode()[..]);
            prop_assert_eq!(read_varnum(&b).unwrap(), (v, b.len()));
            let (a, n) = varnum_bytes(v);
            prop_assert_eq!(&a[..n], &b[..]);
        }

        #[test]
        fn nni_round_trip_and_matches_ndn_tlv(v: u64) {
            let mut b = BytesMut::new();
            write_nni(&mut b, v);
            prop_assert_eq!(b.len(), nni_len(v));
            prop_assert_eq!(&b[..], &NonNegativeInteger::new(v).encode()[..]);
            prop_assert_eq!(read_nni(&b, 0).unwrap(), v);
            prop_assert!(nni_is_minimal(&b));
        }
    }
}
