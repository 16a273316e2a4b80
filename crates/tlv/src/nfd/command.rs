//! Building v0.3 signed command Interests
//! `/<scope>/nfd/<module>/<verb>/<ControlParameters>` (docs/protocol.md §3.1):
//! empty ApplicationParameters, InterestSignatureInfo {SignatureType,
//! [KeyLocator], SignatureNonce (8 octets), SignatureTime (8 octets)}, and
//! the params-sha256 component appended on encode. The shape python-ndn
//! appv2 and NDNts send (vector `rib_register_appv2.hex`).

use bytes::{BufMut, Bytes, BytesMut};
use core::time::Duration;
use sha2::{Digest, Sha256};

use super::params::ControlParameters;
use crate::element::{write_bytes_tlv, write_header, write_nni_tlv};
use crate::{Component, Interest, Name};

/// SignatureType of DigestSha256.
pub const SIG_DIGEST_SHA256: u64 = 0;
const SIGNATURE_TYPE: u32 = 27;
const KEY_LOCATOR: u32 = 28;
const APPLICATION_PARAMETERS: u32 = 36;
const SIGNATURE_NONCE: u32 = 38;
const SIGNATURE_TIME: u32 = 40;
const INTEREST_SIGNATURE_INFO: u32 = 44;

/// The inputs of a command the caller picks (clock, randomness), so that
/// building stays deterministic and testable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSigning {
    /// SignatureTime, ms since the Unix epoch.
    pub time_ms: u64,
    /// SignatureNonce (8 octets).
    pub sig_nonce: [u8; 8],
    /// Interest Nonce.
    pub nonce: u32,
}

impl CommandSigning {
    /// One 64-bit nonce for both: SignatureNonce is its 8 big-endian
    /// octets, the Interest Nonce its low 32 bits.
    pub fn from_nonce(nonce: u64, time_ms: u64) -> Self {
        CommandSigning {
            time_ms,
            sig_nonce: nonce.to_be_bytes(),
            nonce: nonce as u32,
        }
    }
}

/// Builds a command with SignatureType `sig_type`, an optional KeyLocator
/// name, and the signature value `sign` returns for the signed portion
/// (name components, empty ApplicationParameters, InterestSignatureInfo).
/// `params` is an encoded ControlParameters TLV. The returned Interest's
/// `name` lacks the params-sha256 component until encoded: use
/// `encoded_name()` or decode `encode()` to match the reply.
#[allow(clippy::too_many_arguments)] // one per part of the command
pub fn command_interest(
    scope: &str,
    module: &str,
    verb: &str,
    params: Bytes,
    sig_type: u64,
    key_locator: Option<&Name>,
    s: CommandSigning,
    sign: impl FnOnce(&[u8]) -> Vec<u8>,
) -> Interest {
    let name = Name::from_components([
        Component::generic(scope.to_owned()),
        Component::generic("nfd"),
        Component::generic(module.to_owned()),
        Component::generic(verb.to_owned()),
        Component::generic(params),
    ]);
    let mut info = BytesMut::new();
    write_nni_tlv(&mut info, SIGNATURE_TYPE, sig_type);
    if let Some(k) = key_locator {
        let mut kl = BytesMut::new();
        k.encode_into(&mut kl);
        write_bytes_tlv(&mut info, KEY_LOCATOR, &kl);
    }
    write_bytes_tlv(&mut info, SIGNATURE_NONCE, &s.sig_nonce);
    // SignatureTime is written as 8 octets, like python-ndn.
    write_header(&mut info, SIGNATURE_TIME, 8);
    info.put_u64(s.time_ms);
    // Signed portion: name components (no params-sha256), then the
    // ApplicationParameters TLV (empty) and the InterestSignatureInfo TLV.
    let mut signed = name.value().to_vec();
    write_header(&mut signed, APPLICATION_PARAMETERS, 0);
    write_bytes_tlv(&mut signed, INTEREST_SIGNATURE_INFO, &info);
    let sig = sign(&signed);
    let mut i = Interest::new(name);
    i.app_params = Some(Bytes::new());
    i.sig_info = Some(info.freeze());
    i.sig_value = Some(Bytes::from(sig));
    i.lifetime = Some(Duration::from_millis(1000));
    i.nonce = Some(s.nonce);
    i
}

/// A `/localhost/nfd` command signed with DigestSha256.
pub fn digest_command(module: &str, verb: &str, params: Bytes, s: CommandSigning) -> Interest {
    command_interest(
        "localhost",
        module,
        verb,
        params,
        SIG_DIGEST_SHA256,
        None,
        s,
        |m| Sha256::digest(m).to_vec(),
    )
}

/// [`digest_command`] with one 64-bit nonce ([`CommandSigning::from_nonce`]).
pub fn signed_command(
    module: &str,
    verb: &str,
    params: &ControlParameters,
    nonce: u64,
    time_ms: u64,
) -> Interest {
    digest_command(
        module,
        verb,
        params.encode(),
        CommandSigning::from_nonce(nonce, time_ms),
    )
}

/// [`command_interest`] from decoded parameters and one 64-bit nonce.
#[allow(clippy::too_many_arguments)] // one per part of the command
pub fn signed_command_with(
    scope: &str,
    module: &str,
    verb: &str,
    params: &ControlParameters,
    sig_type: u64,
    key_locator: Option<&Name>,
    nonce: u64,
    time_ms: u64,
    sign: impl FnOnce(&[u8]) -> Vec<u8>,
) -> Interest {
    command_interest(
        scope,
        module,
        verb,
        params.encode(),
        sig_type,
        key_locator,
        CommandSigning::from_nonce(nonce, time_ms),
        sign,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(name: &str) -> Vec<u8> {
        let path = format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
        hex::decode(std::fs::read_to_string(path).unwrap().trim()).unwrap()
    }

    #[test]
    fn rib_register_matches_python_ndn_appv2_vector() {
        let s = CommandSigning {
            time_ms: 1_700_000_000_000,
            sig_nonce: [1, 2, 3, 4, 5, 6, 7, 8],
            nonce: 0x0a0b_0c0d,
        };
        let params = ControlParameters {
            name: Some("/example".parse().unwrap()),
            ..Default::default()
        };
        let i = digest_command("rib", "register", params.encode(), s);
        assert_eq!(i.encode().to_vec(), vector("rib_register_appv2.hex"));
        let back = Interest::decode(i.encode()).unwrap();
        assert!(back.verify_digest_sha256());
        assert!(back.params_digest_ok());
    }

    #[test]
    fn one_nonce_feeds_both_fields() {
        let s = CommandSigning::from_nonce(0x0102_0304_0506_0708, 5);
        assert_eq!(s.sig_nonce, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(s.nonce, 0x0506_0708);
        let i = signed_command("rib", "register", &ControlParameters::default(), 7, 9);
        let back = Interest::decode(i.encode()).unwrap();
        assert!(back.verify_digest_sha256() && back.params_digest_ok());
        assert_eq!(back.nonce, Some(7));
    }
}
