//! The producer side of `icnput`, sans-IO: Interest in, signed Data out.
//!
//! Content is cut into segments named `/<prefix>/v=<version>/seg=<n>`, each
//! carrying FinalBlockId and a DigestSha256 signature. Segments are encoded
//! and signed when asked for, so a memory-mapped file of any size costs no
//! more RAM than the pages the kernel keeps. The publisher also answers
//! version discovery: RDR metadata (`/<prefix>/32=metadata`) and
//! CanBePrefix Interests for the unversioned prefix.
//!
//! The producer claims no rate: RCP/MIRCC rates, the CCC pace constraint and
//! the QSCCP TargetRate are stamped by the forwarders on the way back, each
//! taking the minimum with what the Data already carries, and a field left
//! absent means "unlimited". A producer that stamped its own guess would
//! only be right by accident.

pub use crate::content::Content;
use bytes::Bytes;
use cc_core::Duration;
use icn_tlv::{CcFields, Component, Data, Interest, LpPacket, MetaInfo, Name};

/// RDR keyword component (`32=metadata`).
pub const METADATA_KEYWORD: &[u8] = b"metadata";

/// Publisher knobs.
#[derive(Debug, Clone, Copy)]
pub struct PublisherConfig {
    /// Content bytes per segment (ndnserve's default is 8000 minus overhead; we use 8000).
    pub segment_size: usize,
    /// FreshnessPeriod of segments.
    pub freshness: Duration,
    /// FreshnessPeriod of the RDR metadata packet (ndn-cxx: 10 ms).
    pub metadata_freshness: Duration,
    /// Version component value (ms since the Unix epoch, as ndnserve).
    pub version: u64,
}

impl Default for PublisherConfig {
    fn default() -> Self {
        PublisherConfig {
            segment_size: 8000,
            freshness: Duration::from_secs(10),
            metadata_freshness: Duration::from_millis(10),
            version: 0,
        }
    }
}

/// Counters of a publisher.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PublisherStats {
    pub interests: u64,
    pub data_sent: u64,
    pub metadata_sent: u64,
    pub unmatched: u64,
    pub bytes_sent: u64,
}

/// Serves one versioned object.
pub struct Publisher {
    prefix: Name,
    versioned: Name,
    metadata_name: Name,
    content: Content,
    cfg: PublisherConfig,
    last_segment: u64,
    stats: PublisherStats,
}

impl Publisher {
    /// Publishes `content` under `prefix` (which must not end in a version).
    pub fn new(prefix: Name, content: Content, cfg: PublisherConfig) -> Self {
        let seg = cfg.segment_size.max(1) as u64;
        let len = content.len();
        let last_segment = if len == 0 { 0 } else { (len - 1) / seg };
        Publisher {
            versioned: prefix.append(Component::version(cfg.version)),
            metadata_name: prefix.append(Component::keyword(Bytes::from_static(METADATA_KEYWORD))),
            prefix,
            content,
            cfg: PublisherConfig {
                segment_size: seg as usize,
                ..cfg
            },
            last_segment,
            stats: PublisherStats::default(),
        }
    }

    /// The prefix to register.
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// `/<prefix>/v=<version>`.
    pub fn versioned_name(&self) -> &Name {
        &self.versioned
    }

    /// Number of segments.
    pub fn segment_count(&self) -> u64 {
        self.last_segment + 1
    }

    /// Counters.
    pub fn stats(&self) -> PublisherStats {
        self.stats
    }

    /// Encodes segment `n` (signed), or `None` past the end.
    pub fn segment(&self, n: u64) -> Option<Bytes> {
        if n > self.last_segment {
            return None;
        }
        let seg = self.cfg.segment_size as u64;
        let start = n * seg;
        let end = (start + seg).min(self.content.len());
        let body = self.content.slice(start as usize, end as usize);
        let mut d = Data::new(self.versioned.append(Component::segment(n)), body);
        d.meta = MetaInfo {
            freshness_period: Some(self.cfg.freshness),
            final_block_id: Some(Component::segment(self.last_segment)),
            ..MetaInfo::default()
        };
        Some(d.encode_signed_digest_sha256())
    }

    /// The RDR metadata packet: its content is the versioned Name TLV.
    pub fn metadata(&self) -> Bytes {
        let name = self
            .metadata_name
            .append(Component::version(self.cfg.version))
            .append(Component::segment(0));
        let mut d = Data::new(name, self.versioned.encode());
        d.meta = MetaInfo {
            freshness_period: Some(self.cfg.metadata_freshness),
            final_block_id: Some(Component::segment(0)),
            ..MetaInfo::default()
        };
        d.encode_signed_digest_sha256()
    }

    /// Answers one Interest, or `None` when it is not for this object.
    pub fn handle_interest(&mut self, interest: &Interest) -> Option<Bytes> {
        self.stats.interests += 1;
        let out = self.answer(interest);
        match &out {
            Some(b) => {
                self.stats.data_sent += 1;
                self.stats.bytes_sent += b.len() as u64;
            }
            None => self.stats.unmatched += 1,
        }
        out
    }

    /// Answers an Interest that arrived with LP header fields `cc`. No rate
    /// is claimed (see the module doc). Only facts go back: the QSCCP
    /// service class is echoed (forwarders class the Data by it), and when
    /// the Interest announced a Data size the Data states its real one.
    pub fn handle_interest_cc(&mut self, interest: &Interest, cc: &CcFields) -> Option<Bytes> {
        let data = self.handle_interest(interest)?;
        let stamped = CcFields {
            service_class: cc.service_class,
            flow_data_size_bytes: cc.flow_data_size_bytes.map(|_| data.len() as u64),
            ..CcFields::default()
        };
        if stamped.is_empty() {
            return Some(data);
        }
        Some(
            LpPacket {
                cc: stamped,
                fragment: Some(data),
                ..LpPacket::default()
            }
            .encode(),
        )
    }

    fn answer(&mut self, interest: &Interest) -> Option<Bytes> {
        let name = &interest.name;
        if !self.prefix.is_prefix_of(name) {
            return None;
        }
        let plen = self.prefix.len();
        // RDR discovery.
        if self.metadata_name.is_prefix_of(name) {
            if name.len() == self.metadata_name.len() && !interest.can_be_prefix {
                return None;
            }
            if name.len() > self.metadata_name.len() + 2 {
                return None;
            }
            self.stats.metadata_sent += 1;
            let md = self.metadata();
            // A longer Interest name must still be a prefix of the metadata Data name.
            let d = Data::decode(md.clone()).ok()?;
            return interest.matches_data(&d).then_some(md);
        }
        // A prefix of the versioned name, with CanBePrefix: latest version, segment 0.
        if name.len() <= plen + 1 && self.versioned.prefix(name.len()) == *name {
            if !interest.can_be_prefix {
                return None;
            }
            return self.segment(0);
        }
        if !self.versioned.is_prefix_of(name) || name.len() != plen + 2 {
            return None;
        }
        let n = name.get(plen + 1)?.as_segment()?;
        self.segment(n)
    }
}

#[cfg(test)]
#[path = "publisher_tests.rs"]
mod tests;
