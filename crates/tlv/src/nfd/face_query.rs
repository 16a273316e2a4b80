//! The `faces/query` dataset (§3.8): `/localhost/nfd/faces/query/<filter>`,
//! where the filter is a FaceQueryFilter TLV in a generic component, answers
//! with the FaceStatus items of the faces that match every field it has
//! (NDNts' `@ndn/nfdmgmt` `FaceQuery`, ndn-cxx `nfdc face list <filter>`).

use bytes::{Bytes, BytesMut};

use super::dataset::FaceStatus;
use super::params::tt::{FACE_ID, FACE_PERSISTENCY, LOCAL_URI, URI};
use super::wire::{self, put_nested, put_nni, put_tlv, TlvReader};
use super::MgmtError;

/// (module, dataset) of the request.
pub const DATASET: (&str, &str) = ("faces", "query");
/// FaceQueryFilter TLV-TYPE.
pub const FACE_QUERY_FILTER: u32 = 150;
const URI_SCHEME: u32 = 131;
const FACE_SCOPE: u32 = 132;
const LINK_TYPE: u32 = 134;

/// A decoded FaceQueryFilter; absent fields match anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceQueryFilter {
    pub face_id: Option<u64>,
    /// Matches the scheme of the remote or of the local URI (as NFD).
    pub uri_scheme: Option<String>,
    pub uri: Option<String>,
    pub local_uri: Option<String>,
    pub face_scope: Option<u64>,
    pub face_persistency: Option<u64>,
    pub link_type: Option<u64>,
}

fn scheme(uri: &str) -> &str {
    uri.split_once("://").map_or("", |(s, _)| s)
}

impl FaceQueryFilter {
    /// Decodes the whole FaceQueryFilter TLV (the name component's value).
    /// Unknown fields are ignored, as ndn-cxx does.
    pub fn decode(wire_tlv: Bytes) -> Result<Self, MgmtError> {
        let value = wire::single(wire_tlv, FACE_QUERY_FILTER)?;
        let mut f = FaceQueryFilter::default();
        let mut r = TlvReader::new(value);
        while let Some((t, v)) = r.next_element()? {
            match t {
                FACE_ID => f.face_id = Some(wire::nni(&v)?),
                URI_SCHEME => f.uri_scheme = Some(wire::utf8(&v)?),
                URI => f.uri = Some(wire::utf8(&v)?),
                LOCAL_URI => f.local_uri = Some(wire::utf8(&v)?),
                FACE_SCOPE => f.face_scope = Some(wire::nni(&v)?),
                FACE_PERSISTENCY => f.face_persistency = Some(wire::nni(&v)?),
                LINK_TYPE => f.link_type = Some(wire::nni(&v)?),
                _ => {}
            }
        }
        Ok(f)
    }

    /// Encodes the TLV (fields in the order of NFD's FaceQueryFilter).
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        if let Some(v) = self.face_id {
            put_nni(&mut b, FACE_ID, v);
        }
        for (t, s) in [
            (URI_SCHEME, &self.uri_scheme),
            (URI, &self.uri),
            (LOCAL_URI, &self.local_uri),
        ] {
            if let Some(s) = s {
                put_tlv(&mut b, t, s.as_bytes());
            }
        }
        for (t, v) in [
            (FACE_SCOPE, self.face_scope),
            (FACE_PERSISTENCY, self.face_persistency),
            (LINK_TYPE, self.link_type),
        ] {
            if let Some(v) = v {
                put_nni(&mut b, t, v);
            }
        }
        let mut out = BytesMut::new();
        put_nested(&mut out, FACE_QUERY_FILTER, &b);
        out.freeze()
    }

    /// Whether `face` has every field the filter names.
    pub fn matches(&self, face: &FaceStatus) -> bool {
        self.face_id.is_none_or(|v| v == face.face_id)
            && self
                .uri_scheme
                .as_deref()
                .is_none_or(|s| s == scheme(&face.uri) || s == scheme(&face.local_uri))
            && self.uri.as_deref().is_none_or(|u| u == face.uri)
            && self
                .local_uri
                .as_deref()
                .is_none_or(|u| u == face.local_uri)
            && self.face_scope.is_none_or(|v| v == face.face_scope)
            && self
                .face_persistency
                .is_none_or(|v| v == face.face_persistency)
            && self.link_type.is_none_or(|v| v == face.link_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn face(id: u64, uri: &str, local: &str, scope: u64) -> FaceStatus {
        FaceStatus {
            face_id: id,
            uri: uri.into(),
            local_uri: local.into(),
            face_scope: scope,
            face_persistency: 1,
            ..Default::default()
        }
    }

    #[test]
    fn ndnts_filter_bytes_decode_and_match() {
        // NDNts 0.0.20250307 FaceQuery({ uriScheme: "udp4", faceScope: 1 }):
        // 96 09 { 83 04 "udp4", 84 01 01 }.
        let wire = Bytes::from_static(b"\x96\x09\x83\x04udp4\x84\x01\x01");
        let f = FaceQueryFilter::decode(wire.clone()).unwrap();
        assert_eq!(f.uri_scheme.as_deref(), Some("udp4"));
        assert_eq!(f.face_scope, Some(1));
        assert_eq!(f.encode(), wire);
        let udp = face(257, "udp4://127.0.0.1:5000", "udp4://127.0.0.1:6363", 1);
        let unix = face(256, "fd://17", "unix:///run/nfd.sock", 1);
        let remote = face(258, "udp4://10.0.0.2:6363", "udp4://0.0.0.0:6363", 0);
        assert!(f.matches(&udp));
        assert!(!f.matches(&unix));
        assert!(!f.matches(&remote));
        // The scheme of the local URI counts too (NFD).
        let unix_only = FaceQueryFilter {
            uri_scheme: Some("unix".into()),
            ..Default::default()
        };
        assert!(unix_only.matches(&unix));
        assert!(FaceQueryFilter::default().matches(&remote));
    }

    #[test]
    fn every_field_roundtrips_and_restricts() {
        let f = FaceQueryFilter {
            face_id: Some(300),
            uri_scheme: Some("tcp4".into()),
            uri: Some("tcp4://127.0.0.1:40000".into()),
            local_uri: Some("tcp4://127.0.0.1:6363".into()),
            face_scope: Some(1),
            face_persistency: Some(0),
            link_type: Some(0),
        };
        assert_eq!(FaceQueryFilter::decode(f.encode()).unwrap(), f);
        let mut s = face(300, "tcp4://127.0.0.1:40000", "tcp4://127.0.0.1:6363", 1);
        s.face_persistency = 0;
        assert!(f.matches(&s));
        s.link_type = 1;
        assert!(!f.matches(&s));
    }

    #[test]
    fn malformed_filters_are_errors() {
        assert!(FaceQueryFilter::decode(Bytes::from_static(b"\x68\x00")).is_err());
        assert!(FaceQueryFilter::decode(Bytes::from_static(b"\x96\x05\x69\x09")).is_err());
        assert!(FaceQueryFilter::decode(Bytes::from_static(b"\x96\x03\x69\x01\x01\x00")).is_err());
    }
}
