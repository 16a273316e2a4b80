//! Pending Interest Table.
//!
//! Entries live in a bounded slab; freed slots are reused lowest id first,
//! so after a flood the free tail can be released ([`Pit::shrink`]). An
//! index maps the Interest name's TLV-VALUE to the first slot with that
//! name; entries with the same
//! name but different CanBePrefix/MustBeFresh are chained. Data lookup probes
//! the exact name, the full name (only while digest Interests are pending)
//! and, for each depth that has CanBePrefix entries, the prefix of that depth.
//! Expiry uses a min-heap with generation numbers (lazy deletion), rebuilt
//! when stale items accumulate so that it stays bounded too.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;
use cc_core::Timestamp;
use icn_tlv::NackReason;

use super::budgets::spare;
use super::face::FaceId;
use super::hash::{Map, SeededState};
use super::name_table::{ComponentEnds, MAX_DEPTH};
use super::timer_queue::TimerQueue;

const NIL: u32 = u32::MAX;

/// A downstream that asked for the entry's Data.
#[derive(Debug, Clone)]
pub struct InRecord {
    /// Downstream face.
    pub face: FaceId,
    /// Nonce of the last Interest from it.
    pub nonce: u32,
    /// When this downstream's Interest expires.
    pub expiry: Timestamp,
    /// When the last Interest from it arrived.
    pub last_renewed: Timestamp,
    /// PitToken to restore on the Data/Nack sent back to it.
    pub pit_token: Option<Bytes>,
    /// The Interest as the downstream sent it (the Nack fragment).
    pub wire: Bytes,
}

/// An upstream the Interest was forwarded to.
#[derive(Debug, Clone)]
pub struct OutRecord {
    /// Upstream face.
    pub face: FaceId,
    /// Nonce sent upstream.
    pub nonce: u32,
    /// When it was last sent.
    pub last_sent: Timestamp,
    /// When it expires.
    pub expiry: Timestamp,
    /// Nack received from this upstream, if any.
    pub nack: Option<NackReason>,
}

/// One PIT entry.
#[derive(Debug, Clone, Default)]
pub struct PitEntry {
    /// Interest name TLV-VALUE (the index key).
    pub name_value: Bytes,
    /// CanBePrefix of the Interests aggregated here.
    pub can_be_prefix: bool,
    /// MustBeFresh of the Interests aggregated here.
    pub must_be_fresh: bool,
    /// Downstreams.
    pub in_records: Vec<InRecord>,
    /// Upstreams.
    pub out_records: Vec<OutRecord>,
    /// Entry expiry (latest in-record expiry).
    pub expiry: Timestamp,
    /// The most recent Interest wire (what retransmissions forward).
    pub interest_wire: Bytes,
    /// Strategy-private per-entry state (e.g. retransmission suppression).
    pub strategy_state: [u64; 2],
    depth: u8,
    has_digest: bool,
    next_same_name: u32,
    gen: u32,
    live: bool,
}

impl PitEntry {
    /// The in-record of `face`.
    pub fn in_record(&self, face: FaceId) -> Option<&InRecord> {
        self.in_records.iter().find(|r| r.face == face)
    }
    /// The out-record of `face`.
    pub fn out_record(&self, face: FaceId) -> Option<&OutRecord> {
        self.out_records.iter().find(|r| r.face == face)
    }
    /// Latest time the Interest was sent to any upstream.
    pub fn last_outgoing(&self) -> Option<Timestamp> {
        self.out_records.iter().map(|r| r.last_sent).max()
    }
    /// True while at least one downstream waits.
    pub fn is_pending(&self) -> bool {
        !self.in_records.is_empty()
    }
}

/// Result of a PIT lookup-or-insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PitInsert {
    /// A fresh entry was created.
    New(u32),
    /// An entry with the same name and selectors exists.
    Existing(u32),
    /// The PIT is at capacity.
    Full,
}

/// Bounded PIT.
#[derive(Debug, Clone)]
pub struct Pit {
    /// In-records and their Interest octets, per downstream face (fair
    /// shares and the byte budget; kept by [`Pit::charge`]/[`Pit::release`]).
    usage: Map<FaceId, (usize, usize)>,
    /// Interest octets held by all in-records.
    in_bytes: usize,
    index: Map<Bytes, u32>,
    slots: Vec<PitEntry>,
    /// Free slots, lowest id first, so that live entries gather at the
    /// front and a drained flood's slots can be truncated ([`Pit::shrink`]).
    free: BinaryHeap<Reverse<u32>>,
    live: usize,
    max_entries: usize,
    cbp_depth: [u32; MAX_DEPTH + 1],
    digest_entries: u32,
    timers: TimerQueue,
}

impl Pit {
    /// Creates a PIT of at most `max_entries` entries.
    pub fn new(max_entries: usize, hasher: SeededState) -> Self {
        Pit {
            usage: Map::with_hasher(hasher),
            in_bytes: 0,
            index: Map::with_hasher(hasher),
            slots: Vec::new(),
            free: BinaryHeap::new(),
            live: 0,
            max_entries,
            cbp_depth: [0; MAX_DEPTH + 1],
            digest_entries: 0,
            timers: TimerQueue::default(),
        }
    }

    /// Books an in-record of `bytes` octets from `face` (added by the caller).
    pub fn charge(&mut self, face: FaceId, bytes: usize) {
        let u = self.usage.entry(face).or_default();
        u.0 += 1;
        u.1 += bytes;
        self.in_bytes += bytes;
    }

    /// Releases what [`Pit::charge`] booked for an in-record the caller removed.
    pub fn release(&mut self, face: FaceId, bytes: usize) {
        if let Some(u) = self.usage.get_mut(&face) {
            u.0 = u.0.saturating_sub(1);
            u.1 = u.1.saturating_sub(bytes);
            if u.0 == 0 {
                self.usage.remove(&face);
            }
        }
        self.in_bytes = self.in_bytes.saturating_sub(bytes);
    }

    /// In-records of `face`.
    pub fn face_records(&self, face: FaceId) -> usize {
        self.usage.get(&face).map_or(0, |u| u.0)
    }

    /// Interest octets held by in-records.
    pub fn in_bytes(&self) -> usize {
        self.in_bytes
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// True while some pending Interest names an implicit digest.
    pub fn has_digest_entries(&self) -> bool {
        self.digest_entries > 0
    }

    /// Entry by id.
    pub fn get(&self, id: u32) -> Option<&PitEntry> {
        self.slots.get(id as usize).filter(|e| e.live)
    }

    /// Mutable entry by id.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut PitEntry> {
        self.slots.get_mut(id as usize).filter(|e| e.live)
    }

    /// Finds the entry for (name, CanBePrefix, MustBeFresh).
    pub fn find(&self, name_value: &[u8], cbp: bool, mbf: bool) -> Option<u32> {
        let mut i = *self.index.get(name_value)?;
        while let Some(e) = self.get(i) {
            if e.can_be_prefix == cbp && e.must_be_fresh == mbf {
                return Some(i);
            }
            i = e.next_same_name;
        }
        None
    }

    /// Finds or creates the entry for an Interest. `depth` is the component
    /// count; `has_digest` says the last component is an implicit digest.
    pub fn find_or_insert(
        &mut self,
        name_value: &Bytes,
        depth: usize,
        cbp: bool,
        mbf: bool,
        has_digest: bool,
    ) -> PitInsert {
        let head = self.index.get(name_value.as_ref()).copied().unwrap_or(NIL);
        let mut i = head;
        while let Some(e) = self.get(i) {
            if e.can_be_prefix == cbp && e.must_be_fresh == mbf {
                return PitInsert::Existing(i);
            }
            i = e.next_same_name;
        }
        if self.live >= self.max_entries {
            return PitInsert::Full;
        }
        let id = match self.free.pop() {
            Some(Reverse(i)) => i,
            None => {
                self.slots.push(PitEntry::default());
                (self.slots.len() - 1) as u32
            }
        };
        let depth = depth.min(MAX_DEPTH);
        {
            let e = &mut self.slots[id as usize];
            e.name_value = name_value.clone();
            e.can_be_prefix = cbp;
            e.must_be_fresh = mbf;
            e.in_records.clear();
            e.out_records.clear();
            e.expiry = Timestamp::ZERO;
            e.interest_wire = Bytes::new();
            e.strategy_state = [0; 2];
            e.depth = depth as u8;
            e.has_digest = has_digest;
            e.next_same_name = head;
            e.gen = e.gen.wrapping_add(1);
            e.live = true;
        }
        self.index.insert(name_value.clone(), id);
        if cbp {
            self.cbp_depth[depth] += 1;
        }
        if has_digest {
            self.digest_entries += 1;
        }
        self.live += 1;
        PitInsert::New(id)
    }

    /// Sets the entry's expiry and arms its timer.
    pub fn set_expiry(&mut self, id: u32, at: Timestamp) {
        let Some(e) = self.slots.get_mut(id as usize).filter(|e| e.live) else {
            return;
        };
        e.expiry = at;
        e.gen = e.gen.wrapping_add(1);
        let gen = e.gen;
        self.timers.push((at, id, gen));
        if self.timers.len() > 2 * self.max_entries.max(1024) {
            self.rebuild_timers();
        }
    }

    fn rebuild_timers(&mut self) {
        let live = self.slots.iter().enumerate().filter(|(_, e)| e.live);
        self.timers
            .rebuild(live.map(|(i, e)| (e.expiry, i as u32, e.gen)));
    }

    /// Earliest armed expiry (may belong to a since-renewed entry).
    pub fn next_expiry(&self) -> Option<Timestamp> {
        self.timers.peek().map(|(t, _, _)| t)
    }

    /// Pops one entry whose expiry is at or before `now`.
    pub fn pop_expired(&mut self, now: Timestamp) -> Option<u32> {
        while let Some((t, id, gen)) = self.timers.peek() {
            if t > now {
                return None;
            }
            self.timers.pop();
            if self.get(id).is_some_and(|e| e.gen == gen) {
                return Some(id);
            }
        }
        None
    }

    /// Deletes an entry.
    pub fn remove(&mut self, id: u32) {
        let Some(e) = self.slots.get(id as usize).filter(|e| e.live) else {
            return;
        };
        let next = e.next_same_name;
        let (cbp, depth, digest) = (e.can_be_prefix, usize::from(e.depth), e.has_digest);
        // Unlink from the same-name chain. The usual entry heads a chain of
        // one: removing its key is the only probe (a lookup first, then the
        // removal, hashed and probed the name twice).
        match self.index.remove_entry(e.name_value.as_ref()) {
            Some((_, head)) if head == id && next == NIL => {}
            Some((_, head)) if head == id => {
                let k = self.slots[next as usize].name_value.clone();
                self.index.insert(k, next);
            }
            Some((k, head)) => {
                self.index.insert(k, head);
                let mut i = head;
                while let Some(cur) = self.slots.get(i as usize) {
                    if cur.next_same_name == id {
                        self.slots[i as usize].next_same_name = next;
                        break;
                    }
                    i = cur.next_same_name;
                }
            }
            None => {}
        }
        let e = &mut self.slots[id as usize];
        e.live = false;
        e.gen = e.gen.wrapping_add(1);
        e.name_value = Bytes::new();
        e.interest_wire = Bytes::new();
        // The slot keeps its in-record Vec's capacity for the next entry
        // (its records' wires are dropped here): a fresh Vec allocated
        // once per exchange.
        let mut records = std::mem::take(&mut e.in_records);
        e.out_records.clear();
        if cbp {
            self.cbp_depth[depth] -= 1;
        }
        if digest {
            self.digest_entries -= 1;
        }
        self.live -= 1;
        self.free.push(Reverse(id));
        for r in &records {
            self.release(r.face, r.wire.len());
        }
        records.clear();
        self.slots[id as usize].in_records = records;
    }

    /// Collects the entries a Data named `name_value` satisfies into `out`.
    /// `full_name_value` (name + implicit digest) is consulted when given.
    pub fn matches_for_data(
        &self,
        ends: &ComponentEnds,
        name_value: &[u8],
        full_name_value: Option<&[u8]>,
        out: &mut Vec<u32>,
    ) {
        let n = ends.depth();
        self.collect_chain(name_value, false, out);
        if let Some(full) = full_name_value {
            self.collect_chain(full, false, out);
        }
        for d in 0..n {
            if self.cbp_depth[d] > 0 {
                self.collect_chain(&name_value[..ends.end(d)], true, out);
            }
        }
    }

    fn collect_chain(&self, key: &[u8], cbp_only: bool, out: &mut Vec<u32>) {
        let Some(&head) = self.index.get(key) else {
            return;
        };
        let mut i = head;
        while let Some(e) = self.get(i) {
            if !cbp_only || e.can_be_prefix {
                out.push(i);
            }
            i = e.next_same_name;
        }
    }

    /// Releases spare capacity after a flood has drained: free slots at the
    /// end of the slab, and the capacity of the index, the timer heap and
    /// the free list beyond twice their use. True when anything was freed.
    pub fn shrink(&mut self) -> bool {
        let len = self.slots.len();
        let mut n = len;
        while n > 0 && !self.slots[n - 1].live {
            n -= 1;
        }
        let mut changed = n < len;
        if changed {
            self.slots.truncate(n);
            self.free.retain(|Reverse(i)| (*i as usize) < n);
        }
        if self.timers.len() > 2 * self.live + 1024 {
            self.rebuild_timers();
        }
        if spare(self.slots.len(), self.slots.capacity()) {
            self.slots.shrink_to_fit();
            changed = true;
        }
        if spare(self.free.len(), self.free.capacity()) {
            self.free.shrink_to_fit();
            changed = true;
        }
        if spare(self.timers.len(), self.timers.capacity()) {
            self.timers.shrink_to_fit();
            changed = true;
        }
        if spare(self.index.len(), self.index.capacity()) {
            self.index.shrink_to(0);
            changed = true;
        }
        if spare(self.usage.len(), self.usage.capacity()) {
            self.usage.shrink_to(0);
            changed = true;
        }
        changed
    }

    /// Ids of live entries (tests, invariants).
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, e)| e.live)
            .map(|(i, _)| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::name_table::test_name_value as n;

    #[test]
    fn a_drained_flood_is_released_and_ids_restart_low() {
        let mut p = Pit::new(5000, SeededState::new(0));
        let ids: Vec<u32> = (0..3000)
            .map(
                |i| match p.find_or_insert(&n(&["f", &i.to_string()]), 2, false, false, false) {
                    PitInsert::New(id) => id,
                    _ => panic!(),
                },
            )
            .collect();
        // One entry survives near the front; the rest of the flood drains.
        for id in &ids[1..] {
            p.remove(*id);
        }
        assert!(p.shrink());
        assert_eq!(p.slots.len(), 1);
        assert!(p.slots.capacity() < 1100 && p.index.capacity() < 1100);
        // New entries take the lowest free ids.
        let PitInsert::New(id) = p.find_or_insert(&n(&["g"]), 1, false, false, false) else {
            panic!()
        };
        assert_eq!(id, 1);
        assert!(!p.shrink());
    }

    #[test]
    fn selectors_make_distinct_entries_and_data_finds_all() {
        let mut p = Pit::new(10, SeededState::new(0));
        let ab = n(&["a", "b"]);
        let a = n(&["a"]);
        let PitInsert::New(e1) = p.find_or_insert(&ab, 2, false, false, false) else {
            panic!()
        };
        let PitInsert::New(e2) = p.find_or_insert(&ab, 2, false, true, false) else {
            panic!()
        };
        let PitInsert::New(e3) = p.find_or_insert(&a, 1, true, false, false) else {
            panic!()
        };
        let PitInsert::New(_e4) = p.find_or_insert(&a, 1, false, false, false) else {
            panic!()
        };
        assert_eq!(
            p.find_or_insert(&ab, 2, false, true, false),
            PitInsert::Existing(e2)
        );
        let ends = ComponentEnds::parse(&ab).unwrap();
        let mut out = Vec::new();
        p.matches_for_data(&ends, &ab, None, &mut out);
        out.sort();
        assert_eq!(out, vec![e1, e2, e3]);
        p.remove(e2);
        p.remove(e1);
        out.clear();
        p.matches_for_data(&ends, &ab, None, &mut out);
        assert_eq!(out, vec![e3]);
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn full_pit_refuses_and_timers_fire_in_order() {
        let mut p = Pit::new(2, SeededState::new(0));
        let PitInsert::New(a) = p.find_or_insert(&n(&["a"]), 1, false, false, false) else {
            panic!()
        };
        let PitInsert::New(b) = p.find_or_insert(&n(&["b"]), 1, false, false, false) else {
            panic!()
        };
        assert_eq!(
            p.find_or_insert(&n(&["c"]), 1, false, false, false),
            PitInsert::Full
        );
        p.set_expiry(a, Timestamp::from_millis(10));
        p.set_expiry(b, Timestamp::from_millis(5));
        p.set_expiry(a, Timestamp::from_millis(20));
        assert_eq!(p.pop_expired(Timestamp::from_millis(15)), Some(b));
        p.remove(b);
        assert_eq!(p.pop_expired(Timestamp::from_millis(15)), None);
        assert_eq!(p.pop_expired(Timestamp::from_millis(20)), Some(a));
    }
}
