//! Forwarding Information Base: name prefix → next hops with costs.
//!
//! Besides the prefix table, each face keeps the set of prefixes it is a
//! next hop of, so removing a face (an on-demand UDP face timing out, a
//! closed connection) touches only that face's entries instead of the
//! whole table.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use super::face::FaceId;
use super::hash::SeededState;
use super::name_table::{ComponentEnds, PrefixTable, TableInsertError};

/// One next hop of a FIB entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextHop {
    /// Upstream face.
    pub face: FaceId,
    /// Routing cost; lower is preferred.
    pub cost: u64,
}

/// The next hops of one prefix, kept sorted by (cost, face).
#[derive(Debug, Clone, Default)]
pub struct FibEntry {
    nexthops: Vec<NextHop>,
}

impl FibEntry {
    /// Next hops, cheapest first.
    pub fn nexthops(&self) -> &[NextHop] {
        &self.nexthops
    }
}

/// Bounded FIB with longest-prefix match.
#[derive(Debug, Clone)]
pub struct Fib {
    table: PrefixTable<FibEntry>,
    /// For each face, the prefixes it is a next hop of.
    by_face: HashMap<FaceId, HashSet<Bytes>>,
    max_nexthops: usize,
}

/// Why a FIB update was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FibError {
    /// The FIB holds its maximum number of prefixes.
    Full,
    /// The entry holds its maximum number of next hops.
    TooManyNextHops,
    /// The prefix is deeper than 32 components.
    BadPrefix,
}

impl Fib {
    /// Creates an empty FIB.
    pub fn new(max_entries: usize, max_nexthops: usize, hasher: SeededState) -> Self {
        Fib {
            table: PrefixTable::new(max_entries, hasher),
            by_face: HashMap::new(),
            max_nexthops,
        }
    }

    /// Number of prefixes.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when the FIB is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Adds or updates (cost) a next hop.
    pub fn add_nexthop(&mut self, prefix: &Bytes, face: FaceId, cost: u64) -> Result<(), FibError> {
        let max = self.max_nexthops;
        let entry = self
            .table
            .get_or_insert_with(prefix, FibEntry::default)
            .map_err(|e| match e {
                TableInsertError::Full => FibError::Full,
                TableInsertError::BadPrefix => FibError::BadPrefix,
            })?;
        if let Some(i) = entry.nexthops.iter().position(|n| n.face == face) {
            entry.nexthops.remove(i);
        } else if entry.nexthops.len() >= max {
            if entry.nexthops.is_empty() {
                self.table.remove(prefix);
            }
            return Err(FibError::TooManyNextHops);
        }
        let nh = NextHop { face, cost };
        let at = entry
            .nexthops
            .partition_point(|n| (n.cost, n.face.0) < (cost, face.0));
        entry.nexthops.insert(at, nh);
        self.by_face.entry(face).or_default().insert(prefix.clone());
        Ok(())
    }

    /// Removes a next hop; the entry goes when it has none left.
    pub fn remove_nexthop(&mut self, prefix: &[u8], face: FaceId) -> bool {
        let Some(entry) = self.table.get_mut(prefix) else {
            return false;
        };
        let before = entry.nexthops.len();
        entry.nexthops.retain(|n| n.face != face);
        let removed = entry.nexthops.len() != before;
        if entry.nexthops.is_empty() {
            self.table.remove(prefix);
        }
        if removed {
            if let Some(prefixes) = self.by_face.get_mut(&face) {
                prefixes.remove(prefix);
                if prefixes.is_empty() {
                    self.by_face.remove(&face);
                }
            }
        }
        removed
    }

    /// Removes every next hop through `face` (face destroyed), visiting
    /// only the entries that name it.
    pub fn remove_face(&mut self, face: FaceId) {
        let Some(prefixes) = self.by_face.remove(&face) else {
            return;
        };
        for prefix in prefixes {
            let Some(entry) = self.table.get_mut(&prefix) else {
                continue;
            };
            entry.nexthops.retain(|n| n.face != face);
            if entry.nexthops.is_empty() {
                self.table.remove(&prefix);
            }
        }
    }

    /// Checks the per-face index against the table: every next hop is
    /// indexed under its face and nothing else is (tests and
    /// `Forwarder::check_invariants`).
    pub fn check_index(&self) -> Result<(), String> {
        let mut n_hops = 0;
        for (prefix, e) in self.table.iter() {
            for nh in &e.nexthops {
                n_hops += 1;
                if !self
                    .by_face
                    .get(&nh.face)
                    .is_some_and(|p| p.contains(prefix))
                {
                    return Err(format!("FIB next hop via face {} not indexed", nh.face.0));
                }
            }
        }
        let n_indexed: usize = self.by_face.values().map(HashSet::len).sum();
        if n_indexed != n_hops || self.by_face.values().any(HashSet::is_empty) {
            return Err(format!(
                "FIB face index holds {n_indexed} next hops, the table {n_hops}"
            ));
        }
        Ok(())
    }

    /// Longest-prefix match for a name value.
    pub fn lpm(&self, ends: &ComponentEnds, name_value: &[u8]) -> Option<&FibEntry> {
        self.table.lpm(ends, name_value).map(|(_, e)| e)
    }

    /// Longest-prefix match with the matched prefix: its bytes of
    /// `name_value` (a sub-slice) and the entry.
    pub fn lpm_prefix<'n>(
        &self,
        ends: &ComponentEnds,
        name_value: &'n [u8],
    ) -> Option<(&'n [u8], &FibEntry)> {
        self.table
            .lpm(ends, name_value)
            .map(|(d, e)| (&name_value[..ends.end(d)], e))
    }

    /// The entry for exactly this prefix.
    pub fn get(&self, prefix: &[u8]) -> Option<&FibEntry> {
        self.table.get(prefix)
    }

    /// All entries as (prefix value, entry).
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, &FibEntry)> {
        self.table.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::name_table::test_name_value as n;

    #[test]
    fn nexthops_sorted_by_cost_and_cost_updates_in_place() {
        let mut f = Fib::new(10, 4, SeededState::new(0));
        f.add_nexthop(&n(&["a"]), FaceId(300), 20).unwrap();
        f.add_nexthop(&n(&["a"]), FaceId(301), 10).unwrap();
        f.add_nexthop(&n(&["a"]), FaceId(300), 5).unwrap();
        let e = f.get(&n(&["a"])).unwrap();
        assert_eq!(
            e.nexthops(),
            &[
                NextHop {
                    face: FaceId(300),
                    cost: 5
                },
                NextHop {
                    face: FaceId(301),
                    cost: 10
                }
            ]
        );
        assert!(f.remove_nexthop(&n(&["a"]), FaceId(300)));
        assert!(f.remove_nexthop(&n(&["a"]), FaceId(301)));
        assert!(f.is_empty());
    }

    #[test]
    fn nexthop_limit_and_face_removal() {
        let mut f = Fib::new(10, 1, SeededState::new(0));
        f.add_nexthop(&n(&["a"]), FaceId(300), 1).unwrap();
        assert_eq!(
            f.add_nexthop(&n(&["a"]), FaceId(301), 1),
            Err(FibError::TooManyNextHops)
        );
        f.add_nexthop(&n(&["b"]), FaceId(300), 1).unwrap();
        f.remove_face(FaceId(300));
        assert!(f.is_empty());
        f.check_index().unwrap();
    }

    proptest::proptest! {
        /// Adds, removals and face removals in any order leave the same
        /// next hops as a model map, and the per-face index in step.
        #[test]
        fn face_index_tracks_the_table(ops in proptest::collection::vec((0u8..4, 0usize..4, 300u64..304, 0u64..3), 1..60)) {
            use std::collections::BTreeMap;
            let names = [n(&["a"]), n(&["a", "b"]), n(&["c"]), n(&[])];
            let mut f = Fib::new(3, 2, SeededState::new(7));
            let mut model: BTreeMap<(Vec<u8>, u64), u64> = BTreeMap::new();
            for (op, ni, face, cost) in ops {
                let prefix = &names[ni];
                match op {
                    0 | 1 => {
                        let at_prefix = model.keys().filter(|k| k.0 == prefix[..]).count();
                        let known = model.contains_key(&(prefix.to_vec(), face));
                        let n_prefixes = model.keys().map(|k| &k.0).collect::<std::collections::BTreeSet<_>>().len();
                        let r = f.add_nexthop(prefix, FaceId(face), cost);
                        let want = if known || (at_prefix > 0 && at_prefix < 2) || (at_prefix == 0 && n_prefixes < 3) {
                            Ok(())
                        } else if at_prefix == 0 {
                            Err(FibError::Full)
                        } else {
                            Err(FibError::TooManyNextHops)
                        };
                        proptest::prop_assert_eq!(r, want);
                        if r.is_ok() {
                            model.insert((prefix.to_vec(), face), cost);
                        }
                    }
                    2 => {
                        let had = model.remove(&(prefix.to_vec(), face)).is_some();
                        proptest::prop_assert_eq!(f.remove_nexthop(prefix, FaceId(face)), had);
                    }
                    _ => {
                        f.remove_face(FaceId(face));
                        model.retain(|k, _| k.1 != face);
                    }
                }
                f.check_index().map_err(proptest::test_runner::TestCaseError::fail)?;
                let mut got: BTreeMap<(Vec<u8>, u64), u64> = BTreeMap::new();
                for (k, e) in f.iter() {
                    for nh in e.nexthops() {
                        got.insert((k.to_vec(), nh.face.0), nh.cost);
                    }
                }
                proptest::prop_assert_eq!(got, model.clone());
            }
        }
    }
}
