//! Forwarding Information Base: name prefix → next hops with costs.

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
        removed
    }

    /// Removes every next hop through `face` (face destroyed).
    pub fn remove_face(&mut self, face: FaceId) {
        self.table.retain(|_, e| {
            e.nexthops.retain(|n| n.face != face);
            !e.nexthops.is_empty()
        });
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
    }
}
