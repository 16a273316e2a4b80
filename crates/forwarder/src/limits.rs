//! `[limits]`: bounds that keep one peer, or a flood, from taking the
//! whole forwarder: the face table, memory budgets in bytes (PIT,
//! reassembly, egress queues; the CS has `[tables] cs_max_bytes`) and one
//! face's share.

use serde::Deserialize;

/// The `[limits]` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// On-demand faces (UDP and Ethernet peers) at once; a new peer beyond
    /// it is refused and counted (`face-table-full`).
    pub max_faces: usize,
    /// Interest octets held by PIT in-records, all faces together.
    pub pit_max_bytes: usize,
    /// Fragment octets held for reassembly, all faces together.
    pub reassembly_max_bytes: usize,
    /// Octets in all faces' egress queues together.
    pub queue_max_bytes: usize,
    /// Packets in each of a face's two egress queues (Interests, Data):
    /// the drop-tail length of one face.
    pub face_queue_max_packets: usize,
    /// Percentage of the PIT entries, the reassembly budget and the face
    /// table one non-local face (or source address) may hold.
    pub face_share_percent: u32,
    /// A full face table evicts the on-demand face silent the longest for
    /// a new peer, if it has been silent at least this long.
    pub evict_idle_ms: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_faces: 10_000,
            pit_max_bytes: 64 << 20,
            reassembly_max_bytes: 32 << 20,
            queue_max_bytes: 256 << 20,
            face_queue_max_packets: crate::engine::QueueLimits::default().max_packets,
            face_share_percent: 25,
            evict_idle_ms: 10_000,
        }
    }
}

impl LimitsConfig {
    /// `Err((key, reason))` for values that leave the daemon useless.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(1..=100).contains(&self.face_share_percent) {
            return Err((
                "limits.face_share_percent".into(),
                "must be within 1..=100".into(),
            ));
        }
        // Below one 8800-octet packet nothing could be kept.
        for (key, v) in [
            ("limits.pit_max_bytes", self.pit_max_bytes),
            ("limits.reassembly_max_bytes", self.reassembly_max_bytes),
            ("limits.queue_max_bytes", self.queue_max_bytes),
        ] {
            if v < 8800 {
                return Err((key.into(), "must be at least 8800".into()));
            }
        }
        crate::config_checks::check_nonzero(&[
            ("limits.max_faces", self.max_faces as u64),
            (
                "limits.face_queue_max_packets",
                self.face_queue_max_packets as u64,
            ),
        ])
    }
}
