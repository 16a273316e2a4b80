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
];

/// How a command Interest was signed (the signature itself is not checked:
/// NFD's default configuration accepts any signer, see protocol.md §3.7).
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
        if name.get(4).is_some_and(|c| c.typ() == PARAMS_SHA256) {
            base_len = 5;
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

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn vector(name: &str) -> Bytes {
        let path = format!(
            "{}/../../../shared/vectors/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path)
            .or_else(|_| std::fs::read_to_string(format!("/work/shared/vectors/{name}")))
            .expect("vector file");
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
