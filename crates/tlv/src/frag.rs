//! NDNLPv2 indexed fragmentation and bounded reassembly
//! (NFD `lp-fragmenter.cpp` / `lp-reassembler.cpp` behaviour).
//!
//! Network-layer header fields travel in fragment 0 only. Message id is
//! `Sequence - FragIndex`, keyed per remote endpoint. Packets that fit the MTU
//! are sent unchanged: no Sequence, no FragIndex/FragCount (python-ndn drops
//! any packet that has FragIndex or FragCount).

use std::collections::HashMap;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use crate::element::nni_tlv_len;
use crate::error::{Result, TlvError};
use crate::lp::LpPacket;
use crate::types;
use crate::varnum::varnum_len;

/// Largest FragCount accepted or produced (NFD's limit).
pub const MAX_FRAG_COUNT: u64 = 400;
/// How long a partial packet waits for its missing fragments (NFD's value).
pub const DEFAULT_REASSEMBLY_TIMEOUT: Duration = Duration::from_millis(500);

/// Splits `lp` into LpPackets of at most `mtu` octets. Returns the single
/// encoded packet unchanged when it fits. Sequence numbers are taken from
/// `next_seq`, which advances by the number of fragments.
///
/// # Errors
/// [`TlvError::MtuTooSmall`] when the MTU cannot hold the headers plus one
/// octet of payload, or more than 400 fragments would be needed.
pub fn fragment(lp: &LpPacket, mtu: usize, next_seq: &mut u64) -> Result<Vec<Bytes>> {
    if lp.encoded_len() <= mtu {
        return Ok(vec![lp.encode()]);
    }
    let payload = lp.fragment.as_ref().ok_or(TlvError::MtuTooSmall)?;
    let headers = lp.headers_only();
    // Worst-case per-fragment overhead: outer TL, Sequence, FragIndex, FragCount, Fragment TL.
    let fixed = 1
        + varnum_len(mtu as u64)
        + 10
        + nni_tlv_len(types::LP_FRAG_INDEX, MAX_FRAG_COUNT - 1)
        + nni_tlv_len(types::LP_FRAG_COUNT, MAX_FRAG_COUNT)
        + 1
        + varnum_len(mtu as u64);
    let room = mtu
        .checked_sub(fixed)
        .filter(|&r| r > 0)
        .ok_or(TlvError::MtuTooSmall)?;
    let room0 = room
        .checked_sub(headers.header_len())
        .filter(|&r| r > 0)
        .ok_or(TlvError::MtuTooSmall)?;
    let len = payload.len();
    let count = if len <= room0 {
        1
    } else {
        1 + (len - room0).div_ceil(room)
    };
    if count as u64 > MAX_FRAG_COUNT {
        return Err(TlvError::MtuTooSmall);
    }
    let base = *next_seq;
    *next_seq = next_seq.wrapping_add(count as u64);
    let mut out = Vec::with_capacity(count);
    let mut start = 0usize;
    for i in 0..count {
        let mut p = if i == 0 {
            headers.clone()
        } else {
            LpPacket::default()
        };
        let end = (start + if i == 0 { room0 } else { room }).min(len);
        p.sequence = Some(base.wrapping_add(i as u64));
        p.frag_index = Some(i as u64);
        p.frag_count = Some(count as u64);
        p.fragment = Some(payload.slice(start..end));
        out.push(p.encode());
        start = end;
    }
    Ok(out)
}

#[derive(Debug)]
struct Partial {
    count: u64,
    pieces: Vec<Option<Bytes>>,
    received: usize,
    headers: Option<LpPacket>,
    deadline_ns: u64,
}

/// Reassembles fragmented LpPackets. Bounded: at most `max_partial`
/// packets in progress (the one closest to its deadline is evicted for a new
/// one), at most 400 fragments each, each dropped `timeout` after its last
/// fragment arrived.
#[derive(Debug)]
pub struct Reassembler {
    max_partial: usize,
    timeout_ns: u64,
    partials: HashMap<(u64, u64), Partial>,
    evicted: u64,
}

impl Reassembler {
    /// A reassembler holding at most `max_partial` partial packets.
    pub fn new(max_partial: usize, timeout: Duration) -> Self {
        Reassembler {
            max_partial: max_partial.max(1),
            timeout_ns: u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX),
            partials: HashMap::new(),
            evicted: 0,
        }
    }

    /// Partial packets currently held.
    pub fn len(&self) -> usize {
        self.partials.len()
    }
    /// Whether no partial packet is held.
    pub fn is_empty(&self) -> bool {
        self.partials.is_empty()
    }
    /// Partial packets dropped so far by timeout or eviction.
    pub fn dropped(&self) -> u64 {
        self.evicted
    }
    /// Earliest deadline of a partial packet, for the caller's timer.
    pub fn next_deadline_ns(&self) -> Option<u64> {
        self.partials.values().map(|p| p.deadline_ns).min()
    }

    /// Feeds one received LpPacket from `remote` at `now_ns`. Returns the
    /// complete packet (fragment 0's headers, whole fragment, no
    /// Sequence/FragIndex/FragCount) when this fragment completes it; an
    /// unfragmented packet is returned as is.
    ///
    /// # Errors
    /// [`TlvError::BadFragment`]: no Sequence or no Fragment on a fragment,
    /// FragIndex >= FragCount, FragCount > 400, or FragCount differing from
    /// earlier fragments (the partial packet is then dropped).
    pub fn push(&mut self, now_ns: u64, remote: u64, lp: LpPacket) -> Result<Option<LpPacket>> {
        if !lp.is_fragmented() {
            return Ok(Some(lp));
        }
        let count = lp.frag_count.unwrap_or(1);
        let index = lp.frag_index.unwrap_or(0);
        let (Some(seq), true, true) = (lp.sequence, index < count, count <= MAX_FRAG_COUNT) else {
            return Err(TlvError::BadFragment);
        };
        let piece = lp.fragment.clone().ok_or(TlvError::BadFragment)?;
        let key = (remote, seq.wrapping_sub(index));
        if let Some(p) = self.partials.get(&key) {
            if p.deadline_ns < now_ns {
                self.partials.remove(&key);
                self.evicted += 1;
            } else if p.count != count {
                self.partials.remove(&key);
                self.evicted += 1;
                return Err(TlvError::BadFragment);
            }
        }
        if !self.partials.contains_key(&key) && self.partials.len() >= self.max_partial {
            self.evict_oldest();
        }
        let deadline_ns = now_ns.saturating_add(self.timeout_ns);
        let p = self.partials.entry(key).or_insert_with(|| Partial {
            count,
            pieces: vec![None; count as usize],
            received: 0,
            headers: None,
            deadline_ns,
        });
        p.deadline_ns = deadline_ns;
        let Some(slot) = p.pieces.get_mut(index as usize) else {
            return Err(TlvError::BadFragment);
        };
        if slot.is_some() {
            return Ok(None); // duplicate
        }
        *slot = Some(piece);
        p.received += 1;
        if index == 0 {
            p.headers = Some(lp.headers_only());
        }
        if p.received < p.pieces.len() {
            return Ok(None);
        }
        let Some(p) = self.partials.remove(&key) else {
            return Ok(None);
        };
        let total: usize = p.pieces.iter().flatten().map(Bytes::len).sum();
        let mut whole = BytesMut::with_capacity(total);
        for piece in p.pieces.iter().flatten() {
            whole.extend_from_slice(piece);
        }
        let mut out = p.headers.unwrap_or_default();
        out.fragment = Some(whole.freeze());
        Ok(Some(out))
    }

    fn evict_oldest(&mut self) {
        let oldest = self
            .partials
            .iter()
            .min_by_key(|(_, p)| p.deadline_ns)
            .map(|(k, _)| *k);
        if let Some(k) = oldest {
            self.partials.remove(&k);
            self.evicted += 1;
        }
    }

    /// Drops partial packets whose deadline has passed; returns how many.
    pub fn expire(&mut self, now_ns: u64) -> usize {
        let before = self.partials.len();
        self.partials.retain(|_, p| p.deadline_ns >= now_ns);
        let n = before - self.partials.len();
        self.evicted += n as u64;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_fit_every_mtu() {
        let payload = Bytes::from(vec![7u8; 5000]);
        let mut lp = LpPacket::from_fragment(payload.clone());
        lp.pit_token = Some(Bytes::from_static(&[1; 32]));
        lp.congestion_mark = Some(1);
        for mtu in [64usize, 100, 255, 256, 1400, 4999, 9000] {
            let mut seq = u64::MAX - 1; // wraps
            let out = fragment(&lp, mtu, &mut seq).unwrap();
            let mut r = Reassembler::new(2, DEFAULT_REASSEMBLY_TIMEOUT);
            let mut done = None;
            for f in &out {
                assert!(f.len() <= mtu, "{} > {}", f.len(), mtu);
                done = r.push(0, 0, LpPacket::decode(f.clone()).unwrap()).unwrap();
            }
            assert_eq!(done.unwrap(), lp, "mtu {mtu}");
        }
    }
}
