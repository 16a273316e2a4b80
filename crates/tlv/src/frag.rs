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
    /// Fragment payload octets held.
    bytes: usize,
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
    /// Fragment payload octets held over all partial packets.
    bytes: usize,
    max_bytes: usize,
    max_packet_bytes: usize,
}

impl Reassembler {
    /// A reassembler holding at most `max_partial` partial packets.
    pub fn new(max_partial: usize, timeout: Duration) -> Self {
        Reassembler {
            max_partial: max_partial.max(1),
            timeout_ns: u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX),
            partials: HashMap::new(),
            evicted: 0,
            bytes: 0,
            max_bytes: usize::MAX,
            max_packet_bytes: usize::MAX,
        }
    }

    /// Bounds the fragment octets held at once (older partial packets are
    /// evicted for newer ones) and the size of one reassembled packet.
    pub fn with_byte_limits(mut self, max_bytes: usize, max_packet_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self.max_packet_bytes = max_packet_bytes;
        self
    }

    /// Changes the bound on fragment octets held (a configuration reload);
    /// partial packets closest to their deadline are evicted until the
    /// octets held fit it.
    pub fn set_max_bytes(&mut self, max_bytes: usize) {
        self.max_bytes = max_bytes;
        while self.bytes > self.max_bytes && self.evict_oldest(None) {}
    }

    /// Fragment payload octets held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn remove(&mut self, key: &(u64, u64)) -> Option<Partial> {
        let p = self.partials.remove(key)?;
        self.bytes -= p.bytes;
        Some(p)
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
    /// [`TlvError::PacketTooLarge`]: the fragments exceed the packet size
    /// bound (the partial packet is dropped). [`TlvError::ReassemblyFull`]:
    /// the fragment does not fit the byte budget even after evicting every
    /// other partial packet.
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
                self.remove(&key);
                self.evicted += 1;
            } else if p.count != count {
                self.remove(&key);
                self.evicted += 1;
                return Err(TlvError::BadFragment);
            }
        }
        if !self.partials.contains_key(&key) && self.partials.len() >= self.max_partial {
            self.evict_oldest(None);
        }
        let held = self.partials.get(&key).map_or(0, |p| p.bytes);
        if held + piece.len() > self.max_packet_bytes {
            if self.remove(&key).is_some() {
                self.evicted += 1;
            }
            return Err(TlvError::PacketTooLarge);
        }
        while self.bytes + piece.len() > self.max_bytes {
            if !self.evict_oldest(Some(key)) {
                return Err(TlvError::ReassemblyFull);
            }
        }
        let deadline_ns = now_ns.saturating_add(self.timeout_ns);
        let p = self.partials.entry(key).or_insert_with(|| Partial {
            count,
            bytes: 0,
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
        p.bytes += piece.len();
        self.bytes += piece.len();
        *slot = Some(piece);
        p.received += 1;
        if index == 0 {
            p.headers = Some(lp.headers_only());
        }
        if p.received < p.pieces.len() {
            return Ok(None);
        }
        let Some(p) = self.remove(&key) else {
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

    /// Evicts the partial packet closest to its deadline, other than
    /// `keep`; false when there is none.
    fn evict_oldest(&mut self, keep: Option<(u64, u64)>) -> bool {
        let oldest = self
            .partials
            .iter()
            .filter(|(k, _)| Some(**k) != keep)
            .min_by_key(|(_, p)| p.deadline_ns)
            .map(|(k, _)| *k);
        match oldest {
            Some(k) => {
                self.remove(&k);
                self.evicted += 1;
                true
            }
            None => false,
        }
    }

    /// Drops partial packets whose deadline has passed; returns how many.
    pub fn expire(&mut self, now_ns: u64) -> usize {
        let before = self.partials.len();
        let mut freed = 0;
        self.partials.retain(|_, p| {
            let keep = p.deadline_ns >= now_ns;
            if !keep {
                freed += p.bytes;
            }
            keep
        });
        self.bytes -= freed;
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

    fn frag(seq: u64, index: u64, count: u64, len: usize) -> LpPacket {
        let mut lp = LpPacket::from_fragment(Bytes::from(vec![1u8; len]));
        lp.sequence = Some(seq + index);
        lp.frag_index = Some(index);
        lp.frag_count = Some(count);
        lp
    }

    #[test]
    fn byte_budget_evicts_older_partials_and_bounds_the_packet() {
        let mut r = Reassembler::new(64, DEFAULT_REASSEMBLY_TIMEOUT).with_byte_limits(3000, 8800);
        assert_eq!(r.push(0, 0, frag(0, 0, 4, 1000)), Ok(None));
        assert_eq!(r.push(1, 0, frag(100, 0, 4, 1000)), Ok(None));
        assert_eq!(r.bytes(), 2000);
        // A third and fourth 1000-octet fragment: the oldest partial goes.
        assert_eq!(r.push(2, 0, frag(200, 0, 4, 1000)), Ok(None));
        assert_eq!(r.push(3, 0, frag(200, 1, 4, 1000)), Ok(None));
        assert_eq!((r.len(), r.bytes()), (2, 3000));
        // One partial alone over the budget.
        assert_eq!(
            r.push(4, 0, frag(200, 2, 4, 1500)),
            Err(TlvError::ReassemblyFull)
        );
        assert!(r.bytes() <= 3000);
        // A packet of more than 8800 octets is dropped as it grows.
        let mut r = Reassembler::new(4, DEFAULT_REASSEMBLY_TIMEOUT).with_byte_limits(1 << 20, 8800);
        for i in 0..8 {
            assert_eq!(r.push(0, 0, frag(0, i, 10, 1000)), Ok(None));
        }
        assert_eq!(
            r.push(0, 0, frag(0, 8, 10, 1000)),
            Err(TlvError::PacketTooLarge)
        );
        assert_eq!((r.len(), r.bytes()), (0, 0));
        // Expiry returns the bytes.
        assert_eq!(r.push(0, 0, frag(50, 0, 2, 700)), Ok(None));
        assert_eq!(r.expire(u64::MAX), 1);
        assert_eq!(r.bytes(), 0);
    }

    #[test]
    fn a_lowered_byte_bound_evicts_the_oldest_partials_at_once() {
        let mut r = Reassembler::new(64, DEFAULT_REASSEMBLY_TIMEOUT).with_byte_limits(4000, 8800);
        for (t, seq) in [(0, 0), (1, 100), (2, 200)] {
            assert_eq!(r.push(t, 0, frag(seq, 0, 4, 1000)), Ok(None));
        }
        r.set_max_bytes(1500);
        assert_eq!((r.len(), r.bytes()), (1, 1000));
        // The newest stays and grows within the new bound; a new partial
        // then evicts it, as with the bound set at construction.
        assert_eq!(r.push(3, 0, frag(200, 1, 4, 400)), Ok(None));
        assert_eq!((r.len(), r.bytes()), (1, 1400));
        assert_eq!(r.push(4, 0, frag(300, 0, 2, 200)), Ok(None));
        assert_eq!((r.len(), r.bytes()), (1, 200));
    }
}
