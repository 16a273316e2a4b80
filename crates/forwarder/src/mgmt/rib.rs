//! The RIB: routes by (prefix, face, origin) with cost, flags and expiry,
//! and the RIB→FIB computation (ChildInherit / Capture as NFD does it).
//!
//! The RIB never touches the engine; every change returns the FIB next-hop
//! updates to apply, so it is tested on its own.
//!
//! Routes that expire are also kept in an index ordered by expiry, so that
//! the earliest expiry (asked for at every turn of the daemon's loop, as
//! part of its next deadline) and the expired routes are found without
//! walking the whole RIB: a scan per turn made every forwarded packet cost
//! time in proportion to the routes installed. For the same reason each
//! face keeps the keys of its routes, so a face that goes away costs time
//! in proportion to its own routes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;

use cc_core::Timestamp;
use icn_tlv::Name;

/// Route flag: descendants inherit this route.
pub const CHILD_INHERIT: u64 = 1;
/// Route flag: descendants do not inherit routes from ancestors of this entry.
pub const CAPTURE: u64 = 2;
/// Route origins (§3.9).
pub const ORIGIN_APP: u64 = 0;
pub const ORIGIN_STATIC: u64 = 255;
/// NFD's name depth limit for FIB/RIB entries.
pub const MAX_NAME_DEPTH: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub face: u64,
    pub origin: u64,
    pub cost: u64,
    pub flags: u64,
    pub expires: Option<Timestamp>,
}

impl Route {
    /// A route of the configuration file: static origin, children inherit,
    /// no expiry.
    pub fn from_config(face: u64, cost: u64) -> Self {
        Route {
            face,
            origin: ORIGIN_STATIC,
            cost,
            flags: CHILD_INHERIT,
            expires: None,
        }
    }
}

/// A FIB next-hop change that the RIB asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FibUpdate {
    Add { prefix: Name, face: u64, cost: u64 },
    Remove { prefix: Name, face: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RibError {
    #[error("prefix longer than {MAX_NAME_DEPTH} components")]
    TooDeep,
    #[error("RIB full ({0} routes)")]
    Full(usize),
    /// The FIB would not take the route's next hop (FIB full, too many next
    /// hops, face gone); the route was withdrawn.
    #[error("FIB refused the next hop")]
    FibRefused,
}

/// Drops (prefix, origin) from `face`'s routes, and the face's set with
/// its last route.
fn unindex_face(
    by_face: &mut HashMap<u64, BTreeSet<(Name, u64)>>,
    name: &Name,
    face: u64,
    origin: u64,
) {
    if let Some(keys) = by_face.get_mut(&face) {
        keys.remove(&(name.clone(), origin));
        if keys.is_empty() {
            by_face.remove(&face);
        }
    }
}

/// A route in the expiry index: (expiry, prefix, face, origin).
type ExpiryKey = (Timestamp, Name, u64, u64);

/// Bounded routing information base.
#[derive(Debug, Default)]
pub struct Rib {
    entries: BTreeMap<Name, Vec<Route>>,
    installed: BTreeMap<Name, Vec<(u64, u64)>>,
    /// Every route with an expiry, earliest first.
    expiries: BTreeSet<ExpiryKey>,
    /// For each face, its routes as (prefix, origin).
    by_face: HashMap<u64, BTreeSet<(Name, u64)>>,
    n_routes: usize,
    max_routes: usize,
}

impl Rib {
    pub fn new(max_routes: usize) -> Self {
        Rib {
            max_routes,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.n_routes
    }

    pub fn is_empty(&self) -> bool {
        self.n_routes == 0
    }

    /// Entries in canonical name order.
    pub fn entries(&self) -> impl Iterator<Item = (&Name, &[Route])> {
        self.entries.iter().map(|(n, r)| (n, r.as_slice()))
    }

    /// Adds or replaces the route for (prefix, face, origin).
    pub fn insert(&mut self, prefix: Name, route: Route) -> Result<Vec<FibUpdate>, RibError> {
        if prefix.len() > MAX_NAME_DEPTH {
            return Err(RibError::TooDeep);
        }
        let routes = self.entries.entry(prefix.clone()).or_default();
        if let Some(r) = routes
            .iter_mut()
            .find(|r| r.face == route.face && r.origin == route.origin)
        {
            if let Some(t) = r.expires {
                self.expiries.remove(&(t, prefix.clone(), r.face, r.origin));
            }
            *r = route;
        } else {
            if self.n_routes >= self.max_routes {
                if routes.is_empty() {
                    self.entries.remove(&prefix);
                }
                return Err(RibError::Full(self.max_routes));
            }
            routes.push(route);
            self.n_routes += 1;
            self.by_face
                .entry(route.face)
                .or_default()
                .insert((prefix.clone(), route.origin));
        }
        if let Some(t) = route.expires {
            self.expiries
                .insert((t, prefix.clone(), route.face, route.origin));
        }
        Ok(self.recompute(&prefix))
    }

    /// Removes the route for (prefix, face, origin); no-op if absent.
    pub fn remove(&mut self, prefix: &Name, face: u64, origin: u64) -> Vec<FibUpdate> {
        self.remove_routes(vec![(prefix.clone(), face, origin)])
    }

    /// Removes every route via `face` (the face went away), touching only
    /// that face's routes.
    pub fn remove_face(&mut self, face: u64) -> Vec<FibUpdate> {
        let keys = self
            .by_face
            .remove(&face)
            .unwrap_or_default()
            .into_iter()
            .map(|(name, origin)| (name, face, origin))
            .collect();
        self.remove_routes(keys)
    }

    /// Removes every route of `origin` (used to replace static routes on reload).
    pub fn remove_origin(&mut self, origin: u64) -> Vec<FibUpdate> {
        self.remove_where(|_, r| r.origin == origin)
    }

    /// Drops routes whose expiry is at or before `now`.
    pub fn expire(&mut self, now: Timestamp) -> Vec<FibUpdate> {
        let due: Vec<(Name, u64, u64)> = self
            .expiries
            .iter()
            .take_while(|k| k.0 <= now)
            .map(|(_, n, face, origin)| (n.clone(), *face, *origin))
            .collect();
        self.remove_routes(due)
    }

    /// The cost at which `face` should be a next hop of `prefix` in the FIB
    /// (what the RIB computed), `None` if it should not be one.
    pub fn installed_cost(&self, prefix: &Name, face: u64) -> Option<u64> {
        self.installed
            .get(prefix)?
            .iter()
            .find(|h| h.0 == face)
            .map(|h| h.1)
    }

    /// The earliest route expiry.
    pub fn next_expiry(&self) -> Option<Timestamp> {
        self.expiries.first().map(|k| k.0)
    }

    /// Removes the routes named by (prefix, face, origin), touching only
    /// their entries.
    fn remove_routes(&mut self, keys: Vec<(Name, u64, u64)>) -> Vec<FibUpdate> {
        let mut touched = Vec::new();
        for (name, face, origin) in keys {
            let Some(routes) = self.entries.get_mut(&name) else {
                continue;
            };
            let Some(i) = routes
                .iter()
                .position(|r| r.face == face && r.origin == origin)
            else {
                continue;
            };
            let r = routes.remove(i);
            self.n_routes -= 1;
            if let Some(t) = r.expires {
                self.expiries.remove(&(t, name.clone(), face, origin));
            }
            unindex_face(&mut self.by_face, &name, face, origin);
            if routes.is_empty() {
                self.entries.remove(&name);
            }
            touched.push(name);
        }
        // Ancestors first, as `recompute_touched` needs.
        touched.sort();
        touched.dedup();
        self.recompute_touched(touched)
    }

    /// Removes the routes `pred` picks (a walk over every route: only
    /// for removals by origin, on a configuration reload).
    fn remove_where(&mut self, pred: impl Fn(&Name, &Route) -> bool) -> Vec<FibUpdate> {
        let keys = self
            .entries
            .iter()
            .flat_map(|(name, routes)| {
                routes
                    .iter()
                    .filter(|r| pred(name, r))
                    .map(|r| (name.clone(), r.face, r.origin))
            })
            .collect();
        self.remove_routes(keys)
    }

    /// Checks the expiry and face indexes against the routes (tests).
    #[cfg(test)]
    fn check_indexes(&self) -> Result<(), String> {
        let mut expiries = BTreeSet::new();
        let mut by_face: HashMap<u64, BTreeSet<(Name, u64)>> = HashMap::new();
        for (name, routes) in &self.entries {
            for r in routes {
                if let Some(t) = r.expires {
                    expiries.insert((t, name.clone(), r.face, r.origin));
                }
                by_face
                    .entry(r.face)
                    .or_default()
                    .insert((name.clone(), r.origin));
            }
        }
        if expiries != self.expiries {
            return Err("expiry index out of step".into());
        }
        if by_face != self.by_face {
            return Err("face index out of step".into());
        }
        Ok(())
    }

    /// Recomputes the FIB under each touched name, given in canonical
    /// order (so an ancestor comes before its descendants).
    fn recompute_touched(&mut self, touched: Vec<Name>) -> Vec<FibUpdate> {
        let mut out = Vec::new();
        // Recompute each touched subtree once (ancestors first covers descendants).
        let mut done: Vec<Name> = Vec::new();
        for n in touched {
            if done.iter().any(|d| d.is_prefix_of(&n)) {
                continue;
            }
            out.extend(self.recompute(&n));
            done.push(n);
        }
        out
    }

    /// Next hops the FIB should hold for an existing RIB entry.
    fn desired(&self, name: &Name) -> Vec<(u64, u64)> {
        let mut hops: Vec<(u64, u64)> = Vec::new();
        let mut capture = false;
        if let Some(own) = self.entries.get(name) {
            for r in own {
                upsert_min(&mut hops, r.face, r.cost);
                capture |= r.flags & CAPTURE != 0;
            }
        }
        if !capture {
            let mut own_faces: Vec<u64> = hops.iter().map(|h| h.0).collect();
            for len in (0..name.len()).rev() {
                let Some(anc) = self.entries.get(&name.prefix(len)) else {
                    continue;
                };
                for r in anc.iter().filter(|r| r.flags & CHILD_INHERIT != 0) {
                    if !own_faces.contains(&r.face) {
                        upsert_min(&mut hops, r.face, r.cost);
                    }
                }
                own_faces = hops.iter().map(|h| h.0).collect();
                if anc.iter().any(|r| r.flags & CAPTURE != 0) {
                    break;
                }
            }
        }
        hops.sort_unstable();
        hops
    }

    /// Recomputes FIB next hops for `prefix` and every RIB/FIB name under it.
    fn recompute(&mut self, prefix: &Name) -> Vec<FibUpdate> {
        let mut names: Vec<Name> = self
            .entries
            .range((Bound::Included(prefix.clone()), Bound::Unbounded))
            .take_while(|(n, _)| prefix.is_prefix_of(n))
            .map(|(n, _)| n.clone())
            .collect();
        names.extend(
            self.installed
                .range((Bound::Included(prefix.clone()), Bound::Unbounded))
                .take_while(|(n, _)| prefix.is_prefix_of(n))
                .map(|(n, _)| n.clone()),
        );
        names.sort();
        names.dedup();
        let mut out = Vec::new();
        for n in names {
            let want = if self.entries.contains_key(&n) {
                self.desired(&n)
            } else {
                Vec::new()
            };
            let have = self.installed.remove(&n).unwrap_or_default();
            for &(face, _) in &have {
                if !want.iter().any(|w| w.0 == face) {
                    out.push(FibUpdate::Remove {
                        prefix: n.clone(),
                        face,
                    });
                }
            }
            for &(face, cost) in &want {
                if !have.contains(&(face, cost)) {
                    out.push(FibUpdate::Add {
                        prefix: n.clone(),
                        face,
                        cost,
                    });
                }
            }
            if !want.is_empty() {
                self.installed.insert(n, want);
            }
        }
        out
    }
}

fn upsert_min(hops: &mut Vec<(u64, u64)>, face: u64, cost: u64) {
    if let Some(h) = hops.iter_mut().find(|h| h.0 == face) {
        h.1 = h.1.min(cost);
    } else {
        hops.push((face, cost));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn route(face: u64, cost: u64, flags: u64) -> Route {
        Route {
            face,
            origin: ORIGIN_APP,
            cost,
            flags,
            expires: None,
        }
    }

    #[test]
    fn register_installs_nexthop_and_unregister_removes() {
        let mut rib = Rib::new(100);
        let up = rib.insert(n("/a"), route(256, 0, CHILD_INHERIT)).unwrap();
        assert_eq!(
            up,
            vec![FibUpdate::Add {
                prefix: n("/a"),
                face: 256,
                cost: 0
            }]
        );
        let up = rib.remove(&n("/a"), 256, ORIGIN_APP);
        assert_eq!(
            up,
            vec![FibUpdate::Remove {
                prefix: n("/a"),
                face: 256
            }]
        );
        assert!(rib.is_empty());
    }

    #[test]
    fn child_inherit_and_capture() {
        let mut rib = Rib::new(100);
        rib.insert(n("/"), route(300, 5, CHILD_INHERIT)).unwrap();
        let up = rib.insert(n("/a/b"), route(256, 1, 0)).unwrap();
        assert!(up.contains(&FibUpdate::Add {
            prefix: n("/a/b"),
            face: 300,
            cost: 5
        }));
        // Capture on /a/b stops inheritance from /.
        let up = rib
            .insert(
                n("/a/b"),
                Route {
                    origin: 65,
                    ..route(257, 2, CAPTURE)
                },
            )
            .unwrap();
        assert!(up.contains(&FibUpdate::Remove {
            prefix: n("/a/b"),
            face: 300
        }));
        // Removing the root route does not touch /a/b any more.
        let up = rib.remove(&n("/"), 300, ORIGIN_APP);
        assert_eq!(
            up,
            vec![FibUpdate::Remove {
                prefix: n("/"),
                face: 300
            }]
        );
    }

    #[test]
    fn expiry_and_face_removal() {
        let mut rib = Rib::new(100);
        let mut r = route(256, 0, 1);
        r.expires = Some(Timestamp::from_millis(100));
        rib.insert(n("/x"), r).unwrap();
        rib.insert(n("/y"), route(257, 0, 1)).unwrap();
        assert_eq!(rib.next_expiry(), Some(Timestamp::from_millis(100)));
        assert!(rib.expire(Timestamp::from_millis(99)).is_empty());
        assert_eq!(rib.expire(Timestamp::from_millis(100)).len(), 1);
        assert_eq!(rib.remove_face(257).len(), 1);
        assert!(rib.is_empty());
        assert_eq!(rib.next_expiry(), None);
    }

    #[test]
    fn bounded_and_depth_limited() {
        let mut rib = Rib::new(2);
        rib.insert(n("/a"), route(1, 0, 1)).unwrap();
        rib.insert(n("/b"), route(1, 0, 1)).unwrap();
        assert_eq!(rib.insert(n("/c"), route(1, 0, 1)), Err(RibError::Full(2)));
        // Replacing an existing route is still allowed when full.
        assert!(rib.insert(n("/a"), route(1, 9, 1)).is_ok());
        let deep: String = (0..33).map(|i| format!("/{i}")).collect();
        assert_eq!(rib.insert(n(&deep), route(1, 0, 1)), Err(RibError::TooDeep));
        assert_eq!(rib.len(), 2);
    }

    proptest! {
        /// Applying the returned updates to a model FIB always yields exactly
        /// the next hops recomputed from scratch.
        #[test]
        fn updates_track_full_recompute(ops in proptest::collection::vec((0u8..7, 0usize..4, 256u64..259, 0u64..3, 0u64..8), 1..40)) {
            let names = ["/", "/a", "/a/b", "/c"];
            let mut rib = Rib::new(1000);
            let mut fib: BTreeMap<(Name, u64), u64> = BTreeMap::new();
            let mut now = 0u64;
            for (op, ni, face, origin, x) in ops {
                let name = n(names[ni]);
                // Routes with and without expiry, removals by key, by face,
                // by origin and by expiry; the clock only moves forward.
                let expires = (x >= 4).then(|| Timestamp::from_millis(now + 10 * x));
                let ups = match op {
                    0 | 1 => rib.insert(name, Route { face, origin, cost: origin, flags: x & 3, expires }).unwrap(),
                    2 => rib.remove_face(face),
                    3 => rib.remove(&name, face, origin),
                    6 => rib.remove_origin(origin),
                    _ => {
                        now += 10 * x;
                        rib.expire(Timestamp::from_millis(now))
                    }
                };
                // The expiry index holds exactly the routes that expire,
                // and no route is left at or past its expiry after `expire`.
                let mut want = BTreeSet::new();
                for (name, routes) in rib.entries() {
                    for r in routes {
                        if let Some(t) = r.expires {
                            want.insert((t, name.clone(), r.face, r.origin));
                        }
                    }
                }
                prop_assert_eq!(&rib.expiries, &want);
                rib.check_indexes().map_err(proptest::test_runner::TestCaseError::fail)?;
                prop_assert_eq!(rib.next_expiry(), want.first().map(|k| k.0));
                if op == 4 || op == 5 {
                    prop_assert!(rib.next_expiry().is_none_or(|t| t > Timestamp::from_millis(now)));
                }
                for u in ups {
                    match u {
                        FibUpdate::Add { prefix, face, cost } => { fib.insert((prefix, face), cost); }
                        FibUpdate::Remove { prefix, face } => { fib.remove(&(prefix, face)); }
                    }
                }
                let mut fresh: BTreeMap<(Name, u64), u64> = BTreeMap::new();
                for (name, _) in rib.entries() {
                    for (f, c) in rib.desired(name) {
                        fresh.insert((name.clone(), f), c);
                    }
                }
                prop_assert_eq!(&fib, &fresh);
            }
        }
    }
}
