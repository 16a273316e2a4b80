//! The multicast name forwarding table (MNFT): per group, the upstream face
//! towards the source and the downstream faces with soft-state expiry.
//!
//! Bounded twice: at most `max_groups` groups and `max_faces_per_group`
//! downstream faces per group. Membership is soft state: a join sets the
//! face's expiry to `now + lifetime` (lifetime clamped to
//! `max_lifetime`), a leave removes it, and [`Mnft::expire`] drops faces
//! whose refresh did not come.

use cc_core::srmcc::MccMessage;
use cc_core::{Duration, Timestamp};
use hashbrown::HashMap;
use icn_tlv::Name;

use crate::error::McastError;

/// Limits of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MnftLimits {
    /// Most groups.
    pub max_groups: usize,
    /// Most downstream faces per group.
    pub max_faces_per_group: usize,
    /// Longest membership a join may ask for.
    pub max_lifetime: Duration,
}

impl Default for MnftLimits {
    fn default() -> Self {
        MnftLimits {
            max_groups: 1024,
            max_faces_per_group: 256,
            max_lifetime: Duration::from_secs(60),
        }
    }
}

/// One downstream face of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Downstream {
    /// The face.
    pub face: u64,
    /// When membership lapses without a refresh.
    pub expires: Timestamp,
    /// The latest MCC message from this face and when it came.
    pub last_report: Option<(Timestamp, MccMessage)>,
    /// A report came in the current feedback period.
    pub reported_this_period: bool,
}

/// One multicast name forwarding entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupEntry {
    /// Face towards the source (FIB next hop when last joined); `None` when
    /// no route was known.
    pub upstream: Option<u64>,
    /// Downstream members, in join order.
    pub downstream: Vec<Downstream>,
    /// Group Data packets cloned (one per downstream copy).
    pub copies_sent: u64,
    /// The rate the source announced in the latest packet, bit/s.
    pub announced_rate_bps: Option<u64>,
    /// The latest sequence number seen from the source.
    pub last_seq: Option<u64>,
}

/// What a join did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinOutcome {
    /// A new group: the branch must be grafted (join sent upstream now).
    NewGroup,
    /// A new downstream face on an existing group.
    NewFace,
    /// An existing membership was refreshed.
    Refreshed,
}

/// What a leave did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaveOutcome {
    /// The face was not a member.
    NotMember,
    /// The face was removed; other members remain.
    Removed,
    /// The last member left; the group is gone and must be pruned upstream.
    GroupEmpty {
        /// The upstream the prune goes to.
        upstream: Option<u64>,
    },
}

/// The MNFT.
#[derive(Debug, Clone, Default)]
pub struct Mnft {
    limits: MnftLimits,
    groups: HashMap<Name, GroupEntry>,
}

impl Mnft {
    /// An empty table.
    pub fn new(limits: MnftLimits) -> Self {
        Mnft {
            limits,
            groups: HashMap::new(),
        }
    }

    /// Records a join from `face`; `upstream` is where the group's route
    /// points now.
    ///
    /// # Errors
    /// [`McastError::FromUpstream`] when `face` is the upstream,
    /// [`McastError::TooManyGroups`] / [`McastError::TooManyFaces`] at the
    /// bounds.
    pub fn join(
        &mut self,
        now: Timestamp,
        group: &Name,
        face: u64,
        lifetime: Duration,
        upstream: Option<u64>,
    ) -> Result<JoinOutcome, McastError> {
        let stored_upstream = self.groups.get(group).and_then(|e| e.upstream);
        if upstream == Some(face) || stored_upstream == Some(face) {
            return Err(McastError::FromUpstream);
        }
        let expires = now + lifetime.min(self.limits.max_lifetime);
        let new_group = !self.groups.contains_key(group);
        if new_group && self.groups.len() >= self.limits.max_groups {
            return Err(McastError::TooManyGroups(self.limits.max_groups));
        }
        let entry = self
            .groups
            .entry(group.clone())
            .or_insert_with(|| GroupEntry {
                upstream,
                downstream: Vec::new(),
                copies_sent: 0,
                announced_rate_bps: None,
                last_seq: None,
            });
        if let Some(d) = entry.downstream.iter_mut().find(|d| d.face == face) {
            d.expires = d.expires.max(expires);
            return Ok(JoinOutcome::Refreshed);
        }
        if entry.downstream.len() >= self.limits.max_faces_per_group {
            if entry.downstream.is_empty() {
                self.groups.remove(group);
            }
            return Err(McastError::TooManyFaces(self.limits.max_faces_per_group));
        }
        entry.downstream.push(Downstream {
            face,
            expires,
            last_report: None,
            reported_this_period: false,
        });
        Ok(if new_group {
            JoinOutcome::NewGroup
        } else {
            JoinOutcome::NewFace
        })
    }

    /// Removes `face` from `group`.
    pub fn leave(&mut self, group: &Name, face: u64) -> LeaveOutcome {
        let Some(entry) = self.groups.get_mut(group) else {
            return LeaveOutcome::NotMember;
        };
        let before = entry.downstream.len();
        entry.downstream.retain(|d| d.face != face);
        if entry.downstream.len() == before {
            return LeaveOutcome::NotMember;
        }
        if entry.downstream.is_empty() {
            let upstream = entry.upstream;
            self.groups.remove(group);
            return LeaveOutcome::GroupEmpty { upstream };
        }
        LeaveOutcome::Removed
    }

    /// Removes a whole group.
    pub fn remove(&mut self, group: &Name) -> Option<GroupEntry> {
        self.groups.remove(group)
    }

    /// Drops memberships that expired by `now`; returns the groups that
    /// became empty, with their upstream, for pruning.
    pub fn expire(&mut self, now: Timestamp, emptied: &mut Vec<(Name, Option<u64>)>) {
        self.groups.retain(|g, e| {
            e.downstream.retain(|d| d.expires > now);
            if e.downstream.is_empty() {
                emptied.push((g.clone(), e.upstream));
                false
            } else {
                true
            }
        });
    }

    /// Removes a face that went down from every group (as downstream) and
    /// forgets it as upstream; returns the emptied groups.
    pub fn remove_face(&mut self, face: u64, emptied: &mut Vec<(Name, Option<u64>)>) {
        self.groups.retain(|g, e| {
            if e.upstream == Some(face) {
                e.upstream = None;
            }
            e.downstream.retain(|d| d.face != face);
            if e.downstream.is_empty() {
                emptied.push((g.clone(), e.upstream));
                false
            } else {
                true
            }
        });
    }

    /// The earliest membership expiry.
    pub fn next_expiry(&self) -> Option<Timestamp> {
        self.groups
            .values()
            .flat_map(|e| e.downstream.iter().map(|d| d.expires))
            .min()
    }

    /// The group whose prefix is the longest one matching `name`.
    pub fn longest_match(&self, name: &Name) -> Option<(Name, &GroupEntry)> {
        if self.groups.is_empty() {
            return None;
        }
        (1..=name.len()).rev().find_map(|n| {
            let p = name.prefix(n);
            self.groups.get(&p).map(|e| (p, e))
        })
    }

    /// The entry of `group`.
    pub fn get(&self, group: &Name) -> Option<&GroupEntry> {
        self.groups.get(group)
    }

    /// The entry of `group`, mutable.
    pub fn get_mut(&mut self, group: &Name) -> Option<&mut GroupEntry> {
        self.groups.get_mut(group)
    }

    /// All groups.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &GroupEntry)> {
        self.groups.iter()
    }

    /// All groups, mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&Name, &mut GroupEntry)> {
        self.groups.iter_mut()
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// True when no group is present.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The configured limits.
    pub fn limits(&self) -> &MnftLimits {
        &self.limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> Name {
        s.parse().unwrap()
    }
    const S: Duration = Duration::from_secs(1);

    #[test]
    fn first_join_grafts_then_faces_add_then_refresh() {
        let mut t = Mnft::new(MnftLimits::default());
        let now = Timestamp::ZERO;
        assert_eq!(
            t.join(now, &g("/a"), 300, S, Some(256)),
            Ok(JoinOutcome::NewGroup)
        );
        assert_eq!(
            t.join(now, &g("/a"), 301, S, Some(256)),
            Ok(JoinOutcome::NewFace)
        );
        assert_eq!(
            t.join(now, &g("/a"), 300, 2 * S, Some(256)),
            Ok(JoinOutcome::Refreshed)
        );
        assert_eq!(
            t.get(&g("/a")).unwrap().downstream[0].expires,
            Timestamp::from_millis(2000)
        );
        assert_eq!(
            t.join(now, &g("/a"), 256, S, Some(256)),
            Err(McastError::FromUpstream)
        );
    }

    #[test]
    fn last_leave_empties_the_group_for_pruning() {
        let mut t = Mnft::new(MnftLimits::default());
        let now = Timestamp::ZERO;
        t.join(now, &g("/a"), 300, S, Some(256)).unwrap();
        t.join(now, &g("/a"), 301, S, Some(256)).unwrap();
        assert_eq!(t.leave(&g("/a"), 999), LeaveOutcome::NotMember);
        assert_eq!(t.leave(&g("/a"), 300), LeaveOutcome::Removed);
        assert_eq!(
            t.leave(&g("/a"), 301),
            LeaveOutcome::GroupEmpty {
                upstream: Some(256)
            }
        );
        assert!(t.is_empty());
    }

    #[test]
    fn expiry_removes_silent_members_only() {
        let mut t = Mnft::new(MnftLimits::default());
        t.join(Timestamp::ZERO, &g("/a"), 300, S, Some(256))
            .unwrap();
        t.join(Timestamp::ZERO, &g("/b"), 300, 3 * S, Some(256))
            .unwrap();
        let mut out = Vec::new();
        t.expire(Timestamp::from_millis(999), &mut out);
        assert!(out.is_empty());
        assert_eq!(t.next_expiry(), Some(Timestamp::from_millis(1000)));
        t.expire(Timestamp::from_millis(1000), &mut out);
        assert_eq!(out, vec![(g("/a"), Some(256))]);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn bounds_are_enforced() {
        let limits = MnftLimits {
            max_groups: 2,
            max_faces_per_group: 2,
            max_lifetime: S,
        };
        let mut t = Mnft::new(limits);
        let now = Timestamp::ZERO;
        t.join(now, &g("/a"), 300, S, None).unwrap();
        t.join(now, &g("/b"), 300, S, None).unwrap();
        assert_eq!(
            t.join(now, &g("/c"), 300, S, None),
            Err(McastError::TooManyGroups(2))
        );
        t.join(now, &g("/a"), 301, S, None).unwrap();
        assert_eq!(
            t.join(now, &g("/a"), 302, S, None),
            Err(McastError::TooManyFaces(2))
        );
        t.join(now, &g("/b"), 301, Duration::from_secs(3600), None)
            .unwrap();
        let d = &t.get(&g("/b")).unwrap().downstream[1];
        assert_eq!(d.expires, Timestamp::from_millis(1000), "lifetime clamped");
    }

    #[test]
    fn longest_match_finds_the_group_of_a_data_name() {
        let mut t = Mnft::new(MnftLimits::default());
        t.join(Timestamp::ZERO, &g("/a"), 300, S, None).unwrap();
        t.join(Timestamp::ZERO, &g("/a/b"), 301, S, None).unwrap();
        assert_eq!(t.longest_match(&g("/a/b/seq=1")).unwrap().0, g("/a/b"));
        assert_eq!(t.longest_match(&g("/a/c/seq=1")).unwrap().0, g("/a"));
        assert!(t.longest_match(&g("/z/seq=1")).is_none());
    }

    #[test]
    fn removing_a_face_clears_it_everywhere() {
        let mut t = Mnft::new(MnftLimits::default());
        t.join(Timestamp::ZERO, &g("/a"), 300, S, Some(256))
            .unwrap();
        t.join(Timestamp::ZERO, &g("/b"), 301, S, Some(300))
            .unwrap();
        let mut out = Vec::new();
        t.remove_face(300, &mut out);
        assert_eq!(out, vec![(g("/a"), Some(256))]);
        assert_eq!(t.get(&g("/b")).unwrap().upstream, None);
    }
}
