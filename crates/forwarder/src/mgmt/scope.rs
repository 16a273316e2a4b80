//! Management scope, as NFD has it: local faces (Unix, loopback TCP, and
//! loopback UDP unless `[udp] loopback_is_local = false`) may use every
//! command and dataset under `/localhost/nfd` or `/localhop/nfd` (NDNts
//! sends `/localhop` even to 127.0.0.1). A non-local face may only, when
//! `[mgmt] localhop` is on, `rib/register` or `rib/unregister` a prefix on
//! itself with a command signed by a trust anchor (prefix propagation).
//! Everything else from a non-local face is refused (403), counted per face
//! and reason, and logged at most once per face per interval.

use cc_core::{Duration, Timestamp};
use hashbrown::HashMap;
use icn_tlv::{Interest, Name};

use super::command::Request;
use super::trust::{MgmtConfig, TrustAnchor, TrustChecker, TrustError};
use crate::ratelog::RateLimitedLog;

/// Why a management Interest from a non-local face was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// `/localhost/nfd` from a non-local face.
    LocalhostScope,
    /// `/localhop/nfd` while `[mgmt] localhop` is off.
    LocalhopOff,
    /// Anything but rib/register|unregister of a prefix on the sender's face.
    NotPropagation,
    /// Not signed with a KeyLocator and SignatureTime.
    Unsigned,
    /// No trust anchor covers the key.
    UntrustedKey,
    /// The signature does not verify.
    BadSignature,
    /// SignatureTime too old, too new, or replayed.
    Stale,
}

impl Refusal {
    /// Counter name (per face, in `faces/icnfwd-state` drops).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::LocalhostScope => "mgmt-localhost-scope",
            Refusal::LocalhopOff => "mgmt-localhop-off",
            Refusal::NotPropagation => "mgmt-not-allowed",
            Refusal::Unsigned => "mgmt-unsigned",
            Refusal::UntrustedKey => "mgmt-untrusted-key",
            Refusal::BadSignature => "mgmt-bad-signature",
            Refusal::Stale => "mgmt-stale",
        }
    }
}

impl From<TrustError> for Refusal {
    fn from(e: TrustError) -> Self {
        match e {
            TrustError::Unsigned => Refusal::Unsigned,
            TrustError::UntrustedKey => Refusal::UntrustedKey,
            TrustError::BadSignature => Refusal::BadSignature,
            TrustError::Stale => Refusal::Stale,
        }
    }
}

/// The `[mgmt]` policy a [`super::Manager`] applies to non-local faces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopePolicy {
    pub localhop: bool,
    pub anchors: Vec<TrustAnchor>,
    pub refusal_log_interval: Duration,
}

impl ScopePolicy {
    /// The policy of a validated `[mgmt]` section.
    pub fn from_config(cfg: &MgmtConfig) -> Result<Self, (String, String)> {
        Ok(ScopePolicy {
            localhop: cfg.localhop,
            anchors: cfg.anchors()?,
            refusal_log_interval: Duration::from_secs(cfg.refusal_log_interval_s),
        })
    }
}

/// Applies the policy and keeps the refusal counters.
#[derive(Debug)]
pub struct ScopeGuard {
    localhop: bool,
    trust: TrustChecker,
    log: RateLimitedLog<u64>,
    /// Per face, refusals by reason.
    counts: HashMap<u64, HashMap<Refusal, u64>>,
    /// All refusals by reason, including those of faces since gone.
    totals: HashMap<Refusal, u64>,
}

impl ScopeGuard {
    pub fn new(policy: ScopePolicy) -> Self {
        ScopeGuard {
            localhop: policy.localhop,
            trust: TrustChecker::new(policy.anchors),
            log: RateLimitedLog::new(policy.refusal_log_interval),
            counts: HashMap::new(),
            totals: HashMap::new(),
        }
    }

    /// Applies a new policy (a reload); refusal counters and each key's
    /// last SignatureTime (replay protection) are kept.
    pub fn set_policy(&mut self, policy: ScopePolicy) {
        self.localhop = policy.localhop;
        self.trust.set_anchors(policy.anchors);
        self.log.set_interval(policy.refusal_log_interval);
    }

    /// Whether a non-local face may have `interest` (decoded as `req`)
    /// served; `unix_ms` is the wall-clock time for SignatureTime.
    pub fn check_non_local(
        &mut self,
        face: u64,
        interest: &Interest,
        req: Option<&Request>,
        unix_ms: u64,
    ) -> Result<(), Refusal> {
        let first = interest.name.get(0);
        if first.as_ref().map(|c| &c.value()[..]) != Some(b"localhop") {
            return Err(Refusal::LocalhostScope);
        }
        if !self.localhop {
            return Err(Refusal::LocalhopOff);
        }
        let Some(Request::Command {
            module,
            verb,
            params,
            ..
        }) = req
        else {
            return Err(Refusal::NotPropagation);
        };
        let on_itself = params.face_id.is_none_or(|f| f == 0 || f == face);
        if module != "rib" || !matches!(verb.as_str(), "register" | "unregister") || !on_itself {
            return Err(Refusal::NotPropagation);
        }
        self.trust.check(interest, unix_ms)?;
        Ok(())
    }

    /// Counts a refusal and logs it unless this face was logged recently.
    pub fn refused(&mut self, now: Timestamp, face: u64, why: Refusal, name: &Name) {
        *self.counts.entry(face).or_default().entry(why).or_default() += 1;
        *self.totals.entry(why).or_default() += 1;
        if let Some(n) = self.log.hit(now, face) {
            tracing::warn!(face, reason = why.as_str(), %name, refusals = n,
                "management Interest from a non-local face refused");
        }
    }

    /// A face's refusals as (counter name, count), sorted by name.
    pub fn face_counts(&self, face: u64) -> Vec<(String, u64)> {
        named(self.counts.get(&face).into_iter().flatten())
    }

    /// All refusals so far as (counter name, count), sorted by name.
    pub fn total_counts(&self) -> Vec<(String, u64)> {
        named(self.totals.iter())
    }

    /// Forgets a face's counters.
    pub fn face_removed(&mut self, face: u64) {
        self.counts.remove(&face);
    }
}

fn named<'a>(counts: impl Iterator<Item = (&'a Refusal, &'a u64)>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = counts.map(|(r, n)| (r.as_str().to_owned(), *n)).collect();
    v.sort();
    v
}
