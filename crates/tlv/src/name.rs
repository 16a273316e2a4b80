//! Names and name components.
//!
//! A [`Name`] is one `Bytes` holding the Name TLV-VALUE plus its component
//! count; components are parsed on demand. Cloning is a refcount bump, a
//! prefix is a sub-slice of the same buffer. Names are normalised to the
//! shortest VarNumber encodings on decode (rarely needed: every known encoder
//! is minimal), which makes byte equality, hashing and `memcmp` ordering of
//! the TLV-VALUE agree with the canonical order of the spec.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};

use bytes::{BufMut, Bytes, BytesMut};

use crate::element::{tlv_len, write_header, Element, Elements};
use crate::error::{Result, TlvError};
use crate::types;
use crate::varnum::{nni_is_minimal, nni_len, read_nni, write_nni};

/// Largest TLV-TYPE a name component may have.
pub const MAX_COMPONENT_TYPE: u32 = 65535;

/// One name component: a TLV-TYPE in 1..=65535 and an opaque value.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Component {
    typ: u32,
    value: Bytes,
}

fn nni_bytes(n: u64) -> Bytes {
    let mut b = BytesMut::with_capacity(nni_len(n));
    write_nni(&mut b, n);
    b.freeze()
}

fn check_component(typ: u32, value: &[u8]) -> Result<()> {
    if typ == 0 || typ > MAX_COMPONENT_TYPE {
        return Err(TlvError::TypeOutOfRange(u64::from(typ)));
    }
    if (typ == types::IMPLICIT_SHA256_DIGEST || typ == types::PARAMETERS_SHA256_DIGEST)
        && value.len() != 32
    {
        return Err(TlvError::InvalidValue(typ));
    }
    Ok(())
}

/// Walks a Name TLV-VALUE whose components all have one-octet TLV-TYPE
/// and TLV-LENGTH (below 253: every name of fewer than 253-byte
/// components and types under 253, i.e. nearly all), calling `end` with
/// the byte offset after each component, and returns their count. `None`
/// as soon as a component is not of that form or is not valid (type 0, a
/// digest component that is not 32 octets, a value past the end): the
/// caller then takes the general parse, which gives the same result or the
/// error. Two loads and a few compares per component, against the general
/// VarNumber parse (callgrind, the engine bench's four-component names:
/// `Name::from_value` 247 → 117 instructions a call, two calls per
/// forwarded exchange, and the forwarder's `ComponentEnds` twice more).
#[inline]
pub fn short_components(value: &[u8], mut end: impl FnMut(usize)) -> Option<usize> {
    let mut pos = 0usize;
    let mut n = 0usize;
    while pos < value.len() {
        let typ = value[pos];
        let len = *value.get(pos + 1)?;
        if typ >= 253 || len >= 253 {
            return None;
        }
        let start = pos + 2;
        pos = start + usize::from(len);
        check_component(u32::from(typ), value.get(start..pos)?).ok()?;
        n += 1;
        end(pos);
    }
    Some(n)
}

impl Component {
    /// A component of any type.
    ///
    /// # Errors
    /// [`TlvError::TypeOutOfRange`] outside 1..=65535; [`TlvError::InvalidValue`]
    /// for a digest component that is not 32 octets.
    pub fn new(typ: u32, value: impl Into<Bytes>) -> Result<Self> {
        let value = value.into();
        check_component(typ, &value)?;
        Ok(Component { typ, value })
    }

    /// Parses a whole component TLV.
    ///
    /// # Errors
    /// Malformed TLV or a value [`Component::new`] rejects.
    pub fn decode(tlv: &Bytes) -> Result<Self> {
        let e = Element::parse_exact(tlv)?;
        check_component(e.typ(), e.value())?;
        Ok(Component {
            typ: e.typ(),
            value: tlv.slice_ref(e.value()),
        })
    }

    /// GenericNameComponent.
    pub fn generic(v: impl Into<Bytes>) -> Self {
        Component {
            typ: types::GENERIC_COMPONENT,
            value: v.into(),
        }
    }
    /// KeywordNameComponent.
    pub fn keyword(v: impl Into<Bytes>) -> Self {
        Component {
            typ: types::KEYWORD_COMPONENT,
            value: v.into(),
        }
    }
    fn number(typ: u32, n: u64) -> Self {
        Component {
            typ,
            value: nni_bytes(n),
        }
    }
    /// SegmentNameComponent (`seg=`).
    pub fn segment(n: u64) -> Self {
        Self::number(types::SEGMENT_COMPONENT, n)
    }
    /// ByteOffsetNameComponent (`off=`).
    pub fn byte_offset(n: u64) -> Self {
        Self::number(types::BYTE_OFFSET_COMPONENT, n)
    }
    /// VersionNameComponent (`v=`).
    pub fn version(n: u64) -> Self {
        Self::number(types::VERSION_COMPONENT, n)
    }
    /// TimestampNameComponent (`t=`, microseconds since the Unix epoch).
    pub fn timestamp(n: u64) -> Self {
        Self::number(types::TIMESTAMP_COMPONENT, n)
    }
    /// SequenceNumNameComponent (`seq=`).
    pub fn sequence_num(n: u64) -> Self {
        Self::number(types::SEQUENCE_NUM_COMPONENT, n)
    }
    /// ImplicitSha256DigestComponent (`sha256digest=`).
    pub fn implicit_digest(d: [u8; 32]) -> Self {
        Component {
            typ: types::IMPLICIT_SHA256_DIGEST,
            value: Bytes::copy_from_slice(&d),
        }
    }
    /// ParametersSha256DigestComponent (`params-sha256=`).
    pub fn params_digest(d: [u8; 32]) -> Self {
        Component {
            typ: types::PARAMETERS_SHA256_DIGEST,
            value: Bytes::copy_from_slice(&d),
        }
    }

    /// TLV-TYPE.
    #[inline]
    pub fn typ(&self) -> u32 {
        self.typ
    }
    /// TLV-VALUE.
    #[inline]
    pub fn value(&self) -> &Bytes {
        &self.value
    }

    fn as_number(&self, typ: u32) -> Option<u64> {
        if self.typ == typ {
            read_nni(&self.value, typ).ok()
        } else {
            None
        }
    }
    /// The segment number, if this is a SegmentNameComponent holding an NNI.
    pub fn as_segment(&self) -> Option<u64> {
        self.as_number(types::SEGMENT_COMPONENT)
    }
    /// The byte offset, if this is a ByteOffsetNameComponent.
    pub fn as_byte_offset(&self) -> Option<u64> {
        self.as_number(types::BYTE_OFFSET_COMPONENT)
    }
    /// The version, if this is a VersionNameComponent.
    pub fn as_version(&self) -> Option<u64> {
        self.as_number(types::VERSION_COMPONENT)
    }
    /// The timestamp (µs), if this is a TimestampNameComponent.
    pub fn as_timestamp(&self) -> Option<u64> {
        self.as_number(types::TIMESTAMP_COMPONENT)
    }
    /// The sequence number, if this is a SequenceNumNameComponent.
    pub fn as_sequence_num(&self) -> Option<u64> {
        self.as_number(types::SEQUENCE_NUM_COMPONENT)
    }
    /// The digest, if this is an ImplicitSha256DigestComponent.
    pub fn as_implicit_digest(&self) -> Option<[u8; 32]> {
        (self.typ == types::IMPLICIT_SHA256_DIGEST)
            .then(|| <[u8; 32]>::try_from(&self.value[..]).ok())
            .flatten()
    }
    /// The digest, if this is a ParametersSha256DigestComponent.
    pub fn as_params_digest(&self) -> Option<[u8; 32]> {
        (self.typ == types::PARAMETERS_SHA256_DIGEST)
            .then(|| <[u8; 32]>::try_from(&self.value[..]).ok())
            .flatten()
    }

    /// Whether the value is the shortest NNI (so `seg=N` etc. round-trips).
    pub(crate) fn has_minimal_nni(&self) -> bool {
        nni_is_minimal(&self.value)
    }

    /// Octets of the component TLV.
    #[inline]
    pub fn encoded_len(&self) -> usize {
        tlv_len(self.typ, self.value.len())
    }
    /// Appends the component TLV.
    #[inline]
    pub fn encode_into<B: BufMut + ?Sized>(&self, out: &mut B) {
        write_header(out, self.typ, self.value.len());
        out.put_slice(&self.value);
    }
}

/// Canonical order: TLV-TYPE, then value length, then value octets.
impl Ord for Component {
    fn cmp(&self, other: &Self) -> Ordering {
        self.typ
            .cmp(&other.typ)
            .then(self.value.len().cmp(&other.value.len()))
            .then_with(|| self.value[..].cmp(&other.value[..]))
    }
}
impl PartialOrd for Component {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl fmt::Debug for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// An NDN name. See the module docs for the representation.
#[derive(Clone)]
pub struct Name {
    value: Bytes,
    len: usize,
}

/// Iterator over a name's components as `(TLV-TYPE, value)` borrowed slices.
#[derive(Debug, Clone)]
pub struct RawComponents<'a> {
    inner: Elements<'a>,
}

impl<'a> Iterator for RawComponents<'a> {
    type Item = (u32, &'a [u8]);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // The value was validated on construction, so errors cannot occur;
        // stopping at one keeps this panic-free regardless.
        match self.inner.next()? {
            Ok(e) => Some((e.typ(), e.value())),
            Err(_) => None,
        }
    }
}

impl Name {
    /// The empty name `/`.
    pub fn root() -> Name {
        Name {
            value: Bytes::new(),
            len: 0,
        }
    }

    /// Builds a name from the TLV-VALUE of a Name element.
    ///
    /// # Errors
    /// Malformed TLV, component type outside 1..=65535, or a digest
    /// component that is not 32 octets.
    pub fn from_value(value: Bytes) -> Result<Name> {
        if let Some(len) = short_components(&value, |_| ()) {
            return Ok(Name { value, len });
        }
        Name::from_value_general(value)
    }

    /// [`Name::from_value`] for any VarNumber encoding.
    fn from_value_general(value: Bytes) -> Result<Name> {
        let mut len = 0usize;
        let mut minimal = true;
        for e in Elements::new(&value) {
            let e = e?;
            check_component(e.typ(), e.value())?;
            minimal &= e.header_is_minimal();
            len += 1;
        }
        if minimal {
            return Ok(Name { value, len });
        }
        // Non-minimal VarNumbers: re-encode once so equality and ordering work on bytes.
        let mut out = BytesMut::with_capacity(value.len());
        for e in Elements::new(&value).map_while(|e| e.ok()) {
            write_header(&mut out, e.typ(), e.value().len());
            out.put_slice(e.value());
        }
        Ok(Name {
            value: out.freeze(),
            len,
        })
    }

    /// Decodes a whole Name TLV (type 7).
    ///
    /// # Errors
    /// As [`Name::from_value`], plus a wrong outer type or trailing bytes.
    pub fn decode(tlv: Bytes) -> Result<Name> {
        let e = Element::parse_typed(&tlv, types::NAME)?;
        Name::from_value(tlv.slice_ref(e.value()))
    }

    /// Builds a name from components (cold path: allocates).
    pub fn from_components<I: IntoIterator<Item = Component>>(comps: I) -> Name {
        let mut out = BytesMut::new();
        let mut len = 0;
        for c in comps {
            c.encode_into(&mut out);
            len += 1;
        }
        Name {
            value: out.freeze(),
            len,
        }
    }

    /// The Name TLV-VALUE (the concatenated component TLVs).
    #[inline]
    pub fn value(&self) -> &Bytes {
        &self.value
    }
    /// Number of components.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether this is the root name.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Borrowed `(type, value)` components, no refcounting.
    #[inline]
    pub fn raw_components(&self) -> RawComponents<'_> {
        RawComponents {
            inner: Elements::new(&self.value),
        }
    }
    /// Components as owned [`Component`]s (each a slice of this name's buffer).
    pub fn components(&self) -> impl Iterator<Item = Component> + '_ {
        self.raw_components().map(|(typ, v)| Component {
            typ,
            value: self.value.slice_ref(v),
        })
    }
    /// The `i`-th component.
    pub fn get(&self, i: usize) -> Option<Component> {
        self.components().nth(i)
    }
    /// The last component.
    pub fn last(&self) -> Option<Component> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// Octets of the TLV-VALUE covered by the first `n` components
    /// (all of them when `n >= len`).
    pub fn prefix_value_len(&self, n: usize) -> usize {
        if n >= self.len {
            return self.value.len();
        }
        Elements::new(&self.value)
            .take(n)
            .map_while(|e| e.ok())
            .map(|e| e.tlv().len())
            .sum()
    }
    /// The first `n` components, sharing this name's buffer.
    pub fn prefix(&self, n: usize) -> Name {
        let n = n.min(self.len);
        let end = self.prefix_value_len(n);
        Name {
            value: self.value.slice(..end),
            len: n,
        }
    }
    /// Whether `self` is a (not necessarily proper) prefix of `other`.
    ///
    /// Byte-prefix is enough: both values parse from the same start, so equal
    /// leading bytes mean equal leading components.
    #[inline]
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        other.value.starts_with(&self.value)
    }
    /// A new name with `c` appended (cold path: allocates).
    pub fn append(&self, c: Component) -> Name {
        let mut out = BytesMut::with_capacity(self.value.len() + c.encoded_len());
        out.put_slice(&self.value);
        c.encode_into(&mut out);
        Name {
            value: out.freeze(),
            len: self.len + 1,
        }
    }

    /// Octets of the whole Name TLV.
    #[inline]
    pub fn encoded_len(&self) -> usize {
        tlv_len(types::NAME, self.value.len())
    }
    /// Appends the whole Name TLV.
    #[inline]
    pub fn encode_into<B: BufMut + ?Sized>(&self, out: &mut B) {
        write_header(out, types::NAME, self.value.len());
        out.put_slice(&self.value);
    }
    /// The whole Name TLV as new bytes.
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(self.encoded_len());
        self.encode_into(&mut out);
        out.freeze()
    }
}

impl Default for Name {
    fn default() -> Self {
        Name::root()
    }
}
impl PartialEq for Name {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}
impl Eq for Name {}
impl Hash for Name {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value[..].hash(state);
    }
}
/// Canonical order. With shortest VarNumbers (guaranteed by construction),
/// `memcmp` of the TLV-VALUEs equals component-wise canonical comparison with
/// a proper prefix first.
impl Ord for Name {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.value[..].cmp(&other.value[..])
    }
}
impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

// Interop with the ndn-tlv traits, so ndn-tlv derived structures can embed a
// Name (used by the MCC feedback field).
impl ndn_tlv::Tlv for Name {
    const TYP: usize = types::NAME as usize;
    fn inner_size(&self) -> usize {
        self.value.len()
    }
}
impl ndn_tlv::TlvEncode for Name {
    fn encode(&self) -> Bytes {
        Name::encode(self)
    }
    fn size(&self) -> usize {
        self.encoded_len()
    }
}
impl ndn_tlv::TlvDecode for Name {
    fn decode(bytes: &mut Bytes) -> ndn_tlv::Result<Self> {
        let (e, rest) = Element::parse(bytes).map_err(|_| ndn_tlv::TlvError::FormatError)?;
        if e.typ() != types::NAME {
            return Err(ndn_tlv::TlvError::TypeMismatch {
                expected: types::NAME as usize,
                found: e.typ() as usize,
            });
        }
        let value = bytes.slice_ref(e.value());
        let consumed = bytes.len() - rest.len();
        let name = Name::from_value(value).map_err(|_| ndn_tlv::TlvError::FormatError)?;
        let _ = bytes.split_to(consumed);
        Ok(name)
    }
}

#[cfg(test)]
#[path = "name_tests.rs"]
mod tests;
