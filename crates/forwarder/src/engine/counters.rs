//! Forwarder-wide and per-face counters, NFD-style, plus one counter per drop
//! reason (NDN-DPDK keeps `nNoFibMatch`, `nDupNonce`, ... the same way).

/// Why the engine dropped a packet. Each reason has its own counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// Bytes that do not decode as LpPacket/Interest/Data.
    Malformed = 0,
    /// A packet for a face the engine does not know.
    UnknownFace,
    /// A fragment that could not be reassembled (bad index, overflow, timeout).
    Reassembly,
    /// LP header fields not allowed on this packet type (e.g. Data with Nack).
    BadLpHeaders,
    /// Interest with HopLimit 0, or 0 after decrement towards a non-local face.
    HopLimit,
    /// `/localhost` name from or to a non-local face.
    LocalhostScope,
    /// `/localhop` Interest that would travel a second hop.
    LocalhopScope,
    /// NextHopFaceId from a non-local face, or to an unknown face.
    NextHopFaceId,
    /// Interest whose nonce was seen before (loop), answered or dropped.
    DuplicateNonce,
    /// PIT at capacity.
    PitFull,
    /// Too many in- or out-records on one PIT entry.
    PitRecordsFull,
    /// Data that matched no PIT entry.
    UnsolicitedData,
    /// Nack with no PIT entry, no out-record, or a stale nonce.
    UnmatchedNack,
    /// Nack received on a multi-access face (ignored as NFD does).
    NackOnMultiAccess,
    /// Egress queue at its packet or byte bound.
    QueueFull,
    /// Packet larger than the MTU and not fragmentable.
    TooLarge,
    /// Packet queued for a face that has since been removed.
    FaceGone,
    /// IDLE LpPacket (keep-alive) or LP packet without a network packet.
    Idle,
    /// The strategy chose to drop the Interest.
    Strategy,
    /// Management Interest the engine could not hand out (event queue full).
    EventQueueFull,
    /// Interest refused by the congestion-control shaper/scheduler (Nacked).
    CcShaper,
    /// Multicast group Data from a face other than the group's upstream.
    GroupWrongFace,
    /// Multicast subscription or MCC feedback the tree node refused.
    GroupRefused,
    /// Datagram, frame or reassembled packet over 8800 octets.
    Oversized,
    /// New peer refused: face table (or its share of it) full (shell).
    FaceTableFull,
    /// Transmit dropped by the shell: socket backlog or channel full.
    SendBacklog,
    /// A non-local face at its share of the PIT or reassembly budget.
    FaceShare,
    /// Datagram the kernel dropped for a full socket receive queue (the
    /// shell reads the socket's drop count).
    ReceiveOverflow,
}

/// Number of [`DropReason`] variants.
pub const N_DROP_REASONS: usize = 28;

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; N_DROP_REASONS] = [
        DropReason::Malformed,
        DropReason::UnknownFace,
        DropReason::Reassembly,
        DropReason::BadLpHeaders,
        DropReason::HopLimit,
        DropReason::LocalhostScope,
        DropReason::LocalhopScope,
        DropReason::NextHopFaceId,
        DropReason::DuplicateNonce,
        DropReason::PitFull,
        DropReason::PitRecordsFull,
        DropReason::UnsolicitedData,
        DropReason::UnmatchedNack,
        DropReason::NackOnMultiAccess,
        DropReason::QueueFull,
        DropReason::TooLarge,
        DropReason::FaceGone,
        DropReason::Idle,
        DropReason::Strategy,
        DropReason::EventQueueFull,
        DropReason::CcShaper,
        DropReason::GroupWrongFace,
        DropReason::GroupRefused,
        DropReason::Oversized,
        DropReason::FaceTableFull,
        DropReason::SendBacklog,
        DropReason::FaceShare,
        DropReason::ReceiveOverflow,
    ];

    /// Kebab-case name for logs and status output.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::UnknownFace => "unknown-face",
            DropReason::Reassembly => "reassembly",
            DropReason::BadLpHeaders => "bad-lp-headers",
            DropReason::HopLimit => "hop-limit",
            DropReason::LocalhostScope => "localhost-scope",
            DropReason::LocalhopScope => "localhop-scope",
            DropReason::NextHopFaceId => "next-hop-face-id",
            DropReason::DuplicateNonce => "duplicate-nonce",
            DropReason::PitFull => "pit-full",
            DropReason::PitRecordsFull => "pit-records-full",
            DropReason::UnsolicitedData => "unsolicited-data",
            DropReason::UnmatchedNack => "unmatched-nack",
            DropReason::NackOnMultiAccess => "nack-on-multi-access",
            DropReason::QueueFull => "queue-full",
            DropReason::TooLarge => "too-large",
            DropReason::FaceGone => "face-gone",
            DropReason::Idle => "idle",
            DropReason::Strategy => "strategy",
            DropReason::EventQueueFull => "event-queue-full",
            DropReason::CcShaper => "cc-shaper",
            DropReason::GroupWrongFace => "mcast-wrong-face",
            DropReason::GroupRefused => "mcast-refused",
            DropReason::Oversized => "oversized",
            DropReason::FaceTableFull => "face-table-full",
            DropReason::SendBacklog => "send-backlog",
            DropReason::FaceShare => "face-share",
            DropReason::ReceiveOverflow => "receive-overflow",
        }
    }
}

/// One counter per drop reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounters([u64; N_DROP_REASONS]);

impl DropCounters {
    /// Counter for one reason.
    pub fn get(&self, r: DropReason) -> u64 {
        self.0[r as usize]
    }
    /// Adds one drop.
    pub fn add(&mut self, r: DropReason) {
        self.0[r as usize] += 1;
    }
    /// Adds `n` drops.
    pub fn add_n(&mut self, r: DropReason, n: u64) {
        self.0[r as usize] += n;
    }
    /// Sum over all reasons.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// (reason, count) pairs with a non-zero count.
    pub fn nonzero(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL
            .iter()
            .map(|r| (*r, self.get(*r)))
            .filter(|(_, c)| *c > 0)
    }
}

/// Per-face counters (NFD FaceStatus numbers plus drops).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceCounters {
    /// Interests received.
    pub n_in_interests: u64,
    /// Data received.
    pub n_in_data: u64,
    /// Nacks received.
    pub n_in_nacks: u64,
    /// Interests sent.
    pub n_out_interests: u64,
    /// Data sent.
    pub n_out_data: u64,
    /// Nacks sent.
    pub n_out_nacks: u64,
    /// Link-layer bytes received.
    pub n_in_bytes: u64,
    /// Link-layer bytes sent.
    pub n_out_bytes: u64,
    /// Packets (after fragmentation) handed out by `poll_transmit`.
    pub n_out_frames: u64,
    /// Data/Nacks sent with a CongestionMark set.
    pub n_out_marked: u64,
    /// Drops attributed to this face, by reason.
    pub drops: DropCounters,
}

/// Forwarder-wide counters (NFD `status/general` plus drops).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForwarderCounters {
    /// Name-tree entries: FIB prefixes + strategy choices + PIT entries.
    pub n_name_tree_entries: u64,
    /// FIB prefixes.
    pub n_fib_entries: u64,
    /// PIT entries.
    pub n_pit_entries: u64,
    /// Measurements entries (the engine keeps none yet).
    pub n_measurements_entries: u64,
    /// Content Store entries.
    pub n_cs_entries: u64,
    /// Interests received.
    pub n_in_interests: u64,
    /// Data received.
    pub n_in_data: u64,
    /// Nacks received.
    pub n_in_nacks: u64,
    /// Interests sent.
    pub n_out_interests: u64,
    /// Data sent.
    pub n_out_data: u64,
    /// Nacks sent.
    pub n_out_nacks: u64,
    /// PIT entries satisfied by Data (including CS hits).
    pub n_satisfied_interests: u64,
    /// PIT entries that expired unsatisfied.
    pub n_unsatisfied_interests: u64,
    /// Content Store hits.
    pub n_cs_hits: u64,
    /// Content Store misses.
    pub n_cs_misses: u64,
    /// Drops by reason.
    pub drops: DropCounters,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_reason_in_discriminant_order() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        let mut d = DropCounters::default();
        d.add(DropReason::PitFull);
        d.add(DropReason::PitFull);
        assert_eq!(d.get(DropReason::PitFull), 2);
        assert_eq!(d.total(), 2);
        assert_eq!(
            d.nonzero().collect::<Vec<_>>(),
            vec![(DropReason::PitFull, 2)]
        );
    }
}
