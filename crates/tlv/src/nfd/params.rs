//! ControlParameters and ControlResponse (NFD management protocol §3.2, §3.3).
//!
//! Requests are parsed in any field order (python-ndn sends its own order);
//! responses are emitted in the ndn-cxx row order, which all three client
//! libraries decode completely.

use crate::Name;
use bytes::{Bytes, BytesMut};

use super::wire::{self, put_name, put_nni, put_opt_nni, put_tlv, TlvReader};
use super::MgmtError;

/// TLV-TYPE numbers of the management protocol.
pub mod tt {
    pub const NAME: u32 = 7;
    pub const CONTROL_PARAMETERS: u32 = 104;
    pub const FACE_ID: u32 = 105;
    pub const URI: u32 = 114;
    pub const LOCAL_URI: u32 = 129;
    pub const ORIGIN: u32 = 111;
    pub const COST: u32 = 106;
    pub const CAPACITY: u32 = 131;
    pub const COUNT: u32 = 132;
    pub const FLAGS: u32 = 108;
    pub const MASK: u32 = 112;
    pub const STRATEGY: u32 = 107;
    pub const EXPIRATION_PERIOD: u32 = 109;
    pub const FACE_PERSISTENCY: u32 = 133;
    pub const BASE_CONGESTION_MARKING_INTERVAL: u32 = 135;
    pub const DEFAULT_CONGESTION_THRESHOLD: u32 = 136;
    pub const MTU: u32 = 137;
    pub const CONTROL_RESPONSE: u32 = 101;
    pub const STATUS_CODE: u32 = 102;
    pub const STATUS_TEXT: u32 = 103;
}

/// The parameters of a management command; every field optional, as on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlParameters {
    pub name: Option<Name>,
    pub face_id: Option<u64>,
    pub uri: Option<String>,
    pub local_uri: Option<String>,
    pub origin: Option<u64>,
    pub cost: Option<u64>,
    pub capacity: Option<u64>,
    pub count: Option<u64>,
    pub flags: Option<u64>,
    pub mask: Option<u64>,
    pub strategy: Option<Name>,
    pub expiration_period_ms: Option<u64>,
    pub face_persistency: Option<u64>,
    pub base_congestion_marking_interval_ns: Option<u64>,
    pub default_congestion_threshold_bytes: Option<u64>,
    pub mtu: Option<u64>,
}

impl ControlParameters {
    /// Decodes a whole ControlParameters TLV (`68 LL ...`).
    pub fn decode(tlv: Bytes) -> Result<Self, MgmtError> {
        Self::decode_value(wire::single(tlv, tt::CONTROL_PARAMETERS)?)
    }

    /// Decodes the TLV-VALUE of a ControlParameters, fields in any order;
    /// unknown fields are ignored (as ndn-cxx does).
    pub fn decode_value(value: Bytes) -> Result<Self, MgmtError> {
        let mut p = ControlParameters::default();
        let mut r = TlvReader::new(value);
        while let Some((t, v)) = r.next_element()? {
            match t {
                tt::NAME => p.name = Some(wire::name(&v)?),
                tt::FACE_ID => p.face_id = Some(wire::nni(&v)?),
                tt::URI => p.uri = Some(wire::utf8(&v)?),
                tt::LOCAL_URI => p.local_uri = Some(wire::utf8(&v)?),
                tt::ORIGIN => p.origin = Some(wire::nni(&v)?),
                tt::COST => p.cost = Some(wire::nni(&v)?),
                tt::CAPACITY => p.capacity = Some(wire::nni(&v)?),
                tt::COUNT => p.count = Some(wire::nni(&v)?),
                tt::FLAGS => p.flags = Some(wire::nni(&v)?),
                tt::MASK => p.mask = Some(wire::nni(&v)?),
                tt::STRATEGY => {
                    let inner = wire::single(v, tt::NAME)?;
                    p.strategy = Some(wire::name(&inner)?);
                }
                tt::EXPIRATION_PERIOD => p.expiration_period_ms = Some(wire::nni(&v)?),
                tt::FACE_PERSISTENCY => p.face_persistency = Some(wire::nni(&v)?),
                tt::BASE_CONGESTION_MARKING_INTERVAL => {
                    p.base_congestion_marking_interval_ns = Some(wire::nni(&v)?)
                }
                tt::DEFAULT_CONGESTION_THRESHOLD => {
                    p.default_congestion_threshold_bytes = Some(wire::nni(&v)?)
                }
                tt::MTU => p.mtu = Some(wire::nni(&v)?),
                _ => {}
            }
        }
        Ok(p)
    }

    /// Appends the whole TLV in ndn-cxx order (§3.2 rows).
    pub fn encode_into(&self, out: &mut BytesMut) {
        let mut b = BytesMut::with_capacity(64);
        if let Some(n) = &self.name {
            put_name(&mut b, n);
        }
        put_opt_nni(&mut b, tt::FACE_ID, self.face_id);
        if let Some(u) = &self.uri {
            put_tlv(&mut b, tt::URI, u.as_bytes());
        }
        if let Some(u) = &self.local_uri {
            put_tlv(&mut b, tt::LOCAL_URI, u.as_bytes());
        }
        put_opt_nni(&mut b, tt::ORIGIN, self.origin);
        put_opt_nni(&mut b, tt::COST, self.cost);
        put_opt_nni(&mut b, tt::CAPACITY, self.capacity);
        put_opt_nni(&mut b, tt::COUNT, self.count);
        put_opt_nni(&mut b, tt::FLAGS, self.flags);
        put_opt_nni(&mut b, tt::MASK, self.mask);
        if let Some(s) = &self.strategy {
            let mut inner = BytesMut::new();
            put_name(&mut inner, s);
            put_tlv(&mut b, tt::STRATEGY, &inner);
        }
        put_opt_nni(&mut b, tt::EXPIRATION_PERIOD, self.expiration_period_ms);
        put_opt_nni(&mut b, tt::FACE_PERSISTENCY, self.face_persistency);
        put_opt_nni(
            &mut b,
            tt::BASE_CONGESTION_MARKING_INTERVAL,
            self.base_congestion_marking_interval_ns,
        );
        put_opt_nni(
            &mut b,
            tt::DEFAULT_CONGESTION_THRESHOLD,
            self.default_congestion_threshold_bytes,
        );
        put_opt_nni(&mut b, tt::MTU, self.mtu);
        put_tlv(out, tt::CONTROL_PARAMETERS, &b);
    }

    /// The whole TLV.
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        self.encode_into(&mut out);
        out.freeze()
    }
}

/// A command reply: status code, text and (always, for python-ndn) a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlResponse {
    pub code: u32,
    pub text: String,
    pub body: Option<ControlParameters>,
}

impl ControlResponse {
    pub fn new(code: u32, text: impl Into<String>, body: ControlParameters) -> Self {
        ControlResponse {
            code,
            text: text.into(),
            body: Some(body),
        }
    }

    /// Whether the code is a success (< 400, as ndn-cxx's controller decides).
    pub fn is_ok(&self) -> bool {
        self.code < 400
    }

    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(64);
        put_nni(&mut b, tt::STATUS_CODE, u64::from(self.code));
        put_tlv(&mut b, tt::STATUS_TEXT, self.text.as_bytes());
        if let Some(body) = &self.body {
            body.encode_into(&mut b);
        }
        let mut out = BytesMut::with_capacity(b.len() + 4);
        put_tlv(&mut out, tt::CONTROL_RESPONSE, &b);
        out.freeze()
    }

    /// Decodes a whole ControlResponse TLV; StatusCode must precede StatusText.
    pub fn decode(tlv: Bytes) -> Result<Self, MgmtError> {
        let mut r = TlvReader::new(wire::single(tlv, tt::CONTROL_RESPONSE)?);
        let code = match r.next_element()? {
            Some((tt::STATUS_CODE, v)) => {
                u32::try_from(wire::nni(&v)?).map_err(|_| MgmtError::BadNni)?
            }
            _ => return Err(MgmtError::Missing("StatusCode")),
        };
        let text = match r.next_element()? {
            Some((tt::STATUS_TEXT, v)) => wire::utf8(&v)?,
            _ => return Err(MgmtError::Missing("StatusText")),
        };
        let mut body = None;
        while let Some((t, v)) = r.next_element()? {
            if t == tt::CONTROL_PARAMETERS {
                body = Some(ControlParameters::decode_value(v)?);
            }
        }
        Ok(ControlResponse { code, text, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example_body() -> ControlParameters {
        ControlParameters {
            name: Some("/example".parse().unwrap()),
            face_id: Some(256),
            origin: Some(0),
            cost: Some(0),
            flags: Some(1),
            ..Default::default()
        }
    }

    #[test]
    fn response_matches_python_ndn_vector_content() {
        // Content of vectors/rib_register_response.hex.
        let expected =
            hex::decode("65216601c867024f4b6818070908076578616d706c65690201006f01006a01006c0101")
                .unwrap();
        let r = ControlResponse::new(200, "OK", example_body());
        assert_eq!(r.encode().as_ref(), expected.as_slice());
        assert_eq!(ControlResponse::decode(Bytes::from(expected)).unwrap(), r);
    }

    #[test]
    fn parse_any_order_and_ignore_unknown() {
        // Flags before Name, an unknown even field (type 200) in between.
        let mut v = BytesMut::new();
        put_nni(&mut v, tt::FLAGS, 2);
        put_tlv(&mut v, 200, b"x");
        put_name(&mut v, &"/a/b".parse().unwrap());
        put_nni(&mut v, tt::COST, 7);
        let p = ControlParameters::decode_value(v.freeze()).unwrap();
        assert_eq!(p.flags, Some(2));
        assert_eq!(p.cost, Some(7));
        assert_eq!(p.name.unwrap().to_string(), "/a/b");
    }

    #[test]
    fn emits_ndn_cxx_order() {
        let p = ControlParameters {
            face_persistency: Some(0),
            flags: Some(0),
            local_uri: Some("udp4://127.0.0.1:6363".into()),
            uri: Some("udp4://127.0.0.1:7000".into()),
            face_id: Some(300),
            ..Default::default()
        };
        let enc = p.encode();
        let mut r = TlvReader::new(wire::single(enc.clone(), tt::CONTROL_PARAMETERS).unwrap());
        let mut types = Vec::new();
        while let Some((t, _)) = r.next_element().unwrap() {
            types.push(t);
        }
        assert_eq!(
            types,
            vec![
                tt::FACE_ID,
                tt::URI,
                tt::LOCAL_URI,
                tt::FLAGS,
                tt::FACE_PERSISTENCY
            ]
        );
        assert_eq!(ControlParameters::decode(enc).unwrap(), p);
    }

    #[test]
    fn strategy_nested_name_roundtrip() {
        let p = ControlParameters {
            name: Some("/x".parse().unwrap()),
            strategy: Some("/localhost/nfd/strategy/multicast".parse().unwrap()),
            ..Default::default()
        };
        assert_eq!(ControlParameters::decode(p.encode()).unwrap(), p);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(
            ControlParameters::decode(Bytes::from_static(&[0x68, 0x05, 0x69, 0x03, 1])).is_err()
        );
        assert!(ControlResponse::decode(Bytes::from_static(&[0x65, 0x00])).is_err());
    }
}
