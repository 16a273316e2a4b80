//! WinCM forwarding strategy: UIN/UIW per (prefix, face), ForWeight (eq. 3),
//! roulette choice among eligible faces (Algorithm 3, docs/algorithms.md §5.3).
//!
//! Three readings differ from the literal text:
//! * d defaults to 1.1, not 1.5: one marking episode marks about a queue's
//!   worth of Data, and 1.5 per mark took a path's UIW far below its BDP
//!   on a diamond like the testbed's (8000-byte Data, 14 ms RTT, virtual
//!   time, 6 seeds): β = d = 1.5 gave 15.7–16.1 Mbit/s, β = 1.5 with
//!   d = 1.1 18.0–18.6, β = d = 1.1 19.4–19.7. As for β (`consumer`), it
//!   stays above 1.
//! * "UIW + 1 when UIN = UIW and the face is chosen" is applied when the
//!   Interest takes UIN past UIW: after a mark UIW is fractional (d ≠ 1),
//!   UIN never equals it, and the face could never grow again.
//! * Faces with room (UIN + 1 ≤ UIW) are chosen before saturated ones
//!   (`prefer_unsaturated`). The paper says unsaturated faces are
//!   preferred, but eq. 3's second part gives a saturated face (exUIW =
//!   UIW) the weight UIW, more than a face with a little room gets, so one
//!   consumer's Interests pile onto one path while the other idles.
//!   Eq. 3 still weighs the faces within each group. Measured on the
//!   diamond (virtual time, 9 seeds, β = d = 1.5): 18.4–19.7 Mbit/s with,
//!   17.4–18.9 without.

use crate::pcon::unit_f64;
use crate::time::{Duration, Timestamp};
use hashbrown::HashMap;
use rand_core::RngCore;

/// ForWeight, eq. 3:
/// `0` if `UIW < UIN`, else
/// `(UIW − UIN)(1 − UIN/UIW) + exUIW / ((UIW − exUIW + 1)(UIW − UIN + 1))`.
pub fn for_weight(uin: f64, uiw: f64, ex_uiw: f64) -> f64 {
    if uiw < uin || uiw <= 0.0 {
        return 0.0;
    }
    let free = uiw - uin;
    let first = free * (1.0 - uin / uiw);
    let denom = ((uiw - ex_uiw + 1.0) * (free + 1.0)).max(f64::MIN_POSITIVE);
    first + ex_uiw / denom
}

/// Parameters of the UIN/UIW table.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct UiwConfig {
    /// UIW decrease per marked Data (must be > 1; paper 1.5, default 1.1:
    /// see the module doc).
    pub d: f64,
    /// Initial UIW (and exUIW).
    pub initial_uiw: f64,
    /// Floor of UIW (avoids UIN/UIW dividing by zero).
    pub min_uiw: f64,
    /// Period of the exUIW refresh.
    pub ex_refresh: Duration,
    /// Bound on (prefix, face) entries.
    pub max_entries: usize,
    /// Choose among faces with room (UIN + 1 ≤ UIW) while there is one;
    /// saturated faces only when none has (the paper's "unsaturated
    /// interfaces are preferred"; eq. 3 alone favours saturated ones).
    pub prefer_unsaturated: bool,
}

impl UiwConfig {
    /// Algorithm 3 with the paper's constants: d = 1.5, eq. 3's roulette
    /// over every eligible face.
    pub fn paper() -> Self {
        UiwConfig {
            d: 1.5,
            prefer_unsaturated: false,
            ..UiwConfig::default()
        }
    }

    /// The configuration of `profile` (tuned is the default).
    pub fn for_profile(profile: crate::Profile) -> Self {
        match profile {
            crate::Profile::Paper => Self::paper(),
            crate::Profile::Tuned => Self::default(),
        }
    }
}

impl Default for UiwConfig {
    fn default() -> Self {
        UiwConfig {
            d: 1.1,
            initial_uiw: 1.0,
            min_uiw: 1.0,
            ex_refresh: Duration::from_millis(100),
            max_entries: 65_536,
            prefer_unsaturated: true,
        }
    }
}

/// UIN/UIW state of one (prefix, face).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UiwEntry {
    /// Unsatisfied Interests.
    pub uin: u32,
    /// Unsatisfied-Interest window.
    pub uiw: f64,
    /// UIW at the last refresh.
    pub ex_uiw: f64,
    refreshed: Timestamp,
}

impl UiwEntry {
    fn new(cfg: &UiwConfig, now: Timestamp) -> Self {
        UiwEntry {
            uin: 0,
            uiw: cfg.initial_uiw.max(cfg.min_uiw),
            ex_uiw: cfg.initial_uiw.max(cfg.min_uiw),
            refreshed: now,
        }
    }

    /// ForWeight of this entry.
    pub fn weight(&self) -> f64 {
        for_weight(f64::from(self.uin), self.uiw, self.ex_uiw)
    }
}

/// Counters of the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UiwStats {
    /// Interests forwarded on a face with UIW < UIN because none was eligible.
    pub no_eligible: u64,
    /// Entries not created because the table was full.
    pub table_full: u64,
}

/// Multiplies a u64 key into a well-spread hash.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MixHasher(u64);

impl core::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(29) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
}

/// Builds [`MixHasher`]s from a seed (pass a random seed to resist crafted keys).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MixState(pub(crate) u64);

impl core::hash::BuildHasher for MixState {
    type Hasher = MixHasher;
    fn build_hasher(&self) -> MixHasher {
        MixHasher(self.0)
    }
}

/// The UIN/UIW table of one forwarder.
#[derive(Debug, Clone)]
pub struct UiwTable {
    cfg: UiwConfig,
    entries: HashMap<(u64, u64), UiwEntry, MixState>,
    stats: UiwStats,
}

impl UiwTable {
    /// Creates an empty table; `hash_seed` keys the hash (use a random value).
    pub fn new(cfg: UiwConfig, hash_seed: u64) -> Self {
        UiwTable {
            cfg,
            entries: HashMap::with_hasher(MixState(hash_seed)),
            stats: UiwStats::default(),
        }
    }

    /// The entry of (prefix, face), if any.
    pub fn entry(&self, prefix: u64, face: u64) -> Option<&UiwEntry> {
        self.entries.get(&(prefix, face))
    }

    /// Every entry as ((prefix, face), entry), in no particular order (for
    /// status output).
    pub fn iter(&self) -> impl Iterator<Item = ((u64, u64), &UiwEntry)> + '_ {
        self.entries.iter().map(|(k, e)| (*k, e))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Counters.
    pub fn stats(&self) -> UiwStats {
        self.stats
    }

    /// Chooses the next hop for an Interest of `prefix` (a hash of the FIB
    /// prefix) among `candidates`, excluding `in_face`, and accounts it as
    /// unsatisfied on that face. `None` if no candidate remains.
    pub fn choose(
        &mut self,
        now: Timestamp,
        prefix: u64,
        candidates: &[u64],
        in_face: Option<u64>,
        rng: &mut impl RngCore,
    ) -> Option<u64> {
        const MAX_CANDIDATES: usize = 64;
        let mut weights = [0.0f64; MAX_CANDIDATES];
        let mut faces = [0u64; MAX_CANDIDATES];
        let mut n = 0;
        let mut room = [false; MAX_CANDIDATES];
        let mut any_room = false;
        let mut fallback: Option<(u64, f64)> = None;
        for &face in candidates.iter().filter(|&&f| Some(f) != in_face) {
            if n == MAX_CANDIDATES {
                break;
            }
            let e = self.refreshed_entry(now, prefix, face);
            let slack = e.uiw - f64::from(e.uin);
            if fallback.is_none_or(|(_, s)| slack > s) {
                fallback = Some((face, slack));
            }
            if e.uiw >= f64::from(e.uin) {
                faces[n] = face;
                weights[n] = e.weight();
                room[n] = slack >= 1.0;
                any_room |= room[n];
                n += 1;
            }
        }
        if self.cfg.prefer_unsaturated && any_room {
            // Saturated faces wait until no face has room (module doc).
            for i in 0..n {
                if !room[i] {
                    weights[i] = 0.0;
                }
            }
        }
        let total: f64 = weights[..n].iter().sum();
        let chosen = if n > 0 && total > 0.0 {
            let r = unit_f64(rng) * total;
            let mut acc = 0.0;
            let mut pick = faces[n - 1];
            for i in 0..n {
                acc += weights[i];
                if r < acc {
                    pick = faces[i];
                    break;
                }
            }
            pick
        } else {
            let (face, _) = fallback?;
            self.stats.no_eligible += 1;
            face
        };
        if let Some(e) = self.entry_mut(now, prefix, chosen) {
            // Saturated: this Interest takes UIN past UIW. With d ≠ 1 UIW
            // is often fractional, so `UIN == UIW` alone would never hold
            // and the face could never grow again.
            if f64::from(e.uin) + 1.0 > e.uiw {
                e.uiw += 1.0;
            }
            e.uin = e.uin.saturating_add(1);
        }
        Some(chosen)
    }

    /// A Data for `prefix` came back from `face`.
    pub fn on_data(&mut self, now: Timestamp, prefix: u64, face: u64, marked: bool) {
        let (d, min) = (self.cfg.d, self.cfg.min_uiw);
        if let Some(e) = self.entries.get_mut(&(prefix, face)) {
            e.uin = e.uin.saturating_sub(1);
            if marked {
                e.uiw = (e.uiw - d).max(min);
                e.ex_uiw = e.uiw;
                e.refreshed = now;
            }
        }
    }

    /// A Nack or a PIT out-record expiry released an Interest on `face`.
    pub fn on_unsatisfied(&mut self, prefix: u64, face: u64) {
        if let Some(e) = self.entries.get_mut(&(prefix, face)) {
            e.uin = e.uin.saturating_sub(1);
        }
    }

    /// Drops every entry of `face` (face removed).
    pub fn remove_face(&mut self, face: u64) {
        self.entries.retain(|k, _| k.1 != face);
    }

    /// Current entry with the 100 ms exUIW refresh applied, or a default
    /// one (not stored) when the entry does not exist yet.
    fn refreshed_entry(&mut self, now: Timestamp, prefix: u64, face: u64) -> UiwEntry {
        let period = self.cfg.ex_refresh;
        match self.entries.get_mut(&(prefix, face)) {
            Some(e) => {
                if now.saturating_since(e.refreshed) >= period {
                    e.ex_uiw = e.uiw;
                    e.refreshed = now;
                }
                *e
            }
            None => UiwEntry::new(&self.cfg, now),
        }
    }

    fn entry_mut(&mut self, now: Timestamp, prefix: u64, face: u64) -> Option<&mut UiwEntry> {
        let key = (prefix, face);
        if !self.entries.contains_key(&key) {
            if self.entries.len() >= self.cfg.max_entries {
                self.stats.table_full += 1;
                return None;
            }
            self.entries.insert(key, UiwEntry::new(&self.cfg, now));
        }
        self.entries.get_mut(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn for_weight_by_hand() {
        // UIW > UIN: (10−4)(1−0.4) + 8/((10−8+1)(10−4+1)) = 3.6 + 8/21.
        assert!((for_weight(4.0, 10.0, 8.0) - (3.6 + 8.0 / 21.0)).abs() < 1e-12);
        // UIW = UIN: first part 0, second exUIW/((UIW−exUIW+1)·1) = 5/(6−5+1) = 2.5.
        assert!((for_weight(6.0, 6.0, 5.0) - 2.5).abs() < 1e-12);
        // UIW < UIN: not eligible.
        assert_eq!(for_weight(7.0, 6.0, 6.0), 0.0);
    }

    #[test]
    fn saturated_choice_grows_uiw_and_marks_shrink_it() {
        let cfg = UiwConfig {
            d: 1.5,
            ..UiwConfig::default()
        };
        let mut t = UiwTable::new(cfg, 1);
        let mut rng = StdRng::seed_from_u64(3);
        let now = Timestamp::ZERO;
        // One face: UIW 1, UIN 0 → chosen, UIN 1 (not saturated before the choice).
        assert_eq!(t.choose(now, 9, &[5], None, &mut rng), Some(5));
        assert_eq!(
            (t.entry(9, 5).unwrap().uin, t.entry(9, 5).unwrap().uiw),
            (1, 1.0)
        );
        // Saturated (UIN = UIW): still eligible, UIW grows by one.
        t.choose(now, 9, &[5], None, &mut rng);
        assert_eq!(
            (t.entry(9, 5).unwrap().uin, t.entry(9, 5).unwrap().uiw),
            (2, 2.0)
        );
        t.choose(now, 9, &[5], None, &mut rng);
        assert_eq!(t.entry(9, 5).unwrap().uiw, 3.0);
        t.on_data(Timestamp::from_millis(1), 9, 5, true);
        let e = t.entry(9, 5).unwrap();
        assert_eq!((e.uin, e.uiw, e.ex_uiw), (2, 1.5, 1.5));
        t.on_data(Timestamp::from_millis(2), 9, 5, true);
        assert_eq!(t.entry(9, 5).unwrap().uiw, 1.0);
        // In-face is never chosen.
        assert_eq!(t.choose(now, 9, &[5], Some(5), &mut rng), None);
    }

    #[test]
    fn ineligible_face_is_avoided_while_another_has_room() {
        let cfg = UiwConfig {
            d: 1.5,
            ..UiwConfig::default()
        };
        let mut t = UiwTable::new(cfg, 1);
        let mut rng = StdRng::seed_from_u64(4);
        let now = Timestamp::ZERO;
        for _ in 0..3 {
            t.choose(now, 1, &[10], None, &mut rng); // face 10: UIN 3, UIW 3
        }
        t.on_data(now, 1, 10, true); // UIN 2, UIW 1.5 → UIW < UIN
        for _ in 0..50 {
            let f = t.choose(now, 1, &[10, 11], None, &mut rng).unwrap();
            assert_eq!(f, 11);
            t.on_data(now, 1, 11, false);
        }
    }

    #[test]
    fn fractional_uiw_still_grows_when_saturated() {
        let cfg = UiwConfig {
            d: 1.5,
            ..UiwConfig::default()
        };
        let mut t = UiwTable::new(cfg, 1);
        let mut rng = StdRng::seed_from_u64(6);
        let now = Timestamp::ZERO;
        for _ in 0..4 {
            t.choose(now, 1, &[1], None, &mut rng); // UIN 4, UIW 4
        }
        t.on_data(now, 1, 1, true); // UIN 3, UIW 2.5
        t.on_data(now, 1, 1, false); // UIN 2
        t.choose(now, 1, &[1], None, &mut rng); // UIN 3 > 2.5: grows to 3.5
        let e = t.entry(1, 1).unwrap();
        assert_eq!((e.uin, e.uiw), (3, 3.5));
    }

    #[test]
    fn faces_with_room_go_before_saturated_ones() {
        let mut t = UiwTable::new(UiwConfig::default(), 1);
        let mut rng = StdRng::seed_from_u64(7);
        let now = Timestamp::ZERO;
        // Face 1: UIW 10, saturated. Face 2: UIW 10, UIN 8 (room 2).
        for (face, n) in [(1u64, 10u32), (2, 10)] {
            for _ in 0..n {
                t.choose(now, 1, &[face], None, &mut rng);
            }
        }
        t.on_data(now, 1, 2, false);
        t.on_data(now, 1, 2, false);
        // Eq. 3 alone would favour face 1 (weight 10 against 2/3 + 10/3).
        assert!(for_weight(10.0, 10.0, 10.0) > for_weight(8.0, 10.0, 10.0));
        assert_eq!(t.choose(now, 1, &[1, 2], None, &mut rng), Some(2));
        assert_eq!(t.choose(now, 1, &[1, 2], None, &mut rng), Some(2));
        // Both saturated now: either may be chosen, and grows.
        let f = t.choose(now, 1, &[1, 2], None, &mut rng).unwrap();
        assert_eq!(t.entry(1, f).unwrap().uiw, 11.0);
    }

    #[test]
    fn ex_uiw_refreshes_after_100ms() {
        let mut t = UiwTable::new(UiwConfig::default(), 1);
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..4 {
            t.choose(Timestamp::ZERO, 1, &[1], None, &mut rng);
        }
        assert_eq!(t.entry(1, 1).unwrap().ex_uiw, 1.0);
        t.choose(Timestamp::from_millis(100), 1, &[1], None, &mut rng);
        assert_eq!(t.entry(1, 1).unwrap().ex_uiw, 4.0);
    }

    proptest! {
        #[test]
        fn table_is_bounded_and_weights_finite(ops in proptest::collection::vec((0u8..3, 0u64..8, 0u64..6), 1..400), seed: u64) {
            let mut t = UiwTable::new(UiwConfig { max_entries: 10, ..UiwConfig::default() }, seed);
            let mut rng = StdRng::seed_from_u64(seed);
            let mut now = Timestamp::ZERO;
            for (op, prefix, face) in ops {
                now += Duration::from_millis(7);
                match op {
                    0 => { let c = t.choose(now, prefix, &[face, face + 1, face + 2], None, &mut rng); prop_assert!(c.is_some()); }
                    1 => t.on_data(now, prefix, face, face % 2 == 0),
                    _ => t.on_unsatisfied(prefix, face),
                }
                prop_assert!(t.len() <= 10);
                if let Some(e) = t.entry(prefix, face) {
                    prop_assert!(e.uiw >= 1.0 && e.weight().is_finite() && e.weight() >= 0.0);
                }
            }
        }
    }
}
