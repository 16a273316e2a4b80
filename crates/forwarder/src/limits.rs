//! `[limits]`: bounds that keep one peer, or a flood, from taking the
//! whole forwarder (face table now; memory budgets in bytes as they land).

use serde::Deserialize;

/// The `[limits]` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// On-demand faces (UDP and Ethernet peers) at once; a new peer beyond
    /// it is refused and counted (`face-table-full`).
    pub max_faces: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig { max_faces: 10_000 }
    }
}

impl LimitsConfig {
    /// `Err((key, reason))` for values that leave the daemon useless.
    pub fn validate(&self) -> Result<(), (String, String)> {
        crate::config_checks::check_nonzero(&[("limits.max_faces", self.max_faces as u64)])
    }
}
