//! Flow storage of one CDS face, laid out so that a packet costs a fixed
//! handful of cache lines whatever the number of flows:
//!
//! * [`Arena`]: one packet slab shared by every flow of the face, with a
//!   free list; each flow's queue is an intrusive singly linked list of slab
//!   indices, so queueing allocates nothing per flow. A packet records the
//!   size of the packet behind it, so popping the head never touches the
//!   next packet's line.
//! * [`Flow`]: the per-packet fields of a flow packed into one 64-byte line
//!   (queue ends, DRR deficit and quantum, the head packet's size, the PECN offered-bits counter and the suggested rate);
//!   the per-period fields (w, φ, greedy counter) live in a parallel
//!   [`FlowPecn`] array that the packet path never reads.
//! * [`FlowIndex`]: an open-addressed table of 4-byte entries (8-bit hash
//!   tag, 24-bit flow id) with linear probing and backward-shift deletion;
//!   a lookup reads one entry line, then the flow it names.

use super::class::ServiceClass;
use crate::time::Timestamp;
use alloc::vec;
use alloc::vec::Vec;

/// "No index" in every intrusive link.
pub(super) const NIL: u32 = u32::MAX;

/// One queued item in the arena.
#[derive(Debug, Clone)]
pub(super) struct Packet<T> {
    /// `None` while the slot is on the free list.
    item: Option<T>,
    at: Timestamp,
    /// Next packet of the same flow (or next free slot).
    next: u32,
    /// Size of `next`, bits, so the flow can cache its new head's size.
    next_size_bits: u32,
}

/// A packet taken off a flow's queue.
pub(super) struct Popped<T> {
    pub(super) item: T,
    pub(super) at: Timestamp,
}

/// The packet slab shared by all flows of a face.
#[derive(Debug, Clone)]
pub(super) struct Arena<T> {
    slots: Vec<Packet<T>>,
    free: u32,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena {
            slots: Vec::new(),
            free: NIL,
        }
    }
}

impl<T> Arena<T> {
    fn alloc(&mut self, item: T, at: Timestamp) -> u32 {
        let pkt = Packet {
            item: Some(item),
            at,
            next: NIL,
            next_size_bits: 0,
        };
        match self.slots.get_mut(self.free as usize) {
            Some(slot) => {
                let id = self.free;
                self.free = slot.next;
                *slot = pkt;
                id
            }
            None => {
                self.slots.push(pkt);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Frees `id`; returns its item, time, successor and successor's size.
    fn release(&mut self, id: u32) -> Option<(Popped<T>, u32, u32)> {
        let slot = self.slots.get_mut(id as usize)?;
        let item = slot.item.take()?;
        let out = (Popped { item, at: slot.at }, slot.next, slot.next_size_bits);
        slot.next = self.free;
        self.free = id;
        Some(out)
    }

    /// Slots ever allocated (the high-water mark of queued packets).
    pub(super) fn capacity(&self) -> usize {
        self.slots.len()
    }
}

/// Per-packet state of a flow: exactly one cache line.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(super) struct Flow {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) len: u32,
    /// Size of the head packet, bits (valid while `len > 0`).
    pub(super) head_size_bits: u32,
    /// DRR quantum `quantum_bits·w·φ`, recomputed when w or φ change.
    pub(super) quantum_bits: u32,
    /// DRR deficit; saturating, and any deficit ≥ the head size suffices.
    pub(super) deficit_bits: u32,
    pub(super) class: ServiceClass,
    pub(super) in_turn: bool,
    pub(super) live: bool,
    pub(super) has_rate: bool,
    pub(super) prefix: u64,
    /// Expected Data bits offered in the current period (including refused).
    pub(super) offered_bits: u64,
    /// Suggested target rate R (valid when `has_rate`).
    pub(super) rate_bps: f64,
}

impl Flow {
    pub(super) fn rate(&self) -> Option<f64> {
        self.has_rate.then_some(self.rate_bps)
    }
}

/// Per-period (PECN) state of a flow, kept off the packet path.
#[derive(Debug, Clone, Copy)]
pub(super) struct FlowPecn {
    pub(super) weight: f64,
    pub(super) phi: f64,
    pub(super) greedy: u8,
}

/// DRR quantum of a flow: `base·w·φ` bits, at least 1.
pub(super) fn quantum(base_bits: u32, pecn: &FlowPecn) -> u32 {
    (f64::from(base_bits) * pecn.weight * pecn.phi).clamp(1.0, f64::from(u32::MAX)) as u32
}

/// Most flows the index can name (24-bit ids).
pub(super) const MAX_FLOWS: u32 = (1 << 24) - 1;
const EMPTY: u32 = u32::MAX;
const ID_MASK: u32 = MAX_FLOWS;
const MIN_INDEX_SLOTS: usize = 16;

/// Seeded hash of a flow key: one folded 64×64→128 multiply.
#[derive(Debug, Clone, Copy)]
pub(super) struct FlowHasher([u64; 2]);

impl FlowHasher {
    pub(super) fn new(seed: u64) -> Self {
        // Two independent-looking keys from one seed (SplitMix64 steps).
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let s0 = mix(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
        let s1 = mix(s0.wrapping_add(0x9e37_79b9_7f4a_7c15));
        FlowHasher([s0, s1 | 1])
    }

    pub(super) fn hash(self, class: ServiceClass, prefix: u64) -> u64 {
        let a = prefix ^ self.0[0];
        let b = self.0[1] ^ (u64::from(class.code()) << 56);
        let m = u128::from(a) * u128::from(b);
        (m as u64) ^ ((m >> 64) as u64)
    }
}

/// Open-addressed table of 4-byte entries (8-bit hash tag, 24-bit flow
/// id), linear probing, at most 4/5 full: 100 000 flows take 512 KiB, so
/// the one line a lookup reads tends to stay in L2. A tag match is
/// confirmed against the flow itself (the line the caller reads next
/// anyway); 1 in 256 other entries probed costs a wasted flow read.
#[derive(Debug, Clone)]
pub(super) struct FlowIndex {
    slots: Vec<u32>,
    len: usize,
}

impl FlowIndex {
    pub(super) fn new() -> Self {
        FlowIndex {
            slots: Vec::new(),
            len: 0,
        }
    }

    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    fn entry(hash: u64, id: u32) -> u32 {
        ((hash >> 56) as u32) << 24 | (id & ID_MASK)
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The flow id stored under `hash` for which `is_it` holds.
    pub(super) fn find(&self, hash: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.mask();
        let tag = (hash >> 56) as u32;
        let mut i = hash as usize & mask;
        loop {
            let e = self.slots[i];
            if e == EMPTY {
                return None;
            }
            if e >> 24 == tag && is_it(e & ID_MASK) {
                return Some(e & ID_MASK);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds (hash, id); the caller has checked the key is absent and that
    /// `id <= MAX_FLOWS`. `hash_of` rehashes stored ids when the table grows.
    pub(super) fn insert(&mut self, hash: u64, id: u32, hash_of: impl Fn(u32) -> u64) {
        if (self.len + 1) * 5 > self.slots.len() * 4 {
            let new_len = (self.slots.len() * 2).max(MIN_INDEX_SLOTS);
            let old = core::mem::replace(&mut self.slots, vec![EMPTY; new_len]);
            for e in old.into_iter().filter(|&e| e != EMPTY) {
                self.place(hash_of(e & ID_MASK), e);
            }
        }
        self.place(hash, Self::entry(hash, id));
        self.len += 1;
    }

    fn place(&mut self, hash: u64, entry: u32) {
        let mask = self.mask();
        let mut i = hash as usize & mask;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = entry;
    }

    /// Removes the entry of flow `id` stored under `hash`; `hash_of` gives
    /// the hash of the other ids (to find their home slots).
    pub(super) fn remove(&mut self, hash: u64, id: u32, hash_of: impl Fn(u32) -> u64) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let mask = self.mask();
        let want = Self::entry(hash, id);
        let mut i = hash as usize & mask;
        loop {
            match self.slots[i] {
                EMPTY => return false,
                e if e == want => break,
                _ => i = (i + 1) & mask,
            }
        }
        // Backward-shift deletion: pull later entries of the probe run into
        // the hole unless their home lies cyclically in (hole, j].
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.slots[j];
            if e == EMPTY {
                break;
            }
            let k = hash_of(e & ID_MASK) as usize & mask;
            let stays = if i <= j {
                i < k && k <= j
            } else {
                i < k || k <= j
            };
            if !stays {
                self.slots[i] = e;
                i = j;
            }
        }
        self.slots[i] = EMPTY;
        self.len -= 1;
        true
    }
}

/// Appends a packet to `flow`'s queue.
pub(super) fn push<T>(
    arena: &mut Arena<T>,
    flow: &mut Flow,
    item: T,
    size_bits: u32,
    at: Timestamp,
) {
    let id = arena.alloc(item, at);
    if flow.len == 0 {
        flow.head = id;
        flow.head_size_bits = size_bits;
    } else if let Some(tail) = arena.slots.get_mut(flow.tail as usize) {
        tail.next = id;
        tail.next_size_bits = size_bits;
    }
    flow.tail = id;
    flow.len += 1;
}

/// Takes the head packet of `flow`'s queue.
pub(super) fn pop<T>(arena: &mut Arena<T>, flow: &mut Flow) -> Option<Popped<T>> {
    if flow.len == 0 {
        return None;
    }
    let (popped, next, next_size) = arena.release(flow.head)?;
    flow.len -= 1;
    if flow.len == 0 {
        flow.head = NIL;
        flow.tail = NIL;
    } else {
        flow.head = next;
        flow.head_size_bits = next_size;
    }
    Some(popped)
}

/// Hints the CPU to fetch `x`'s (first) cache line ahead of use.
#[inline(always)]
pub(super) fn prefetch<X>(x: &X) {
    prefetch_ptr((x as *const X).cast());
}

#[inline(always)]
fn prefetch_ptr(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` only hints the cache: it never dereferences the
    // pointer and cannot fault, whatever the address. The `sse` feature it
    // needs is enabled for this build (checked by `cfg`).
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = p;
}

/// Prefetches packet `id` (no-op for `NIL`): its first and last byte, since
/// a slot may straddle two lines.
#[inline(always)]
pub(super) fn prefetch_packet<T>(arena: &Arena<T>, id: u32) {
    if let Some(p) = arena.slots.get(id as usize) {
        prefetch(p);
        let last = (p as *const Packet<T>).cast::<u8>();
        prefetch_ptr(last.wrapping_add(core::mem::size_of::<Packet<T>>() - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn flow_fits_one_cache_line() {
        assert_eq!(core::mem::size_of::<Flow>(), 64);
        assert_eq!(core::mem::size_of::<Packet<u64>>(), 32);
    }

    proptest! {
        /// The index agrees with a HashMap under inserts and removes, even
        /// when every key shares one home slot and one tag.
        #[test]
        fn index_matches_a_map(
            ops in proptest::collection::vec((any::<bool>(), 0u64..64), 1..400),
            collide in any::<bool>(),
        ) {
            let hasher = FlowHasher::new(9);
            let mut idx = FlowIndex::new();
            let mut model: HashMap<u64, u32> = HashMap::new();
            let mut keys: Vec<u64> = Vec::new();
            let h = |k: u64| if collide { k << 3 } else { hasher.hash(ServiceClass::Be, k) };
            for (add, key) in ops {
                let found = idx.find(h(key), |id| model.get(&key) == Some(&id));
                prop_assert_eq!(found, model.get(&key).copied());
                if add && found.is_none() {
                    let id = keys.len() as u32;
                    keys.push(key);
                    let snapshot = keys.clone();
                    idx.insert(h(key), id, |i| h(snapshot[i as usize]));
                    model.insert(key, id);
                } else if !add {
                    if let Some(id) = model.remove(&key) {
                        prop_assert!(idx.remove(h(key), id, |i| h(keys[i as usize])));
                    }
                }
                prop_assert_eq!(idx.len(), model.len());
            }
            for (&key, &id) in &model {
                prop_assert_eq!(idx.find(h(key), |x| x == id), Some(id));
            }
        }
    }
}
