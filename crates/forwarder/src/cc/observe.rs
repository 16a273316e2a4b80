//! Read accessors for status output beyond [`CcFaceStatus`]
//! (`crate::engine::CcFaceStatus`): the per-face scheme state that the
//! face-state dataset carries, read from the per-face machinery without
//! changing it.

use cc_core::qsccp::ServiceClass;

use super::hooks::SchemeHooks;
use crate::engine::FaceId;

impl SchemeHooks {
    /// QSCCP PECN: the capacity B_c each service class got on `face` in the
    /// last period, bit/s, as (class, capacity), highest priority first.
    /// `None` when the face runs no QSCCP scheduler (no capacity, or
    /// another scheme).
    pub fn class_capacities_bps(&self, face: FaceId) -> Option<Vec<(ServiceClass, u64)>> {
        let cds = self.faces.get(&face)?.cds.as_ref()?;
        Some(
            ServiceClass::ALL
                .into_iter()
                .map(|c| (c, cds.class_capacity_bps(c).max(0.0) as u64))
                .collect(),
        )
    }
}
