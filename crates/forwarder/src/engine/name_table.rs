//! Hashed-prefix tables with longest-prefix match over Name TLV-VALUE bytes.
//!
//! A name prefix is a byte prefix of the name's TLV-VALUE that ends on a
//! component boundary, so a table keyed by those bytes answers LPM with one
//! hash probe per candidate depth. A per-depth occupancy count skips depths
//! that hold no entry (the FIB usually spans only a few depths).

use core::hash::BuildHasher;

use bytes::Bytes;
use hashbrown::HashTable;

use super::hash::{bytes_eq, SeededState};

/// Deepest prefix a FIB or strategy entry may have (NFD `NameTree::getMaxDepth`).
pub const MAX_DEPTH: usize = 32;

/// Component end offsets of a Name TLV-VALUE: `ends[d]` is the length of the
/// value bytes covering the first `d` components (`ends[0] == 0`).
#[derive(Debug, Clone)]
pub struct ComponentEnds {
    ends: [u32; MAX_DEPTH + 1],
    depth: usize,
    /// Total components in the name (may exceed [`MAX_DEPTH`]).
    total: usize,
}

impl ComponentEnds {
    /// Parses component boundaries; `None` when the value is not a sequence of TLVs.
    pub fn parse(value: &[u8]) -> Option<ComponentEnds> {
        let mut ends = [0u32; MAX_DEPTH + 1];
        let mut depth = 0;
        // One-octet headers, the common case (icn_tlv's fast walk). The
        // ends kept are the first 32 components', at most 32 × 254 bytes,
        // so `as u32` is exact.
        if let Some(total) = icn_tlv::name::short_components(value, |pos| {
            if depth < MAX_DEPTH {
                depth += 1;
                ends[depth] = pos as u32;
            }
        }) {
            return Some(ComponentEnds { ends, depth, total });
        }
        // The general parse rewrites `ends` from the start; entries past
        // its depth are never read.
        depth = 0;
        let mut total = 0;
        let mut pos = 0usize;
        while pos < value.len() {
            let (_, n1) = read_varnum(&value[pos..])?;
            pos += n1;
            let (len, n2) = read_varnum(&value[pos..])?;
            pos += n2;
            let len = usize::try_from(len).ok()?;
            pos = pos.checked_add(len)?;
            if pos > value.len() {
                return None;
            }
            total += 1;
            if depth < MAX_DEPTH {
                depth += 1;
                ends[depth] = u32::try_from(pos).ok()?;
            }
        }
        Some(ComponentEnds { ends, depth, total })
    }

    /// Number of indexed components (at most [`MAX_DEPTH`]).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Number of components in the whole name.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Byte length of the first `d` components (`d <= depth()`).
    pub fn end(&self, d: usize) -> usize {
        self.ends[d.min(self.depth)] as usize
    }
}

/// A name's TLV-VALUE without its last component: the object whose segments
/// a name counts (flow keys of QSCCP, CCC, WinCM and the Data flow queues).
/// A one-component name, or one that does not parse to its end, is kept
/// whole.
pub fn without_last_component(name_value: &[u8]) -> &[u8] {
    let (mut last_start, mut i) = (0, 0);
    while i < name_value.len() {
        last_start = i;
        let Some((len, hdr)) = read_varnum(&name_value[i..]).and_then(|(_, a)| {
            let (l, c) = read_varnum(name_value.get(i + a..)?)?;
            Some((usize::try_from(l).ok()?, a + c))
        }) else {
            break;
        };
        i = i.saturating_add(hdr).saturating_add(len);
    }
    if i == name_value.len() && last_start > 0 {
        &name_value[..last_start]
    } else {
        name_value
    }
}

fn read_varnum(b: &[u8]) -> Option<(u64, usize)> {
    icn_tlv::varnum::read_varnum(b).ok()
}

/// Why an insertion was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableInsertError {
    /// The table holds its configured maximum of entries.
    Full,
    /// The prefix is deeper than [`MAX_DEPTH`] or not a valid name value.
    BadPrefix,
}

/// A bounded map from name prefixes to `T` with longest-prefix match.
///
/// A hash table of `(prefix, depth, T)` probed with the table's hasher and
/// [`bytes_eq`], so a lookup compares keys inline rather than through
/// `memcmp`.
#[derive(Debug, Clone)]
pub struct PrefixTable<T> {
    map: HashTable<(Bytes, u8, T)>,
    hasher: SeededState,
    depth_count: [u32; MAX_DEPTH + 1],
    max_entries: usize,
}

impl<T> PrefixTable<T> {
    /// Creates an empty table holding at most `max_entries` prefixes.
    pub fn new(max_entries: usize, hasher: SeededState) -> Self {
        PrefixTable {
            map: HashTable::new(),
            hasher,
            depth_count: [0; MAX_DEPTH + 1],
            max_entries,
        }
    }

    /// Number of prefixes stored.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no prefix is stored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn find(&self, prefix_value: &[u8]) -> Option<&(Bytes, u8, T)> {
        let hash = self.hasher.hash_one(prefix_value);
        self.map.find(hash, |(k, _, _)| bytes_eq(k, prefix_value))
    }

    fn find_mut(&mut self, prefix_value: &[u8]) -> Option<&mut (Bytes, u8, T)> {
        let hash = self.hasher.hash_one(prefix_value);
        self.map
            .find_mut(hash, |(k, _, _)| bytes_eq(k, prefix_value))
    }

    /// The entry for exactly this prefix.
    pub fn get(&self, prefix_value: &[u8]) -> Option<&T> {
        self.find(prefix_value).map(|(_, _, t)| t)
    }

    /// Mutable entry for exactly this prefix.
    pub fn get_mut(&mut self, prefix_value: &[u8]) -> Option<&mut T> {
        self.find_mut(prefix_value).map(|(_, _, t)| t)
    }

    /// Returns the entry for `prefix_value`, creating it with `make` when absent.
    pub fn get_or_insert_with(
        &mut self,
        prefix_value: &Bytes,
        make: impl FnOnce() -> T,
    ) -> Result<&mut T, TableInsertError> {
        if self.find(prefix_value).is_none() {
            let ends = ComponentEnds::parse(prefix_value).ok_or(TableInsertError::BadPrefix)?;
            if ends.total() > MAX_DEPTH {
                return Err(TableInsertError::BadPrefix);
            }
            if self.map.len() >= self.max_entries {
                return Err(TableInsertError::Full);
            }
            let d = ends.depth();
            self.depth_count[d] += 1;
            let hasher = self.hasher;
            let hash = hasher.hash_one(&prefix_value[..]);
            self.map.insert_unique(
                hash,
                (prefix_value.clone(), d as u8, make()),
                |(k, _, _)| hasher.hash_one(&k[..]),
            );
        }
        self.get_mut(prefix_value)
            .ok_or(TableInsertError::BadPrefix)
    }

    /// Removes the entry for exactly this prefix.
    pub fn remove(&mut self, prefix_value: &[u8]) -> Option<T> {
        let hash = self.hasher.hash_one(prefix_value);
        let entry = self
            .map
            .find_entry(hash, |(k, _, _)| bytes_eq(k, prefix_value))
            .ok()?;
        let ((_, d, t), _) = entry.remove();
        self.depth_count[usize::from(d)] -= 1;
        Some(t)
    }

    /// Longest-prefix match: the deepest stored prefix of the name.
    pub fn lpm(&self, ends: &ComponentEnds, name_value: &[u8]) -> Option<(usize, &T)> {
        if self.map.is_empty() {
            return None;
        }
        for d in (0..=ends.depth()).rev() {
            if self.depth_count[d] == 0 {
                continue;
            }
            if let Some((_, _, t)) = self.find(&name_value[..ends.end(d)]) {
                return Some((d, t));
            }
        }
        None
    }

    /// Keeps only entries for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&Bytes, &mut T) -> bool) {
        let counts = &mut self.depth_count;
        self.map.retain(|(k, d, t)| {
            let k2 = keep(k, t);
            if !k2 {
                counts[usize::from(*d)] -= 1;
            }
            k2
        });
    }

    /// All entries, in hash order (deterministic for a given seed).
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, &T)> {
        self.map.iter().map(|(k, _, t)| (k, t))
    }
}

/// The TLV-VALUE of a Name of generic components, for the table tests.
#[cfg(test)]
pub(crate) fn test_name_value(parts: &[&str]) -> Bytes {
    let mut v = Vec::new();
    for p in parts {
        v.push(8);
        v.push(p.len() as u8);
        v.extend_from_slice(p.as_bytes());
    }
    Bytes::from(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(s: &str) -> Vec<u8> {
        let mut v = vec![8u8, s.len() as u8];
        v.extend_from_slice(s.as_bytes());
        v
    }
    fn name(parts: &[&str]) -> Bytes {
        Bytes::from(parts.iter().flat_map(|p| comp(p)).collect::<Vec<u8>>())
    }

    #[test]
    fn lpm_picks_deepest_prefix_on_component_boundaries() {
        let mut t = PrefixTable::new(10, SeededState::new(1));
        *t.get_or_insert_with(&name(&[]), || 0).unwrap() = 0;
        *t.get_or_insert_with(&name(&["a"]), || 0).unwrap() = 1;
        *t.get_or_insert_with(&name(&["a", "b"]), || 0).unwrap() = 2;
        let q = name(&["a", "b", "c"]);
        let e = ComponentEnds::parse(&q).unwrap();
        assert_eq!(t.lpm(&e, &q).map(|(d, v)| (d, *v)), Some((2, 2)));
        // "ab" is a byte prefix of "abc" but not a component prefix.
        let q2 = name(&["abc"]);
        let e2 = ComponentEnds::parse(&q2).unwrap();
        assert_eq!(t.lpm(&e2, &q2).map(|(_, v)| *v), Some(0));
        assert_eq!(t.remove(&name(&["a", "b"])), Some(2));
        assert_eq!(t.lpm(&e, &q).map(|(_, v)| *v), Some(1));
    }

    #[test]
    fn full_table_refuses_new_prefix_but_updates_existing() {
        let mut t = PrefixTable::new(1, SeededState::new(1));
        t.get_or_insert_with(&name(&["a"]), || 1).unwrap();
        assert_eq!(
            t.get_or_insert_with(&name(&["b"]), || 2).err(),
            Some(TableInsertError::Full)
        );
        assert!(t.get_or_insert_with(&name(&["a"]), || 3).is_ok());
        assert_eq!(t.len(), 1);
    }

    /// The one-octet walk and the general parse give the same ends: a
    /// name of short components, the same name with a 300-byte component
    /// (general parse), a type-0 component (fast walk refuses, general
    /// parse accepts), and 40 components (ends kept to 32).
    #[test]
    fn fast_and_general_parses_agree() {
        // A 300-byte component: TLV-LENGTH in three octets.
        let mut long = comp("a");
        long.extend_from_slice(&[8, 253, 0x01, 0x2c]);
        long.extend_from_slice(&[b'x'; 300]);
        long.extend_from_slice(&comp("ccc"));
        let many: Vec<String> = (0..40).map(|i| format!("c{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        for q in [
            name(&["a", "bb", "ccc"]),
            Bytes::from(long),
            Bytes::from_static(&[8, 1, b'a', 0, 2, b'b', b'c']),
            name(&many),
        ] {
            let e = ComponentEnds::parse(&q).unwrap();
            let mut pos = 0usize;
            let mut want = vec![0usize];
            let mut total = 0;
            while pos < q.len() {
                let (_, a) = read_varnum(&q[pos..]).unwrap();
                let (l, b) = read_varnum(&q[pos + a..]).unwrap();
                pos += a + b + l as usize;
                total += 1;
                want.push(pos);
            }
            assert_eq!(e.total(), total);
            assert_eq!(e.depth(), total.min(MAX_DEPTH));
            for (d, &w) in want.iter().enumerate().take(e.depth() + 1) {
                assert_eq!(e.end(d), w, "component {d}");
            }
        }
    }

    #[test]
    fn malformed_values_are_rejected() {
        assert!(ComponentEnds::parse(&[8, 5, 1]).is_none());
        assert!(ComponentEnds::parse(&[253, 0]).is_none());
        let mut t: PrefixTable<u8> = PrefixTable::new(4, SeededState::new(1));
        assert_eq!(
            t.get_or_insert_with(&Bytes::from_static(&[8, 9]), || 0)
                .err(),
            Some(TableInsertError::BadPrefix)
        );
    }
}
