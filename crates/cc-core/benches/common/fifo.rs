//! The FIFO both scheduler benches compare the QSCCP tree with.

use cc_core::Timestamp;
use std::collections::VecDeque;

/// What the FIFO stores per packet: what the tree stores per packet.
pub struct Queued {
    pub item: u64,
    pub size_bits: u32,
    pub at: Timestamp,
}

/// The FIFO baseline: a `VecDeque` that refuses at a packet or a bit cap
/// and keeps its bit count on both sides, as the forwarder's own FIFO lane
/// does per Interest (`crates/forwarder/src/engine/queue.rs`: a packet and
/// a byte cap, its byte count kept up to date on enqueue and dequeue).
/// The tree refuses at its flow, class and table caps and counts what it
/// queues and sends, so an unbounded, uncounted `VecDeque` (the baseline
/// before) did less per packet than either queue does in the forwarder.
pub struct Fifo {
    q: VecDeque<Queued>,
    max_packets: usize,
    max_bits: u64,
    bits: u64,
}

impl Fifo {
    /// `n` packets of `size_bits` queued at time 0, room for twice as many.
    pub fn prefilled(n: usize, size_bits: u32) -> Self {
        let mut f = Fifo {
            q: VecDeque::with_capacity(n.max(1)),
            max_packets: n.max(1) * 2,
            max_bits: u64::from(size_bits) * (n.max(1) as u64) * 2,
            bits: 0,
        };
        for i in 0..n as u64 {
            let r = f.push(Queued {
                item: i,
                size_bits,
                at: Timestamp::ZERO,
            });
            assert!(r.is_ok(), "prefill fits");
        }
        f
    }

    #[inline]
    pub fn push(&mut self, x: Queued) -> Result<(), Queued> {
        let size = u64::from(x.size_bits);
        if self.q.len() >= self.max_packets || self.bits + size > self.max_bits {
            return Err(x);
        }
        self.bits += size;
        self.q.push_back(x);
        Ok(())
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Queued> {
        let x = self.q.pop_front()?;
        self.bits -= u64::from(x.size_bits);
        Some(x)
    }
}
