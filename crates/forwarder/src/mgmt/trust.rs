//! Signature checks for management commands from non-local faces
//! (`/localhop/nfd/rib/...`, NFD's prefix propagation): the command must be
//! a v0.3 signed Interest whose KeyLocator names a key under a configured
//! trust anchor's prefix, whose signature verifies with that anchor's public
//! key (Ed25519 or ECDSA P-256), and whose SignatureTime is within NFD's
//! ±2 min grace and newer than the last one accepted from that key (NFD's
//! `ValidationPolicyCommandInterest`, docs/protocol.md §3.7), so a captured
//! command cannot be replayed.

use hashbrown::HashMap;
use icn_tlv::element::Elements;
use icn_tlv::{types, Interest, Name};
use serde::Deserialize;

/// SignatureSha256WithEcdsa.
pub const SIG_ECDSA_SHA256: u64 = 3;
/// SignatureEd25519.
pub const SIG_ED25519: u64 = 5;
const SIGNATURE_TIME: u32 = 40;
/// NFD's command-Interest grace interval.
const GRACE_MS: u64 = 120_000;
/// Keys whose last timestamp is remembered; more are forgotten (all at once).
const MAX_KEYS: usize = 1024;

/// `[mgmt]`: who may use management from a non-local face.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MgmtConfig {
    /// Serve `/localhop/nfd/rib/register|unregister` to non-local faces when
    /// signed by a trust anchor; off: every management Interest from a
    /// non-local face is refused.
    pub localhop: bool,
    /// Keys allowed to sign localhop commands.
    pub trust_anchor: Vec<TrustAnchorConfig>,
    /// At most one warning per peer face in this many seconds about refused
    /// management Interests (they are always counted).
    pub refusal_log_interval_s: u64,
}

impl Default for MgmtConfig {
    fn default() -> Self {
        MgmtConfig {
            localhop: false,
            trust_anchor: Vec::new(),
            refusal_log_interval_s: 60,
        }
    }
}

/// One `[[mgmt.trust_anchor]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustAnchorConfig {
    /// KeyLocator names this key signs under, e.g. `/example/operator/KEY`.
    pub key_prefix: String,
    /// `ed25519` or `ecdsa-p256`.
    pub algorithm: String,
    /// Hex: 32 octets (Ed25519) or a SEC1 point (P-256, 33 or 65 octets).
    pub public_key_hex: String,
}

/// A verifying key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    Ed25519(ed25519_dalek::VerifyingKey),
    P256(p256::ecdsa::VerifyingKey),
}

/// A parsed trust anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustAnchor {
    pub key_prefix: Name,
    pub key: PublicKey,
}

impl MgmtConfig {
    /// The parsed anchors; `Err((key, reason))` names the bad config key.
    pub fn anchors(&self) -> Result<Vec<TrustAnchor>, (String, String)> {
        let anchors = self
            .trust_anchor
            .iter()
            .enumerate()
            .map(|(i, a)| {
                a.parse()
                    .map_err(|(k, why)| (format!("mgmt.trust_anchor[{i}].{k}"), why))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if self.localhop && anchors.is_empty() {
            return Err((
                "mgmt.localhop".into(),
                "needs at least one [[mgmt.trust_anchor]]".into(),
            ));
        }
        Ok(anchors)
    }
}

impl TrustAnchorConfig {
    fn parse(&self) -> Result<TrustAnchor, (&'static str, String)> {
        let key_prefix: Name = self
            .key_prefix
            .parse()
            .map_err(|e| ("key_prefix", format!("{e:?}")))?;
        let raw = hex::decode(self.public_key_hex.trim())
            .map_err(|e| ("public_key_hex", e.to_string()))?;
        let key = match self.algorithm.as_str() {
            "ed25519" => {
                let b: [u8; 32] = raw
                    .as_slice()
                    .try_into()
                    .map_err(|_| ("public_key_hex", "an Ed25519 key is 32 octets".into()))?;
                PublicKey::Ed25519(
                    ed25519_dalek::VerifyingKey::from_bytes(&b)
                        .map_err(|e| ("public_key_hex", e.to_string()))?,
                )
            }
            "ecdsa-p256" => PublicKey::P256(
                p256::ecdsa::VerifyingKey::from_sec1_bytes(&raw)
                    .map_err(|e| ("public_key_hex", e.to_string()))?,
            ),
            other => {
                return Err((
                    "algorithm",
                    format!("{other}: expected ed25519 or ecdsa-p256"),
                ))
            }
        };
        Ok(TrustAnchor { key_prefix, key })
    }
}

/// Why a signed command was not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    #[error("not a v0.3 signed Interest with a KeyLocator name and SignatureTime")]
    Unsigned,
    #[error("no trust anchor covers the KeyLocator with this signature type")]
    UntrustedKey,
    #[error("signature does not verify")]
    BadSignature,
    #[error("SignatureTime outside the grace interval or not newer than the last")]
    Stale,
}

/// The fields of an InterestSignatureInfo this check needs.
struct SigInfo {
    sig_type: u64,
    key_name: Name,
    time_ms: u64,
}

fn sig_info(value: &[u8]) -> Option<SigInfo> {
    let (mut sig_type, mut key_name, mut time_ms) = (None, None, None);
    for e in Elements::new(value) {
        let e = e.ok()?;
        match e.typ() {
            types::SIGNATURE_TYPE => sig_type = icn_tlv::varnum::read_nni(e.value(), 0).ok(),
            types::KEY_LOCATOR => {
                let n = Elements::new(e.value()).next()?.ok()?;
                if n.typ() == types::NAME {
                    key_name = Name::from_value(bytes::Bytes::copy_from_slice(n.value())).ok();
                }
            }
            SIGNATURE_TIME => time_ms = icn_tlv::varnum::read_nni(e.value(), 0).ok(),
            _ => {}
        }
    }
    Some(SigInfo {
        sig_type: sig_type?,
        key_name: key_name?,
        time_ms: time_ms?,
    })
}

/// Checks signed commands against the anchors and remembers each key's
/// last accepted SignatureTime.
#[derive(Debug, Default)]
pub struct TrustChecker {
    anchors: Vec<TrustAnchor>,
    last_time_ms: HashMap<Name, u64>,
}

impl TrustChecker {
    pub fn new(anchors: Vec<TrustAnchor>) -> Self {
        TrustChecker {
            anchors,
            last_time_ms: HashMap::new(),
        }
    }

    /// Replaces the anchors (a reload); the last SignatureTime of each key
    /// is kept, so a command accepted before cannot be replayed after.
    pub fn set_anchors(&mut self, anchors: Vec<TrustAnchor>) {
        self.anchors = anchors;
    }

    /// Verifies `interest` (decoded from the wire) at Unix time `now_ms`.
    pub fn check(&mut self, interest: &Interest, now_ms: u64) -> Result<(), TrustError> {
        let (Some(info), Some(sig), Some(signed)) = (
            interest.sig_info.as_deref().and_then(sig_info),
            interest.sig_value.as_deref(),
            interest.signed_portion(),
        ) else {
            return Err(TrustError::Unsigned);
        };
        if !interest.params_digest_ok() {
            return Err(TrustError::BadSignature);
        }
        let mut covered = false;
        let verified = self
            .anchors
            .iter()
            .filter(|a| a.key_prefix.is_prefix_of(&info.key_name))
            .any(|a| match &a.key {
                PublicKey::Ed25519(k) if info.sig_type == SIG_ED25519 => {
                    covered = true;
                    ed25519_dalek::Signature::from_slice(sig)
                        .is_ok_and(|s| k.verify_strict(&signed, &s).is_ok())
                }
                PublicKey::P256(k) if info.sig_type == SIG_ECDSA_SHA256 => {
                    covered = true;
                    use p256::ecdsa::signature::Verifier;
                    p256::ecdsa::Signature::from_der(sig)
                        .is_ok_and(|s| k.verify(&signed, &s).is_ok())
                }
                _ => false,
            });
        if !covered {
            return Err(TrustError::UntrustedKey);
        }
        if !verified {
            return Err(TrustError::BadSignature);
        }
        let last = self.last_time_ms.get(&info.key_name).copied();
        if info.time_ms.abs_diff(now_ms) > GRACE_MS || last.is_some_and(|l| info.time_ms <= l) {
            return Err(TrustError::Stale);
        }
        if self.last_time_ms.len() >= MAX_KEYS {
            self.last_time_ms.clear();
        }
        self.last_time_ms.insert(info.key_name, info.time_ms);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::command::signed_command_with;
    use crate::mgmt::ControlParameters;
    use bytes::Bytes;

    const SEED: [u8; 32] = [7; 32];
    const NOW_MS: u64 = 1_700_000_000_000;

    fn ed_anchor(prefix: &str) -> TrustAnchor {
        let k = ed25519_dalek::SigningKey::from_bytes(&SEED);
        TrustAnchor {
            key_prefix: prefix.parse().unwrap(),
            key: PublicKey::Ed25519(k.verifying_key()),
        }
    }

    fn ed_command(seed: [u8; 32], key: &str, time_ms: u64) -> Interest {
        use ed25519_dalek::Signer;
        let k = ed25519_dalek::SigningKey::from_bytes(&seed);
        let p = ControlParameters {
            name: Some("/p".parse().unwrap()),
            ..Default::default()
        };
        let i = signed_command_with(
            "localhop",
            "rib",
            "register",
            &p,
            SIG_ED25519,
            Some(&key.parse().unwrap()),
            1,
            time_ms,
            |m| k.sign(m).to_bytes().to_vec(),
        );
        Interest::decode(i.encode()).unwrap()
    }

    #[test]
    fn ed25519_command_verifies_once_and_rejects_forgeries() {
        let mut c = TrustChecker::new(vec![ed_anchor("/op/KEY")]);
        let good = ed_command(SEED, "/op/KEY/1", NOW_MS);
        assert_eq!(c.check(&good, NOW_MS + 5), Ok(()));
        // A replay of the same command is stale.
        assert_eq!(c.check(&good, NOW_MS + 6), Err(TrustError::Stale));
        // Another key claiming the anchor's name.
        let forged = ed_command([9; 32], "/op/KEY/1", NOW_MS + 10);
        assert_eq!(c.check(&forged, NOW_MS + 10), Err(TrustError::BadSignature));
        // A key name outside the anchor's prefix.
        let other = ed_command(SEED, "/other/KEY/1", NOW_MS + 20);
        assert_eq!(c.check(&other, NOW_MS + 20), Err(TrustError::UntrustedKey));
        // Too old.
        let old = ed_command(SEED, "/op/KEY/1", NOW_MS - 3 * GRACE_MS);
        assert_eq!(c.check(&old, NOW_MS), Err(TrustError::Stale));
        // A tampered signature value.
        let mut t = ed_command(SEED, "/op/KEY/1", NOW_MS + 30);
        let mut sig = t.sig_value.clone().unwrap().to_vec();
        sig[3] ^= 1;
        t.sig_value = Some(Bytes::from(sig));
        let t = Interest::decode(t.encode()).unwrap();
        assert_eq!(c.check(&t, NOW_MS + 30), Err(TrustError::BadSignature));
        // The DigestSha256 commands local clients send are not trusted here.
        let d = Interest::decode(
            crate::mgmt::command::signed_command("rib", "register", &Default::default(), 1, NOW_MS)
                .encode(),
        )
        .unwrap();
        assert_eq!(c.check(&d, NOW_MS), Err(TrustError::Unsigned));
    }

    #[test]
    fn p256_command_verifies() {
        use p256::ecdsa::signature::Signer;
        let sk = p256::ecdsa::SigningKey::from_slice(&[3; 32]).unwrap();
        let vk = *sk.verifying_key();
        let cfg = MgmtConfig {
            localhop: true,
            trust_anchor: vec![TrustAnchorConfig {
                key_prefix: "/op".into(),
                algorithm: "ecdsa-p256".into(),
                public_key_hex: hex::encode(vk.to_encoded_point(false).as_bytes()),
            }],
            ..Default::default()
        };
        let mut c = TrustChecker::new(cfg.anchors().unwrap());
        let i = signed_command_with(
            "localhop",
            "rib",
            "unregister",
            &ControlParameters::default(),
            SIG_ECDSA_SHA256,
            Some(&"/op/KEY/x".parse().unwrap()),
            2,
            NOW_MS,
            |m| {
                let s: p256::ecdsa::Signature = sk.sign(m);
                s.to_der().as_bytes().to_vec()
            },
        );
        let i = Interest::decode(i.encode()).unwrap();
        assert_eq!(c.check(&i, NOW_MS), Ok(()));
        // The same signature checked as Ed25519 is not covered by the anchor.
        let mut c = TrustChecker::new(vec![ed_anchor("/op")]);
        assert_eq!(c.check(&i, NOW_MS), Err(TrustError::UntrustedKey));
    }

    #[test]
    fn bad_anchor_config_names_the_key() {
        let mut cfg = MgmtConfig {
            localhop: true,
            ..Default::default()
        };
        assert_eq!(cfg.anchors().unwrap_err().0, "mgmt.localhop");
        cfg.trust_anchor.push(TrustAnchorConfig {
            key_prefix: "/a".into(),
            algorithm: "rsa".into(),
            public_key_hex: "00".into(),
        });
        assert_eq!(
            cfg.anchors().unwrap_err().0,
            "mgmt.trust_anchor[0].algorithm"
        );
        cfg.trust_anchor[0].algorithm = "ed25519".into();
        assert_eq!(
            cfg.anchors().unwrap_err().0,
            "mgmt.trust_anchor[0].public_key_hex"
        );
    }
}
