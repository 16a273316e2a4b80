//! Flow storage of one CDS face, laid out so that a packet costs a fixed
//! handful of cache lines whatever the number of flows:
//!
//! * [`Arena`]: one packet slab shared by every flow of the face, with a
//!   free list; each flow's queue is an intrusive singly linked list of slab
//!   indices, so queueing allocates nothing per flow. A packet records the
//!   size of the packet behind it, so popping the head never touches the
//!   next packet's line.
//! * [`Flow`]: everything about a flow packed into one 64-byte line (queue
//!   ends, DRR deficit and quantum, the head packet's size, and its PECN
//!   state: offered-bits counter and its period, suggested rate, w, φ as a
//!   flag, greedy counter), so the PECN period reads one line per flow and
//!   settling a flow on the packet path touches no other line.
//! * [`TagIndex`]: the control bytes of the open-addressed table the flows
//!   live in (a flow's id is its slot): one 7-bit hash tag per slot, linear
//!   probing, tombstones; a lookup reads one tag line and the flow's line,
//!   whose address follows from the hash alone.

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

/// All the state of a flow: exactly one cache line.
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
    /// PECN period (wrapping) that `offered_bits` counts; the flow's rate,
    /// g and φ are settled through the period before it (`pecn.rs`). One
    /// byte suffices: every period end settles a flow still pending, so a
    /// live flow is never more than one period behind.
    pub(super) epoch: u8,
    pub(super) class: ServiceClass,
    /// Greedy counter g (eq. 9), 0..=λ.
    pub(super) greedy: u8,
    pub(super) in_turn: bool,
    pub(super) live: bool,
    pub(super) has_rate: bool,
    /// φ = `phi_penalty` if set, else 1 (the only two values eq. 9 gives).
    pub(super) penalised: bool,
    /// Queue occupancy (len / flow queue capacity, capped at 1, in 255ths)
    /// at the end of period `epoch − 1`: the σ factor of the flow's pending
    /// update (`pecn.rs`) reads it, so settling late gives the same rate.
    pub(super) vq_fill: u8,
    pub(super) prefix: u64,
    /// Expected Data bits offered in period `epoch` (including refused).
    pub(super) offered_bits: u64,
    /// Suggested target rate R (valid when `has_rate`).
    pub(super) rate_bps: f64,
    /// WDRR weight w (default 1).
    pub(super) weight: f64,
}

impl Flow {
    /// An unused slot of the flow table.
    pub(super) const DEAD: Flow = Flow {
        head: NIL,
        tail: NIL,
        len: 0,
        head_size_bits: 0,
        quantum_bits: 0,
        deficit_bits: 0,
        epoch: 0,
        class: ServiceClass::Be,
        greedy: 0,
        in_turn: false,
        live: false,
        has_rate: false,
        penalised: false,
        vq_fill: 0,
        prefix: 0,
        offered_bits: 0,
        rate_bps: 0.0,
        weight: 1.0,
    };

    /// φ, given the configured penalty value `phi_pen`.
    #[inline]
    pub(super) fn phi(&self, phi_pen: f64) -> f64 {
        if self.penalised {
            phi_pen
        } else {
            1.0
        }
    }
}

/// DRR quantum of a flow: `base·w·φ` bits, at least 1.
pub(super) fn quantum(base_bits: u32, weight: f64, phi: f64) -> u32 {
    (f64::from(base_bits) * weight * phi).clamp(1.0, f64::from(u32::MAX)) as u32
}

/// Most flows a face tracks (slot ids stay far from `u32` limits).
pub(super) const MAX_FLOWS: u32 = (1 << 24) - 1;
/// Tag of a slot never used since the last rehash: ends every probe.
const EMPTY: u8 = 0xff;
/// Tag of a slot whose flow was forgotten: probes go on past it.
const TOMB: u8 = 0xfe;
const MIN_SLOTS: usize = 16;

/// Seeded hash of a flow key: one folded 64×64→128 multiply.
#[derive(Debug, Clone, Copy)]
pub(super) struct FlowHasher([u64; 2]);

impl FlowHasher {
    pub(super) fn new(seed: u64) -> Self {
        // Two independent-looking keys from one seed (SplitMix64 steps).
        use crate::splitmix::{mix, GAMMA};
        let s0 = mix(seed.wrapping_add(GAMMA));
        let s1 = mix(s0.wrapping_add(GAMMA));
        FlowHasher([s0, s1 | 1])
    }

    pub(super) fn hash(self, class: ServiceClass, prefix: u64) -> u64 {
        let a = prefix ^ self.0[0];
        let b = self.0[1] ^ (u64::from(class.code()) << 56);
        let m = u128::from(a) * u128::from(b);
        (m as u64) ^ ((m >> 64) as u64)
    }
}

/// The control bytes of the open-addressed flow table: slot `i` of the
/// flow array holds a flow iff `tags[i]` is a live tag (the top 7 bits
/// of its hash). The flows themselves sit *in* the table (a flow's id
/// is its slot), so a lookup reads one byte line (1 byte per slot: 128 KiB
/// for 100 000 flows, L2-resident) and then the flow line at an address
/// known from the slot, with no id to load in between. Linear probing,
/// 8 tags compared at once (SWAR on a `u64`; the first [`GROUP`] tags are
/// mirrored past the end so a group never wraps), starting at the home
/// slot, so a displaced flow costs no extra branch. Deletion leaves a
/// tombstone, so flows never move
/// except in [`rehash`](super::scheduler::CdsScheduler) (growth or
/// tombstone cleanup), which renumbers them in one O(n) pass; at most 7/8
/// of the slots are live or tombstones, so every probe ends.
#[derive(Debug, Clone, Default)]
pub(super) struct TagIndex {
    /// `slots + GROUP` tags (empty when `slots == 0`).
    tags: Vec<u8>,
    /// A power of two, or 0.
    slots: usize,
    live: usize,
    tombs: usize,
}

/// Tags compared per probe step.
const GROUP: usize = 8;
const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in (at least the lowest) zero byte of `x`; 0 iff none.
#[inline]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(LO) & !x & HI
}

impl TagIndex {
    #[inline]
    fn tag(hash: u64) -> u8 {
        (hash >> 57) as u8
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.wrapping_sub(1)
    }

    /// A table of `slots` (a power of two, at least [`GROUP`]) empty slots.
    pub(super) fn with_slots(slots: usize) -> Self {
        TagIndex {
            tags: vec![EMPTY; slots + GROUP],
            slots,
            live: 0,
            tombs: 0,
        }
    }

    /// Live entries.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// Slots (live, tombstone or empty).
    #[cfg(test)]
    fn slots(&self) -> usize {
        self.slots
    }

    /// Whether slot `i` holds a live entry.
    pub(super) fn is_live(&self, i: usize) -> bool {
        i < self.slots && self.tags.get(i).is_some_and(|&t| t < TOMB)
    }

    /// The live slots in order (the PECN period's pass): 8 tags per step,
    /// so a dead slot costs a bit, not a flow line.
    pub(super) fn live_slots(&self) -> LiveSlots {
        LiveSlots { group: 0, mask: 0 }
    }

    fn set(&mut self, i: usize, tag: u8) {
        self.tags[i] = tag;
        if i < GROUP {
            self.tags[self.slots + i] = tag;
        }
    }

    /// The slot under `hash` for which `is_it` holds.
    ///
    /// The first group starts at the home slot, so a flow there is the
    /// lowest candidate of the first compare: the home-or-not question
    /// (about a third of the flows are displaced at the usual loads) is
    /// answered by arithmetic on the tag word rather than by a branch on
    /// data the predictor cannot learn. A home-slot test first cost
    /// ~0.37 mispredictions per lookup at 100 flows (callgrind's branch
    /// model) and 7-11 % more CPU time per packet at 100-100 000 flows
    /// (`scheduler_steady`), for ~15 instructions saved.
    #[inline]
    pub(super) fn find(&self, hash: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.slots == 0 {
            return None;
        }
        let mask = self.mask();
        let want = LO * u64::from(Self::tag(hash));
        let mut i = hash as usize & mask;
        loop {
            let group = self.tags.get(i..i + GROUP)?;
            let g = u64::from_le_bytes(group.try_into().ok()?);
            // Candidates (the lowest exact, later ones may be false
            // positives, which `is_it` rejects).
            let mut m = zero_bytes(g ^ want);
            while m != 0 {
                let slot = (i + m.trailing_zeros() as usize / 8) & mask;
                if is_it(slot as u32) {
                    return Some(slot as u32);
                }
                m &= m - 1;
            }
            // A key never sits past an empty slot of its probe run.
            if zero_bytes(!g) != 0 {
                return None;
            }
            i = (i + GROUP) & mask;
        }
    }

    /// The slot count a table needs before one more insert, if it must be
    /// rebuilt first: doubled when over half would be live, else the same
    /// (clearing tombstones). Either way at least 3/8 of the slots can be
    /// inserted before the next rebuild, so rebuilds cost O(1) amortised.
    pub(super) fn rehash_to(&self) -> Option<usize> {
        let n = self.slots;
        if (self.live + self.tombs + 1) * 8 <= n * 7 {
            return None;
        }
        Some(if (self.live + 1) * 2 > n {
            (n * 2).max(MIN_SLOTS)
        } else {
            n.max(MIN_SLOTS)
        })
    }

    /// Claims a slot for a new entry under `hash` (the caller has checked
    /// that the key is absent and [`rehash_to`](Self::rehash_to) is `None`).
    pub(super) fn insert(&mut self, hash: u64) -> u32 {
        let mask = self.mask();
        let mut i = hash as usize & mask;
        loop {
            match self.tags[i] {
                EMPTY => break,
                TOMB => {
                    self.tombs -= 1;
                    break;
                }
                _ => i = (i + 1) & mask,
            }
        }
        self.set(i, Self::tag(hash));
        self.live += 1;
        i as u32
    }

    /// Frees live slot `i` (leaves a tombstone); false if it was not live.
    pub(super) fn remove(&mut self, i: u32) -> bool {
        match self.tags.get(i as usize) {
            Some(&t) if t < TOMB && (i as usize) < self.slots => {
                self.set(i as usize, TOMB);
                self.live -= 1;
                self.tombs += 1;
                true
            }
            _ => false,
        }
    }
}

/// Cursor over the live slots of a [`TagIndex`] (it borrows nothing, so
/// the flows can be changed, and forgotten, along the way).
pub(super) struct LiveSlots {
    /// First slot of the next group of tags to load.
    group: usize,
    /// High bit set per live slot of the current group not yet yielded.
    mask: u64,
}

impl LiveSlots {
    /// The next live slot of `index`, which must not gain entries meanwhile.
    pub(super) fn next(&mut self, index: &TagIndex) -> Option<usize> {
        while self.mask == 0 {
            if self.group >= index.slots {
                return None;
            }
            let g = index.tags.get(self.group..self.group + GROUP)?;
            // Live tags are 7-bit; EMPTY and TOMB have the high bit set.
            self.mask = !u64::from_le_bytes(g.try_into().ok()?) & HI;
            self.group += GROUP;
        }
        let slot = self.group - GROUP + self.mask.trailing_zeros() as usize / 8;
        self.mask &= self.mask - 1;
        Some(slot)
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
    // The last packet's successor is `NIL` (size 0), so an emptied flow
    // needs no branch; `tail` is only read while `len > 0`.
    flow.head = next;
    flow.head_size_bits = next_size;
    Some(popped)
}

/// Hints the CPU to fetch element `i` of `v` (its first line) ahead of use.
/// The address is computed, not indexed: a prefetch never faults, so an
/// index past the end (a stale ring entry) costs a wasted hint and no
/// bounds check is needed on the hot path.
#[inline(always)]
pub(super) fn prefetch_at<X>(v: &[X], i: usize) {
    prefetch_ptr(v.as_ptr().wrapping_add(i).cast());
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

/// Prefetches packet `id`: its first and last byte, since a slot may
/// straddle two lines (see [`prefetch_at`] for an `id` out of range).
#[inline(always)]
pub(super) fn prefetch_packet<T>(arena: &Arena<T>, id: u32) {
    let first = arena.slots.as_ptr().wrapping_add(id as usize).cast::<u8>();
    prefetch_ptr(first);
    prefetch_ptr(first.wrapping_add(core::mem::size_of::<Packet<T>>() - 1));
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

    /// A [`TagIndex`] with its keys, rebuilt the way the scheduler does.
    struct Table {
        idx: TagIndex,
        keys: Vec<Option<u64>>,
    }

    impl Table {
        fn find(&self, h: u64, key: u64) -> Option<u32> {
            self.idx.find(h, |i| self.keys[i as usize] == Some(key))
        }

        fn insert(&mut self, h: u64, key: u64, hash: impl Fn(u64) -> u64) -> u32 {
            if let Some(n) = self.idx.rehash_to() {
                let mut idx = TagIndex::with_slots(n);
                let mut keys = vec![None; n];
                for k in self.keys.iter().flatten() {
                    keys[idx.insert(hash(*k)) as usize] = Some(*k);
                }
                *self = Table { idx, keys };
            }
            let i = self.idx.insert(h);
            self.keys[i as usize] = Some(key);
            i
        }
    }

    proptest! {
        /// The table agrees with a HashMap under inserts and removes, even
        /// when every key shares one home slot and one tag, and keeps at
        /// least one slot in 8 empty.
        #[test]
        fn tag_index_matches_a_map(
            ops in proptest::collection::vec((any::<bool>(), 0u64..64), 1..400),
            collide in any::<bool>(),
        ) {
            let hasher = FlowHasher::new(9);
            let h = |k: u64| if collide { 7 << 56 } else { hasher.hash(ServiceClass::Be, k) };
            let mut t = Table { idx: TagIndex::default(), keys: Vec::new() };
            let mut model: HashMap<u64, ()> = HashMap::new();
            for (add, key) in ops {
                let found = t.find(h(key), key);
                prop_assert_eq!(found.is_some(), model.contains_key(&key));
                if add && found.is_none() {
                    t.insert(h(key), key, h);
                    model.insert(key, ());
                } else if let (false, Some(i)) = (add, found) {
                    prop_assert!(t.idx.remove(i));
                    prop_assert!(!t.idx.is_live(i as usize));
                    t.keys[i as usize] = None;
                    model.remove(&key);
                }
                prop_assert_eq!(t.idx.len(), model.len());
                prop_assert!((t.idx.live + t.idx.tombs) * 8 <= t.idx.slots() * 7);
            }
            for &key in model.keys() {
                let i = t.find(h(key), key);
                prop_assert!(i.is_some_and(|i| t.idx.is_live(i as usize)));
            }
            // The period's cursor visits exactly the live slots, in order.
            let mut cursor = t.idx.live_slots();
            let mut seen = Vec::new();
            while let Some(i) = cursor.next(&t.idx) {
                seen.push(i);
            }
            let live: Vec<usize> = (0..t.idx.slots()).filter(|&i| t.idx.is_live(i)).collect();
            prop_assert_eq!(seen, live);
        }
    }
}
