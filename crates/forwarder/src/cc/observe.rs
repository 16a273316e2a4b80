//! Read accessors for status output beyond [`CcFaceStatus`]
//! (`crate::engine::CcFaceStatus`): the per-face scheme state that the
//! face-state dataset carries, read from the per-face machinery without
//! changing it.

use cc_core::qsccp::ServiceClass;

use super::config::CcScheme;
use super::dispatch::SchemeHooks;
use super::scheme::Scheme;
use crate::engine::FaceId;

/// WinCM's UIN/UIW entries of one face, summarised: a table holds up to
/// 65 536 (content, face) entries, so per-entry series would be tens of
/// thousands; the spread is what shows a face saturating.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UiwSummary {
    /// Entries (content objects) with this face.
    pub entries: u64,
    /// Unsatisfied Interests summed over them.
    pub uin: u64,
    /// Smallest, mean and largest UIW.
    pub uiw_min: f64,
    pub uiw_mean: f64,
    pub uiw_max: f64,
}

/// The UIW summary of `face` in the node's WinCM table; `None` when no
/// entry names the face (or WinCM never ran here).
pub fn uiw_summary(hooks: &SchemeHooks, face: FaceId) -> Option<UiwSummary> {
    let mut s = UiwSummary {
        uiw_min: f64::INFINITY,
        uiw_max: f64::NEG_INFINITY,
        ..UiwSummary::default()
    };
    let mut sum = 0.0;
    let Some(Scheme::Wincm(w)) = hooks.scheme(CcScheme::Wincm) else {
        return None;
    };
    for (_, e) in w.uiw.iter().filter(|((_, f), _)| *f == face.0) {
        s.entries += 1;
        s.uin += u64::from(e.uin);
        sum += e.uiw;
        s.uiw_min = s.uiw_min.min(e.uiw);
        s.uiw_max = s.uiw_max.max(e.uiw);
    }
    (s.entries > 0).then(|| UiwSummary {
        uiw_mean: sum / s.entries as f64,
        ..s
    })
}

impl SchemeHooks {
    /// QSCCP PECN: the capacity B_c each service class got on `face` in the
    /// last period, bit/s, as (class, capacity), highest priority first.
    /// `None` when the face runs no QSCCP scheduler (no capacity, or
    /// another scheme).
    pub fn class_capacities_bps(&self, face: FaceId) -> Option<Vec<(ServiceClass, u64)>> {
        match self.scheme(CcScheme::Qsccp)? {
            Scheme::Qsccp(q) => q.class_capacities_bps(face),
            _ => None,
        }
    }
}
