//! Packet builders for tests.

use bytes::Bytes;
use cc_core::Duration;
use icn_tlv::{Data, Interest, Name};

/// Optional Interest fields.
#[derive(Debug, Clone, Default)]
pub struct InterestOpts {
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// InterestLifetime (absent = 4 s).
    pub lifetime: Option<Duration>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
}

fn parse(name: &str) -> Name {
    name.parse().unwrap_or_else(|_| Name::root())
}

/// Encodes an Interest for `name` (NDN URI) with `nonce`.
pub fn interest(name: &str, nonce: u32) -> Bytes {
    interest_with(&parse(name), nonce, &InterestOpts::default())
}

/// Encodes an Interest with options.
pub fn interest_with(name: &Name, nonce: u32, o: &InterestOpts) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.can_be_prefix = o.can_be_prefix;
    i.must_be_fresh = o.must_be_fresh;
    i.lifetime = o.lifetime;
    i.hop_limit = o.hop_limit;
    i.encode()
}

/// Encodes a DigestSha256-signed Data for `name` (NDN URI).
pub fn data(name: &str, content: &[u8], freshness: Option<Duration>) -> Bytes {
    data_fresh(&parse(name), Bytes::copy_from_slice(content), freshness)
}

/// Encodes a DigestSha256-signed Data.
pub fn data_fresh(name: &Name, content: Bytes, freshness: Option<Duration>) -> Bytes {
    let mut d = Data::new(name.clone(), content);
    d.meta.freshness_period = freshness;
    d.encode_signed_digest_sha256()
}
