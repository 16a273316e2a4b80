//! The wire under a link's faces, and the namespace testbed's.

/// The wire under a link's faces: what a frame the (pacing) face released
/// meets before the propagation delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wire {
    /// A wire as slow as the faces' pacing: every frame takes its
    /// serialisation time at `capacity_bps` (a NIC at the face's capacity).
    #[default]
    AtCapacity,
    /// A fast wire under a token-bucket limit (the namespace testbed's veth
    /// with tc's tbf above icnfwd's shaping rate): a frame leaves at once
    /// while the bucket holds its bytes, and otherwise when it does. A lone
    /// frame then takes no serialisation time, as on a shaped face over a
    /// faster NIC. Each direction has a bucket of its own, of this rate and
    /// depth whatever the direction's capacity. A frame the bucket can
    /// never pay for (deeper than it, or a zero rate once it is spent) is
    /// lost, as tc's tbf drops it. Not modelled: the bytes of the UDP, IP
    /// and Ethernet headers tc counts (under 2 % of the frames here) and
    /// tbf's queue limit (`latency 100ms`, never reached while the faces
    /// pace below the bucket's rate).
    TokenBucket {
        /// Fill rate of the bucket.
        rate_bps: u64,
        /// Depth of the bucket.
        burst_bytes: u64,
    },
}

impl Wire {
    /// The namespace testbed's veth under a face paced at `capacity_bps`
    /// (icn-lab's namespace runner puts this tbf on both ends).
    pub fn testbed(capacity_bps: u64) -> Wire {
        Wire::TokenBucket {
            rate_bps: testbed_tbf_rate_bps(capacity_bps),
            burst_bytes: TESTBED_TBF_BURST_BYTES,
        }
    }
}

/// The rate of the namespace testbed's tc limit on a veth whose faces pace
/// at `capacity_bps`: above that rate, so the queue stays inside icnfwd
/// where the congestion-control laws can see it.
pub fn testbed_tbf_rate_bps(capacity_bps: u64) -> u64 {
    capacity_bps + capacity_bps / 2 + 2_000_000
}

/// The depth of that limit (tc's `burst 64kb`: 64 KiB).
pub const TESTBED_TBF_BURST_BYTES: u64 = 64 * 1024;
