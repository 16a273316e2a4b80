//! The Content Store's byte-ordered name index, kept only while CanBePrefix
//! lookups are recent.
//!
//! A CanBePrefix lookup is a range scan over names in byte order (a name
//! prefix is a byte prefix ending on a component boundary). Keeping that
//! order costs a B-tree insert and remove per stored Data, ~10-15 % of the
//! daemon's CPU under a unique-name load, paid even when no Interest ever
//! asks with CanBePrefix. So the tree is built on demand:
//!
//! * [`OrderState::Off`]: no tree; stores and evictions never touch it.
//! * [`OrderState::Building`]: a cursor scans the slab, adding each live
//!   slot's name; slots below the cursor are kept in the tree by every
//!   insert and removal, slots at or above it are left to the scan. A
//!   CanBePrefix lookup advances the scan by [`LOOKUP_STEP`] slots and each
//!   insert by [`INSERT_STEP`], so no single packet does more than a bounded
//!   amount of work (the rejected alternative, merging everything at the
//!   first lookup, stalled the daemon for 35-50 ms at 65 536 entries).
//!   Lookups miss until the build completes; a CS miss is always safe.
//! * [`OrderState::On`]: the tree holds every live slot and follows every
//!   insert and removal, as an always-on index would.
//!
//! `On` (or `Building`) falls back to `Off` after more than
//! [`IDLE_FACTOR`] × max(entries, [`IDLE_FLOOR`]) inserts without a
//! CanBePrefix lookup; the dropped tree is freed [`RETIRE_STEP`] entries per
//! insert rather than at once.

use std::collections::BTreeMap;

use bytes::Bytes;

/// Bytes of a name kept inline in the ordered index.
const HEAD: usize = 32;

/// Ordered-index key: the first [`HEAD`] bytes inline (zero padded, as
/// big-endian words), then the whole value. Comparing heads first orders
/// keys exactly as comparing the values (a zero pad sorts before any byte,
/// like the end of a shorter value; big-endian words compare like their
/// bytes), but most comparisons are four integer compares inside the
/// B-tree node instead of a `memcmp` call or a cold packet buffer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct OrdKey {
    head: [u64; HEAD / 8],
    pub(super) full: Bytes,
}

impl OrdKey {
    pub(super) fn new(full: Bytes) -> OrdKey {
        let mut bytes = [0u8; HEAD];
        let n = full.len().min(HEAD);
        bytes[..n].copy_from_slice(&full[..n]);
        let head = core::array::from_fn(|w| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[w * 8..w * 8 + 8]);
            u64::from_be_bytes(b)
        });
        OrdKey { head, full }
    }
}

/// Slab slots one CanBePrefix lookup adds to a tree being built: the same
/// order as the entries one lookup may inspect (`MAX_PREFIX_SCAN`), so one
/// Interest's work stays bounded. A store of at most this many slots is
/// indexed completely by its first CanBePrefix lookup, which then answers.
pub(super) const LOOKUP_STEP: usize = 256;

/// Slab slots each insert adds to a tree being built: a store of `n` slots
/// completes within about `n / 8` inserts even if no further CanBePrefix
/// lookup comes, at a few cold tree inserts per Data meanwhile.
pub(super) const INSERT_STEP: usize = 8;

/// With [`IDLE_FLOOR`]: the tree is dropped after more than
/// `IDLE_FACTOR × max(entries, IDLE_FLOOR)` inserts without a CanBePrefix
/// lookup. Rebuilding costs about one tree insert per entry, so a tree
/// dropped and rebuilt at once costs at most half of what keeping it would
/// have cost over that stretch (one insert and one removal per Data).
pub(super) const IDLE_FACTOR: usize = 2;

/// Least store size the idle stretch is measured against, so a small store
/// whose lookups are merely sparse does not flap between `Off` and `On`.
pub(super) const IDLE_FLOOR: usize = 1024;

/// Entries of a dropped tree freed per insert. Freeing 65 536 keys at once
/// touches as many cold packet headers (refcounts); spread out it is a few
/// per Data, done long before the next tree could be dropped.
pub(super) const RETIRE_STEP: usize = 16;

/// Whether the ordered index exists (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OrderState {
    /// No tree.
    Off,
    /// The tree holds exactly the live slots below `cursor`.
    Building {
        /// Next slab slot the scan adds.
        cursor: usize,
    },
    /// The tree holds exactly the live slots.
    On,
}

/// The on-demand ordered index over a slab of named slots. The slab is
/// seen only through its length and a `key_at(slot)` accessor returning a
/// live slot's name value.
#[derive(Debug, Clone)]
pub(super) struct OrderedIndex {
    tree: BTreeMap<OrdKey, u32>,
    state: OrderState,
    /// Inserts since the last CanBePrefix lookup.
    idle_inserts: usize,
    /// A dropped tree, freed [`RETIRE_STEP`] entries per insert.
    retired: BTreeMap<OrdKey, u32>,
    lookup_step: usize,
    insert_step: usize,
    idle_floor: usize,
}

impl OrderedIndex {
    pub(super) fn new() -> Self {
        OrderedIndex {
            tree: BTreeMap::new(),
            state: OrderState::Off,
            idle_inserts: 0,
            retired: BTreeMap::new(),
            lookup_step: LOOKUP_STEP,
            insert_step: INSERT_STEP,
            idle_floor: IDLE_FLOOR,
        }
    }

    /// Overrides the step sizes and the idle floor (tests: a small store
    /// reaching every state).
    #[cfg(test)]
    pub(super) fn set_steps(&mut self, lookup: usize, insert: usize, idle_floor: usize) {
        assert!(lookup > 0 && insert > 0);
        self.lookup_step = lookup;
        self.insert_step = insert;
        self.idle_floor = idle_floor;
    }

    #[cfg(test)]
    pub(super) fn state(&self) -> OrderState {
        self.state
    }

    /// The tree; complete only in [`OrderState::On`].
    pub(super) fn tree(&self) -> &BTreeMap<OrdKey, u32> {
        &self.tree
    }

    /// True when `slot`'s changes must be applied to the tree.
    #[inline]
    fn tracks(&self, slot: u32) -> bool {
        match self.state {
            OrderState::Off => false,
            OrderState::Building { cursor } => (slot as usize) < cursor,
            OrderState::On => true,
        }
    }

    /// Bookkeeping before an insert into a store of `live` entries: frees a
    /// step of a dropped tree, and drops this one if no CanBePrefix lookup
    /// came for too long.
    #[inline]
    pub(super) fn before_insert(&mut self, live: usize) {
        if !self.retired.is_empty() {
            self.retire_step();
        }
        if self.state == OrderState::Off {
            return;
        }
        self.idle_inserts += 1;
        if self.idle_inserts > IDLE_FACTOR * live.max(self.idle_floor) {
            self.state = OrderState::Off;
            // At most one tree is retiring: a tree is only dropped again
            // after more inserts than the last one had entries.
            self.retired = core::mem::take(&mut self.tree);
        }
    }

    #[cold]
    fn retire_step(&mut self) {
        for _ in 0..RETIRE_STEP {
            if self.retired.pop_first().is_none() {
                break;
            }
        }
    }

    /// A Data named `key` was stored in `slot`; then advances a build by
    /// [`INSERT_STEP`] slots of a slab of `slots`.
    #[inline]
    pub(super) fn inserted(
        &mut self,
        slot: u32,
        key: Bytes,
        slots: usize,
        key_at: impl FnMut(usize) -> Option<Bytes>,
    ) {
        if self.tracks(slot) {
            let old = self.tree.insert(OrdKey::new(key), slot);
            debug_assert!(old.is_none(), "one entry per name");
        }
        if matches!(self.state, OrderState::Building { .. }) {
            self.advance(self.insert_step, slots, key_at);
        }
    }

    /// The Data named `key` left `slot`.
    #[inline]
    pub(super) fn removed(&mut self, slot: u32, key: Bytes) {
        if self.tracks(slot) {
            self.tree.remove(&OrdKey::new(key));
        }
    }

    /// Adds up to `n` more slab slots to a tree being built.
    fn advance(&mut self, n: usize, slots: usize, mut key_at: impl FnMut(usize) -> Option<Bytes>) {
        let OrderState::Building { cursor } = self.state else {
            return;
        };
        let end = cursor.saturating_add(n).min(slots);
        for i in cursor..end {
            if let Some(key) = key_at(i) {
                let old = self.tree.insert(OrdKey::new(key), i as u32);
                debug_assert!(old.is_none(), "one entry per name");
            }
        }
        self.state = if end >= slots {
            OrderState::On
        } else {
            OrderState::Building { cursor: end }
        };
    }

    /// A CanBePrefix lookup is about to be made on a slab of `slots`:
    /// starts or advances the build by [`LOOKUP_STEP`] slots. True when the
    /// tree is then complete and may answer; false means report a miss.
    pub(super) fn prefix_lookup(
        &mut self,
        slots: usize,
        key_at: impl FnMut(usize) -> Option<Bytes>,
    ) -> bool {
        self.idle_inserts = 0;
        if self.state == OrderState::Off {
            self.state = OrderState::Building { cursor: 0 };
        }
        self.advance(self.lookup_step, slots, key_at);
        self.state == OrderState::On
    }

    /// Forgets everything (the store was emptied).
    pub(super) fn clear(&mut self) {
        self.tree.clear();
        self.retired.clear();
        self.state = OrderState::Off;
        self.idle_inserts = 0;
    }

    /// Checks the state's invariant against a slab of `slots` (tests): `Off`
    /// has no tree, `Building` holds exactly the live slots below the
    /// cursor, `On` exactly the live slots, each under its own name.
    #[cfg(test)]
    pub(super) fn check(&self, slots: usize, mut key_at: impl FnMut(usize) -> Option<Bytes>) {
        let covered = match self.state {
            OrderState::Off => 0,
            OrderState::Building { cursor } => {
                assert!(cursor < slots, "a finished build is On");
                cursor
            }
            OrderState::On => slots,
        };
        let mut live = 0;
        for i in 0..covered {
            if let Some(key) = key_at(i) {
                live += 1;
                assert_eq!(self.tree.get(&OrdKey::new(key)), Some(&(i as u32)));
            }
        }
        assert_eq!(self.tree.len(), live, "tree holds only covered live slots");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slab of names standing in for the store's.
    #[derive(Default)]
    struct Slab {
        slots: Vec<Option<Bytes>>,
        free: Vec<u32>,
        ix: Option<OrderedIndex>,
    }

    fn name(i: usize) -> Bytes {
        Bytes::from(format!("n{i:05}").into_bytes())
    }

    impl Slab {
        fn new() -> Self {
            Slab {
                ix: Some(OrderedIndex::new()),
                ..Slab::default()
            }
        }
        fn ix(&self) -> &OrderedIndex {
            self.ix.as_ref().unwrap()
        }
        fn live(&self) -> usize {
            self.slots.iter().flatten().count()
        }
        fn with<R>(&mut self, f: impl FnOnce(&mut OrderedIndex, &[Option<Bytes>]) -> R) -> R {
            let mut ix = self.ix.take().unwrap();
            let r = f(&mut ix, &self.slots);
            self.ix = Some(ix);
            r
        }
        fn insert(&mut self, key: Bytes) -> u32 {
            let live = self.live();
            self.with(|ix, _| ix.before_insert(live));
            let i = match self.free.pop() {
                Some(i) => {
                    self.slots[i as usize] = Some(key.clone());
                    i
                }
                None => {
                    self.slots.push(Some(key.clone()));
                    (self.slots.len() - 1) as u32
                }
            };
            self.with(|ix, s| ix.inserted(i, key, s.len(), |j| s[j].clone()));
            self.check();
            i
        }
        fn remove(&mut self, i: u32) {
            let key = self.slots[i as usize].take().unwrap();
            self.free.push(i);
            self.with(|ix, _| ix.removed(i, key));
            self.check();
        }
        fn lookup(&mut self) -> bool {
            let r = self.with(|ix, s| ix.prefix_lookup(s.len(), |j| s[j].clone()));
            self.check();
            r
        }
        fn check(&self) {
            self.ix().check(self.slots.len(), |j| self.slots[j].clone());
        }
    }

    #[test]
    fn off_until_a_prefix_lookup_and_small_slab_is_on_at_once() {
        let mut s = Slab::new();
        for i in 0..100 {
            s.insert(name(i));
        }
        assert_eq!(s.ix().state(), OrderState::Off);
        assert!(s.ix().tree().is_empty());
        assert!(s.lookup());
        assert_eq!(s.ix().state(), OrderState::On);
        assert_eq!(s.ix().tree().len(), 100);
        s.remove(3);
        s.insert(name(1000));
        assert_eq!(s.ix().tree().len(), 100);
    }

    #[test]
    fn empty_slab_is_on_at_first_lookup() {
        let mut s = Slab::new();
        assert!(s.lookup());
        assert_eq!(s.ix().state(), OrderState::On);
    }

    #[test]
    fn large_slab_builds_over_lookups_then_answers() {
        let mut s = Slab::new();
        for i in 0..1000 {
            s.insert(name(i));
        }
        assert!(!s.lookup());
        assert_eq!(s.ix().state(), OrderState::Building { cursor: 256 });
        assert!(!s.lookup());
        assert!(!s.lookup());
        assert_eq!(s.ix().state(), OrderState::Building { cursor: 768 });
        assert!(s.lookup());
        assert_eq!(s.ix().state(), OrderState::On);
        assert_eq!(s.ix().tree().len(), 1000);
    }

    #[test]
    fn inserts_finish_a_build_without_more_lookups() {
        let mut s = Slab::new();
        for i in 0..1000 {
            s.insert(name(i));
        }
        assert!(!s.lookup());
        let mut n = 0;
        while s.ix().state() != OrderState::On {
            // A full store: each insert evicts, reusing a slot.
            s.remove(n as u32 % 1000);
            s.insert(name(2000 + n));
            n += 1;
        }
        // 744 slots left at 8 per insert.
        assert_eq!(n, 93);
        assert_eq!(s.ix().tree().len(), 1000);
    }

    #[test]
    fn changes_on_both_sides_of_the_cursor_during_a_build() {
        let mut s = Slab::new();
        for i in 0..600 {
            s.insert(name(i));
        }
        assert!(!s.lookup());
        let OrderState::Building { cursor } = s.ix().state() else {
            panic!("building");
        };
        assert_eq!(cursor, 256);
        // Removal below and above the cursor (check() runs after each).
        s.remove(10);
        s.remove(400);
        // Reuse of a slot above, then below the cursor (free list is LIFO).
        assert_eq!(s.insert(name(5000)), 400);
        assert_eq!(s.insert(name(5001)), 10);
        // A replacement: the name leaves one slot (below the cursor) and
        // comes back in another.
        s.remove(20);
        s.remove(30);
        assert_eq!(s.insert(name(20)), 30);
        assert_eq!(s.insert(name(6000)), 20);
        // Growth while building: new slots are above the cursor.
        assert_eq!(s.insert(name(6001)), 600);
        while !s.lookup() {}
        assert_eq!(s.ix().tree().len(), s.live());
        let (k, &i) = s.ix().tree().iter().next().unwrap();
        assert_eq!(Some(&k.full), s.slots[i as usize].as_ref());
    }

    #[test]
    fn idle_stretch_turns_off_and_a_lookup_rebuilds() {
        let mut s = Slab::new();
        s.with(|ix, _| ix.set_steps(LOOKUP_STEP, INSERT_STEP, 16));
        for i in 0..10 {
            s.insert(name(i));
        }
        assert!(s.lookup());
        // 2 × max(10, 16) = 32 inserts (evicting) keep it; the 33rd drops it.
        for i in 0..32 {
            s.remove(i % 10);
            s.insert(name(100 + i as usize));
            assert_eq!(s.ix().state(), OrderState::On);
        }
        s.remove(0);
        s.insert(name(200));
        assert_eq!(s.ix().state(), OrderState::Off);
        assert!(s.ix().tree().is_empty());
        assert_eq!(s.ix().retired.len(), 9);
        s.remove(1);
        s.insert(name(201));
        assert!(s.ix().retired.is_empty());
        assert!(s.lookup());
        assert_eq!(s.ix().tree().len(), 10);
        // A lookup resets the idle count.
        for i in 0..32 {
            s.remove(i % 10);
            s.insert(name(300 + i as usize));
        }
        assert!(s.lookup());
        for i in 0..32 {
            s.remove(i % 10);
            s.insert(name(400 + i as usize));
        }
        assert_eq!(s.ix().state(), OrderState::On);
    }

    #[test]
    fn idle_stretch_uses_the_default_floor() {
        let mut s = Slab::new();
        s.insert(name(0));
        assert!(s.lookup());
        for i in 0..2 * IDLE_FLOOR {
            s.remove(0);
            s.insert(name(i + 1));
        }
        assert_eq!(s.ix().state(), OrderState::On);
        s.remove(0);
        s.insert(name(0));
        assert_eq!(s.ix().state(), OrderState::Off);
    }

    #[test]
    fn clear_during_a_build_turns_off() {
        let mut s = Slab::new();
        for i in 0..1000 {
            s.insert(name(i));
        }
        assert!(!s.lookup());
        s.with(|ix, _| ix.clear());
        s.slots.clear();
        s.free.clear();
        s.check();
        assert_eq!(s.ix().state(), OrderState::Off);
        assert!(s.ix().tree().is_empty());
        s.insert(name(1));
        assert!(s.lookup());
        assert_eq!(s.ix().tree().len(), 1);
    }
}
