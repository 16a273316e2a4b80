//! Which shard a received packet belongs to: the name-hash rule.
//!
//! An Interest and the Data that answers it must meet on one shard (the one
//! holding the PIT entry), and so must a Nack and its Interest. The rule,
//! read from the wire without decoding the packet:
//!
//! - the key is the packet's name, minus a trailing implicit digest
//!   component (an Interest may name the Data's full name; the Data's own
//!   name never carries it), hashed over its encoded components;
//! - an Interest with CanBePrefix may be answered by a Data of a longer
//!   name, which hashes elsewhere: such Interests go to shard 0, the
//!   "prefix shard", and a Data its own shard finds unsolicited is handed
//!   to shard 0 for a second match (`worker.rs`);
//! - names under `/localhost` and `/localhop` (management) go to shard 0,
//!   the only shard whose manager is reachable;
//! - an LpPacket is dispatched by its fragment (a Nack by the Interest it
//!   carries); fragmented packets (FragCount > 1), LpPackets without a
//!   fragment and anything that does not parse go to shard 0, where the
//!   engine reassembles or counts them as it does today.

use icn_tlv::element::Element;
use icn_tlv::types;

/// Where a received packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dest {
    /// The shard that runs it through its engine.
    pub shard: usize,
    /// A Data (or an LpPacket carrying one) that a shard other than 0
    /// should hand to shard 0 if it matches no PIT entry there.
    pub retry_on_prefix_shard: bool,
}

impl Dest {
    const PREFIX_SHARD: Dest = Dest {
        shard: 0,
        retry_on_prefix_shard: false,
    };
}

/// The shard of `pkt` among `shards` (at least 1).
pub fn dest(pkt: &[u8], shards: usize) -> Dest {
    if shards <= 1 {
        return Dest::PREFIX_SHARD;
    }
    match key(pkt) {
        Key::Name { name, is_data } => {
            let shard = shard_of_name(name, shards);
            Dest {
                shard,
                retry_on_prefix_shard: is_data && shard != 0,
            }
        }
        Key::PrefixShard => Dest::PREFIX_SHARD,
    }
}

/// What the rule looks at.
#[derive(Debug, PartialEq, Eq)]
enum Key<'a> {
    /// The encoded components of the name to hash.
    Name { name: &'a [u8], is_data: bool },
    /// Goes to shard 0 whatever the name.
    PrefixShard,
}

fn key(pkt: &[u8]) -> Key<'_> {
    let Ok((outer, _)) = Element::parse(pkt) else {
        return Key::PrefixShard;
    };
    match outer.typ() {
        types::LP_PACKET => lp_key(outer.value()),
        types::INTEREST | types::DATA => packet_key(outer),
        _ => Key::PrefixShard,
    }
}

fn lp_key(mut fields: &[u8]) -> Key<'_> {
    while !fields.is_empty() {
        let Ok((f, rest)) = Element::parse(fields) else {
            return Key::PrefixShard;
        };
        match f.typ() {
            types::LP_FRAG_COUNT if nni(f.value()) > 1 => return Key::PrefixShard,
            types::LP_FRAGMENT => {
                return match Element::parse(f.value()) {
                    Ok((inner, _)) if matches!(inner.typ(), types::INTEREST | types::DATA) => {
                        packet_key(inner)
                    }
                    _ => Key::PrefixShard,
                };
            }
            _ => {}
        }
        fields = rest;
    }
    Key::PrefixShard
}

/// Key of an Interest or Data element.
fn packet_key(pkt: Element<'_>) -> Key<'_> {
    let is_data = pkt.typ() == types::DATA;
    let Ok((name, rest)) = Element::parse(pkt.value()) else {
        return Key::PrefixShard;
    };
    if name.typ() != types::NAME {
        return Key::PrefixShard;
    }
    if !is_data {
        // CanBePrefix, when present, is the element right after the Name.
        if let Ok((next, _)) = Element::parse(rest) {
            if next.typ() == types::CAN_BE_PREFIX {
                return Key::PrefixShard;
            }
        }
    }
    let comps = name.value();
    if let Ok((first, _)) = Element::parse(comps) {
        if first.typ() == types::GENERIC_COMPONENT
            && matches!(first.value(), b"localhost" | b"localhop")
        {
            return Key::PrefixShard;
        }
    }
    Key::Name {
        name: without_implicit_digest(comps),
        is_data,
    }
}

/// `comps` without a last component of type ImplicitSha256Digest.
fn without_implicit_digest(comps: &[u8]) -> &[u8] {
    let mut rest = comps;
    let mut last_start = 0;
    let mut last_typ = 0;
    while !rest.is_empty() {
        let Ok((c, after)) = Element::parse(rest) else {
            return comps;
        };
        last_start = comps.len() - rest.len();
        last_typ = c.typ();
        rest = after;
    }
    if last_typ == types::IMPLICIT_SHA256_DIGEST {
        &comps[..last_start]
    } else {
        comps
    }
}

fn nni(v: &[u8]) -> u64 {
    v.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b))
}

/// FNV-1a over the encoded components, a 64-bit finalizer (FNV alone left
/// names that differ in their last digits unevenly spread: 674 to 1382 of
/// 4000 over 4 shards, see the test), then a multiply-shift onto
/// `0..shards`.
fn shard_of_name(comps: &[u8], shards: usize) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in comps {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // MurmurHash3's fmix64: every input bit reaches the high bits.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    ((u128::from(h) * shards as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use icn_tlv::{Data, Interest, LpPacket, Name};

    fn interest(name: &str, can_be_prefix: bool) -> Bytes {
        let mut i = Interest::new(name.parse().unwrap());
        i.can_be_prefix = can_be_prefix;
        i.nonce = Some(7);
        i.encode()
    }

    fn data(name: &str) -> Bytes {
        Data::new(name.parse().unwrap(), Bytes::from_static(b"x")).encode_signed_digest_sha256()
    }

    #[test]
    fn an_interest_and_its_data_meet_on_one_shard() {
        for n in 2..=8 {
            for k in 0..200 {
                let name = format!("/load/f{}/{k}", k % 8);
                let i = dest(&interest(&name, false), n);
                let d = dest(&data(&name), n);
                assert_eq!(i.shard, d.shard, "{name} with {n} shards");
                assert!(!i.retry_on_prefix_shard);
                assert_eq!(d.retry_on_prefix_shard, d.shard != 0);
            }
        }
    }

    #[test]
    fn an_interest_for_the_full_name_meets_its_data() {
        let d = Data::new("/a/b/c".parse().unwrap(), Bytes::from_static(b"x"));
        let wire = d.encode_signed_digest_sha256();
        let full: Name = Data::decode(wire.clone()).unwrap().full_name();
        let mut i = Interest::new(full);
        i.nonce = Some(1);
        for n in 2..=8 {
            assert_eq!(dest(&i.encode(), n).shard, dest(&wire, n).shard);
        }
    }

    #[test]
    fn names_spread_over_the_shards() {
        let n = 4;
        let mut count = [0usize; 4];
        for k in 0..4000 {
            count[dest(
                &interest(&format!("/load/r1/0/shard/f{}/{k}", k % 8), false),
                n,
            )
            .shard] += 1;
        }
        // 1000 expected per shard; a binomial spread is about ±27.
        for c in count {
            assert!((850..=1150).contains(&c), "{count:?}");
        }
    }

    #[test]
    fn can_be_prefix_and_management_go_to_the_prefix_shard() {
        for name in ["/a/b", "/x", "/load/f1/99"] {
            assert_eq!(dest(&interest(name, true), 4), Dest::PREFIX_SHARD);
        }
        for name in ["/localhost/nfd/faces/list", "/localhop/nfd/rib/register"] {
            assert_eq!(dest(&interest(name, false), 4), Dest::PREFIX_SHARD);
            assert_eq!(dest(&data(name), 4), Dest::PREFIX_SHARD);
        }
    }

    #[test]
    fn lp_packets_follow_their_fragment_and_nacks_their_interest() {
        for k in 0..50 {
            let name = format!("/p/{k}");
            let want = dest(&interest(&name, false), 3).shard;
            let lp = LpPacket {
                fragment: Some(data(&name)),
                ..Default::default()
            };
            assert_eq!(dest(&lp.encode(), 3).shard, want);
            let nack = LpPacket {
                fragment: Some(interest(&name, false)),
                nack: Some(icn_tlv::NackReason::NoRoute),
                ..Default::default()
            };
            assert_eq!(dest(&nack.encode(), 3).shard, want);
        }
    }

    #[test]
    fn fragments_garbage_and_one_shard_go_to_shard_0() {
        let frag = LpPacket {
            fragment: Some(Bytes::from_static(b"\x05\x03\x07\x01")),
            frag_index: Some(1),
            frag_count: Some(2),
            ..Default::default()
        };
        assert_eq!(dest(&frag.encode(), 4), Dest::PREFIX_SHARD);
        assert_eq!(dest(b"\x05\xff", 4), Dest::PREFIX_SHARD);
        assert_eq!(dest(b"", 4), Dest::PREFIX_SHARD);
        assert_eq!(dest(&LpPacket::default().encode(), 4), Dest::PREFIX_SHARD);
        assert_eq!(dest(&interest("/a/b", false), 1), Dest::PREFIX_SHARD);
    }

    #[test]
    fn a_trailing_implicit_digest_is_not_hashed() {
        let mut comps = b"\x08\x01a".to_vec();
        let plain = comps.clone();
        comps.extend_from_slice(&[1, 32]);
        comps.extend_from_slice(&[0u8; 32]);
        assert_eq!(without_implicit_digest(&comps), &plain[..]);
        assert_eq!(without_implicit_digest(&plain), &plain[..]);
        assert_eq!(without_implicit_digest(b""), b"");
    }
}
