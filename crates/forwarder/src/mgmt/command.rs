//! Classifying management Interests: signed commands (v0.3 or legacy
//! 4-component form, any signature type) and status dataset requests.

use icn_tlv::{Component, Interest, Name};

use super::params::ControlParameters;
use super::MgmtError;

/// ParametersSha256DigestComponent TLV-TYPE.
const PARAMS_SHA256: u32 = 2;
const GENERIC: u32 = 8;
/// Datasets this manager serves, as (module, dataset).
pub const DATASETS: &[(&str, &str)] = &[
    ("status", "general"),
    ("faces", "list"),
    ("fib", "list"),
    ("rib", "list"),
    ("strategy-choice", "list"),
    super::face_state::DATASET,
    super::face_query::DATASET,
    super::mcast_state::DATASET,
    super::limits_state::DATASET,
    super::cs_info::DATASET,
];

/// How a command Interest was signed. Only digests are checked (see
/// [`verify`]): NFD's default configuration accepts any signer (§3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// Signed Interest v0.3 (ApplicationParameters + params-sha256).
    V03,
    /// Legacy command Interest: timestamp, random, SignatureInfo, SignatureValue components.
    Legacy,
    /// No signature at all (accepted: the face scope is the authorization).
    Unsigned,
}

/// A decoded management request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Command {
        module: String,
        verb: String,
        params: Box<ControlParameters>,
        signing: Signing,
    },
    Dataset {
        module: String,
        dataset: String,
        /// Number of name components that identify the dataset request
        /// (prefix, module, dataset and any params-sha256); anything after
        /// them is a `v=`/`seg=` suffix of a follow-up segment Interest.
        base_len: usize,
    },
}

fn generic_str(c: &Component) -> Option<String> {
    if c.typ() != GENERIC {
        return None;
    }
    core::str::from_utf8(c.value()).ok().map(str::to_owned)
}

/// Whether `name` starts with `/localhost/nfd` or `/localhop/nfd`.
pub fn is_management_name(name: &Name) -> bool {
    let first = name.get(0).and_then(|c| generic_str(&c));
    let second = name.get(1).and_then(|c| generic_str(&c));
    matches!(first.as_deref(), Some("localhost") | Some("localhop"))
        && second.as_deref() == Some("nfd")
}

/// Decodes a management Interest into a command or dataset request.
pub fn classify(interest: &Interest) -> Result<Request, MgmtError> {
    let name = &interest.name;
    if !is_management_name(name) {
        return Err(MgmtError::NotManagement);
    }
    let module = name
        .get(2)
        .and_then(|c| generic_str(&c))
        .ok_or(MgmtError::Missing("module"))?;
    let verb = name
        .get(3)
        .and_then(|c| generic_str(&c))
        .ok_or(MgmtError::Missing("verb"))?;
    if DATASETS.iter().any(|(m, d)| *m == module && *d == verb) {
        let mut base_len = 4;
        // faces/query carries its FaceQueryFilter in the next component.
        if (module.as_str(), verb.as_str()) == super::face_query::DATASET {
            base_len = 5;
        }
        if name.get(base_len).is_some_and(|c| c.typ() == PARAMS_SHA256) {
            base_len += 1;
        }
        return Ok(Request::Dataset {
            module,
            dataset: verb,
            base_len,
        });
    }
    let pc = name.get(4).ok_or(MgmtError::Missing("ControlParameters"))?;
    if pc.typ() != GENERIC {
        return Err(MgmtError::Missing("ControlParameters"));
    }
    let params = ControlParameters::decode(pc.value().clone())?;
    let last = name.get(name.len() - 1);
    let signing = if last.as_ref().is_some_and(|c| c.typ() == PARAMS_SHA256)
        && interest.app_params.is_some()
    {
        Signing::V03
    } else if name.len() == 9
        && name
            .get(7)
            .is_some_and(|c| c.typ() == GENERIC && c.value().first() == Some(&0x16))
        && last
            .as_ref()
            .is_some_and(|c| c.value().first() == Some(&0x17))
    {
        Signing::Legacy
    } else {
        Signing::Unsigned
    };
    Ok(Request::Command {
        module,
        verb,
        params: Box::new(params),
        signing,
    })
}

/// Why [`verify`] rejected a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("ParametersSha256DigestComponent does not match the parameters")]
    ParamsDigest,
    #[error("DigestSha256 signature does not verify")]
    BadDigestSignature,
}

pub use icn_tlv::nfd::command::{signed_command, signed_command_with, SIG_DIGEST_SHA256};

const SIGNATURE_INFO: u32 = 0x16;
const SIGNATURE_VALUE: u32 = 0x17;
const SIGNATURE_TYPE: u32 = 0x1b;

/// Checks what can be checked without keys: the params-sha256 component of
/// a v0.3 command and, when the signature type is DigestSha256, the digest
/// (v0.3 and legacy forms). Every other signature type is accepted
/// unverified, as docs/protocol.md §0.1 item 8 requires. Needs the received
/// bytes (`interest.wire()`), which decoded Interests keep.
pub fn verify(interest: &Interest, signing: Signing) -> Result<(), VerifyError> {
    match signing {
        Signing::Unsigned => Ok(()),
        Signing::V03 => {
            if !interest.params_digest_ok() {
                return Err(VerifyError::ParamsDigest);
            }
            if interest.sig_type() == Some(SIG_DIGEST_SHA256) && !interest.verify_digest_sha256() {
                return Err(VerifyError::BadDigestSignature);
            }
            Ok(())
        }
        Signing::Legacy => verify_legacy(&interest.name),
    }
}

/// Legacy form `/…/<SignatureInfo>/<SignatureValue>`: the signed portion is
/// the TLVs of every name component but the last (verified against
/// python-ndn's `make_command`, vector rib_register_legacy_app.hex).
fn verify_legacy(name: &Name) -> Result<(), VerifyError> {
    let n = name.len();
    let (Some(info), Some(value)) = (name.get(n - 2), name.get(n - 1)) else {
        return Ok(());
    };
    let sig_type = element_value(info.value(), SIGNATURE_INFO)
        .and_then(|v| element_value(v, SIGNATURE_TYPE))
        .and_then(|v| icn_tlv::varnum::read_nni(v, SIGNATURE_TYPE).ok());
    if sig_type != Some(SIG_DIGEST_SHA256) {
        return Ok(());
    }
    let Some(sig) = element_value(value.value(), SIGNATURE_VALUE) else {
        return Err(VerifyError::BadDigestSignature);
    };
    let signed = &name.value()[..name.prefix_value_len(n - 1)];
    let digest = <sha2::Sha256 as sha2::Digest>::digest(signed);
    if digest[..] == *sig {
        Ok(())
    } else {
        Err(VerifyError::BadDigestSignature)
    }
}

/// The value of the TLV at the front of `b` when its type is `typ`;
/// `None` otherwise (bytes after it are ignored).
fn element_value(b: &[u8], typ: u32) -> Option<&[u8]> {
    let (e, _) = icn_tlv::element::Element::parse(b).ok()?;
    (e.typ() == typ).then(|| e.value())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn vector(name: &str) -> Bytes {
        let path = format!("{}/../tlv/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("vector file");
        Bytes::from(hex::decode(text.trim()).unwrap())
    }

    #[test]
    fn appv2_register_vector() {
        let i = Interest::decode(vector("rib_register_appv2.hex")).unwrap();
        match classify(&i).unwrap() {
            Request::Command {
                module,
                verb,
                params,
                signing,
            } => {
                assert_eq!((module.as_str(), verb.as_str()), ("rib", "register"));
                assert_eq!(params.name.unwrap().to_string(), "/example");
                assert_eq!(signing, Signing::V03);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn legacy_register_vector() {
        let i = Interest::decode(vector("rib_register_legacy_app.hex")).unwrap();
        match classify(&i).unwrap() {
            Request::Command {
                params, signing, ..
            } => {
                assert_eq!(params.name.unwrap().to_string(), "/example");
                assert_eq!(signing, Signing::Legacy);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn vectors_verify_and_tampering_is_caught() {
        for v in ["rib_register_appv2.hex", "rib_register_legacy_app.hex"] {
            let wire = vector(v);
            let i = Interest::decode(wire.clone()).unwrap();
            let Request::Command { signing, .. } = classify(&i).unwrap() else {
                panic!()
            };
            assert_eq!(verify(&i, signing), Ok(()), "{v}");
        }
        // Flip one bit of the appv2 signature value (the last octet): the
        // params-sha256 component covers it, so that check fires first.
        let mut w = vector("rib_register_appv2.hex").to_vec();
        *w.last_mut().unwrap() ^= 1;
        let i = Interest::decode(Bytes::from(w)).unwrap();
        assert_eq!(verify(&i, Signing::V03), Err(VerifyError::ParamsDigest));
        // A wrong DigestSha256 value under a correct params-sha256
        // (`encode` recomputes the component).
        let mut i = Interest::decode(vector("rib_register_appv2.hex")).unwrap();
        let mut sig = i.sig_value.clone().unwrap().to_vec();
        sig[0] ^= 1;
        i.sig_value = Some(Bytes::from(sig));
        let i = Interest::decode(i.encode()).unwrap();
        assert!(i.params_digest_ok());
        assert_eq!(
            verify(&i, Signing::V03),
            Err(VerifyError::BadDigestSignature)
        );
        // Flip a bit of the legacy signature value component.
        let mut w = vector("rib_register_legacy_app.hex").to_vec();
        let legacy = Interest::decode(Bytes::from(w.clone())).unwrap();
        let sig = legacy.name.get(8).unwrap().value().clone();
        let pos = w.windows(sig.len()).position(|x| x == &sig[..]).unwrap();
        w[pos + sig.len() - 1] ^= 1;
        let i = Interest::decode(Bytes::from(w)).unwrap();
        assert_eq!(
            verify(&i, Signing::Legacy),
            Err(VerifyError::BadDigestSignature)
        );
    }

    #[test]
    fn signed_command_roundtrips_through_verify() {
        let p = ControlParameters {
            name: Some("/a/b".parse().unwrap()),
            ..Default::default()
        };
        let wire = signed_command("rib", "register", &p, 7, 1_700_000_000_000).encode();
        let i = Interest::decode(wire).unwrap();
        let Request::Command {
            module,
            verb,
            params,
            signing,
        } = classify(&i).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (module.as_str(), verb.as_str(), signing),
            ("rib", "register", Signing::V03)
        );
        assert_eq!(params.name, p.name);
        assert!(i.params_digest_ok());
        assert!(i.verify_digest_sha256());
        assert_eq!(verify(&i, signing), Ok(()));
    }

    #[test]
    fn dataset_requests() {
        let i = Interest::new("/localhost/nfd/faces/list".parse().unwrap());
        assert_eq!(
            classify(&i).unwrap(),
            Request::Dataset {
                module: "faces".into(),
                dataset: "list".into(),
                base_len: 4
            }
        );
        let i = Interest::new("/localhop/nfd/status/general/v=5/seg=1".parse().unwrap());
        assert!(matches!(
            classify(&i).unwrap(),
            Request::Dataset { base_len: 4, .. }
        ));
        let i = Interest::new("/example/nfd/faces/list".parse().unwrap());
        assert_eq!(classify(&i), Err(MgmtError::NotManagement));
        let i = Interest::new("/localhost/nfd/rib/register".parse().unwrap());
        assert!(classify(&i).is_err());
    }
}
