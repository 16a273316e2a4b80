//! The producer side of `icnput`, sans-IO: Interest in, signed Data out.
//!
//! Content is cut into segments named `/<prefix>/v=<version>/seg=<n>`, each
//! carrying FinalBlockId and a DigestSha256 signature. Segments are encoded
//! when asked for, as pieces whose content is the mapped file itself
//! ([`crate::segment`]), so a file of any size costs no more RAM than the
//! pages the kernel keeps. [`Publisher::presign`] signs every segment once
//! at publish time (32 bytes kept per segment, up to
//! [`PRESIGN_MAX_SEGMENTS`]); a segment not presigned is signed when asked
//! for. The publisher also answers
//! version discovery: RDR metadata (`/<prefix>/32=metadata`) and
//! CanBePrefix Interests for the unversioned prefix.
//!
//! The producer claims no rate: RCP/MIRCC rates, the CCC pace constraint and
//! the QSCCP TargetRate are stamped by the forwarders on the way back, each
//! taking the minimum with what the Data already carries, and a field left
//! absent means "unlimited". A producer that stamped its own guess would
//! only be right by accident.

pub use crate::content::Content;
use crate::segment::{self, Digest32, SegmentWire};
use bytes::Bytes;
use cc_core::Duration;
use icn_tlv::{CcFields, Component, Data, Interest, LpPacket, MetaInfo, Name};

/// Segments signed at publish time at most: 32 MB of digests, 8 GB of
/// content at the default segment size. Larger objects are signed per
/// request (a transfer pays the SHA-256 then, about half of icnput's CPU).
pub const PRESIGN_MAX_SEGMENTS: u64 = 1 << 20;

/// An answer to an Interest: a whole packet, or a segment in pieces that
/// a vectored write sends without joining them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Packet(Bytes),
    Segment(SegmentWire),
}

impl Reply {
    /// Wire length.
    pub fn len(&self) -> usize {
        match self {
            Reply::Packet(b) => b.len(),
            Reply::Segment(s) => s.len(),
        }
    }

    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The packet as one buffer (a segment's pieces are copied together).
    pub fn into_bytes(self) -> Bytes {
        match self {
            Reply::Packet(b) => b,
            Reply::Segment(s) => s.to_bytes(),
        }
    }

    /// Appends the pieces to `out`, in wire order.
    pub fn push_parts(self, out: &mut Vec<Bytes>) {
        match self {
            Reply::Packet(b) => out.push(b),
            Reply::Segment(s) => out.extend(s.into_parts()),
        }
    }
}

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
    /// The segments' MetaInfo TLV (FreshnessPeriod, FinalBlockId).
    meta_tlv: Bytes,
    /// Signatures computed by [`Publisher::presign`], by segment number.
    digests: Vec<Digest32>,
    stats: PublisherStats,
}

impl Publisher {
    /// Publishes `content` under `prefix` (which must not end in a version).
    pub fn new(prefix: Name, content: Content, cfg: PublisherConfig) -> Self {
        let seg = cfg.segment_size.max(1) as u64;
        let len = content.len();
        let last_segment = if len == 0 { 0 } else { (len - 1) / seg };
        let meta = MetaInfo {
            freshness_period: Some(cfg.freshness),
            final_block_id: Some(Component::segment(last_segment)),
            ..MetaInfo::default()
        };
        Publisher {
            meta_tlv: segment::meta_tlv(&meta),
            digests: Vec::new(),
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
        self.segment_wire(n).map(|w| w.to_bytes())
    }

    /// Signs every segment now, so that answering an Interest costs no
    /// SHA-256 (ndnputchunks also signs everything before it serves).
    /// Returns false, signing nothing, beyond [`PRESIGN_MAX_SEGMENTS`].
    pub fn presign(&mut self) -> bool {
        let count = self.segment_count();
        if count > PRESIGN_MAX_SEGMENTS {
            return false;
        }
        self.digests.clear();
        self.digests.reserve_exact(count as usize);
        for n in 0..count {
            let (start, end) = self.range(n);
            let name = self.versioned.append(Component::segment(n));
            let (head, from) = segment::head(&name, &self.meta_tlv, end - start);
            let d = segment::digest(&head[from..], self.content.bytes(start, end));
            self.digests.push(d);
        }
        true
    }

    /// Content range of segment `n` (within the content for `n <= last`).
    fn range(&self, n: u64) -> (usize, usize) {
        let seg = self.cfg.segment_size as u64;
        let start = n * seg;
        let end = (start + seg).min(self.content.len());
        (start as usize, end as usize)
    }

    /// Segment `n` as pieces (the content not copied), or `None` past the end.
    pub fn segment_wire(&self, n: u64) -> Option<SegmentWire> {
        if n > self.last_segment {
            return None;
        }
        let (start, end) = self.range(n);
        let name = self.versioned.append(Component::segment(n));
        let (head, from) = segment::head(&name, &self.meta_tlv, end - start);
        let digest = match usize::try_from(n).ok().and_then(|i| self.digests.get(i)) {
            Some(d) => *d,
            None => segment::digest(&head[from..], self.content.bytes(start, end)),
        };
        Some(SegmentWire {
            head,
            content: self.content.slice(start, end),
            tail: segment::tail(&digest),
        })
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
        self.reply(interest, &CcFields::default())
            .map(Reply::into_bytes)
    }

    /// Answers an Interest that arrived with LP header fields `cc`. No rate
    /// is claimed (see the module doc). Only facts go back: the QSCCP
    /// service class is echoed (forwarders class the Data by it), and when
    /// the Interest announced a Data size the Data states its real one.
    pub fn handle_interest_cc(&mut self, interest: &Interest, cc: &CcFields) -> Option<Bytes> {
        self.reply(interest, cc).map(Reply::into_bytes)
    }

    /// [`Publisher::handle_interest_cc`] with a segment left in pieces
    /// when no LP header wraps it.
    pub fn reply(&mut self, interest: &Interest, cc: &CcFields) -> Option<Reply> {
        self.stats.interests += 1;
        let Some(data) = self.answer(interest) else {
            self.stats.unmatched += 1;
            return None;
        };
        self.stats.data_sent += 1;
        self.stats.bytes_sent += data.len() as u64;
        let stamped = CcFields {
            service_class: cc.service_class,
            flow_data_size_bytes: cc.flow_data_size_bytes.map(|_| data.len() as u64),
            ..CcFields::default()
        };
        if stamped.is_empty() {
            return Some(data);
        }
        Some(Reply::Packet(
            LpPacket {
                cc: stamped,
                fragment: Some(data.into_bytes()),
                ..LpPacket::default()
            }
            .encode(),
        ))
    }

    fn answer(&mut self, interest: &Interest) -> Option<Reply> {
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
            return interest.matches_data(&d).then_some(Reply::Packet(md));
        }
        // A prefix of the versioned name, with CanBePrefix: latest version, segment 0.
        if name.len() <= plen + 1 && self.versioned.prefix(name.len()) == *name {
            if !interest.can_be_prefix {
                return None;
            }
            return self.segment_wire(0).map(Reply::Segment);
        }
        if !self.versioned.is_prefix_of(name) || name.len() != plen + 2 {
            return None;
        }
        let n = name.get(plen + 1)?.as_segment()?;
        self.segment_wire(n).map(Reply::Segment)
    }
}

#[cfg(test)]
#[path = "publisher_tests.rs"]
mod tests;
