//! The little NFD management a producer needs: `rib/register` as a v0.3
//! signed command Interest (DigestSha256, the shape python-ndn appv2 sends)
//! and the ControlResponse it gets back. The TLVs are icn-tlv's
//! ([`icn_tlv::nfd`]); this module only adds the producer's view of a reply.

use bytes::Bytes;
use icn_tlv::nfd::command::digest_command;
use icn_tlv::nfd::{self, ControlParameters};
use icn_tlv::{Interest, Name};

pub use icn_tlv::nfd::command::CommandSigning;

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

/// A decoded ControlResponse, as much of it as a producer reads.
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
    /// Decodes the Content of a command reply (one ControlResponse TLV)
    /// with icn-tlv's decoder.
    pub fn decode(content: &[u8]) -> Result<ControlResponse, MgmtError> {
        let r = nfd::ControlResponse::decode(Bytes::copy_from_slice(content))
            .map_err(|_| MgmtError::Malformed)?;
        let body = r.body.unwrap_or_default();
        Ok(ControlResponse {
            code: u64::from(r.code),
            text: r.text,
            face_id: body.face_id,
            name: body.name,
        })
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

/// `ControlParameters{Name[, Origin, Cost]}` as a TLV.
pub fn register_parameters(prefix: &Name, origin: Option<u64>, cost: Option<u64>) -> Bytes {
    ControlParameters {
        name: Some(prefix.clone()),
        origin,
        cost,
        ..ControlParameters::default()
    }
    .encode()
}

/// Builds a signed Interest v0.3 command `/localhost/nfd/<module>/<verb>/<params>`
/// with DigestSha256, empty ApplicationParameters and lifetime 1000 ms, as
/// python-ndn's appv2 does (vectors/rib_register_appv2.hex).
pub fn command_interest(module: &str, verb: &str, params: Bytes, s: CommandSigning) -> Interest {
    digest_command(module, verb, params, s)
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
    use bytes::BytesMut;
    use icn_tlv::element::{write_bytes_tlv, write_nni_tlv};
    use icn_tlv::nfd::params::tt::{CONTROL_RESPONSE, STATUS_CODE, STATUS_TEXT};

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rib_register_matches_python_ndn_vector() {
        let want = hex(include_str!("../../tlv/testdata/rib_register_appv2.hex").trim());
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
        let want = hex(include_str!("../../tlv/testdata/rib_register_response.hex").trim());
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
