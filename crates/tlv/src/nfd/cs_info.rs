//! NFD's `cs/info` dataset: the Content Store's capacity, flags, occupancy
//! and lookup counters (NFD management protocol, CS management), plus two
//! icnfwd fields NFD has no element for, the byte bound and the bytes held.
//!
//! ```text
//! CsInfo        = 128 TLV-LENGTH Capacity Flags NCsEntries NHits NMisses
//!                   [CapacityBytes] [NCsBytes]
//! Capacity      = 131 NNI   (entries)
//! Flags         = 108 NNI   (bit 0 EnableAdmit, bit 1 EnableServe)
//! NCsEntries    = 135 NNI   NHits = 129 NNI   NMisses = 130 NNI
//! CapacityBytes = 240 NNI   (icnfwd: [tables] cs_max_bytes)
//! NCsBytes      = 242 NNI   (icnfwd: wire bytes of the stored Data)
//! ```
//! The icnfwd elements have even TLV-TYPEs (non-critical), so NFD's
//! decoders (ndn-cxx `CsInfo`, python-ndn) skip them.

use bytes::{Bytes, BytesMut};

use super::wire::{self, put_nested, put_nni, TlvReader};
use super::MgmtError;

/// The dataset's module and name under `/localhost/nfd`.
pub const DATASET: (&str, &str) = ("cs", "info");

const CS_INFO: u32 = 128;
const CAPACITY: u32 = 131;
const FLAGS: u32 = 108;
const N_CS_ENTRIES: u32 = 135;
const N_HITS: u32 = 129;
const N_MISSES: u32 = 130;
const CAPACITY_BYTES: u32 = 240;
const N_CS_BYTES: u32 = 242;

/// CS flag bit: Data are admitted.
pub const ENABLE_ADMIT: u64 = 1;
/// CS flag bit: Interests are answered from the store.
pub const ENABLE_SERVE: u64 = 2;

/// The Content Store's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// Bound on entries.
    pub capacity: u64,
    /// [`ENABLE_ADMIT`] | [`ENABLE_SERVE`].
    pub flags: u64,
    pub n_entries: u64,
    pub n_hits: u64,
    pub n_misses: u64,
    /// Bound on bytes (`None` from NFD).
    pub capacity_bytes: Option<u64>,
    /// Wire bytes stored (`None` from NFD).
    pub n_bytes: Option<u64>,
}

impl CsInfo {
    /// The dataset payload (one CsInfo element).
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(48);
        put_nni(&mut b, CAPACITY, self.capacity);
        put_nni(&mut b, FLAGS, self.flags);
        put_nni(&mut b, N_CS_ENTRIES, self.n_entries);
        put_nni(&mut b, N_HITS, self.n_hits);
        put_nni(&mut b, N_MISSES, self.n_misses);
        wire::put_opt_nni(&mut b, CAPACITY_BYTES, self.capacity_bytes);
        wire::put_opt_nni(&mut b, N_CS_BYTES, self.n_bytes);
        let mut out = BytesMut::with_capacity(b.len() + 4);
        put_nested(&mut out, CS_INFO, &b);
        out.freeze()
    }

    /// Decodes the dataset payload; unknown elements are skipped.
    pub fn decode(payload: Bytes) -> Result<Self, MgmtError> {
        let mut s = CsInfo::default();
        let mut r = TlvReader::new(wire::single(payload, CS_INFO)?);
        while let Some((t, v)) = r.next_element()? {
            match t {
                CAPACITY => s.capacity = wire::nni(&v)?,
                FLAGS => s.flags = wire::nni(&v)?,
                N_CS_ENTRIES => s.n_entries = wire::nni(&v)?,
                N_HITS => s.n_hits = wire::nni(&v)?,
                N_MISSES => s.n_misses = wire::nni(&v)?,
                CAPACITY_BYTES => s.capacity_bytes = Some(wire::nni(&v)?),
                N_CS_BYTES => s.n_bytes = Some(wire::nni(&v)?),
                _ => {}
            }
        }
        Ok(s)
    }

    /// The flag names nfdc prints (`admit`, `serve`), comma-separated, or
    /// `none`.
    pub fn flag_names(&self) -> String {
        let names: Vec<&str> = [(ENABLE_ADMIT, "admit"), (ENABLE_SERVE, "serve")]
            .into_iter()
            .filter(|(bit, _)| self.flags & bit != 0)
            .map(|(_, n)| n)
            .collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(",")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_matches_nfds_layout() {
        let info = CsInfo {
            capacity: 65_536,
            flags: ENABLE_ADMIT | ENABLE_SERVE,
            n_entries: 30,
            n_hits: 2,
            n_misses: 31,
            capacity_bytes: Some(256 << 20),
            n_bytes: Some(30_000),
        };
        let wire = info.encode();
        assert_eq!(CsInfo::decode(wire.clone()), Ok(info));
        // NFD's element order: 128 { 131, 108, 135, 129, 130 }.
        let body = wire::single(wire, CS_INFO).unwrap();
        let mut r = TlvReader::new(body);
        let mut types = Vec::new();
        while let Some((t, _)) = r.next_element().unwrap() {
            types.push(t);
        }
        assert_eq!(types, [131, 108, 135, 129, 130, 240, 242]);
        assert_eq!(info.flag_names(), "admit,serve");
    }

    #[test]
    fn nfds_payload_decodes_without_the_icnfwd_fields() {
        // Capacity 65536, Flags 3, NCsEntries 1, NHits 0, NMisses 4.
        let nfd =
            hex::decode("8012 830400010000 6c0103 870101 810100 820104".replace(' ', "")).unwrap();
        let info = CsInfo::decode(Bytes::from(nfd)).unwrap();
        assert_eq!(
            (info.capacity, info.flags, info.n_entries, info.n_misses),
            (65_536, 3, 1, 4)
        );
        assert_eq!((info.capacity_bytes, info.n_bytes), (None, None));
    }
}
