//! NDN URI form of names (`/example/v=1/seg=3`), following ndn-cxx:
//! unreserved characters literal, others `%XX` (upper-case on output, either
//! case on input), the three-extra-periods rule, typed prefixes
//! (`sha256digest=`, `params-sha256=`, `seg=`, `off=`, `v=`, `t=`, `seq=`)
//! and the `<type>=` form for any other type. An optional `ndn:` scheme is
//! accepted on input.

use core::fmt::{self, Write};
use core::str::FromStr;

use bytes::{Bytes, BytesMut};

use crate::error::{Result, TlvError};
use crate::name::{Component, Name};
use crate::types;
use crate::varnum::read_nni;

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn write_escaped(f: &mut fmt::Formatter<'_>, v: &[u8]) -> fmt::Result {
    if v.iter().all(|&b| b == b'.') {
        f.write_str("...")?;
    }
    for &b in v {
        if is_unreserved(b) {
            f.write_char(char::from(b))?;
        } else {
            write!(f, "%{b:02X}")?;
        }
    }
    Ok(())
}

fn number_label(typ: u32) -> Option<&'static str> {
    Some(match typ {
        types::SEGMENT_COMPONENT => "seg",
        types::BYTE_OFFSET_COMPONENT => "off",
        types::VERSION_COMPONENT => "v",
        types::TIMESTAMP_COMPONENT => "t",
        types::SEQUENCE_NUM_COMPONENT => "seq",
        _ => return None,
    })
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.value()[..];
        match self.typ() {
            types::GENERIC_COMPONENT => write_escaped(f, v),
            t @ (types::IMPLICIT_SHA256_DIGEST | types::PARAMETERS_SHA256_DIGEST) => {
                let label = if t == types::IMPLICIT_SHA256_DIGEST {
                    "sha256digest="
                } else {
                    "params-sha256="
                };
                f.write_str(label)?;
                v.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
            t => match (number_label(t), read_nni(v, t)) {
                (Some(label), Ok(n)) if self.has_minimal_nni() => write!(f, "{label}={n}"),
                _ => {
                    write!(f, "{t}=")?;
                    write_escaped(f, v)
                }
            },
        }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        for c in self.components() {
            f.write_char('/')?;
            fmt::Display::fmt(&c, f)?;
        }
        Ok(())
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn unescape(s: &str) -> Result<Bytes> {
    let raw = s.as_bytes();
    // Three-extra-periods rule: "..." is empty, "...." is ".", "." and ".." are invalid.
    if raw.iter().all(|&b| b == b'.') {
        return match raw.len().checked_sub(3) {
            Some(n) => Ok(Bytes::from(vec![b'.'; n])),
            None => Err(TlvError::InvalidUri),
        };
    }
    let mut out = BytesMut::with_capacity(raw.len());
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        if b == b'%' {
            let hi = raw.get(i + 1).copied().and_then(hex_val);
            let lo = raw.get(i + 2).copied().and_then(hex_val);
            match (hi, lo) {
                (Some(h), Some(l)) => out.extend_from_slice(&[h << 4 | l]),
                _ => return Err(TlvError::InvalidUri),
            }
            i += 3;
        } else {
            out.extend_from_slice(&[b]);
            i += 1;
        }
    }
    Ok(out.freeze())
}

fn parse_hex32(s: &str) -> Result<[u8; 32]> {
    let raw = s.as_bytes();
    if raw.len() != 64 {
        return Err(TlvError::InvalidUri);
    }
    let mut d = [0u8; 32];
    for (i, pair) in raw.chunks_exact(2).enumerate() {
        match (hex_val(pair[0]), hex_val(pair[1])) {
            (Some(h), Some(l)) => d[i] = h << 4 | l,
            _ => return Err(TlvError::InvalidUri),
        }
    }
    Ok(d)
}

fn parse_decimal(s: &str) -> Result<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TlvError::InvalidUri);
    }
    s.parse().map_err(|_| TlvError::InvalidUri)
}

impl FromStr for Component {
    type Err = TlvError;

    fn from_str(s: &str) -> Result<Component> {
        let Some((label, rest)) = s.split_once('=') else {
            return Ok(Component::generic(unescape(s)?));
        };
        match label {
            "sha256digest" => Ok(Component::implicit_digest(parse_hex32(rest)?)),
            "params-sha256" => Ok(Component::params_digest(parse_hex32(rest)?)),
            "seg" => Ok(Component::segment(parse_decimal(rest)?)),
            "off" => Ok(Component::byte_offset(parse_decimal(rest)?)),
            "v" => Ok(Component::version(parse_decimal(rest)?)),
            "t" => Ok(Component::timestamp(parse_decimal(rest)?)),
            "seq" => Ok(Component::sequence_num(parse_decimal(rest)?)),
            _ => {
                let typ = parse_decimal(label)?;
                let typ = u32::try_from(typ).map_err(|_| TlvError::InvalidUri)?;
                if typ == types::IMPLICIT_SHA256_DIGEST || typ == types::PARAMETERS_SHA256_DIGEST {
                    // Accept the numeric form with hex digest as ndn-cxx does.
                    return Component::new(typ, Bytes::copy_from_slice(&parse_hex32(rest)?));
                }
                Component::new(typ, unescape(rest)?).map_err(|_| TlvError::InvalidUri)
            }
        }
    }
}

impl FromStr for Name {
    type Err = TlvError;

    fn from_str(s: &str) -> Result<Name> {
        let s = s.strip_prefix("ndn:").unwrap_or(s);
        let s = s.strip_prefix('/').unwrap_or(s);
        let s = s.strip_suffix('/').unwrap_or(s);
        if s.is_empty() {
            return Ok(Name::root());
        }
        let comps: Result<Vec<Component>> = s.split('/').map(Component::from_str).collect();
        Ok(Name::from_components(comps?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_and_parse() {
        let n: Name = "/example/test/v=1/seg=3".parse().unwrap();
        assert_eq!(n.len(), 4);
        assert_eq!(n.to_string(), "/example/test/v=1/seg=3");
        assert_eq!(
            &n.encode()[..],
            &hex::decode("071508076578616d706c65080474657374360101320103").unwrap()[..]
        );
        let odd: Name = "/a%2Fb/.../..../%00%ff/32=metadata/t=5/seq=7/off=9/300=x"
            .parse()
            .unwrap();
        assert_eq!(
            odd.to_string(),
            "/a%2Fb/.../..../%00%FF/32=metadata/t=5/seq=7/off=9/300=x"
        );
        assert_eq!(odd.get(1).unwrap().value().len(), 0);
        assert_eq!(&odd.get(2).unwrap().value()[..], b".");
        assert_eq!("/".parse::<Name>().unwrap(), Name::root());
        assert_eq!("ndn:/a/".parse::<Name>().unwrap().to_string(), "/a");
        assert_eq!(Name::root().to_string(), "/");
    }

    #[test]
    fn digests_and_errors() {
        let d = "d88c6f9963f079128a0f678bd931dc608a9ba26cfdfa486b6f0b4f4887fb6838";
        let n: Name = format!("/x/params-sha256={d}").parse().unwrap();
        assert_eq!(n.to_string(), format!("/x/params-sha256={d}"));
        let n: Name = format!("/x/sha256digest={}", d.to_uppercase())
            .parse()
            .unwrap();
        assert_eq!(n.to_string(), format!("/x/sha256digest={d}"));
        for bad in [
            "/a/.",
            "/a/..",
            "/%zz",
            "/%4",
            "/seg=x",
            "/seg=",
            "/nolabel=1",
            "/0=a",
            "/65536=a",
            "/sha256digest=00",
        ] {
            assert_eq!(bad.parse::<Name>(), Err(TlvError::InvalidUri), "{bad}");
        }
        // A non-minimal NNI in a typed component prints in numeric form so it round-trips.
        let c = Component::new(50, vec![0u8, 3]).unwrap();
        assert_eq!(c.to_string(), "50=%00%03");
        assert_eq!("50=%00%03".parse::<Component>().unwrap(), c);
    }
}
