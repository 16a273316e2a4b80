//! The little NFD management a producer needs: `rib/register` as a v0.3
//! signed command Interest (DigestSha256, the shape python-ndn appv2 sends)
//! and the ControlResponse it gets back.
//!
//! The full management TLV set lives in the forwarder crate; a client only
//! needs these few numbers (protocol.md §3.1–3.3).

use bytes::{BufMut, Bytes, BytesMut};
use cc_core::Duration;
use icn_tlv::element::{write_bytes_tlv, write_header, write_nni_tlv, Element};
use icn_tlv::{Component, Interest, Name};
use sha2::{Digest, Sha256};

const CONTROL_PARAMETERS: u32 = 104;
const CONTROL_RESPONSE: u32 = 101;
const STATUS_CODE: u32 = 102;
const STATUS_TEXT: u32 = 103;
const FACE_ID: u32 = 105;
const COST: u32 = 106;
const ORIGIN: u32 = 111;
const NAME: u32 = 7;
const APPLICATION_PARAMETERS: u32 = 36;
const INTEREST_SIGNATURE_INFO: u32 = 44;
const SIGNATURE_TYPE: u32 = 27;
const SIGNATURE_NONCE: u32 = 38;
const SIGNATURE_TIME: u32 = 40;
const PARAMETERS_SHA256_DIGEST: u32 = 2;

/// Route flag CHILD_INHERIT (ndn-cxx sets it on registrations).
pub const ROUTE_FLAG_CHILD_INHERIT: u64 = 1;

/// Management errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MgmtError {
    #[error("malformed ControlResponse")]
    Malformed,
    #[error("command failed: {code} {text}")]
    Status { code: u64, text: String },
}

/// A decoded ControlResponse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlResponse {
    pub code: u64,
    pub text: String,
    /// FaceId of the body's ControlParameters, when present.
    pub face_id: Option<u64>,
    /// Name of the body's ControlParameters, when present.
    pub name: Option<Name>,
}

impl ControlResponse {
    /// Decodes the Content of a command reply (one ControlResponse TLV).
    pub fn decode(content: &[u8]) -> Result<ControlResponse, MgmtError> {
        let el = Element::parse_exact(content).map_err(|_| MgmtError::Malformed)?;
        if el.typ() != CONTROL_RESPONSE {
            return Err(MgmtError::Malformed);
        }
        let mut r = ControlResponse {
            code: 0,
            text: String::new(),
            face_id: None,
            name: None,
        };
        let mut saw_code = false;
        for c in el.children() {
            let c = c.map_err(|_| MgmtError::Malformed)?;
            match c.typ() {
                STATUS_CODE => {
                    r.code = read_nni(c.value()).ok_or(MgmtError::Malformed)?;
                    saw_code = true;
                }
                STATUS_TEXT => r.text = String::from_utf8_lossy(c.value()).into_owned(),
                CONTROL_PARAMETERS => {
                    for p in c.children() {
                        let p = p.map_err(|_| MgmtError::Malformed)?;
                        match p.typ() {
                            FACE_ID => r.face_id = read_nni(p.value()),
                            NAME => {
                                r.name = Name::from_value(Bytes::copy_from_slice(p.value())).ok()
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if !saw_code {
            return Err(MgmtError::Malformed);
        }
        Ok(r)
    }

    /// `Ok` for 2xx codes, the status as an error otherwise.
    pub fn into_result(self) -> Result<ControlResponse, MgmtError> {
        if (200..300).contains(&self.code) {
            Ok(self)
        } else {
            Err(MgmtError::Status {
                code: self.code,
                text: self.text,
            })
        }
    }
}

fn read_nni(v: &[u8]) -> Option<u64> {
    match v.len() {
        1 | 2 | 4 | 8 => Some(v.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b))),
        _ => None,
    }
}

/// Inputs of a command Interest that the caller picks (clock, randomness).
#[derive(Debug, Clone, Copy)]
pub struct CommandSigning {
    /// SignatureTime, ms since the Unix epoch.
    pub time_ms: u64,
    /// SignatureNonce (8 octets).
    pub sig_nonce: [u8; 8],
    /// Interest Nonce.
    pub nonce: u32,
}

/// `ControlParameters{Name[, Origin, Cost, Flags]}` as a TLV.
pub fn register_parameters(prefix: &Name, origin: Option<u64>, cost: Option<u64>) -> Bytes {
    let mut inner = BytesMut::new();
    prefix.encode_into(&mut inner);
    if let Some(o) = origin {
        write_nni_tlv(&mut inner, ORIGIN, o);
    }
    if let Some(c) = cost {
        write_nni_tlv(&mut inner, COST, c);
    }
    let mut out = BytesMut::new();
    write_bytes_tlv(&mut out, CONTROL_PARAMETERS, &inner);
    out.freeze()
}

/// Builds a signed Interest v0.3 command `/localhost/nfd/<module>/<verb>/<params>`
/// with DigestSha256, empty ApplicationParameters and lifetime 1000 ms, as
/// python-ndn's appv2 does (vectors/rib_register_appv2.hex).
pub fn command_interest(module: &str, verb: &str, params: Bytes, s: CommandSigning) -> Interest {
    let name = Name::from_components([
        Component::generic(Bytes::from_static(b"localhost")),
        Component::generic(Bytes::from_static(b"nfd")),
        Component::generic(Bytes::copy_from_slice(module.as_bytes())),
        Component::generic(Bytes::copy_from_slice(verb.as_bytes())),
        Component::generic(params),
    ]);
    let mut sig_info = BytesMut::new();
    write_nni_tlv(&mut sig_info, SIGNATURE_TYPE, 0);
    write_bytes_tlv(&mut sig_info, SIGNATURE_NONCE, &s.sig_nonce);
    // SignatureTime is written as 8 octets, like python-ndn.
    write_header(&mut sig_info, SIGNATURE_TIME, 8);
    sig_info.put_u64(s.time_ms);
    let sig_info = sig_info.freeze();

    let mut h = Sha256::new();
    let mut comp = BytesMut::new();
    for c in name.components() {
        if c.typ() != PARAMETERS_SHA256_DIGEST {
            comp.clear();
            c.encode_into(&mut comp);
            h.update(&comp);
        }
    }
    let mut tail = BytesMut::new();
    write_header(&mut tail, APPLICATION_PARAMETERS, 0);
    write_bytes_tlv(&mut tail, INTEREST_SIGNATURE_INFO, &sig_info);
    h.update(&tail);
    let sig_value: [u8; 32] = h.finalize().into();

    let mut i = Interest::new(name);
    i.nonce = Some(s.nonce);
    i.lifetime = Some(Duration::from_millis(1000));
    i.app_params = Some(Bytes::new());
    i.sig_info = Some(sig_info);
    i.sig_value = Some(Bytes::copy_from_slice(&sig_value));
    i
}

/// The rib/register command for `prefix`.
pub fn rib_register(prefix: &Name, s: CommandSigning) -> Interest {
    command_interest(
        "rib",
        "register",
        register_parameters(prefix, None, None),
        s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rib_register_matches_python_ndn_vector() {
        let want = hex(include_str!("../../../../shared/vectors/rib_register_appv2.hex").trim());
        let s = CommandSigning {
            time_ms: 1_700_000_000_000,
            sig_nonce: [1, 2, 3, 4, 5, 6, 7, 8],
            nonce: 0x0a0b_0c0d,
        };
        let i = rib_register(&"/example".parse().unwrap(), s);
        assert_eq!(i.encode().to_vec(), want);
        let back = Interest::decode(i.encode()).unwrap();
        assert!(back.verify_digest_sha256());
        assert!(back.params_digest_ok());
    }

    #[test]
    fn control_response_decodes_and_checks_status() {
        let want = hex(include_str!("../../../../shared/vectors/rib_register_response.hex").trim());
        let d = icn_tlv::Data::decode(Bytes::from(want)).unwrap();
        let r = ControlResponse::decode(&d.content).unwrap();
        assert_eq!(r.code, 200);
        assert_eq!(r.face_id, Some(256));
        assert_eq!(r.name, Some("/example".parse().unwrap()));
        assert!(r.into_result().is_ok());
        let mut bad = BytesMut::new();
        let mut inner = BytesMut::new();
        write_nni_tlv(&mut inner, STATUS_CODE, 403);
        write_bytes_tlv(&mut inner, STATUS_TEXT, b"authorization rejected");
        write_bytes_tlv(&mut bad, CONTROL_RESPONSE, &inner);
        let e = ControlResponse::decode(&bad)
            .unwrap()
            .into_result()
            .unwrap_err();
        assert_eq!(
            e,
            MgmtError::Status {
                code: 403,
                text: "authorization rejected".into()
            }
        );
        assert_eq!(
            ControlResponse::decode(&[0x65, 0x00]),
            Err(MgmtError::Malformed)
        );
        assert_eq!(
            ControlResponse::decode(&[0x06, 0x00]),
            Err(MgmtError::Malformed)
        );
    }
}
